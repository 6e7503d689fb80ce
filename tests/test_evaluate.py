"""``fedlib.train.evaluate``: sample subsets (``indices``), prepared batches, the two loss sums,
per-class accuracy, and clear errors (issue 13: the one evaluation path)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fedlib.core.errors import FedlibError
from fedlib.data.base import FedDataset
from fedlib.models import build_model
from fedlib.train import evaluate
from fedlib.train.evaluate import prepare_batches

torch.set_num_threads(1)


def data(kind="tabular", n=200):
    g = torch.Generator().manual_seed(0)
    if kind == "tabular":
        x, y, k = torch.randn(n, 11, generator=g), torch.randint(0, 3, (n,), generator=g), 3
    else:
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y, k = torch.randint(0, 10, (n,), generator=g), 10
    m = n // 2
    return FedDataset("synthetic", kind, x[:m], y[:m], x[m:], y[m:], k)


def fcn():
    return build_model("fcn", 3, seed=0, in_features=11)


def states(model, n=3):
    g = torch.Generator().manual_seed(1)
    return [{k: v + 0.1 * torch.randn(v.shape, generator=g) for k, v in model.state_dict().items()} for _ in range(n)]


def as_tuple(r):
    return r.accuracy, r.loss, r.n, r.per_class_accuracy.nan_to_num(-1).tolist()


def test_indices_score_exactly_those_samples():
    ds, model = data(), fcn()
    idx = torch.tensor([5, 0, 17, 42, 43, 99, 61])
    r = evaluate(model, None, ds, indices=idx, batch_size=3)
    model.eval()
    with torch.no_grad():
        out = model(ds.test_x[idx])
    y = ds.test_y[idx]
    assert r.n == len(idx)
    assert r.accuracy == float((out.argmax(1) == y).double().mean())
    assert r.loss == pytest.approx(float(F.cross_entropy(out, y)), rel=1e-6)
    for c in range(3):
        sel = y == c
        want = float((out.argmax(1)[sel] == c).double().mean()) if sel.any() else math.nan
        got = float(r.per_class_accuracy[c])
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want)
    train = evaluate(model, None, ds, split="train", indices=[1, 2, 3])
    assert train.n == 3


def test_absent_classes_are_nan_and_an_empty_subset_gives_nan():
    ds, model = data(), fcn()
    only = torch.nonzero(ds.test_y == 1).reshape(-1)
    r = evaluate(model, None, ds, indices=only)
    assert math.isnan(r.per_class_accuracy[0]) and math.isnan(r.per_class_accuracy[2])
    assert float(r.per_class_accuracy[1]) == pytest.approx(r.accuracy)  # float32 per class
    empty = evaluate(model, None, ds, indices=torch.zeros(0, dtype=torch.long))
    assert empty.n == 0 and math.isnan(empty.accuracy) and math.isnan(empty.loss)


@pytest.mark.parametrize("kind", ["tabular", "image"])
def test_prepared_batches_give_the_same_numbers(kind):
    ds = data(kind, 60)
    model = fcn() if kind == "tabular" else build_model("cnn3", 10, seed=0)
    idx = torch.arange(3, ds.num_test, 2)
    batches = prepare_batches(model, ds, "test", idx, batch_size=8)
    for loss_sum in ("sample", "batch"):
        a = evaluate(model, None, ds, indices=idx, batch_size=8, loss_sum=loss_sum)
        b = evaluate(model, None, batches=batches, loss_sum=loss_sum)
        assert as_tuple(a) == as_tuple(b)
    many = states(model, 2)
    for backend in ("loop", "stacked"):
        a = evaluate(model, many, ds, indices=idx, batch_size=8, backend=backend)
        b = evaluate(model, many, batches=batches, backend=backend)
        assert [as_tuple(r) for r in a] == [as_tuple(r) for r in b]


def test_loss_sums_agree_and_batch_adds_float32_batch_sums():
    ds, model = data(), fcn()
    sample = evaluate(model, None, ds, batch_size=16)
    batch = evaluate(model, None, ds, batch_size=16, loss_sum="batch")
    assert sample.accuracy == batch.accuracy and torch.equal(sample.per_class_accuracy.nan_to_num(-1),
                                                             batch.per_class_accuracy.nan_to_num(-1))
    assert batch.loss == pytest.approx(sample.loss, rel=1e-6)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for lo in range(0, ds.num_test, 16):
            total += float(F.cross_entropy(model(ds.test_x[lo:lo + 16]), ds.test_y[lo:lo + 16], reduction="sum"))
    assert batch.loss == total / ds.num_test


def test_one_state_equals_the_same_state_among_many():
    ds, model = data(), fcn()
    many = states(model, 3)
    for backend in ("loop", "stacked"):
        together = evaluate(model, many, ds, backend=backend)
        for s, r in zip(many, together):
            alone = evaluate(model, s, ds)
            assert alone.accuracy == r.accuracy and alone.per_class_accuracy.nan_to_num(-1).tolist() == \
                r.per_class_accuracy.nan_to_num(-1).tolist()
            assert alone.loss == pytest.approx(r.loss, rel=1e-6)


def test_the_callers_model_is_left_alone():
    ds, model = data(), fcn()
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    evaluate(model, states(model, 1)[0], ds)
    assert model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


@pytest.mark.parametrize("kwargs, message", [
    ({"indices": [0, 100]}, "indices must lie in"),
    ({"indices": [-1]}, "indices must lie in"),
    ({"indices": [[0, 1]]}, "1-D"),
    ({"loss_sum": "mean"}, "loss_sum"),
    ({"split": "val"}, "split"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_arguments_are_rejected(kwargs, message):
    ds, model = data(), fcn()
    with pytest.raises(FedlibError, match=message):
        evaluate(model, None, ds, **kwargs)


def test_prepared_batches_cannot_be_mixed_with_dataset_arguments():
    ds, model = data(), fcn()
    batches = prepare_batches(model, ds)
    with pytest.raises(FedlibError, match="either batches"):
        evaluate(model, None, ds, batches=batches)
    with pytest.raises(FedlibError, match="either batches"):
        evaluate(model, None, batches=batches, indices=[0])
    with pytest.raises(FedlibError, match="prepare_batches"):
        evaluate(model, None, batches=[(ds.test_x, ds.test_y)])
    with pytest.raises(FedlibError, match="prepared on"):
        evaluate(model, None, batches=batches, device="meta")
