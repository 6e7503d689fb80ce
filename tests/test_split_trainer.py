"""SplitTrainer (SFLV1/SFLV2 × methods × add-ons): identities 7 and 8 of spec §6, resume, errors."""

import dataclasses
import io
import math
import os
from pathlib import Path

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import RunConfig
from fedlib.split.addons import FedAvgM, SlowMo
from fedlib.split.algorithms import build_trainer
from fedlib.split.methods import make_method, options_class, parse_method

torch.set_num_threads(1)
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def small():
    from fedlib.data import load_dataset, make_partition

    root = os.environ.get("FEDLIB_DATA") or str(_SHARED)
    cache = os.environ.get("FEDLIB_CACHE") or str(Path(__file__).resolve().parents[1] / "data" / "cache")
    ds = load_dataset("cifar10", root=root, cache_dir=cache)
    g = torch.Generator().manual_seed(0)
    tr = torch.randperm(ds.num_train, generator=g)[:360]
    te = torch.randperm(ds.num_test, generator=g)[:100]
    ds = dataclasses.replace(ds, train_x=ds.train_x[tr], train_y=ds.train_y[tr],
                             test_x=ds.test_x[te], test_y=ds.test_y[te], meta={})
    parts = make_partition("dirichlet", ds, 6, 0, alpha=0.5)
    return ds, parts


def cfg(algorithm="sflv1", **over):
    d = {"paradigm": "split", "algorithm": algorithm, "rounds": 2, "device": "cpu",
         "backend": "loop", "checkpoint_every": 0,
         "data": {"dataset": "cifar10", "partition": "dirichlet", "alpha": 0.5},
         "model": {"name": "cnn", "cut": "conv1"},
         "local": {"lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 16,
                   "epochs": 1, "drop_last": False},
         "split": {"clients": 6, "per_round": 3}}
    for k, v in over.items():
        if isinstance(v, dict):
            d.setdefault(k, {}).update(v)
        else:
            d[k] = v
    return RunConfig.from_dict(d)


def trainer(small, c, **kw):
    ds, parts = small
    return build_trainer(c, c.resolve(data_fingerprint=None).options, dataset=ds, parts=parts, **kw)


def run(t, rounds):
    return [t.run_round() for _ in range(rounds)]


def close(a, b, atol=2e-5):
    for k in a:
        assert torch.allclose(a[k].float(), b[k].float(), atol=atol, rtol=1e-4), \
            f"{k}: {(a[k].float() - b[k].float()).abs().max().item():.3g}"


# ------------------------------------------------------------------------------ identity 7
def test_7_sflv1_fedavg_split_path_equals_fedavg_on_unsplit_model(small):
    """The engine path trains the unsplit model per client (FedAvg); the split path exchanges
    smashed data between client parts and server surrogates. Same seeds → same global models."""
    whole = trainer(small, cfg("sflv1"), path="engine")
    split = trainer(small, cfg("sflv1"), path="split")
    rw, rs = run(whole, 2), run(split, 2)
    assert whole.path == "engine" and split.path == "split"
    close(whole.global_state, split.global_state)
    assert [r["steps_max"] for r in rw] == [r["steps_max"] for r in rs]
    assert rw[-1]["accuracy"] == pytest.approx(rs[-1]["accuracy"], abs=0.02)


def test_smofi_engine_hook_equals_explicit_split_path(small):
    c = cfg("fedavg+smofi", options={"alpha": -0.3})
    a, b = trainer(small, c, path="engine"), trainer(small, c, path="split")
    run(a, 2), run(b, 2)
    close(a.global_state, b.global_state)
    plain = trainer(small, cfg("sflv1"))
    run(plain, 2)
    diff = max((a.global_state[k] - plain.global_state[k]).abs().max().item()
               for k in a.server_names)
    assert diff > 1e-4  # fusion changed the server part


