"""The client-training engine: stacked == loop, determinism, independence, hook, validation."""

from __future__ import annotations

import math

import pytest
import torch

from fedlib.data.base import FedDataset
from fedlib.core.errors import FedlibError
from fedlib.models import build_model
from fedlib.train import ClientTask, LocalConfig, OptimizerBuffers, choose_backend, evaluate, train_clients

torch.set_num_threads(1)


# ----------------------------------------------------------------------------------- helpers
def make_dataset(kind: str, n: int = 120, seed: int = 0, size: int = 32) -> FedDataset:
    g = torch.Generator().manual_seed(seed)
    if kind == "tabular":
        x, y, k = torch.randn(n, 11, generator=g), torch.randint(0, 2, (n,), generator=g), 2
    elif kind == "text":
        x, y, k = torch.randint(0, 80, (n, 80), generator=g), torch.randint(0, 80, (n,), generator=g), 80
    else:
        x = torch.randint(0, 256, (n, 3, size, size), dtype=torch.uint8, generator=g)
        y, k = torch.randint(0, 10, (n,), generator=g), 10
    m = n * 3 // 4
    return FedDataset("synthetic", kind, x[:m], y[:m], x[m:], y[m:], k)


class SpyDataset:
    """Forwards to a dataset and records every training batch's indices."""

    def __init__(self, ds):
        self.ds, self.calls = ds, []

    num_train = property(lambda self: self.ds.num_train)
    device = property(lambda self: self.ds.device)

    def batch(self, idx, train=True, generator=None, augment=True):
        self.calls.append(idx.clone())
        return self.ds.batch(idx, train, generator, augment)


MODELS = {  # name -> (dataset kind, classes, image size, dtype)
    "fcn": ("tabular", 2, None, torch.float32),
    "lstm": ("text", 80, None, torch.float32),
    "cnn": ("image", 10, 32, torch.float32),
    # ResNet-18 with batch 4: float32 rounding is amplified by BN (float32 loop vs float64 differs by
    # ~1%), so the two backends are compared in float64; 16x16 inputs keep it fast
    "resnet18": ("image", 10, 16, torch.float64),
}


def setup(name, dtype=None):
    kind, k, size, default = MODELS[name]
    ds = make_dataset(kind, size=size or 32)
    model = build_model(name, k, seed=0).to(dtype or default)
    return model, ds


SGD_GROUP = [  # unequal sizes (20, 10, 7, 3 samples), clipping, per-client lr/momentum, NAG, prox, L2
    LocalConfig(lr=0.05, momentum=0.9, batch_size=4, steps=3, clip_norm=0.5),
    LocalConfig(lr=0.02, momentum=0.5, nesterov=True, batch_size=4, epochs=1, prox_mu=0.3),
    LocalConfig(lr=0.03, batch_size=4, epochs=1, drop_last=False, weight_decay=0.01, l2_in_loss=0.05),
    LocalConfig(lr=0.03, batch_size=4, epochs=1),  # 3 samples, drop_last: no step
]
ADAM_GROUP = [
    LocalConfig(optimizer="adam", lr=1e-3, batch_size=4, steps=3, weight_decay=0.01, clip_norm=1.0),
    LocalConfig(optimizer="adam", lr=3e-3, betas=(0.8, 0.99), batch_size=4, epochs=1, prox_mu=0.1),
]
ADAMW_GROUP = [
    LocalConfig(optimizer="adamw", lr=2e-3, batch_size=4, steps=2, weight_decay=0.1),
    LocalConfig(optimizer="adamw", lr=1e-3, batch_size=4, steps=3, weight_decay=0.05, l2_in_loss=0.01),
]
SIZES = (20, 10, 7, 3)


def tasks_for(configs, sizes=SIZES, offset=0):
    tasks, lo = [], offset
    for cid, (cfg, n) in enumerate(zip(configs, sizes)):
        tasks.append(ClientTask(cid, torch.arange(lo, lo + n), cfg))
        lo += n
    return tasks


