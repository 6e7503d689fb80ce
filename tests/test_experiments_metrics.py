"""Convergence metrics (FedQS spec §7, SMoFi speed-up) on hand-made histories."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fedlib.experiments import metrics as m


def hist(acc, **cols):
    return pd.DataFrame({"round": range(1, len(acc) + 1), "accuracy": acc, **cols})


def test_convergence_accuracy_is_mean_of_last_20_evaluated_rounds():
    acc = [0.0] * 10 + [0.5] * 10 + [0.7] * 20
    assert m.convergence_accuracy(hist(acc)) == pytest.approx(0.7)
    assert m.convergence_accuracy(hist(acc), last=40) == pytest.approx((5 + 14) / 40)
    assert m.convergence_accuracy(hist([0.2, 0.4])) == pytest.approx(0.3)  # fewer than 20 rounds
    # NaN rows (not evaluated) are skipped
    acc = [float("nan"), 0.4, float("nan"), 0.6]
    assert m.convergence_accuracy(hist(acc)) == pytest.approx(0.5)
    assert math.isnan(m.convergence_accuracy(hist([])))


def test_rounds_to_fraction_and_target():
    acc = [0.1, 0.5, 0.8, 0.9, 0.95] + [1.0] * 20  # convergence accuracy 1.0
    h = hist(acc)
    assert m.rounds_to_fraction(h, 0.95) == 5  # first round with accuracy >= 0.95
    assert m.rounds_to_fraction(h, 0.98) == 6
    assert m.rounds_to_target(h, 0.8) == 3
    assert m.rounds_to_target(h, 1.01) is None
    # 'round' column is used, not the position
    h2 = pd.DataFrame({"round": [10, 20, 30], "accuracy": [0.2, 0.9, 0.95]})
    assert m.rounds_to_target(h2, 0.9) == 20


def test_oscillations_count_drops_over_15_points():
    acc = [0.50, 0.70, 0.54, 0.70, 0.55, 0.40, 0.40, 0.60]
    # drops: 0.70->0.54 (16 pts, counted), 0.70->0.55 (15 pts: not more than 15), 0.55->0.40 (15)
    assert m.oscillations(hist(acc)) == 1
    assert m.oscillations(hist(acc), threshold=14.9) == 3
    # percent-scale histories give the same count
    assert m.oscillations(hist([a * 100 for a in acc])) == 1
    assert m.oscillations(hist([0.5])) == 0
    # an unevaluated round in between does not hide a drop
    assert m.oscillations(hist([0.8, float("nan"), 0.2])) == 1


def test_largest_drop_is_the_biggest_fall_between_evaluated_rounds():
    acc = [0.50, 0.70, 0.54, 0.70, 0.55, 0.40, 0.40, 0.60]
    assert m.largest_drop(hist(acc)) == 16.0  # 0.70 -> 0.54; the other falls are 15 points
    assert m.largest_drop(hist([a * 100 for a in acc])) == 16.0
    # unevaluated rounds are skipped, a run that only rises or has one evaluation has no drop
    assert m.largest_drop(hist([0.8, float("nan"), 0.2])) == 60.0
    assert m.largest_drop(hist([0.1, 0.2, 0.3])) == 0.0 and m.largest_drop(hist([0.5])) == 0.0
    assert m.largest_drop(hist([])) == 0.0


def test_time_to_round_and_speedup():
    h = hist([0.1, 0.3, 0.6, 0.8], virtual_time=[5.0, 9.0, 12.0, 20.0], wall_time=[1, 2, 3, 4])
    assert m.time_to_round(h, 3) == 12.0
    assert m.time_to_round(h) == 20.0
    assert m.time_to_round(h, 3, column="wall_time") == 3.0
    assert math.isnan(m.time_to_round(h, 99))
    assert math.isnan(m.time_to_round(hist([0.1]), column="virtual_time"))
    base = hist([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])   # best 0.8 at round 8
    fast = hist([0.4, 0.8, 0.9])                            # reaches 0.8 at round 2
    assert m.speedup(base, fast) == pytest.approx(4.0)
    assert m.speedup(base, fast, target=0.4) == pytest.approx(4.0)  # 4 rounds vs 1
    assert math.isnan(m.speedup(base, hist([0.1, 0.2])))  # never reaches the target


def test_summarize():
    acc = [0.2, float("nan"), 0.6] + [0.9] * 20
    h = hist(acc, loss=[1.0] * 22 + [0.25], virtual_time=range(23), wall_time=[0.5] * 23)
    s = m.summarize(h)
    assert s["rounds"] == 23
    assert s["final_accuracy"] == 0.9 and s["best_accuracy"] == 0.9
    assert s["convergence_accuracy"] == pytest.approx(0.9)
    assert s["rounds_to_95"] == 4 and s["rounds_to_98"] == 4
    assert s["oscillations"] == 0
    assert s["final_loss"] == 0.25 and s["virtual_time"] == 22.0 and s["wall_time"] == 0.5
    # also from a list of row dicts; undefined values are None
    e = m.summarize([{"round": 1, "accuracy": float("nan")}])
    assert e["final_accuracy"] is None and e["convergence_accuracy"] is None
    assert e["rounds_to_95"] is None
