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


def test_early_accuracy_by_hand():
    from fedlib.reporting.stats import early_accuracy

    h = _history([0.10, float("nan"), 0.30, 0.20, 0.40, 0.50])  # 6 rounds: the first third is rounds 1-2
    assert early_accuracy(h) == pytest.approx(10.0)           # round 2 not evaluated: round 1 alone
    assert early_accuracy(h, fraction=0.5) == pytest.approx(20.0)  # rounds 1-3: (10 + 30) / 2
    late = _history([float("nan"), float("nan"), float("nan"), 0.6])  # first evaluation after the window
    assert early_accuracy(late) == pytest.approx(60.0)
    assert math.isnan(early_accuracy(_history([float("nan")] * 3)))


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
    """Lower-is-better claims (a loss, ``expected_sign=-1``): negative pairs are on the paper's side."""
    lower = {"n": 3, "lo": -0.11, "hi": -0.02, "wins": 0, "diffs": [-0.086, -0.049, -0.064]}
    assert verdict(lower, -1) == "paper's direction reproduced (interval excludes 0; 3/3 pairs on the paper's side)"
    higher = {"n": 3, "lo": 0.7, "hi": 4.6, "wins": 3, "diffs": [3.6, 2.2, 2.2]}
    assert verdict(higher) == "paper's direction reproduced (interval excludes 0; 3/3 pairs on the paper's side)"
    assert "1/3 pairs on the paper's side" in verdict({"n": 3, "lo": -1.0, "hi": 1.0, "wins": 2, "diffs": [0.4, 0.2, -0.9]}, -1)


def test_side_counts_only_resolved_differences():
    from fedlib.reporting import side

    assert side({"n": 3, "lo": 0.2, "hi": 1.0}, 1) == "paper"
    assert side({"n": 3, "lo": -1.0, "hi": -0.2}, -1) == "paper"
    assert side({"n": 3, "lo": 0.2, "hi": 1.0}, -1) == "opposite"
    assert side({"n": 3, "lo": -0.1, "hi": 5.0}, 1) == "unresolved"  # a large mean with 0 inside counts for nothing
    assert side({"n": 1, "lo": float("nan"), "hi": float("nan")}, 1) == "unresolved"
    with pytest.raises(ValueError):
        side({"n": 3, "lo": 0.2, "hi": 1.0}, 0)


def test_claim_verdict_speaks_the_scoreboards_words():
    from fedlib.reporting import claim_verdict

    up, down, zero = {"n": 3, "lo": 0.5, "hi": 2.0}, {"n": 3, "lo": -2.0, "hi": -0.5}, {"n": 3, "lo": -1.0, "hi": 3.0}
    assert claim_verdict([("a", up, 1), ("b", down, -1)])["verdict"] == "reproduced"
    v = claim_verdict([("a", up, 1), ("b", zero, 1), ("c", down, 1)])
    assert v["verdict"] == "mixed" and (v["paper"], v["opposite"], v["unresolved"]) == (1, 1, 1)
    assert claim_verdict([("a", up, 1), ("b", zero, 1)])["verdict"] == "partial"
    # a zero-width interval (two seeds reaching a target at the same round) resolves nothing, as in the scoreboard
    assert claim_verdict([("a", {"n": 2, "lo": -6.0, "hi": -6.0, "mean": -6.0}, -1)])["verdict"] == "unresolved"
    assert "1/3 resolved on the paper's side (a)" in v["note"] and "against it: c" in v["note"]
    assert "unresolved (interval contains 0): b" in v["note"]
    assert claim_verdict([("a", down, 1), ("b", zero, 1)])["verdict"] == "against"
    assert claim_verdict([("a", zero, 1)])["verdict"] == "unresolved"
    assert claim_verdict([])["verdict"] == "unresolved"