def assert_results_close(a, b, rtol, atol, exact=False):
    assert len(a) == len(b)
    for ra, rb in zip(a, b):
        assert (ra.client_id, ra.steps, ra.num_samples) == (rb.client_id, rb.steps, rb.num_samples)
        assert ra.state.keys() == rb.state.keys() == ra.delta.keys()
        for k in ra.state:
            for x, y in ((ra.state[k], rb.state[k]), (ra.delta[k], rb.delta[k])):
                if exact or not x.is_floating_point():
                    assert torch.equal(x, y), k
                else:
                    torch.testing.assert_close(x, y, rtol=rtol, atol=atol, msg=k)
        if math.isnan(ra.loss):
            assert math.isnan(rb.loss)
        else:
            assert ra.loss == (rb.loss if exact else pytest.approx(rb.loss, rel=rtol, abs=atol))
        assert (ra.opt_state is None) == (rb.opt_state is None)
        if ra.opt_state is not None:
            assert ra.opt_state.keys() == rb.opt_state.keys()
            for kind, per in ra.opt_state.items():
                if kind == "step":
                    assert per == rb.opt_state[kind]
                    continue
                for n, v in per.items():
                    torch.testing.assert_close(v, rb.opt_state[kind][n], rtol=rtol, atol=atol)


def tol(model):
    return (1e-9, 1e-11) if next(model.parameters()).dtype == torch.float64 else (1e-4, 1e-6)


# ----------------------------------------------------------------------------------- stacked == loop
@pytest.mark.parametrize("name", ["fcn", "lstm", "cnn"])
def test_stacked_equals_loop_sgd_group(name):
    model, ds = setup(name)
    tasks = tasks_for(SGD_GROUP)
    loop = train_clients(model, model.state_dict(), ds, tasks, seed=3, backend="loop")
    stacked = train_clients(model, model.state_dict(), ds, tasks, seed=3, backend="stacked")
    assert [r.steps for r in loop] == [3, 2, 2, 0]
    assert_results_close(loop, stacked, *tol(model))
    moved = [max(float(d.abs().max()) for k, d in r.delta.items() if d.is_floating_point()) for r in loop]
    assert all(m > 0 for m in moved[:3]) and moved[3] == 0  # trained; the 0-step client untouched


@pytest.mark.parametrize("name", ["fcn", "cnn"])
@pytest.mark.parametrize("group", ["adam", "adamw"])
def test_stacked_equals_loop_adam(name, group):
    # Adam divides by sqrt(v): where a gradient entry is ~0, float32 rounding noise becomes an
    # O(lr) difference, so the backends are compared in float64
    model, ds = setup(name, torch.float64)
    tasks = tasks_for(ADAM_GROUP if group == "adam" else ADAMW_GROUP)
    loop = train_clients(model, None, ds, tasks, seed=5, backend="loop")
    stacked = train_clients(model, None, ds, tasks, seed=5, backend="stacked")
    assert_results_close(loop, stacked, *tol(model))
    assert loop[0].opt_state["step"] == tasks[0].config.steps


def test_stacked_equals_loop_per_client_starts_and_batch_sizes():
    model, ds = setup("fcn")
    other = build_model("fcn", 2, seed=1).state_dict()
    cfgs = [LocalConfig(lr=0.1, momentum=0.9, batch_size=5, steps=4),
            LocalConfig(lr=0.1, batch_size=3, steps=2, drop_last=False),
            LocalConfig(lr=0.05, momentum=0.3, batch_size=4, steps=4)]
    tasks = tasks_for(cfgs, sizes=(12, 7, 9))
    tasks[1].start = 1
    starts = [model.state_dict(), other]
    a = train_clients(model, starts, ds, tasks, seed=0, backend="loop")
    b = train_clients(model, starts, ds, tasks, seed=0, backend="stacked")
    assert_results_close(a, b, 1e-4, 1e-6)
    for r, t in zip(a, tasks):  # delta is taken from each client's own start
        for k in r.state:
            torch.testing.assert_close(r.state[k] - starts[t.start][k], r.delta[k])


def test_mixed_optimizers_in_one_call():
    model, ds = setup("fcn")
    tasks = tasks_for([SGD_GROUP[0], ADAM_GROUP[0], SGD_GROUP[1]])
    a = train_clients(model, None, ds, tasks, seed=2, backend="loop")
    b = train_clients(model, None, ds, tasks, seed=2, backend="stacked")
    assert_results_close(a, b, 1e-4, 1e-6)
    assert "momentum_buffer" in a[0].opt_state and "exp_avg" in a[1].opt_state


