"""``local.precision`` (issue 17): ``fp32`` is the autocast-free code path, so it leaves every
training path exactly as it was before the option existed; ``bf16`` trains under CPU/CUDA autocast
(forward + loss in bfloat16, parameters, optimizer state and updates in float32).

The fp32 yardstick is computed in the same process (issue 28: no float recorded on another CPU —
oneDNN and MKL pick ISA-specific kernels, so an AMD AVX2 and an Intel AVX-512 machine differ from the
8th significant digit on): short SAFL (FedAvg on cnn3 through the loop backend, FedQS-Avg on the FCN
through the stacked backend) and split runs (SFLV1 engine path, SFLV1 split path with SMoFi, SFLV2)
on synthetic data, run (a) with the option left out and (b) with ``precision="fp32"`` under a patch
that removes every autocast context and wrapper (``_autocast_free``). Accuracies, losses and a
checksum of the final global model are compared exactly (``float.hex``).
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from fedlib.data.base import FedDataset
from fedlib.models import build_model
from fedlib.train import LocalConfig

torch.set_num_threads(1)


def _dataset(kind: str, n: int) -> FedDataset:
    g = torch.Generator().manual_seed(0)
    if kind == "tabular":
        x = torch.randn(n, 11, generator=g)
        y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
        k = 2
    else:
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y, k = torch.randint(0, 10, (n,), generator=g), 10
    m = n * 3 // 4
    return FedDataset("synthetic", kind, x[:m], y[:m], x[m:], y[m:], k)


def _parts(n: int, clients: int) -> list[torch.Tensor]:
    return [torch.arange(c, n, clients) for c in range(clients)]


def _checksum(state: dict) -> str:
    return float(sum(v.double().sum() for v in state.values() if v.is_floating_point())).hex()


def _rows(rows, state) -> dict:
    return {"acc": [float(r["accuracy"]).hex() for r in rows], "loss": [float(r["loss"]).hex() for r in rows],
            "state": _checksum(state)}


def safl_run(name: str, precision: str | None = None, rounds: int = 3) -> dict:
    """A short SAFL run: ``fedavg`` (cnn3, loop backend) or ``fedqs`` (FedQS-Avg, FCN, stacked)."""
    from fedlib.safl.baselines import FedAvg
    from fedlib.safl.fedqs import FedQSAvg
    from fedlib.safl.simulator import SAFLSimulator, SimSettings

    extra = {} if precision is None else {"precision": precision}
    if name == "fedavg":
        ds, model = _dataset("image", 160), build_model("cnn3", 10, seed=1)
        local = LocalConfig(lr=0.05, batch_size=10, epochs=1, **extra)
        sim = SAFLSimulator(model, ds, _parts(ds.num_train, 4), FedAvg(FedAvg.Options()),
                            SimSettings(k=2, rounds=rounds, seed=3, backend="loop"), delays=[1, 2, 3, 1], local=local)
    else:
        ds, model = _dataset("tabular", 1600), build_model("fcn", 2, seed=1, in_features=11)
        parts = _parts(ds.num_train, 6)
        val = [p[: len(p) // 5] for p in parts]
        train = [p[len(p) // 5:] for p in parts]
        local = LocalConfig(lr=0.1, batch_size=20, epochs=2, clip_norm=20.0, **extra)
        sim = SAFLSimulator(model, ds, train, FedQSAvg(), SimSettings(k=3, rounds=rounds, seed=4, backend="stacked"),
                            delays=[1, 2, 3, 1, 2, 5], local=local, val_parts=val)
    rows = [sim.run_round() for _ in range(rounds)]
    return _rows(rows, sim.global_state)


def split_run(name: str, precision: str | None = None, rounds: int = 2) -> dict:
    """A short split run: ``v1-engine`` (SFLV1 FedAvg through the engine), ``v1-split`` (SFLV1 +
    SMoFi on the explicit split path) or ``v2`` (SFLV2)."""
    from fedlib.split.addons import SMoFi, ServerAddon
    from fedlib.split.bases import FedAvg
    from fedlib.split.sfl import SplitTrainer
    from fedlib.split.smofi import SMoFiOptions

    extra = {} if precision is None else {"precision": precision}
    ds = _dataset("image", 160)
    model = build_model("cnn", 10, seed=2)
    local = LocalConfig(lr=0.05, momentum=0.9, batch_size=16, epochs=1, drop_last=False, **extra)
    framework = "sflv2" if name == "v2" else "sflv1"
    path = {"v1-engine": "engine", "v1-split": "split", "v2": "split"}[name]
    addon = SMoFi(SMoFiOptions()) if name == "v1-split" else ServerAddon()
    t = SplitTrainer(model, "conv1", ds, _parts(ds.num_train, 4), method=FedAvg(), addon=addon, local=local,
                     rounds=rounds, per_round=3, seed=5, backend="loop", framework=framework, path=path)
    rows = [t.run_round() for _ in range(rounds)]
    return _rows(rows, t.global_state)


def engine_run(backend: str, precision: str | None = None) -> dict:
    """Three clients of the small CNN (with BatchNorm-free convolutions) through one backend:
    ``stacked`` exercises the ``vmap`` path, ``loop`` the reference loop."""
    from fedlib.train import ClientTask, train_clients

    extra = {} if precision is None else {"precision": precision}
    ds, model = _dataset("image", 120), build_model("cnn3", 10, seed=6)
    cfg = LocalConfig(lr=0.05, momentum=0.9, batch_size=10, steps=4, clip_norm=5.0, **extra)
    tasks = [ClientTask(c, p, cfg) for c, p in enumerate(_parts(ds.num_train, 3))]
    res = train_clients(model, model.state_dict(), ds, tasks, seed=7, round=2, backend=backend)
    return {"loss": [float(r.loss).hex() for r in res], "state": [_checksum(r.state) for r in res]}


SAFL_CASES = ("fedavg", "fedqs")
SPLIT_CASES = ("v1-engine", "v1-split", "v2")


@pytest.fixture
def autocast_free(monkeypatch):
    """Every autocast context a nullcontext and every precision wrapper the module itself: the code
    path of the commit before ``local.precision`` existed."""
    import contextlib

    import fedlib.train.common as common
    import fedlib.train.loop as loop
    import fedlib.train.stacked as stacked

    for mod in (common, loop, stacked):
        monkeypatch.setattr(mod, "autocast", lambda precision, device: contextlib.nullcontext())
    monkeypatch.setattr(common, "precision_wrap", lambda module, precision, device: module)


# ------------------------------------------------------------------------------ fp32: unchanged
@pytest.mark.parametrize("backend", ["stacked", "loop"])
def test_fp32_engine_equals_the_autocast_free_path(backend, request):
    default = engine_run(backend)
    request.getfixturevalue("autocast_free")
    assert engine_run(backend, "fp32") == default
    assert engine_run(backend) == default  # deterministic within a process


@pytest.mark.parametrize("name", SAFL_CASES)
def test_fp32_safl_history_equals_the_autocast_free_path(name, request):
    default = safl_run(name)
    request.getfixturevalue("autocast_free")
    assert safl_run(name, "fp32") == default


@pytest.mark.parametrize("name", SPLIT_CASES)
def test_fp32_split_history_equals_the_autocast_free_path(name, request):
    default = split_run(name)
    request.getfixturevalue("autocast_free")
    assert split_run(name, "fp32") == default


# ------------------------------------------------------------------------------ bf16: runs, trains
def _eval_loss(model, state, ds) -> float:
    from fedlib.train import evaluate

    return float(evaluate(model, state, ds, split="train").loss)


@pytest.mark.parametrize("model_name,backend", [("fcn", "stacked"), ("fcn", "loop"), ("cnn3", "stacked"),
                                                ("cnn3", "loop")])
def test_bf16_trains_and_differs_from_fp32(model_name, backend):
    from fedlib.train import ClientTask, train_clients

    if model_name == "fcn":
        ds, model = _dataset("tabular", 400), build_model("fcn", 2, seed=1, in_features=11)
        steps, lr = 30, 0.1
    else:
        ds, model = _dataset("image", 60), build_model("cnn3", 10, seed=1)
        steps, lr = 12, 0.05
    parts = [torch.arange(0, 40), torch.arange(5, 45)]
    out = {}
    for precision in ("fp32", "bf16"):
        cfg = LocalConfig(lr=lr, momentum=0.9, batch_size=20, steps=steps, clip_norm=20.0, augment=False,
                          precision=precision)
        out[precision] = train_clients(model, model.state_dict(), ds, [ClientTask(c, p, cfg) for c, p in
                                                                       enumerate(parts)], seed=0, backend=backend)
    start = _eval_loss(model, model.state_dict(), ds)
    for r16, r32 in zip(out["bf16"], out["fp32"]):
        assert all(v.dtype == torch.float32 for v in r16.state.values())  # weights stay float32
        assert all(v.dtype == torch.float32 for v in r16.opt_state["momentum_buffer"].values())
        assert math.isfinite(r16.loss) and r16.loss != r32.loss
        assert any(not torch.equal(r16.state[k], r32.state[k]) for k in r16.state)
        if model_name == "fcn":  # a separable problem: the client's loss falls as under fp32
            assert _eval_loss(model, r16.state, ds) < 0.8 * start
            assert r16.loss == pytest.approx(r32.loss, rel=0.05)


def test_bf16_runs_the_forward_in_bfloat16_and_fp32_does_not():
    from fedlib.train import ClientTask, train_clients

    # no dropout: its shape probe (dropout_specs) is a forward outside training
    ds, model = _dataset("tabular", 80), build_model("fcn", 2, seed=1, in_features=11, dropout=0.0)
    seen = []
    model.head.register_forward_hook(lambda mod, inp, out: seen.append(out.dtype))
    for precision in ("fp32", "bf16"):
        seen.clear()
        cfg = LocalConfig(batch_size=10, steps=2, precision=precision)
        train_clients(model, None, ds, [ClientTask(0, torch.arange(40), cfg)], seed=0, backend="loop")
        assert set(seen) == {torch.float32 if precision == "fp32" else torch.bfloat16}


def test_bf16_safl_and_split_runs_differ_from_fp32():
    assert safl_run("fedqs", "bf16", rounds=2)["state"] != safl_run("fedqs", "fp32", rounds=2)["state"]
    for name in SPLIT_CASES:
        r = split_run(name, "bf16", rounds=1)
        assert r["state"] != split_run(name, "fp32", rounds=1)["state"] and all(math.isfinite(float.fromhex(v))
                                                                       for v in r["loss"])


def test_mixed_precisions_train_in_separate_groups_with_the_same_results():
    from fedlib.train import ClientTask, train_clients

    ds, model = _dataset("tabular", 200), build_model("fcn", 2, seed=1, in_features=11)
    cfgs = [LocalConfig(batch_size=10, steps=3, precision=p) for p in ("bf16", "fp32", "bf16")]
    parts = [torch.arange(c, 150, 3) for c in range(3)]
    mixed = train_clients(model, None, ds, [ClientTask(c, parts[c], cfgs[c]) for c in range(3)], seed=0,
                          backend="stacked")
    for c in range(3):
        alone = train_clients(model, None, ds, [ClientTask(c, parts[c], cfgs[c]), ClientTask(9, parts[c], cfgs[c])],
                              seed=0, backend="stacked")[0]
        assert all(torch.equal(mixed[c].state[k], alone.state[k]) for k in alone.state)


# ------------------------------------------------------------------------------ errors
def test_unknown_precision_and_unsupported_device_raise_clear_errors():
    from fedlib.core.errors import FedlibError
    from fedlib.experiments.config import RunConfig
    from fedlib.train import ClientTask, train_clients
    from fedlib.train.common import check_precision

    with pytest.raises(FedlibError, match="precision 'fp16'"):
        LocalConfig(precision="fp16").validate()
    with pytest.raises(FedlibError, match="precision"):
        RunConfig.from_preset("toy-smoke").with_overrides(["local.precision=half"])
    assert RunConfig.from_preset("toy-smoke").with_overrides(["local.precision=bf16"]).local.precision == "bf16"
    ds, model = _dataset("tabular", 40), build_model("fcn", 2, seed=1, in_features=11)
    with pytest.raises(FedlibError, match="precision"):
        train_clients(model, None, ds, [ClientTask(0, torch.arange(10), LocalConfig(precision="fp8"))], seed=0)
    with warnings.catch_warnings():  # every CPU can (slowly, with a warning, without AMX/AVX512-BF16)
        warnings.simplefilter("ignore")
        check_precision("bf16", "cpu")
    check_precision("fp32", "meta")
    if not torch.cuda.is_available():
        with pytest.raises(FedlibError, match="cannot run"):
            check_precision("bf16", "cuda")
    with pytest.raises(FedlibError, match="cannot run"):
        check_precision("bf16", "meta")
    with pytest.raises(FedlibError, match="one local precision"):
        train_clients(model, None, ds, [ClientTask(c, torch.arange(10), LocalConfig(precision=p))
                                        for c, p in enumerate(("fp32", "bf16"))], seed=0,
                      hook=lambda *a: None)



def test_bf16_on_a_cpu_without_native_bfloat16_warns(monkeypatch):
    import fedlib.train.common as common

    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: False)
    with pytest.warns(UserWarning, match="emulated"):
        common.check_precision("bf16", "cpu")
    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        common.check_precision("bf16", "cpu")
        common.check_precision("fp32", "cpu")


if __name__ == "__main__":
    import pprint

    pprint.pprint(record(), width=120)