# ------------------------------------------------------------------------------ identity 8
@pytest.mark.parametrize("local,dtype,atol", [
    ({}, torch.float32, 5e-5),
    # Adam divides the fused first moment by each surrogate's own sqrt(v): float32 rounding
    # differences between the backends get amplified where v is tiny, so compare in float64
    ({"optimizer": "adam", "momentum": 0.0, "lr": 1e-3, "steps": 2}, torch.float64, 1e-9),
], ids=["sgdm", "adam-float64"])
def test_8_stacked_surrogates_equal_per_surrogate_loop(small, local, dtype, atol):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        st = trainer(small, cfg("fedavg+smofi", backend="stacked", local=local))
        lp = trainer(small, cfg("fedavg+smofi", backend="loop", local=local))
        run(st, 1), run(lp, 1)
    finally:
        torch.set_default_dtype(old)
    assert st.global_state["head.weight"].dtype == dtype
    close(st.global_state, lp.global_state, atol=atol)


# ------------------------------------------------------------------------------ plug-in identities
def test_one_selected_client_smofi_equals_sflv1_and_sflv2(small):
    one = {"split": {"clients": 6, "per_round": 1}}
    s1 = trainer(small, cfg("sflv1", **one))
    sm = trainer(small, cfg("fedavg+smofi", **one))
    s2 = trainer(small, cfg("sflv2", **one))
    run(s1, 2), run(sm, 2), run(s2, 2)
    assert s2.framework == "sflv2" and s2.path == "split"
    close(s1.global_state, sm.global_state, atol=1e-6)
    # the split path runs other kernels than the engine's whole-model step: float-level agreement,
    # whose size depends on the CPU's instruction set (3.6e-5 on an AVX-512 EPYC after 2 rounds;
    # issue 28: no tolerance tuned on one machine); a wrong step differs by orders of magnitude more
    close(s1.global_state, s2.global_state, atol=1e-4)


def test_sflv2_trains_one_server_part_in_a_seeded_order(small):
    t = trainer(small, cfg("sflv2"))
    row = t.run_round()
    orders = [r["order"] for r in t.client_rows()]
    assert sorted(orders) == [0, 1, 2]
    assert row["virtual_time"] == sum(r["steps"] for r in t.client_rows())  # sequential server
    assert t.sflv2_order(0, 3) == trainer(small, cfg("sflv2")).sflv2_order(0, 3)


def test_sflv2_server_momentum_carry_or_reset(small):
    """Issue 31: SFLV2's server optimizer carries its momentum to the next client (default) or
    restarts it per client; the server weights carry over either way."""
    carry = trainer(small, cfg("sflv2"))
    reset = trainer(small, cfg("sflv2", split={"sflv2_momentum": "reset"}))
    assert (carry.sflv2_momentum, reset.sflv2_momentum) == ("carry", "reset")
    run(carry, 1), run(reset, 1)
    first = carry.sflv2_order(0, 3)[0]  # the first client served sees the same fresh optimizer
    rows_c, rows_r = carry.client_rows(), reset.client_rows()
    assert rows_c[first]["train_loss"] == rows_r[first]["train_loss"]
    diff = max((carry.global_state[k] - reset.global_state[k]).abs().max().item() for k in carry.server_names)
    assert diff > 1e-5  # later clients start from zero momentum under reset
    assert "sflv2_momentum" not in carry.summary() and reset.summary()["sflv2_momentum"] == "reset"
    # without momentum (plain SGD, no optimizer state) the two are the same computation
    plain = {"local": {"momentum": 0.0}}
    a = trainer(small, cfg("sflv2", **plain))
    b = trainer(small, cfg("sflv2", split={"sflv2_momentum": "reset"}, **plain))
    run(a, 1), run(b, 1)
    close(a.global_state, b.global_state, atol=0.0)