def test_stacked_equals_loop_resnet18_batchnorm():
    """ResNet-18 (BatchNorm, per-client running buffers): clip + momentum vs NAG + prox, 2 / 1 steps."""
    model, ds = setup("resnet18")
    configs = [LocalConfig(lr=0.05, momentum=0.9, batch_size=4, steps=2, clip_norm=0.5), SGD_GROUP[1]]
    tasks = tasks_for(configs, sizes=(12, 4))
    loop = train_clients(model, None, ds, tasks, seed=1, backend="loop")
    stacked = train_clients(model, None, ds, tasks, seed=1, backend="stacked")
    assert [r.steps for r in loop] == [2, 1]
    assert_results_close(loop, stacked, *tol(model))
    for r in loop:
        assert r.state["stem.1.num_batches_tracked"].dtype == torch.long
        assert int(r.delta["stem.1.num_batches_tracked"]) == r.steps
        assert float(r.delta["layer4.1.bn2.running_mean"].abs().max()) > 0


# ----------------------------------------------------------------------------------- steps, order, streams
def test_steps_epochs_and_drop_last():
    model, ds = setup("fcn")
    spy = SpyDataset(ds)
    cfgs = [LocalConfig(batch_size=4, epochs=2), LocalConfig(batch_size=4, epochs=2, drop_last=False),
            LocalConfig(batch_size=4, steps=5), LocalConfig(batch_size=4, epochs=3)]
    tasks = tasks_for(cfgs, sizes=(10, 10, 6, 3))
    res = train_clients(model, None, spy, tasks, seed=0, backend="loop")
    assert [r.steps for r in res] == [4, 6, 5, 0]
    assert math.isnan(res[3].loss) and res[3].opt_state is None
    assert all(float(d.abs().max()) == 0 for d in res[3].delta.values())
    # lock-step order: client 0,1,2 at tau 0, ..., so client 1's batches are calls 1, 4, 7, ...
    c1 = [spy.calls[i] for i in (1, 4, 7, 10, 12, 14)]
    assert [len(b) for b in c1] == [4, 4, 2, 4, 4, 2]
    for epoch in (c1[:3], c1[3:]):  # each epoch is a permutation of the client's indices
        assert sorted(torch.cat(epoch).tolist()) == list(range(10, 20))
    assert not torch.equal(torch.cat(c1[:3]), torch.cat(c1[3:]))


def test_batch_order_same_in_both_backends():
    model, ds = setup("fcn")
    tasks = tasks_for(SGD_GROUP, offset=1)  # sample 0 belongs to nobody (the engine may probe the dataset)
    owner = {int(i): t.client_id for t in tasks for i in t.indices}
    seen = {}
    for backend in ("loop", "stacked"):
        spy = SpyDataset(ds)
        train_clients(model, None, spy, tasks, seed=9, backend=backend)
        per_client = {t.client_id: [] for t in tasks}
        for call in spy.calls:  # the stacked backend may fetch a group's batches in one call
            for i in call.tolist():
                if i in owner:
                    per_client[owner[i]].append(i)
        seen[backend] = per_client
    assert seen["loop"] == seen["stacked"]
    assert [len(v) for v in seen["loop"].values()] == [12, 8, 7, 0]


@pytest.mark.parametrize("backend", ["loop", "stacked"])
def test_same_seed_bit_identical_other_seed_differs(backend):
    model, ds = setup("fcn")  # dropout 0.3 on: masks come from the client streams
    tasks = tasks_for(SGD_GROUP)
    a = train_clients(model, None, ds, tasks, seed=4, round=2, backend=backend)
    b = train_clients(model, None, ds, tasks, seed=4, round=2, backend=backend)
    assert_results_close(a, b, 0, 0, exact=True)
    for kw in ({"seed": 5, "round": 2}, {"seed": 4, "round": 3}):
        c = train_clients(model, None, ds, tasks, backend=backend, **kw)
        assert not torch.equal(a[0].state["head.weight"], c[0].state["head.weight"])


def test_images_augmented_reproducibly():
    model, ds = setup("cnn")
    tasks = tasks_for(SGD_GROUP[:2])
    a = train_clients(model, None, ds, tasks, seed=1, backend="loop")
    b = train_clients(model, None, ds, tasks, seed=1, backend="loop")
    c = train_clients(model, None, ds, [ClientTask(t.client_id, t.indices,
                                                   LocalConfig(**{**t.config.__dict__, "augment": False}))
                                        for t in tasks], seed=1, backend="loop")
    assert_results_close(a, b, 0, 0, exact=True)
    assert not torch.equal(a[0].state["head.weight"], c[0].state["head.weight"])