def test_table1_largest_gap_unresolved_counts_for_nothing():
    """Issue 29: the SAFL + non-IID gap resolved, but 'the largest of four' only nominally: partial, and
    the note names the unresolved comparison instead of calling it the largest."""
    from fedlib.reporting import claim_verdict

    gap = {"n": 3, "lo": 4.2, "hi": 9.0}
    vs_iid_safl = {"n": 3, "lo": -8.0, "hi": 1.0}  # nominally smaller gap, interval contains 0
    vs_sync = {"n": 3, "lo": 3.0, "hi": 9.5}
    v = claim_verdict([("gap > 0", gap, 1), ("gap > IID + SAFL gap", vs_iid_safl, 1),
                       ("gap > non-IID + sync gap", vs_sync, 1)])
    assert v["verdict"] == "partial" and "unresolved (interval contains 0): gap > IID + SAFL gap" in v["note"]


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
def test_signed_verdict_names_the_papers_expected_sign():
    """Issue 31: SlowMo is below FedAvg in the paper's CIFAR-10 column, so SlowMo above FedAvg is
    the *opposite* of the paper's direction, not "reproduced"."""
    from fedlib.reporting import signed_verdict

    above = {"n": 3, "lo": 2.07, "hi": 11.87, "wins": 3, "diffs": [6.1, 9.2, 5.5]}
    assert signed_verdict(above, -1) == ("opposite of the paper's direction (paper: method below its base; "
                                         "interval excludes 0; 0/3 pairs on the paper's side)")
    assert signed_verdict(above, +1) == ("paper's direction reproduced (method above its base; interval excludes 0; "
                                         "3/3 pairs on the paper's side)")
    below = {"n": 3, "lo": -3.0, "hi": -1.0, "wins": 0, "diffs": [-1.5, -2.0, -2.5]}
    assert signed_verdict(below, -1).startswith("paper's direction reproduced (method below its base")
    mixed = {"n": 3, "lo": -14.8, "hi": 2.8, "wins": 0, "diffs": [-9.6, -2.6, -5.7]}
    assert signed_verdict(mixed, +1) == ("not resolved: the interval contains 0 (0/3 pairs on the paper's side; "
                                         "paper: method above its base)")
    assert signed_verdict(above, 0) == "the paper states no direction: interval excludes 0, method above its base " \
                                       "(3/3 pairs above)"
    assert signed_verdict({"n": 1, "lo": float("nan"), "hi": float("nan"), "diffs": [1.0]}, 1).startswith(
        "not resolved (only 1 pair)")


def test_censored_speedup_counts_unreached_seeds_at_their_bound():
    """Issue 31: per seed <0.87, 1.25, <0.87 (FedAvg 13, 10, 13 rounds; SMoFi never, 8, never in
    15) is not a 1.25× speed-up: the geometric mean over all three seeds is < 0.98×, 1/3 reached."""
    import numpy as np

    from fedlib.reporting import censored_speedup, speedup_label

    nan = float("nan")
    s = censored_speedup([13, 10, 13], [nan, 8, nan], budget=15)
    assert s["per_seed"] == ["<0.87", "1.25", "<0.87"] and (s["reached"], s["n"]) == (1, 3)
    assert s["relation"] == "<"
    assert s["value"] == pytest.approx(float(np.exp(np.mean(np.log([13 / 15, 1.25, 13 / 15])))))
    assert speedup_label(s) == "< 0.98" and s["text"].startswith("< 0.98× (geometric mean over 3 seeds, 1/3 reached")
    exact = censored_speedup([13, 9, 10], [4, 6, 4], budget=15)
    assert exact["relation"] == "=" and speedup_label(exact) == pytest.approx((13 / 4 * 1.5 * 2.5) ** (1 / 3), abs=0.005)
    lower = censored_speedup([nan, 8], [5, 4], budget=15)  # the base never reached: > 15/5
    assert lower["relation"] == ">" and lower["per_seed"] == [">3.00", "2.00"]
    both = censored_speedup([nan, 8], [5, nan], budget=15)  # one lower, one upper bound: no number
    assert both["relation"] == "none" and math.isnan(both["value"]) and speedup_label(both) == "no bound"
    assert censored_speedup([nan], [nan], 15)["per_seed"] == ["n/a"]


def test_censored_rounds_never_averages_only_the_seeds_that_reached():
    from fedlib.reporting import censored_rounds

    nan = float("nan")
    assert censored_rounds([12, 10, 14], 15)["label"] == 12.0
    part = censored_rounds([8, nan, nan], 15)  # (8 + 16 + 16) / 3, a lower bound
    assert part["relation"] == "≥" and part["value"] == pytest.approx(40 / 3) and part["label"] == "≥ 13.3"
    none = censored_rounds([nan, nan], 15)
    assert none["relation"] == "none" and none["label"] == "not reached in 15 rounds by any of 2 seeds"


