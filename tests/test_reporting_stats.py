"""Metrics and paired intervals the notebooks use to say whether a difference is resolved."""

import math

import pandas as pd
import pytest

from fedlib.reporting import curve_metrics, paired_difference, verdict


def _history(accs, rounds=None):
    rounds = rounds or list(range(1, len(accs) + 1))
    return pd.DataFrame({"round": rounds, "accuracy": accs})


def test_curve_metrics_by_hand():
    h = _history([0.10, float("nan"), 0.30, 0.20, 0.40])  # round 2 not evaluated
    m = curve_metrics(h, last=2, target=25.0)
    assert m["final"] == pytest.approx(30.0)  # mean of the last two evaluated: 20, 40
    assert m["best"] == pytest.approx(40.0)
    assert m["rounds_to_target"] == 3.0
    # trapezoid over rounds 1, 3, 4, 5: (10+30)/2*2 + (30+20)/2 + (20+40)/2 = 40 + 25 + 30 = 95 over 4 rounds
    assert m["auc"] == pytest.approx(95.0 / 4)


def test_curve_metrics_never_reaching_the_target_and_empty():
    assert math.isnan(curve_metrics(_history([0.1, 0.2]), target=50.0)["rounds_to_target"])
    assert math.isnan(curve_metrics(_history([float("nan")]))["final"])


def test_paired_difference_pairs_on_seed_and_gives_a_t_interval():
    runs = pd.DataFrame({"method": ["A"] * 3 + ["B"] * 3, "seed": [0, 1, 2, 2, 1, 0],
                         "acc": [11.0, 12.0, 13.0, 10.0, 10.0, 10.0]})
    d = paired_difference(runs, "acc", "A", "B")
    assert d["diffs"] == [1.0, 2.0, 3.0] and d["n"] == 3 and d["wins"] == 3
    # mean 2, sd 1, t(0.975, 2) = 4.302653 -> half width 4.302653 / sqrt(3) = 2.484138
    assert d["mean"] == pytest.approx(2.0)
    assert d["hi"] - d["mean"] == pytest.approx(2.484138, abs=1e-5)
    assert verdict(d).startswith("not resolved")  # the interval [-0.48, 4.48] contains 0


def test_verdict_reads_the_interval():
    assert verdict({"n": 3, "lo": 0.5, "hi": 2.0, "wins": 3}).startswith("paper's direction reproduced")
    assert verdict({"n": 3, "lo": -2.0, "hi": -0.5, "wins": 0}).startswith("opposite")
    assert verdict({"n": 1, "lo": float("nan"), "hi": float("nan"), "wins": 1}).startswith("not resolved")


def test_paired_interval_plot_draws_an_interval_on_every_panel():
    import matplotlib

    matplotlib.use("Agg")
    from fedlib.reporting import paired_interval_plot

    diffs = pd.DataFrame({"comparison": ["A − B", "C − B"] * 2, "metric": ["final"] * 4,
                          "participation": ["full", "full", "partial", "partial"],
                          "mean": [1.0, -1.0, 0.5, 0.2], "lo": [0.0, -2.0, -0.5, float("nan")],
                          "hi": [2.0, 0.0, 1.5, float("nan")]})
    g = paired_interval_plot(diffs)
    full, partial = g.axes_dict[("final", "full")], g.axes_dict[("final", "partial")]
    def intervals(ax):  # the horizontal two-point segments (the plot's own markers are not)
        import numpy as np

        return [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2 and np.isfinite(ln.get_xdata()).all()
                and ln.get_ydata()[0] == ln.get_ydata()[1] and ln.get_xdata()[0] != ln.get_xdata()[1]]

    assert [[float(x) for x in ln.get_xdata()] for ln in intervals(full)] == [[0.0, 2.0], [-2.0, 0.0]]
    assert [[float(y) for y in ln.get_ydata()] for ln in intervals(partial)] == [[0.0, 0.0]]  # NaN: not drawn


def test_verdict_counts_the_favourable_pairs_on_the_papers_side():
    """Lower-is-better claims (a loss, ``expected_sign=-1``): negative pairs favour the method."""
    lower = {"n": 3, "lo": -0.11, "hi": -0.02, "wins": 0, "diffs": [-0.086, -0.049, -0.064]}
    assert verdict(lower, -1) == "paper's direction reproduced (interval excludes 0; 3/3 pairs favour the method)"
    higher = {"n": 3, "lo": 0.7, "hi": 4.6, "wins": 3, "diffs": [3.6, 2.2, 2.2]}
    assert verdict(higher) == "paper's direction reproduced (interval excludes 0; 3/3 pairs favour the method)"
    assert "1/3 pairs favour" in verdict({"n": 3, "lo": -1.0, "hi": 1.0, "wins": 2, "diffs": [0.4, 0.2, -0.9]}, -1)