@pytest.mark.parametrize("name, backends", [("fcn", ("loop", "stacked")), ("lstm", ("stacked",))])
def test_client_alone_equals_client_in_group(name, backends):
    model, ds = setup(name)
    tasks = tasks_for(SGD_GROUP)
    for backend in backends:
        group = train_clients(model, None, ds, tasks, seed=7, backend=backend)
        for t, r in zip(tasks, group):
            if name == "lstm" and t.client_id in (1, 3):
                continue
            alone = train_clients(model, None, ds, [t], seed=7, backend=backend)
            # loop: bit-identical; stacked: the random draws are identical, the batched kernels
            # may round differently for a different group size
            assert_results_close([r], alone, 1e-5, 1e-7, exact=backend == "loop")
    swapped = train_clients(model, None, ds, tasks[::-1], seed=7, backend="stacked")
    assert_results_close(group, swapped[::-1], 1e-5, 1e-7)


def test_dropout_is_active_in_training():
    model, ds = setup("fcn")
    tasks = tasks_for(SGD_GROUP[:1])
    no_drop = build_model("fcn", 2, seed=0, dropout=0.0)
    a = train_clients(model, None, ds, tasks, seed=1, backend="stacked")
    b = train_clients(no_drop, None, ds, tasks, seed=1, backend="stacked")
    assert not torch.allclose(a[0].state["head.weight"], b[0].state["head.weight"])
    model.eval()  # the template is private: the user's module keeps working as before
    model(torch.randn(3, 11))


# ----------------------------------------------------------------------------------- hook
class RecordingHook:
    """Records every buffer it sees, then does a SMoFi-like write: mean over all clients (scaled)."""

    def __init__(self):
        self.seen = []

    def __call__(self, step, active, buffers: OptimizerBuffers):
        assert isinstance(active, torch.Tensor) and active.dtype == torch.bool
        rec = {"step": step, "active": active.clone(), "kinds": buffers.kinds}
        for kind in buffers.kinds:
            for n in buffers.param_names:
                v = buffers.get(kind, n).clone()
                rec[(kind, n)] = v
                buffers.set(kind, n, (0.5 * v.mean(0, keepdim=True)).expand_as(v))
        self.seen.append(rec)


@pytest.mark.parametrize("group", ["sgd", "adam"])
def test_hook_sees_and_sets_identically(group):
    model, ds = setup("fcn")
    configs = [c for c in SGD_GROUP if not c.nesterov] if group == "sgd" else ADAM_GROUP
    tasks = tasks_for(configs)
    hooks, res = {}, {}
    for backend in ("loop", "stacked"):
        hooks[backend] = RecordingHook()
        res[backend] = train_clients(model, None, ds, tasks, seed=1, backend=backend, hook=hooks[backend])
    assert_results_close(res["loop"], res["stacked"], 1e-4, 1e-6)
    a, b = hooks["loop"].seen, hooks["stacked"].seen
    assert len(a) == len(b) == max(r.steps for r in res["loop"])
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys() and ra["kinds"] == rb["kinds"]
        assert torch.equal(ra["active"], rb["active"])
        for key in ra:
            if isinstance(key, tuple):
                torch.testing.assert_close(ra[key], rb[key], rtol=1e-4, atol=1e-6)
    steps = torch.tensor([r.steps for r in res["loop"]])
    assert [bool(x) for x in a[0]["active"]] == (steps > 0).tolist()
    assert [bool(x) for x in a[-1]["active"]] == (steps == steps.max()).tolist()
    # the writes changed the training: without the hook the result differs
    plain = train_clients(model, None, ds, tasks, seed=1, backend="loop")
    assert not torch.allclose(plain[0].state["head.weight"], res["loop"][0].state["head.weight"])