def test_sflv2_momentum_is_hash_neutral_at_its_default_and_sflv2_only():
    base = cfg("sflv2")
    explicit = cfg("sflv2", split={"sflv2_momentum": "carry"})
    reset = cfg("sflv2", split={"sflv2_momentum": "reset"})
    assert base.config_hash(None) == explicit.config_hash(None) != reset.config_hash(None)
    assert "sflv2_momentum" not in base.hashed_dict()["split"]
    assert reset.hashed_dict()["split"]["sflv2_momentum"] == "reset"
    assert cfg("fedavg", split={"framework": "sflv2", "sflv2_momentum": "reset"}).split.sflv2_momentum == "reset"
    with pytest.raises(FedlibError, match="sflv2_momentum"):
        cfg("sflv1", split={"sflv2_momentum": "reset"})
    with pytest.raises(FedlibError, match="sflv2_momentum"):
        cfg("sflv2", split={"sflv2_momentum": "fresh"})


def test_fednag_averages_momentum_and_restarts_clients_from_it(small):
    t = trainer(small, cfg("fednag"))
    assert t.path == "split" or t.path == "engine"
    t.run_round()
    nag = t.method.momentum
    assert set(nag) == {"momentum_buffer"}
    assert set(nag["momentum_buffer"]) == set(t.trainable)
    assert t.initial_opt_state() is nag
    assert math.isfinite(t.run_round()["accuracy"])


def test_fednar_and_fedprox_local_configs(small):
    base = cfg("sflv1").local
    nar = make_method("fednar", options_class("fednar", None)()).local_config(base, 10)
    assert nar.lr == pytest.approx(0.05 * 0.998 ** 10)
    assert (nar.l2_in_loss, nar.weight_decay, nar.clip_norm) == (0.1, 0.0, 10.0)
    prox = make_method("fedprox", options_class("fedprox", "smofi")(mu=0.5)).local_config(base, 0)
    assert prox.prox_mu == 0.5
    t = trainer(small, cfg("fednar+smofi"))
    rows = run(t, 2)
    assert rows[1]["lr"] == pytest.approx(0.05 * 0.998)


def test_server_momentum_addons():
    g = {"w": torch.tensor([1.0, 2.0]), "n": torch.tensor(3)}
    avg = {"w": torch.tensor([0.5, 1.0]), "n": torch.tensor(5)}
    # FedAvgM β_g = 0, η_g = 1 and SlowMo β = 0, α = 1 are FedAvg
    assert torch.allclose(FedAvgM(0.0, 1.0).update(g, avg, ["w"], 0.1)["w"], avg["w"])
    assert torch.allclose(SlowMo(0.0, 1.0).update(g, avg, ["w"], 0.1)["w"], avg["w"])
    m = FedAvgM(0.9, 1.0)
    w1 = m.update(g, avg, ["w"], 0.1)
    w2 = m.update(w1, {"w": w1["w"] - 0.1, "n": avg["n"]}, ["w"], 0.1)  # Δ = 0.1 in round 2
    assert torch.allclose(w2["w"], w1["w"] - (0.9 * torch.tensor([0.5, 1.0]) + 0.1), atol=1e-6)
    assert w2["n"] == avg["n"]  # buffers from the plain average
    m2 = FedAvgM(0.9, 1.0)
    m2.load_state_dict(m.state_dict())
    assert torch.equal(m2.momentum.buffer["w"], m.momentum.buffer["w"])
    s = SlowMo(0.7, 1.0)
    s.update(g, avg, ["w"], 0.1)
    assert torch.allclose(s.momentum.buffer["w"], torch.tensor([5.0, 10.0], dtype=torch.float64))  # Δ / γ
    st = s.state_dict()
    s2 = SlowMo(0.7, 1.0)
    s2.load_state_dict(st)
    assert torch.equal(s2.momentum.buffer["w"], s.momentum.buffer["w"])


