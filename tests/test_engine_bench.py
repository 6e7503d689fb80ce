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