def test_hook_buffer_rows():
    """Momentum-0 clients and clients without a step read as zeros; finished rows keep their value."""
    model, ds = setup("fcn")
    cfgs = [LocalConfig(lr=0.1, momentum=0.9, batch_size=4, steps=3),
            LocalConfig(lr=0.1, momentum=0.9, batch_size=4, steps=1),
            LocalConfig(lr=0.1, momentum=0.0, batch_size=4, steps=2),
            LocalConfig(lr=0.1, momentum=0.9, batch_size=4, steps=1)]
    tasks = tasks_for(cfgs, sizes=(8, 8, 8, 3))  # the last takes no step (3 < batch 4)
    for backend in ("loop", "stacked"):
        seen = []
        train_clients(model, None, ds, tasks, seed=0, backend=backend,
                      hook=lambda s, a, buf: seen.append(buf.get("momentum_buffer", "head.bias").clone()))
        assert all(float(v[2].abs().max()) == 0 and float(v[3].abs().max()) == 0 for v in seen)
        assert float(seen[0][1].abs().max()) > 0
        assert torch.equal(seen[0][1], seen[2][1])  # client 1 finished after step 0
        assert not torch.equal(seen[0][0], seen[1][0])


# ----------------------------------------------------------------------------------- evaluation
def test_evaluate_matches_manual_and_stacked():
    model, ds = setup("fcn")
    res = evaluate(model, None, ds, batch_size=7)
    model.eval()
    with torch.no_grad():
        out = model(ds.test_x)
    acc = float((out.argmax(1) == ds.test_y).float().mean())
    loss = float(torch.nn.functional.cross_entropy(out, ds.test_y))
    assert res.n == ds.num_test and res.accuracy == pytest.approx(acc) and res.loss == pytest.approx(loss, rel=1e-5)
    for c in range(2):
        sel = ds.test_y == c
        assert float(res.per_class_accuracy[c]) == pytest.approx(float((out.argmax(1)[sel] == c).float().mean()))
    states = [r.state for r in train_clients(model, None, ds, tasks_for(SGD_GROUP[:3]), seed=0)]
    a = evaluate(model, states, ds, backend="loop")
    b = evaluate(model, states, ds, backend="stacked")
    for x, y in zip(a, b):
        assert x.accuracy == pytest.approx(y.accuracy) and x.loss == pytest.approx(y.loss, rel=1e-5)
    train = evaluate(model, None, ds, split="train")
    assert train.n == ds.num_train


# ----------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, message", [
    ({"lr": -0.1}, "learning rate"),
    ({"momentum": 1.0}, "momentum"),
    ({"momentum": -0.5}, "momentum"),
    ({"batch_size": 0}, "batch_size"),
    ({"steps": -1}, "steps"),
    ({"epochs": None, "steps": None}, "epochs or steps"),
    ({"optimizer": "rmsprop"}, "optimizer"),
    ({"nesterov": True}, "nesterov"),
    ({"optimizer": "adam", "momentum": 0.9}, "momentum"),
    ({"clip_norm": 0.0}, "clip_norm"),
    ({"prox_mu": -1.0}, "prox_mu"),
    ({"betas": (0.9, 1.0), "optimizer": "adam"}, "betas"),
])
def test_bad_config_rejected_before_any_work(kwargs, message):
    model, ds = setup("fcn")
    spy = SpyDataset(ds)
    tasks = tasks_for([SGD_GROUP[0], LocalConfig(**kwargs)])
    with pytest.raises(FedlibError, match=message) as err:
        train_clients(model, None, spy, tasks, seed=0)
    assert "client 1" in str(err.value)
    assert spy.calls == []
    with pytest.raises(FedlibError, match=message):
        LocalConfig(**kwargs).validate()


@pytest.mark.parametrize("case, message", [
    ("indices_high", "out of range"),
    ("indices_negative", "out of range"),
    ("indices_float", "integer tensor"),
    ("empty", "at least one"),
    ("start", "start=1 is out of range"),
    ("backend", "unknown backend"),
    ("hook_optimizers", "one optimizer"),
    ("starts_keys", "lacks state entries"),
])
def test_bad_call_rejected(case, message):
    model, ds = setup("fcn")
    spy = SpyDataset(ds)
    tasks = tasks_for(SGD_GROUP[:2])
    kw = {"seed": 0}
    starts = None
    if case == "indices_high":
        tasks[1].indices = torch.tensor([0, ds.num_train])
    elif case == "indices_negative":
        tasks[1].indices = torch.tensor([-1, 2])
    elif case == "indices_float":
        tasks[1].indices = torch.tensor([0.0, 1.0])
    elif case == "empty":
        tasks = []
    elif case == "start":
        tasks[1].start = 1
    elif case == "backend":
        kw["backend"] = "gpu"
    elif case == "hook_optimizers":
        tasks = tasks_for([SGD_GROUP[0], ADAM_GROUP[0]])
        kw["hook"] = lambda *a: None
    elif case == "starts_keys":
        starts = {"head.weight": model.state_dict()["head.weight"]}
    with pytest.raises(FedlibError, match=message):
        train_clients(model, starts, spy, tasks, **kw)
    assert spy.calls == []