# ------------------------------------------------------------------------------ resume
def test_resume_is_bit_identical(small):
    """SMoFi with carried momentum: the richest cross-round state (global model, fused buffers)."""
    c = cfg("fedavg+smofi", rounds=2, options={"carry_momentum": True})
    full = trainer(small, c)
    rows_full = run(full, 2)
    first = trainer(small, c)
    first.run_round()
    assert first.addon.carry and set(first.addon.carry) == {"momentum_buffer"}
    buf = io.BytesIO()
    torch.save(first.state_dict(), buf)
    buf.seek(0)
    resumed = trainer(small, c)
    resumed.load_state_dict(torch.load(buf, weights_only=True))
    row = resumed.run_round()
    assert row == rows_full[1]
    for k in full.global_state:
        assert torch.equal(full.global_state[k], resumed.global_state[k]), k


@pytest.mark.parametrize("name,key", [("sflv1", None), ("fednag", "nag"),
                                      ("fedavg+fedavgm", "addon"), ("fedavg+smofi", "carry")])
def test_checkpoint_layout_is_unchanged(small, name, key):
    """Checkpoints written before the methods became objects keep loading: the same top-level
    keys, each method's state under its old key."""
    options = {"carry_momentum": True} if key == "carry" else {}
    t = trainer(small, cfg(name, rounds=1, options=options))
    t.run_round()
    st = t.state_dict()
    assert list(st) == ["round", "virtual_time", "global", "addon", "carry", "nag", "best"]
    for k in ("addon", "carry", "nag"):
        assert bool(st[k]) == (k == key), k


def test_explicit_trainer_equals_the_factory(small):
    """SplitTrainer needs no run config: model, data, method objects and settings suffice."""
    from fedlib.core.utils import derive_seed
    from fedlib.models import build_model
    from fedlib.split.addons import SMoFi
    from fedlib.split.bases import FedProx, FedProxOptions
    from fedlib.split.sfl import SplitTrainer
    from fedlib.split.smofi import SMoFiOptions

    ds, parts = small
    c = cfg("fedprox+smofi", options={"mu": 0.1, "alpha": -0.3})
    model = build_model("cnn", 10, seed=derive_seed(c.seed, "model"))
    explicit = SplitTrainer(model, "conv1", ds, parts, method=FedProx(FedProxOptions(mu=0.1)),
                            addon=SMoFi(SMoFiOptions(alpha=-0.3)), local=c.local, rounds=2,
                            per_round=3, seed=c.seed, device="cpu", backend="loop",
                            model_name="cnn")
    built = trainer(small, c)
    assert run(explicit, 2) == run(built, 2)
    assert explicit.summary() == built.summary()
    for k in built.global_state:
        assert torch.equal(explicit.global_state[k], built.global_state[k]), k


# ------------------------------------------------------------------------------ errors
def test_bad_inputs_raise_clear_errors(small):
    with pytest.raises(FedlibError, match="alpha"):
        cfg("fedavg+smofi", options={"alpha": 0.0})
    with pytest.raises(FedlibError, match="alpha"):
        cfg("fedavg+smofi", options={"alpha": 0.5})
    with pytest.raises(FedlibError, match="cut point"):
        cfg("sflv1", model={"name": "cnn", "cut": "layer9"})
    with pytest.raises(FedlibError, match="per_round"):
        cfg("sflv1", split={"clients": 4, "per_round": 5})
    # the trainer checks too (a bare, unvalidated config)
    bad = cfg("sflv1")
    bad.split.per_round = 7
    with pytest.raises(FedlibError, match="per_round"):
        trainer(small, bad)
    bad = cfg("sflv1")
    bad.model.cut = "nowhere"
    with pytest.raises(FedlibError, match="cut point"):
        trainer(small, bad)
    with pytest.raises(FedlibError, match="SFLV2"):
        trainer(small, cfg("fedavg+smofi", split={"framework": "sflv2"}))
    with pytest.raises(FedlibError, match="unknown split-FL method"):
        parse_method("fedavg+nothing")
    with pytest.raises(FedlibError, match="path"):
        trainer(small, cfg("sflv2"), path="engine")
