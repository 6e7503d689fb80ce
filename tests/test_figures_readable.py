"""Figures a reader reads correctly: a visible note when a forest plot's columns keep their own
x-scales (or one shared scale), fragile differences drawn apart, captions (seeds, T, model), SMoFi
paired plots with a legend, metric words and the paper's band."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fedlib.reporting.figures import (FRAGILE_LABEL, OWN_SCALE_NOTE, forest_plot, paired_interval_plot,  # noqa: E402
                                      row_fragile, row_side)


def _texts(fig):
    return [t.get_text() for t in fig.texts]


def _legend_labels(fig):
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


DIFFS = pd.DataFrame({"baseline": ["FedAvg", "FedAvg"], "column": ["CV", "RWD"], "mean": [3.0, 0.3],
                      "lo": [1.0, 0.1], "hi": [5.0, 0.5], "n": 3, "sign": [1, 1], "fragile": [False, True]})


def test_forest_plot_says_its_columns_have_their_own_scale_or_shares_one():
    fig, axes = forest_plot(DIFFS, caption="3 paired seeds (0, 1, 2); T = 50; cnn3")
    assert OWN_SCALE_NOTE in _texts(fig) and "3 paired seeds (0, 1, 2); T = 50; cnn3" in _texts(fig)
    assert axes[("", "RWD")].get_xlim() != axes[("", "CV")].get_xlim()
    fig, axes = forest_plot(DIFFS, sharex=True)
    assert OWN_SCALE_NOTE not in _texts(fig)
    assert axes[("", "RWD")].get_xlim() == axes[("", "CV")].get_xlim()
    one, _ = forest_plot(DIFFS[DIFFS["column"] == "CV"])
    assert OWN_SCALE_NOTE not in _texts(one)  # one column: nothing to compare across


def test_fragile_differences_are_drawn_hollow_and_dashed_with_a_legend_entry():
    fig, axes = forest_plot(DIFFS)
    assert FRAGILE_LABEL in _legend_labels(fig)
    solid = [ln for ln in axes[("", "CV")].get_lines() if len(ln.get_xdata()) == 2 and ln.get_xdata()[0] != 0]
    dashed = [ln for ln in axes[("", "RWD")].get_lines() if len(ln.get_xdata()) == 2 and ln.get_xdata()[0] != 0]
    assert solid[0].get_linestyle() == "-" and dashed[0].get_linestyle() != "-"
    hollow = [ln for ln in axes[("", "RWD")].get_lines() if len(ln.get_xdata()) == 1]
    assert matplotlib.colors.to_hex(hollow[0].get_markerfacecolor()) == "#ffffff"


def test_fragile_is_judged_from_the_metric_when_no_column_says_it():
    from fedlib.reporting.stats import drift_threshold

    t = drift_threshold()
    near = {"metric": "final accuracy", "mean": 1.0, "lo": t / 4, "hi": 2.0, "n": 3}
    assert row_fragile(pd.Series(near)) == (t == t)  # NaN threshold (no drift record): never fragile
    assert not row_fragile(pd.Series({**near, "metric": "rounds_to_95"}))  # not an accuracy
    assert not row_fragile(pd.Series({**near, "lo": -1.0}))  # unresolved


def test_side_from_the_paper_sign_or_the_verdict_words():
    assert row_side(pd.Series({"mean": 2, "lo": 1, "hi": 3, "n": 3, "paper sign": -1})) == "opposite"
    assert row_side(pd.Series({"mean": 2, "lo": 1, "hi": 3, "n": 3, "paper sign": 0})) == "no direction claimed"
    assert row_side(pd.Series({"verdict": "paper's direction reproduced (method above its base)"})) == "paper"
    assert row_side(pd.Series({"mean": 1})) is None


def test_paired_plot_has_legend_metric_words_band_title_and_caption():
    d = pd.DataFrame({"comparison": ["+ SMoFi − FedAvg", "FedNAG − FedAvg"] * 2, "metric": ["final"] * 2 + ["auc"] * 2,
                      "setting": ["Dirichlet 0.1"] * 4, "mean": [4.0, -1.0, 3.0, 0.2], "lo": [3.5, -3.0, 2.9, 0.1],
                      "hi": [4.5, 1.0, 3.1, 0.3], "n": 3, "paper sign": [1, -1, 1, -1]})
    g = paired_interval_plot(d, col="setting", title="SMoFi − base", caption="3 paired seeds; T = 15; cnn",
                             bands=[{"label": "+ SMoFi − FedAvg", "lo": 3, "hi": 7, "metric": "final",
                                     "text": "paper: +3 to +7 points"}])
    labels = _legend_labels(g.figure)
    assert "paper: +3 to +7 points" in labels and "excludes 0 against the paper" in labels
    assert g.figure._suptitle.get_text() == "SMoFi − base" and "3 paired seeds; T = 15; cnn" in _texts(g.figure)
    ylabels = [" ".join(ax.get_ylabel().split()) for ax in g.axes[:, 0]]  # wrapped onto short lines
    assert ylabels[0].startswith("final accuracy") and "area under the" in ylabels[1] and "AUC" in ylabels[1]
    final = g.axes_dict[("final", "Dirichlet 0.1")]
    assert len(final.collections) >= 1 and not g.axes_dict[("auc", "Dirichlet 0.1")].collections[1:]
    assert np.isclose(final.get_xlim()[1], max(final.get_xlim()[1], 7))


def test_smofi_figures_name_the_split_and_mark_the_papers_numbers():
    from fedlib.reporting.smofi import smofi_setting_title
    from fedlib.reporting.smofi_figures import plugin_bands, smofi_caption, speedup_per_seed_plot

    assert smofi_setting_title("cpu", "full") == "Dirichlet 0.1, 10 of 10 clients per round"
    assert smofi_setting_title("cpu", "shards") == "equal-size label shards, 10 of 10 clients per round"
    d = pd.DataFrame({"comparison": ["+ SMoFi − FedAvg", "FedNAG − FedAvg"] * 2,
                      "setting": [smofi_setting_title("cpu", "full")] * 2 + [smofi_setting_title("cpu", "shards")] * 2})
    bands = plugin_bands("cpu", d)
    assert [(b["label"], b["col"], b["lo"], b["hi"]) for b in bands] == \
        [("+ SMoFi − FedAvg", "Dirichlet 0.1, 10 of 10 clients per round", 3.0, 7.0)]  # never on the shards
    caption = smofi_caption("cpu", {"seeds": [0, 1, 2], "rounds": None, "model": "cnn", "cut": "conv1"}, ["full"])
    assert caption == "3 paired seeds (0, 1, 2) · T = 15 rounds · model cnn, cut after conv1 · cpu profile"
    plot = pd.DataFrame({"participation": ["full", "full", "shards"], "pair": ["FedAvg + SMoFi", "FedAvg + SlowMo",
                                                                              "FedAvg + SMoFi"],
                         "value": [2.0, 1.0, 3.0], "target": ["100% of base final"] * 3, "reached": ["reached"] * 3})
    fig = speedup_per_seed_plot(plot, ["full", "shards"], "cpu", caption)
    full, shards = fig.axes[:2]
    assert full.get_title() == "Dirichlet 0.1, 10 of 10 clients per round" and "shards" not in full.get_title()
    assert len(full.collections) == 2 and len(shards.collections) == 1  # the band: on the SMoFi line, Dirichlet only
    assert "paper: 4.61–5.54× (CIFAR-10, Dirichlet 0.1)" in _legend_labels(fig)


def test_gap_curves_of_different_horizons_each_span_their_own_rounds():
    """Issue 60: a 50-round and a 400-round column on one 0–400 axis left the short one unreadable."""
    from fedlib.reporting.figures import gap_curve_plot

    rows = [{"round": r, "gap": np.sin(r / 7) + s, "seed": s, "comparison": "A − B", "column": name}
            for name, horizon in (("short", 50), ("long", 400)) for r in range(1, horizon + 1, 1) for s in (0, 1)]
    g = gap_curve_plot(pd.DataFrame(rows), col="column", tail_from=40)
    spans = {key: ax.get_xlim() for key, ax in g.axes_dict.items()}
    assert spans["short"][1] < 60 and spans["long"][1] > 390


def test_smofi_accuracy_curves_keep_the_legend_beside_the_panels_and_nine_methods_apart():
    from fedlib.reporting.smofi_figures import accuracy_curves_plot, method_styles

    methods = [f"method {i}" for i in range(9)]
    rows = [{"participation": p, "method": m, "seed": s, "round": r, "accuracy": 50 + i + s + r / 10}
            for p in ("a", "b") for i, m in enumerate(methods) for s in (0, 1) for r in range(1, 11)]
    fig = accuracy_curves_plot(pd.DataFrame(rows), ["a", "b"], methods, {"a": "IID", "b": "Dirichlet 0.1"})
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    fig.canvas.draw()
    legend_box = fig.legends[0].get_window_extent()
    assert all(legend_box.x0 >= ax.get_window_extent().x1 for ax in fig.axes)  # beside, not over, the curves
    colours, dashes = method_styles(methods)
    assert len(set(map(tuple, colours.values()))) == 9 and len(set(zip(map(tuple, colours.values()), dashes.values()))) == 9


def test_paired_plot_metric_labels_do_not_collide_and_one_column_fills_the_width():
    comps = ["+ FedAvgM − FedAvg", "+ SMoFi − FedAvg", "FedProx + SMoFi − FedProx", "FedNAR + SMoFi − FedNAR"]
    for parts in (["equal-size label shards", "Dirichlet 0.1"], ["Dirichlet 0.1"]):
        rows = [{"comparison": c, "metric": m, "participation": p, "mean": i - 2.0, "lo": i - 4.0, "hi": i * 1.0,
                 "n": 3} for p in parts for m in ("final", "auc") for i, c in enumerate(comps)]
        g = paired_interval_plot(pd.DataFrame(rows), caption="5 paired seeds (0, 1, 2, 3, 4) · T = 50 rounds · "
                                 "model cnn3, cut after conv1 · long profile")
        fig = g.figure
        fig.canvas.draw()
        top, bottom = (g.axes[i, 0].yaxis.label.get_window_extent() for i in (0, 1))
        assert top.y0 >= bottom.y1  # the two rows' metric names do not overlap
        panels = sum(ax.get_window_extent().width for ax in g.axes[0])
        assert panels >= 0.65 * fig.get_tightbbox().width * fig.dpi  # not half the figure left empty (was 0.50)


def test_a_caption_says_when_the_arms_ran_different_seeds():
    """runs_caption: "3 paired seeds (0, 1, 2)" when every arm ran the same seeds; with a method's own seeds
    (``method_seeds``) the count per arm, so a figure never claims three pairs where one family has two."""
    from fedlib.experiments import RunConfig
    from fedlib.reporting.figures import runs_caption

    a = RunConfig.from_preset("toy-smoke")
    b = a.with_overrides(["rounds=7"])
    same = [c.replace(seed=s) for c in (a, b) for s in (0, 1, 2)]
    assert runs_caption(same).startswith("3 paired seeds (0, 1, 2) · ")
    mixed = [a.replace(seed=s) for s in (0, 1, 2)] + [b.replace(seed=s) for s in (0, 1)]
    assert runs_caption(mixed, "long").startswith("2–3 seeds an arm, a pair on the seeds both ran (0, 1, 2) · ")