def test_auto_rule():
    assert choose_backend(build_model("fcn", 2, seed=0), "cpu", 10) == "stacked"
    assert choose_backend(build_model("lstm", 80, seed=0), "cpu", 10) == "loop"
    assert choose_backend(build_model("lstm", 80, seed=0), "cuda", 10) == "stacked"
    assert choose_backend(build_model("cnn", 10, seed=0), "cpu", 10) == "loop"
    assert choose_backend(build_model("cnn", 10, seed=0), "cuda", 10) == "stacked"
    assert choose_backend(build_model("fcn", 2, seed=0), "cpu", 1) == "loop"


def test_dropout_masks_rate_and_stacking():
    from fedlib.train.stream import mask_words, words_to_mask

    g = torch.Generator().manual_seed(0)
    words = torch.stack([mask_words((40, 500), g, "cpu") for _ in range(3)])
    stacked = words_to_mask(words, (40, 500), 0.3, torch.float32)
    rows = torch.stack([words_to_mask(w, (40, 500), 0.3, torch.float32) for w in words])
    assert torch.equal(stacked, rows) and stacked.shape == (3, 40, 500)
    values = torch.unique(stacked).tolist()
    assert len(values) == 2 and values[0] == 0.0 and values[1] == pytest.approx(1 / 0.7)
    assert float((stacked > 0).float().mean()) == pytest.approx(0.7, abs=0.01)


def test_user_model_untouched_and_frozen_parameters_kept():
    model, ds = setup("fcn")
    model.fc1[0].bias.requires_grad_(False)  # frozen: trained by neither backend
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tasks = tasks_for(SGD_GROUP[:2])
    a = train_clients(model, None, ds, tasks, seed=0, backend="loop")
    b = train_clients(model, None, ds, tasks, seed=0, backend="stacked")
    assert_results_close(a, b, 1e-4, 1e-6)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert float(a[0].delta["fc1.0.bias"].abs().max()) == 0
    assert float(a[0].delta["fc1.0.weight"].abs().max()) > 0


@pytest.mark.parametrize("group", ["sgd", "adam"])
def test_init_opt_state_carried_in(group):
    """FedNAG / SMoFi carry-over: start from a given optimizer state, identically in both backends."""
    model, ds = setup("fcn", torch.float64)
    configs = [SGD_GROUP[0], SGD_GROUP[1], SGD_GROUP[2]] if group == "sgd" else ADAM_GROUP
    first = train_clients(model, None, ds, tasks_for(configs), seed=0, backend="loop")
    carried = first[0].opt_state
    tasks = tasks_for(configs, offset=40)
    for t in tasks:
        t.init_opt_state = carried
    a = train_clients(model, first[0].state, ds, tasks, seed=1, backend="loop")
    b = train_clients(model, first[0].state, ds, tasks, seed=1, backend="stacked")
    assert_results_close(a, b, 1e-9, 1e-11)
    fresh = train_clients(model, first[0].state, ds, tasks_for(configs, offset=40), seed=1, backend="loop")
    assert not torch.allclose(a[0].state["head.weight"], fresh[0].state["head.weight"])
    if group == "adam":
        assert a[0].opt_state["step"] == carried["step"] + tasks[0].config.steps
    # a single SGD step from a carried buffer is torch.optim's  buf = mu*buf0 + g
    if group == "sgd":
        one = [ClientTask(0, torch.arange(8), LocalConfig(lr=0.1, momentum=0.9, batch_size=4, steps=1),
                          init_opt_state=carried)]
        zero = [ClientTask(0, torch.arange(8), LocalConfig(lr=0.1, momentum=0.9, batch_size=4, steps=1))]
        r1 = train_clients(model, first[0].state, ds, one, seed=2, backend="stacked")[0]
        r0 = train_clients(model, first[0].state, ds, zero, seed=2, backend="stacked")[0]
        for n, buf0 in carried["momentum_buffer"].items():
            torch.testing.assert_close(r1.opt_state["momentum_buffer"][n],
                                       0.9 * buf0 + r0.opt_state["momentum_buffer"][n])


