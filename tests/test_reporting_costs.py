"""A report's run costs (issue 34 item 4): the ratios read off one run's summary and history."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from fedlib.reporting.costs import cost_note, cost_table, run_cost


def fake(rounds=10, evaluated=(5, 10), total=600.0, train=400.0, ev=100.0, steps=(900, 100), skipped=7):
    acc = [0.5 if r in evaluated else float("nan") for r in range(1, rounds + 1)]
    summary = {"time_total": total, "time_train": train, "time_eval": ev}
    if steps is not None:
        summary.update(steps_trained=steps[0], steps_skipped=steps[1], trainings_skipped=skipped)
    return SimpleNamespace(summary=summary, history=pd.DataFrame({"round": range(1, rounds + 1), "accuracy": acc}))


def test_ratios_price_what_was_saved_at_the_runs_own_rates():
    c = run_cost(fake())
    assert c["evaluations"] == 2 and c["rounds"] == 10 and c["minutes"] == 10.0
    # 8 more evaluations at 50 s each over 600 s; 100 skipped steps at 400 s / 900 steps
    assert c["every_round_x"] == pytest.approx((600 + 8 * 50) / 600)
    assert c["train_all_x"] == pytest.approx((600 + 400 * 100 / 900) / 600)


def test_nothing_saved_gives_ratio_one_and_unknown_counts_give_nan():
    c = run_cost(fake(evaluated=range(1, 11), steps=(900, 0), skipped=0))
    assert c["every_round_x"] == 1.0 and c["train_all_x"] == 1.0
    old = run_cost(fake(steps=None))  # stored before the simulator counted its work
    assert math.isnan(old["train_all_x"]) and math.isnan(old["trainings_skipped"])
    assert math.isnan(run_cost(SimpleNamespace(summary={}, history=pd.DataFrame({"round": [1]})))["minutes"])


def test_table_and_note():
    t = cost_table([("a", 0), ("b", 0)], [fake(), fake(total=1200.0)], ["method", "seed"])
    assert list(t["method"]) == ["a", "b"] and t["minutes"].tolist() == [10.0, 20.0]
    note = cost_note(t)
    assert "2 runs, 30 host minutes" in note and "every round" in note and "14 trainings" in note
    assert "not counted" in cost_note(cost_table([("a",)], [fake(steps=None)], ["method"]))
    assert cost_note(cost_table([], [], ["method"])).startswith("no run")
