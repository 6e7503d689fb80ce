"""benchmarks/bench_flower.py: the Flower and the fedlib side of each workload are configured alike.

Runs without flwr (the script imports it only inside the function that starts Flower's
simulation); the benchmark itself is not part of CI.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_flower.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_flower_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    spec.loader.exec_module(mod)
    assert not any(m == "flwr" or m.startswith("flwr.") for m in set(sys.modules) - before), \
        "importing the benchmark must not import flwr"
    return mod


@pytest.mark.parametrize("name, rounds", [("adult", 400), ("cifar10", 10)])
def test_both_sides_configured_alike(bench, name, rounds):
    wc = bench.workload_config(name)
    fl, fe = wc["flower"], wc["fedlib"]
    assert fl == fe
    assert (fe["clients"], fe["per_round"], fe["epochs"], fe["batch"]) == (100, 10, 2, 50)
    assert fe["rounds"] == rounds and fe["mode"] == "sync" and fe["eval_every"] == 1
    assert fe["model"] == {"adult": "fcn", "cifar10": "cnn3"}[name]
    cfg = bench.fedlib_config(name)
    assert (fe["lr"], fe["momentum"], fe["clip_norm"]) == (cfg.local.lr, cfg.local.momentum, cfg.local.clip_norm)
    # a shorter run changes the round count on both sides and nothing else
    short = bench.workload_config(name, rounds=5)
    assert short["flower"]["rounds"] == short["fedlib"]["rounds"] == 5
    assert {k: v for k, v in short["flower"].items() if k != "rounds"} == \
        {k: v for k, v in fl.items() if k != "rounds"}


def test_flower_strategy_samples_k_of_n(bench):
    fs = bench.flower_settings(bench.fedlib_config("adult"))
    s = fs["strategy"]
    # FedAvg.num_fit_clients: max(int(available * fraction_fit), min_fit_clients)
    assert max(int(fs["num_supernodes"] * s["fraction_fit"]), s["min_fit_clients"]) == 10
    assert s["fraction_evaluate"] == 0.0 and s["min_available_clients"] == fs["num_supernodes"] == 100
    assert fs["client_resources"]["num_cpus"] == 1


@pytest.mark.parametrize("name", ["adult", "cifar10"])
def test_same_partition_and_data(bench, name):
    """Flower client i trains on exactly the samples fedlib's simulator gives client i."""
    from fedlib.experiments.running.runner import build_trainer

    cfg = bench.fedlib_config(name, rounds=1)
    sim = build_trainer(cfg)
    assert sim.mode == "sync" and sim.k == 10 and sim.n == 100 and sim.test_indices is None
    for cid in range(sim.n):
        assert torch.equal(bench.client_indices(name, cid), sim.train_parts[cid])
    ds = bench.task(name)[0]
    assert torch.equal(ds.train_x, sim.dataset.train_x) and torch.equal(ds.test_y, sim.dataset.test_y)
    # same initial global model
    init = bench.new_model(name).state_dict()
    assert all(torch.equal(init[k], sim.global_state[k]) for k in init)
    # the server evaluates on the test split as fedlib does (same normalised inputs)
    xt, yt = bench.test_tensors(name)
    x2, y2 = sim.dataset.batch(torch.arange(sim.dataset.num_test), train=False, augment=False)
    assert torch.equal(xt, x2) and torch.equal(yt, y2)
    # the Flower client's Dataset yields model-ready samples of the same shape
    d = bench.ClientData(name, 3, augment=False)
    assert len(d) == len(sim.train_parts[3])
    x, y = d[0]
    assert x.shape == xt.shape[1:] and x.dtype == torch.float32 and int(y) == int(ds.train_y[sim.train_parts[3][0]])
    if ds.kind == "image":  # without augmentation: fedlib's normalised image, up to float rounding
        xf, _ = ds.batch(sim.train_parts[3][:1], train=True, augment=False)
        # one sample vs a batch take different vector kernels: 1 ulp apart near 0 on AVX-512 (issue 28)
        assert torch.allclose(x, xf[0], rtol=1e-5, atol=1e-6)


def test_local_training_matches_preset(bench):
    """One plain-PyTorch local training step runs with the preset's settings (no flwr)."""
    c = bench.flower_settings(bench.fedlib_config("adult"))["client"]
    model = bench.new_model("adult")
    data = bench.ClientData("adult", 0)
    loss = bench.train_local(model, data, dict(c, epochs=1))
    assert loss == loss and loss > 0
    w = bench.get_weights(model)
    m2 = bench.new_model("adult")
    bench.set_weights(m2, w)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), m2.state_dict().values()))
