"""Issue 34: the evaluation cadence (``eval_every`` + ``eval_last``), metrics on evaluated rounds only,
the ``long`` profile (overlay, label, hash neutrality) and ``fedlib reproduce --profile long``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.core.utils import eval_rounds, is_eval_round
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.experiments.metrics import (convergence_accuracy, oscillations, rounds_to_fraction, rounds_to_target,
                                        summarize)
from fedlib.experiments.results.rehash import NEUTRAL_FIELDS

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ the rule
def test_cadence_rule_every_e_then_every_round_of_the_last_l():
    got = eval_rounds(400, 5, 20)
    assert got == [*range(5, 381, 5), *range(381, 401)] and len(got) == 96
    assert eval_rounds(12, 4) == [4, 8, 12] and eval_rounds(10, 4) == [4, 8, 10]  # last round always
    assert eval_rounds(7, 1, 0) == list(range(1, 8))
    assert [r for r in range(1, 13) if is_eval_round(r, 12, 4, 3)] == [4, 8, 10, 11, 12]


# ------------------------------------------------------------------ honoured by every trainer
def _evaluated(history) -> list[int]:
    h = pd.DataFrame(history)
    return [int(r) for r in h.loc[h["accuracy"].notna(), "round"]]


def test_toy_history_keeps_every_row_and_evaluates_at_the_cadence(tmp_path):
    cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=30", "eval_every=4", "eval_last=5"])
    res = run(cfg, store=ResultStore(tmp_path), progress=False)
    h = res.history
    assert list(h["round"]) == list(range(1, 31))  # a row per round
    assert _evaluated(h) == eval_rounds(30, 4, 5) == [4, 8, 12, 16, 20, 24, 26, 27, 28, 29, 30]
    assert h.loc[h["accuracy"].isna(), "loss"].isna().all()
    # the summary's metrics read the evaluated rounds only
    s = res.summary
    ev = h.dropna(subset=["accuracy"])
    assert s["convergence_accuracy"] == pytest.approx(ev["accuracy"].tail(20).mean())
    assert s["best_accuracy"] == ev["accuracy"].max() and s["final_accuracy"] == ev["accuracy"].iloc[-1]


def test_safl_simulator_evaluates_at_the_cadence(data_root, tmp_path_factory, monkeypatch):
    from fedlib.experiments.running.runner import build_trainer

    monkeypatch.setenv("FEDLIB_DATA", str(data_root))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    tiny = ["safl.clients=8", "safl.delays=uniform", "safl.upload=snapshot", "safl.k=3", "safl.ratio=4",
            "rounds=12", "data.max_train=1200", "data.max_test=300", "local.epochs=1", "checkpoint_every=0"]
    cfg = RunConfig.from_preset("fedavg-adult-gender").with_overrides([*tiny, "eval_every=4", "eval_last=3"])
    sim = build_trainer(cfg)
    assert (sim.eval_every, sim.eval_last) == (4, 3)
    rows = [sim.run_round() for _ in range(12)]
    assert [r["round"] for r in rows] == list(range(1, 13))
    assert _evaluated(rows) == [4, 8, 10, 11, 12]
    assert all(math.isnan(r["loss"]) for r in rows if r["round"] not in (4, 8, 10, 11, 12))
    # the cadence changes no training: the models of an every-round run are the same at its evaluated rounds
    every = build_trainer(RunConfig.from_preset("fedavg-adult-gender").with_overrides(tiny))
    full = [every.run_round() for _ in range(12)]
    assert [full[r - 1]["accuracy"] for r in (4, 8, 10, 11, 12)] == [rows[r - 1]["accuracy"] for r in (4, 8, 10, 11, 12)]


def test_split_trainer_evaluates_at_the_cadence(data_root):
    from fedlib.data import load_dataset, make_partition
    from fedlib.split.algorithms import build_trainer

    ds = load_dataset("cifar10", root=str(data_root))
    import dataclasses
    ds = dataclasses.replace(ds, train_x=ds.train_x[:120], train_y=ds.train_y[:120], test_x=ds.test_x[:40],
                             test_y=ds.test_y[:40], meta={})
    parts = make_partition("iid", ds, 4, 0)
    cfg = RunConfig.from_dict({"paradigm": "split", "algorithm": "sflv1", "rounds": 7, "eval_every": 3,
                               "eval_last": 2, "device": "cpu", "backend": "loop", "checkpoint_every": 0,
                               "data": {"dataset": "cifar10", "partition": "iid"},
                               "model": {"name": "cnn", "cut": "conv1"},
                               "local": {"lr": 0.05, "batch_size": 16, "epochs": 1},
                               "split": {"clients": 4, "per_round": 2}})
    t = build_trainer(cfg, cfg.resolve(data_fingerprint=None).options, dataset=ds, parts=parts)
    rows = [t.run_round() for _ in range(7)]
    assert _evaluated(rows) == [3, 6, 7]


# ------------------------------------------------------------------ metrics on evaluated rounds only
def test_metrics_ignore_rounds_without_an_evaluation():
    nan = math.nan
    # rounds 1..10, evaluated at 2, 4, 6, 8, 9, 10 (every 2nd, then the last 2)
    acc = [nan, 0.30, nan, 0.60, nan, 0.40, nan, 0.70, 0.72, 0.74]
    h = pd.DataFrame({"round": range(1, 11), "accuracy": acc, "loss": [1.0 if a == a else nan for a in acc]})
    ev = [a for a in acc if a == a]
    assert convergence_accuracy(h, last=3) == pytest.approx(np.mean(ev[-3:]))  # last 3 *evaluated* rounds
    assert convergence_accuracy(h, last=20) == pytest.approx(np.mean(ev))
    assert rounds_to_target(h, 0.55) == 4  # the first evaluated round reaching it
    assert rounds_to_target(h, 0.9) is None
    assert rounds_to_fraction(h, 0.95, last=3) == 8  # 0.95 * 0.72 = 0.684
    # threshold 15 points: 0.60 -> 0.40 across the NaN round 5 is one drop between evaluated rounds
    assert oscillations(h, 15.0) == 1 and oscillations(h, 25.0) == 0
    s = summarize(h, last=3)
    assert s["best_accuracy"] == 0.74 and s["final_accuracy"] == 0.74 and s["oscillations"] == 1
    assert s["rounds"] == 10 and s["final_loss"] == 1.0
    # the reporting layer's final / best (fedlib.reporting.fedqs.run_metrics reads curve_metrics)
    from fedlib.reporting.stats import curve_metrics

    m = curve_metrics(h, last=3)
    assert m["final"] == pytest.approx(100 * np.mean(ev[-3:])) and m["best"] == pytest.approx(74.0)
    # a NaN round never counts as a 0 (nor as a drop to 0)
    assert not any(math.isnan(v) for v in (m["final"], m["best"], m["auc"]))


def test_paired_gap_curves_use_rounds_both_runs_evaluated():
    from fedlib.reporting.fedqs import paired_gap_curves

    curves = pd.DataFrame({"method": ["A"] * 3 + ["B"] * 3, "seed": 0, "round": [5, 10, 11] * 2,
                           "accuracy": [50.0, 60.0, 61.0, 40.0, 45.0, 47.0], "setting": "s"})
    g = paired_gap_curves(curves, [("A", "B")], by=["setting"])
    assert list(g["round"]) == [5, 10, 11] and list(g["gap"]) == [10.0, 15.0, 14.0]
    assert set(g["comparison"]) == {"A − B"}
    assert paired_gap_curves(curves, [("A", "C")]).empty


# ------------------------------------------------------------------ config: validation and hash
def test_eval_last_is_hash_neutral_at_zero_and_validated():
    base = RunConfig.from_preset("fedsgd-cifar10-cpu")
    assert base.eval_last == 0 and "eval_last" not in base.hashed_dict()
    explicit = base.with_overrides(["eval_last=0"])
    assert explicit.config_hash(None) == base.config_hash(None)
    assert NEUTRAL_FIELDS["eval_last"] == 0
    cad = base.with_overrides(["eval_every=5", "eval_last=20"])
    assert cad.hashed_dict()["eval_last"] == 20 and cad.config_hash(None) != base.with_overrides(
        ["eval_every=5"]).config_hash(None)
    with pytest.raises(FedlibError, match="eval_last must be >= 0"):
        base.with_overrides(["eval_every=5", "eval_last=-1"])
    with pytest.raises(FedlibError, match="changes nothing with eval_every=1"):
        base.with_overrides(["eval_last=5"])
    with pytest.raises(FedlibError, match="covers all 50 rounds"):
        base.with_overrides(["eval_every=5", "eval_last=50"])


def test_long_profile_is_the_cpu_settings_at_400_rounds_with_the_cadence():
    from fedlib.reporting import PROFILES, resolve_profile, run_label
    from fedlib.reporting.fedqs import Study, cadence, scale, task_config

    cpu = RunConfig.from_preset("fedsgd-cifar10-cpu")
    cli = cpu.with_overrides(["rounds=400", "eval_every=5", "eval_last=20"])  # the same run from the command line
    cfg = task_config("fedsgd", "cifar10-x0.5", "long")
    assert (cfg.rounds, cfg.eval_every, cfg.eval_last, cfg.profile) == (400, 5, 20, "custom")
    assert cfg.config_hash(None) == cli.config_hash(None)
    # the cpu settings otherwise: CIFAR-10, cnn3, N = 100, K = 10, official-100, overwrite, no validation split
    assert cfg.replace(rounds=50, eval_every=1, eval_last=0, profile="cpu").to_dict() == cpu.to_dict()
    assert cfg.data.validation == "none" and cfg.model.name == "cnn3" and cfg.safl.delays == "official-100"
    assert (cfg.safl.clients, cfg.safl.k, cfg.safl.upload) == (100, 10, "overwrite")
    assert scale("cifar10", "long") == ["model.name=cnn3", "rounds=400", "eval_every=5", "eval_last=20"]
    assert cadence("long") == ["eval_every=5", "eval_last=20"] and cadence("cpu") == []
    # a one-task study's run (Table 5's full FedQS) is Table 2's run: one stored result
    study = Study("cifar10", "long", 400, tuple(cadence("long")))
    assert study.config("fedqs-avg", ["data.alpha=0.5"], 1).config_hash(None) == \
        task_config("fedqs-avg", "cifar10-x0.5", "long").replace(seed=1).config_hash(None)
    assert "long" in PROFILES and resolve_profile("long") == "long" and run_label("long", False) == "custom"


def test_auto_never_picks_long(monkeypatch):
    from fedlib.reporting import resolve_profile

    monkeypatch.delenv("FEDLIB_PROFILE", raising=False)
    assert resolve_profile("auto") in ("cpu", "paper")


# ------------------------------------------------------------------ fedlib reproduce --profile long
def test_reproduce_long_lists_only_the_notebooks_that_define_it(capsys):
    from fedlib.cli import main
    from fedlib.reproduce import books_for, find_notebooks, notebook_profiles

    books = find_notebooks(ROOT)
    long = [str(b.relative_to(ROOT / "notebooks")) for b in books_for(books, "long", ROOT)]
    assert long == ["fedqs/table1_aggregation_gap.ipynb", "fedqs/table2_accuracy.ipynb",
                    "fedqs/table5_ablation.ipynb",
                    # issue 43: the SMoFi notebooks' own long profile (fedlib.reporting.smofi.SMOFI_PARTICIPATION)
                    "smofi/ablations.ipynb", "smofi/convergence_speedup.ipynb", "smofi/frameworks.ipynb",
                    "smofi/main_accuracy.ipynb"]
    assert books_for(books, "cpu", ROOT) == books  # the full profiles keep every notebook
    assert notebook_profiles(ROOT / "notebooks/fedqs/table3_runtime.ipynb") == {"smoke", "cpu", "paper"}
    assert main(["reproduce", "--profile", "long", "--list"]) == 0
    assert capsys.readouterr().out.split() == [f"notebooks/{b}" for b in long]
    with pytest.raises(FedlibError, match="no selected notebook has a 'long' profile"):
        books_for(find_notebooks(ROOT, ["fedqs/table3"]), "long", ROOT)