def test_censored_extreme_only_claims_what_the_bounds_fix():
    from fedlib.reporting import censored_extreme

    eq = lambda v: {"relation": "=", "value": v}  # noqa: E731
    lt = lambda v: {"relation": "<", "value": v}  # noqa: E731
    gt = lambda v: {"relation": ">", "value": v}  # noqa: E731
    assert censored_extreme([eq(2.0), eq(3.0)], smallest=True) == 2.0
    assert censored_extreme([eq(2.0), eq(3.0)], smallest=False) == 3.0
    # the issue-31 case: one base at < 0.98, alone -> the smallest and the largest are both < 0.98
    assert censored_extreme([lt(0.98)], smallest=True) == "< 0.98"
    assert censored_extreme([lt(0.98)], smallest=False) == "< 0.98"
    assert censored_extreme([eq(2.0), lt(3.0)], smallest=False) == "< 3.00"
    assert censored_extreme([eq(3.0), lt(2.0)], smallest=False) == 3.0  # the bounded one is below 2 < 3
    assert censored_extreme([eq(2.0), lt(3.0)], smallest=True) == "≤ 2.00"
    assert censored_extreme([eq(2.0), gt(1.0)], smallest=True) == "> 1.00"
    assert censored_extreme([eq(2.0), gt(1.0)], smallest=False) == "≥ 2.00"
    assert censored_extreme([eq(2.0), {"relation": "none", "value": float("nan")}], smallest=True) is None
    assert censored_extreme([], smallest=True) is None


def test_a_verdict_whose_interval_ends_inside_the_cross_cpu_drift_is_fragile():
    """Issue 28: a resolved accuracy difference whose interval ends closer to 0 than the measured
    cross-CPU drift is marked fragile (re-run on another CPU, it could flip); a loss is not."""
    import pandas as pd

    from fedlib.reporting import claim_verdict, verdict
    from fedlib.reporting.stats import CROSS_CPU_DRIFT_POINTS, fragile, paired_difference, use_family_of

    from fedlib.claims.words import use_profile

    use_family_of([])  # no notebook's family left over from an earlier test: the largest measured drift applies
    use_profile(None)  # nor a notebook's profile
    near = CROSS_CPU_DRIFT_POINTS / 2
    runs = pd.DataFrame({"method": ["a"] * 3 + ["b"] * 3, "seed": [0, 1, 2] * 2,
                         "final": [10 + near + 0.1, 10 + near + 0.3, 10 + near + 0.2, 10, 10, 10]})
    d = paired_difference(runs, "final", "a", "b")
    assert d["lo"] > 0 and fragile(d) and "fragile" in verdict(d, 1)
    assert "fragile (interval ends within" in claim_verdict([("x", d, 1)])["note"]
    far = paired_difference(runs.assign(final=runs["final"] + runs["method"].eq("a") * 5), "final", "a", "b")
    assert not fragile(far) and "fragile" not in verdict(far, 1)
    loss = dict(d, value="loss")
    assert not fragile(loss)


def test_a_reports_fragile_mark_reads_the_drift_of_its_profile_as_the_scoreboard_does():
    """A report's fragile threshold is the scoreboard's for the same family and profile: that profile's
    recomputed runs where any (e.g. split-CNN at long), else the family's largest."""
    from fedlib.claims.drift import drift, load
    from fedlib.claims.words import drift_threshold, use_profile
    from fedlib.reporting import resolve_profile

    entries = load()
    try:
        for profile in ("cpu", "long", "smoke"):
            assert resolve_profile(profile) == profile
            assert drift_threshold("split-cnn-cifar10") == drift("split-cnn-cifar10", "mean", entries, profile).threshold
        use_profile(None)
        assert drift_threshold("split-cnn-cifar10") == drift("split-cnn-cifar10", "mean", entries).threshold
    finally:
        use_profile(None)


def test_a_claims_fragile_note_quotes_the_threshold_its_marks_read():
    """claim_verdict names the drift its fragile marks used (the family's at the notebook's profile), not the
    largest over every family: at long the split-CNN threshold is its own measured one."""
    from fedlib.claims.words import claim_verdict, drift_threshold, use_profile

    try:
        use_profile("long")
        limit = drift_threshold("split-cnn-cifar10")
        near = {"mean": limit / 2 + 0.5, "lo": limit / 2, "hi": limit + 1.0, "n": 5, "value": "final",
                "family": "split-cnn-cifar10"}
        note = claim_verdict([("SMoFi − FedAvg", near, 1)])["note"]
        assert f"within the {round(limit, 2):g}-point cross-CPU drift of 0): SMoFi − FedAvg" in note
        assert drift_threshold() != limit  # the family-less largest is another number
    finally:
        use_profile(None)