def test_side_counts_only_resolved_differences():
    from fedlib.reporting import side

    assert side({"n": 3, "lo": 0.2, "hi": 1.0}, 1) == "paper"
    assert side({"n": 3, "lo": -1.0, "hi": -0.2}, -1) == "paper"
    assert side({"n": 3, "lo": 0.2, "hi": 1.0}, -1) == "opposite"
    assert side({"n": 3, "lo": -0.1, "hi": 5.0}, 1) == "unresolved"  # a large mean with 0 inside counts for nothing
    assert side({"n": 1, "lo": float("nan"), "hi": float("nan")}, 1) == "unresolved"
    with pytest.raises(ValueError):
        side({"n": 3, "lo": 0.2, "hi": 1.0}, 0)


def test_claim_verdict_reproduced_partly_opposite_not_resolved():
    from fedlib.reporting import claim_verdict

    up, down, zero = {"n": 3, "lo": 0.5, "hi": 2.0}, {"n": 3, "lo": -2.0, "hi": -0.5}, {"n": 3, "lo": -1.0, "hi": 3.0}
    assert claim_verdict([("a", up, 1), ("b", down, -1)])["verdict"] == "reproduced"
    v = claim_verdict([("a", up, 1), ("b", zero, 1), ("c", down, 1)])
    assert v["verdict"] == "partly" and (v["paper"], v["opposite"], v["unresolved"]) == (1, 1, 1)
    assert "1/3 resolved on the paper's side (a)" in v["note"] and "against it: c" in v["note"]
    assert "unresolved (interval contains 0): b" in v["note"]
    assert claim_verdict([("a", down, 1), ("b", zero, 1)])["verdict"] == "opposite"
    assert claim_verdict([("a", zero, 1)])["verdict"] == "not resolved"
    assert claim_verdict([])["verdict"] == "not resolved"


def test_table1_largest_gap_unresolved_counts_for_nothing():
    """Issue 29: the SAFL + non-IID gap resolved, but 'the largest of four' only nominally: partly, and
    the note names the unresolved comparison instead of calling it the largest."""
    from fedlib.reporting import claim_verdict

    gap = {"n": 3, "lo": 4.2, "hi": 9.0}
    vs_iid_safl = {"n": 3, "lo": -8.0, "hi": 1.0}  # nominally smaller gap, interval contains 0
    vs_sync = {"n": 3, "lo": 3.0, "hi": 9.5}
    v = claim_verdict([("gap > 0", gap, 1), ("gap > IID + SAFL gap", vs_iid_safl, 1),
                       ("gap > non-IID + sync gap", vs_sync, 1)])
    assert v["verdict"] == "partly" and "unresolved (interval contains 0): gap > IID + SAFL gap" in v["note"]


def test_censor_keeps_unreached_targets_at_the_budget():
    from fedlib.reporting import censor

    vals, n = censor([10.0, float("nan"), 30.0], 50)
    assert list(vals) == [10.0, 50.0, 30.0] and n == 1


def test_forest_plot_one_axis_per_column_and_colour_by_side():
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    from fedlib.reporting import forest_plot
    from fedlib.reporting.figures import SIDE_COLOURS

    diffs = pd.DataFrame({"variant": ["Avg", "Avg", "SGD", "SGD"], "baseline": ["FedAvg", "M-step", "FedSGD", "WKAFL"],
                          "column": ["CV", "RWD", "CV", "RWD"], "mean": [3.0, 0.3, -0.5, 0.2],
                          "lo": [1.0, 0.1, -2.0, float("nan")], "hi": [5.0, 0.5, 1.0, float("nan")],
                          "side": ["paper", "paper", "unresolved", "unresolved"]})
    fig, axes = forest_plot(diffs, y="baseline", col="column", row="variant")
    assert set(axes) == {("Avg", "CV"), ("Avg", "RWD"), ("SGD", "CV"), ("SGD", "RWD")}
    seg = [ln for ln in axes[("Avg", "CV")].get_lines() if len(ln.get_xdata()) == 2
           and np.isfinite(ln.get_xdata()).all() and ln.get_xdata()[0] != ln.get_xdata()[1]]
    assert [list(map(float, ln.get_xdata())) for ln in seg] == [[1.0, 5.0]]
    assert matplotlib.colors.to_hex(seg[0].get_color()) == SIDE_COLOURS["paper"]
    # the RWD column has its own x axis (tenths of a point), not the CV column's
    assert axes[("Avg", "RWD")].get_xlim()[1] < 2 < axes[("Avg", "CV")].get_xlim()[1]
    assert axes[("Avg", "CV")].get_title(loc="left") == "Avg" and axes[("SGD", "RWD")].get_xlabel()
    assert fig.legends and not axes[("Avg", "CV")].get_legend()