def test_init_opt_state_validated():
    model, ds = setup("fcn")
    bad = [{"exp_avg": {}}, {"momentum_buffer": {"nope": torch.zeros(2)}},
           {"momentum_buffer": {"head.bias": torch.zeros(3)}}, [1, 2]]
    for init in bad:
        t = ClientTask(0, torch.arange(8), LocalConfig(momentum=0.9, batch_size=4), init_opt_state=init)
        with pytest.raises(FedlibError, match="init_opt_state"):
            train_clients(model, None, ds, [t], seed=0)


def test_fcn_vmap_path_equals_direct_path(monkeypatch):
    """The FCN runs on batched matmuls (direct.py); the generic vmap path (dropout masks as vmapped
    inputs) must give the same results."""
    import fedlib.train.stacked as stacked

    model, ds = setup("fcn")
    tasks = tasks_for(SGD_GROUP)
    loop = train_clients(model, None, ds, tasks, seed=3, backend="loop")
    direct = train_clients(model, None, ds, tasks, seed=3, backend="stacked")
    monkeypatch.setattr(stacked, "supports_direct", lambda m: False)
    vmapped = train_clients(model, None, ds, tasks, seed=3, backend="stacked")
    assert_results_close(loop, vmapped, 1e-4, 1e-6)
    assert_results_close(direct, vmapped, 1e-4, 1e-6)


def test_stacked_results_do_not_share_storage():
    """Keeping one client's result must not keep the whole group's stacked tensors alive."""
    model, ds = setup("fcn")
    res = train_clients(model, None, ds, tasks_for(SGD_GROUP[:3]), seed=0, backend="stacked")
    w = res[0].state["head.weight"]
    assert w.untyped_storage().nbytes() == w.numel() * w.element_size()
    assert res[0].opt_state["momentum_buffer"]["head.weight"].untyped_storage().nbytes() == w.numel() * 4


@pytest.mark.parametrize("name,optimizer", [("fcn", "sgd"), ("fcn", "adam"), ("cnn3", "sgd")])
def test_stacked_compaction_equals_the_gather_scatter_path_bit_for_bit(name, optimizer):
    """Without a hook the stacked backend drops finished clients' rows once (speed only); with a
    (no-op) hook it gathers and scatters the active rows every lock-step as before. Clients of
    unequal sizes (one with no step) finish at different lock-steps: the results are identical."""
    g = torch.Generator().manual_seed(0)
    if name == "fcn":
        x = torch.randn(400, 11, generator=g)
        ds = FedDataset("s", "tabular", x, (x[:, 0] > 0).long(), x[:40], (x[:40, 0] > 0).long(), 2)
        model, sizes = build_model("fcn", 2, seed=1, in_features=11), [37, 120, 0, 64, 95]
    else:
        x = torch.randint(0, 256, (120, 3, 32, 32), dtype=torch.uint8, generator=g)
        y = torch.randint(0, 10, (120,), generator=g)
        ds = FedDataset("s", "image", x, y, x[:20], y[:20], 10)
        model, sizes = build_model("cnn3", 10, seed=1), [9, 30, 0, 17]
    cfgs = [LocalConfig(lr=0.05 + 0.01 * c, momentum=0.5 if optimizer == "sgd" else 0.0, optimizer=optimizer,
                        batch_size=8, epochs=2, drop_last=c % 2 == 0, clip_norm=3.0 if c % 2 else None,
                        prox_mu=0.01 * (c % 2)) for c in range(len(sizes))]
    tasks = [ClientTask(c, torch.arange(sizes[c]) + c, cfgs[c]) for c in range(len(sizes))]
    fast = train_clients(model, None, ds, tasks, seed=3, backend="stacked")
    ref = train_clients(model, None, ds, tasks, seed=3, backend="stacked", hook=lambda *a: None)
    for a, b in zip(fast, ref):
        assert a.steps == b.steps and (a.loss == b.loss or (math.isnan(a.loss) and math.isnan(b.loss)))
        assert all(torch.equal(a.state[k], b.state[k]) for k in b.state)
        assert (a.opt_state is None) == (b.opt_state is None)
        for kind, per in (b.opt_state or {}).items():
            assert per == a.opt_state[kind] if kind == "step" else all(torch.equal(v, a.opt_state[kind][n])
                                                                       for n, v in per.items())
