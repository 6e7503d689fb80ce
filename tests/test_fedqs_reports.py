"""The FedQS notebooks' regime and paired-difference helpers (issue 17)."""

from __future__ import annotations

import pandas as pd
import pytest

from fedlib.experiments import RunConfig
from fedlib.reporting.fedqs import Study, paired_rows, regime, task_config, task_regime


def test_fedqs_presets_run_the_official_regime_and_smoke_stays_valid():
    for task in ("cifar10", "adult-gender", "adult-ethnicity", "shakespeare"):
        cfg = RunConfig.from_preset(f"fedavg-{task}")
        assert (cfg.safl.upload, cfg.safl.delays, cfg.safl.clients) == ("overwrite", "official-100", 100)
        smoke = RunConfig.from_preset(f"fedavg-{task}-smoke")
        assert smoke.safl.delays == "uniform" and smoke.safl.clients == 10
    assert regime(task_config("fedavg", "cifar10-x0.5", "cpu")) == \
        "upload=overwrite, delays=official-100 (N = 100, K = 10)"
    assert task_regime("adult-gender", ["safl.clients=10", "safl.delays=uniform", "safl.k=3"]) == \
        "upload=overwrite, delays=uniform 1:50 (N = 10, K = 3)"


def test_table1_cpu_configs_are_the_studys():
    """Table 1's cpu cells: Study("cifar10", "cpu", 50, []) + the split + the mode, seeds 0..2."""
    study = Study("cifar10", "cpu", 50, [])
    cfg = study.config("fedsgd", ["data.partition=dirichlet", "data.alpha=0.1", "safl.mode=semi-async"], 2)
    assert (cfg.model.name, cfg.rounds, cfg.seed, cfg.safl.upload, cfg.safl.delays) == \
        ("cnn3", 50, 2, "overwrite", "official-100")
    snap = study.config("fedsgd", ["data.partition=dirichlet", "data.alpha=0.1", "safl.mode=semi-async",
                                   "safl.upload=snapshot"], 2)
    assert snap.replace(safl=snap.safl.__class__(**{**vars(snap.safl), "upload": "overwrite"})).config_hash() \
        == cfg.config_hash()


def test_paired_rows_verdicts():
    runs = pd.DataFrame({"task": "t", "method": ["A"] * 3 + ["B"] * 3, "seed": [0, 1, 2] * 2,
                         "final": [12.0, 13.0, 14.0, 10.0, 10.5, 11.5], "best": [1, 2, 3, 1, 2, 3]})
    d = paired_rows(runs, [("A", "B", 1)], by=["task"]).set_index("metric")
    assert d.loc["final", "mean"] == pytest.approx(7 / 3) and d.loc["final", "lo"] > 0
    assert d.loc["final", "verdict"].startswith("paper's direction reproduced")
    assert d.loc["best", "verdict"].startswith("not resolved") or d.loc["best", "mean"] == 0
    free = paired_rows(runs, [("A", "B", 0)]).set_index("metric")
    assert free.loc["final", "verdict"].startswith("interval excludes 0")
    assert paired_rows(runs, [("A", "C", 1)]).empty


def test_paired_rows_carry_sign_and_side_and_claim_row_reads_them():
    from fedlib.reporting.fedqs import claim_row

    runs = pd.DataFrame({"task": ["t"] * 6 + ["u"] * 6, "method": (["A"] * 3 + ["B"] * 3) * 2,
                         "seed": [0, 1, 2] * 4,
                         "final": [12.0, 13.0, 14.0, 10.0, 10.5, 11.5, 10.0, 11.0, 12.0, 10.0, 11.5, 11.0]})
    d = paired_rows(runs, [("A", "B", 1)], by=["task"], metrics=("final",))
    assert list(d["side"]) == ["paper", "unresolved"] and list(d["sign"]) == [1, 1]
    row = claim_row("Table X", "A ahead of B in every column", d, label_col="task")
    assert row["measured"] == "partial" and "unresolved (interval contains 0): u" in row["note"]


def test_mean_pairs_averages_only_columns_where_both_ran():
    from fedlib.reporting.fedqs import mean_pairs

    runs = pd.DataFrame({"task": ["t", "t", "u", "u", "v"], "method": ["A", "B", "A", "B", "A"],
                         "seed": [0, 0, 0, 0, 0], "accuracy": [10.0, 8.0, 20.0, 18.0, 99.0]})
    m = mean_pairs(runs, "task", "accuracy").set_index("method")["accuracy"]
    assert m["A"] == 15.0 and m["B"] == 13.0  # column v (A only) is left out of both means


def test_not_run_rows_reach_the_index(tmp_path):
    from fedlib.reporting.coverage import not_run
    from fedlib.reproduce import write_index

    cpu = not_run("cpu")
    assert any("Appendix Table 10" in r["item"] for r in cpu) and all(r["reason"] for r in cpu)
    assert not any("ResNet-18" in r["item"] for r in not_run("paper"))
    out = tmp_path / "reports" / "cpu"
    out.mkdir(parents=True)
    readme = write_index(out, "cpu", {}).read_text()
    assert "## Not run at this profile" in readme and "| FedQS | Appendix Table 10" in readme
