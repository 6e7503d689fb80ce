"""The SAFL simulator evaluates through ``fedlib.train.evaluate`` (issue 13) with the same numbers
as before: the global model on the test samples (history ``accuracy`` / ``loss``) and a client's
per-class validation accuracy (``ctx.evaluate_per_class``, FedQS Mod②).

Two yardsticks: values recorded with the simulator's own loops before the change (this machine,
torch 2.14.1: accuracies and per-class accuracies are exact counts; a loss is a float32 sum and
could round differently on another CPU, hence rel 1e-6), and those former loops themselves, kept
in ``benchmarks/bench_eval.py``, run here on the same inputs (bit-for-bit equality).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from fedlib.data.base import FedDataset
from fedlib.models import build_model
from fedlib.safl.baselines import FedAvg
from fedlib.safl.simulator import SAFLSimulator, SimSettings
from fedlib.train import LocalConfig

torch.set_num_threads(1)
NAN = math.nan
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_eval.py"

# recorded at commit 1b9e405, before the change: SAFLSimulator._evaluate_global and evaluate_state
RECORDED = {
    "fcn": {"global_full": (0.3333333333333333, 1.1846456782023111),
            "global_subset": (0.36, 1.1707694244384765),
            "per_class": [0.2430555522441864, 0.5661764740943909, 0.17058824002742767]},
    "cnn3": {"global_full": (0.1, 2.430769805908203),
             "global_subset": (0.12121212121212122, 2.3255485765861743),
             "per_class": [0.0, 0.0, 0.0, 0.4736842215061188, 0.0, 0.0, 0.20000000298023224, 0.0, 0.0, 0.0]},
    "lstm": {"global_full": (0.0, 4.422038396199544),
             "global_subset": (0.0, 4.428393363952637),
             "per_class": [0.0 if c in (13, 16, 17, 18, 20, 24, 32, 38, 40, 46, 50, 53, 55, 61, 69, 70, 73) else NAN
                           for c in range(80)]},
}
CASES = {"fcn": ("tabular", 3, 1200), "cnn3": ("image", 10, 400), "lstm": ("text", 80, 48)}


def dataset(kind: str, n: int) -> FedDataset:
    g = torch.Generator().manual_seed(0)
    if kind == "tabular":
        x, y, k = torch.randn(n, 11, generator=g), torch.randint(0, 3, (n,), generator=g), 3
    elif kind == "text":
        x, y, k = torch.randint(0, 80, (n, 80), generator=g), torch.randint(0, 80, (n,), generator=g), 80
    else:
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y, k = torch.randint(0, 10, (n,), generator=g), 10
    m = n * 3 // 4
    return FedDataset("synthetic", kind, x[:m], y[:m], x[m:], y[m:], k)


def setup(name: str):
    kind, k, n = CASES[name]
    ds = dataset(kind, n)
    model = build_model(name, k, seed=1, **({"in_features": 11} if name == "fcn" else {}))
    g = torch.Generator().manual_seed(2)
    state = {key: (v + 0.05 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v.clone())
             for key, v in model.state_dict().items()}
    return ds, model, state


def simulator(ds, model, test_indices=None) -> SAFLSimulator:
    parts = [torch.arange(0, ds.num_train // 2), torch.arange(ds.num_train // 2, ds.num_train)]
    return SAFLSimulator(model, ds, parts, FedAvg(FedAvg.Options()), SimSettings(k=1, rounds=1), delays=[1, 2],
                         local=LocalConfig(lr=0.1, batch_size=8, steps=1), test_indices=test_indices)


def same(a, b) -> bool:
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def former():
    spec = importlib.util.spec_from_file_location("bench_eval_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_are_those_recorded_before_the_change(name):
    ds, model, state = setup(name)
    ref = RECORDED[name]
    for tag, test in (("global_full", None), ("global_subset", torch.arange(1, ds.num_test, 3))):
        sim = simulator(ds, model, test)
        sim.global_state = state
        row = sim._evaluate_global()
        assert row["accuracy"] == ref[tag][0]
        assert row["loss"] == pytest.approx(ref[tag][1], rel=1e-6)
    per_class = sim.ctx.evaluate_per_class(state, torch.arange(0, ds.num_train, 2))
    assert per_class.dtype == torch.float32 and same(per_class.tolist(), ref["per_class"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_equal_the_former_loops_bit_for_bit(name, former):
    ds, model, state = setup(name)
    test, val = torch.arange(2, ds.num_test, 2), torch.arange(1, ds.num_train, 3)
    sim = simulator(ds, model, test)
    before_any_eval = sim.ctx.evaluate_per_class(state, val)
    sim.global_state = state
    row = sim._evaluate_global()
    assert (row["accuracy"], row["loss"]) == former.reference_global(model, ds, test, torch.device("cpu"))(state)
    expected = former.reference_validation(build_model(name, CASES[name][1], seed=1,
                                                       **({"in_features": 11} if name == "fcn" else {})),
                                           state, ds, val)
    assert same(before_any_eval.tolist(), expected.tolist())
    assert same(sim.ctx.evaluate_per_class(state, val).tolist(), expected.tolist())


def test_history_rows_use_the_prepared_test_batches(monkeypatch):
    ds, model, _ = setup("fcn")
    sim = simulator(ds, model, torch.arange(0, ds.num_test, 2))
    calls = []
    real = ds.batch
    monkeypatch.setattr(ds, "batch", lambda idx, train=True, **kw: calls.append(bool(train)) or real(idx, train, **kw))
    first = sim._evaluate_global()
    n_test = calls.count(False)
    assert n_test >= 1 and sim._evaluate_global() == first and calls.count(False) == n_test  # prepared once
