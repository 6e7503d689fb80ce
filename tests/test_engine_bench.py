"""``fedlib bench engine`` runs and reports what it measured (no timing is asserted)."""

from __future__ import annotations

import json

import torch

from fedlib.cli import main
from fedlib.train.bench import measure, measure_memory

torch.set_num_threads(1)


def test_measure_reports_both_backends():
    r = measure("fcn", clients=2, steps=2, batch_size=5, repeats=1)
    assert set(r["seconds"]) == {"loop", "stacked"}
    assert r["stacked_over_loop"] == r["seconds"]["loop"] / r["seconds"]["stacked"]
    assert r["auto"] == "stacked" and r["threads"] == 1 and r["torch"] == torch.__version__
    assert all(v > 0 for v in r["samples_per_s"].values())


def test_cli_json(capsys):
    rc = main(["bench", "engine", "--model", "cnn", "--clients", "2", "--steps", "1", "--batch-size", "2",
               "--repeats", "1", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "cnn" and out["auto"] == "loop" and out["device"] == "cpu"


def test_memory_of_each_backend():
    r = measure_memory(clients=4, steps=2, batch_size=5)
    assert set(r["peak_bytes"]) == {"loop", "stacked"}
    assert all(v > 0 for v in r["peak_bytes"].values())  # at least the results themselves


def test_torch_baseline_is_timed_alongside_and_reported():
    r = measure("cnn3", clients=2, steps=1, batch_size=4, repeats=1, baseline="torch")
    assert set(r["seconds"]) == {"loop", "stacked", "torch"}
    assert r["fedlib_over_torch"] == r["seconds"]["torch"] / r["seconds"][r["auto"]]
    assert r["eval_image_over_train_image"] > 0


def test_plain_torch_baseline_leaves_the_start_state_untouched():
    """Each client trains its own copy (as a user loop would); the shared start state is not trained."""
    from fedlib.models import build_model
    from fedlib.train.bench import bench_tasks, plain_torch_train, synthetic_dataset

    ds = synthetic_dataset("cnn3", 8)
    start = build_model("cnn3", 10, seed=0).state_dict()
    before = {k: v.clone() for k, v in start.items()}
    plain_torch_train("cnn3", start, ds, bench_tasks(2, 2, 2))
    assert all(torch.equal(before[k], start[k]) for k in start)  # the start state is not trained in place


def test_unknown_baseline_is_refused():
    import pytest

    from fedlib.core.errors import FedlibError

    with pytest.raises(FedlibError, match="unknown baseline"):
        measure("fcn", clients=1, steps=1, batch_size=2, repeats=1, baseline="jax")


def test_bf16_is_timed_interleaved_with_fp32_and_the_ratio_reported(capsys):
    r = measure("fcn", clients=2, steps=2, batch_size=5, repeats=1, backends=("loop",), precision="bf16")
    assert set(r["seconds"]) == {"loop", "loop+bf16"}
    assert r["bf16_over_fp32"] == {"loop": r["seconds"]["loop+bf16"] / r["seconds"]["loop"]}
    rc = main(["bench", "engine", "--model", "cnn3", "--clients", "1", "--steps", "1", "--batch-size", "2",
               "--repeats", "1", "--precision", "bf16", "--backend", "loop"])
    assert rc == 0
    assert "loop: bf16/fp32 time per image" in capsys.readouterr().out
