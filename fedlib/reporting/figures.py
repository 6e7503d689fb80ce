"""Figures: saving one next to the notebook's comparison, and the paired-interval plot."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fedlib.reporting.paths import report_file


def save_figure(fig, name: str, profile: str, group: str = "") -> Path:
    path = report_file(profile, group, name, ".png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def show_paired(diffs: pd.DataFrame, name: str, profile: str, group: str = "", label: str = "comparison",
                col: str = "participation"):
    """:func:`paired_interval_plot` of ``diffs`` (when there are any), saved as ``name`` and shown."""
    if len(diffs):
        import matplotlib.pyplot as plt

        g = paired_interval_plot(diffs, label, col=col)
        save_figure(g.figure, name, profile, group)
        plt.show()


def paired_interval_plot(diffs: pd.DataFrame, label: str = "comparison", height: float = 2.8,
                         col: str = "participation"):
    """Point-and-interval plot of paired differences (rows of ``mean``/``lo``/``hi`` per ``label``),
    one panel per ``metric`` (rows) × ``col`` (columns; SMoFi: the participation setting), a grey
    line at zero. Returns the seaborn ``FacetGrid``."""
    import seaborn as sns

    order = list(dict.fromkeys(diffs[label]))
    g = sns.catplot(data=diffs, y=label, x="mean", col=col, row="metric", kind="point", order=order,
                    linestyle="none", height=height, aspect=2.0, sharex=False)
    for (metric, part), ax in g.axes_dict.items():
        sub = diffs[(diffs["metric"] == metric) & (diffs[col] == part)]
        for _, r in sub.iterrows():
            if r["lo"] == r["lo"]:  # a categorical axis puts the i-th label at y = i
                ax.plot([r["lo"], r["hi"]], [order.index(r[label])] * 2, color="C0")
        ax.axvline(0, color="grey", lw=1)
    # short panel titles ("final · full"), one x label for the figure: long ones overlapped (issue 29)
    g.set_titles(template="{row_name} · {col_name}", size=10)
    g.set_axis_labels("", "")
    g.figure.supxlabel("difference (points), 95% t-interval over seeds", fontsize=10)
    g.figure.tight_layout()
    return g


SIDE_COLOURS = {"paper": "#1b7837", "opposite": "#b2182b", "unresolved": "#7f7f7f",
                "no direction claimed": "#2166ac"}
SIDE_LABELS = {"paper": "interval excludes 0 on the paper's side", "opposite": "excludes 0 against the paper",
               "unresolved": "interval contains 0", "no direction claimed": "no direction claimed by the paper"}


def forest_plot(diffs: pd.DataFrame, y: str = "baseline", col: str = "column", row: str | None = None,
                xlabel: str = "difference (points), 95% t-interval over the seeds", title: str | None = None,
                panel_width: float = 3.2, label_width: float = 1.6, row_height: float = 0.36):
    """A forest plot of paired differences: one panel per ``row`` × ``col`` (each column its own x
    axis, so a task whose differences are tenths of a point is not flattened by one whose differences
    are points), one line per ``y`` label with its mean and 95% interval (rows ``mean`` / ``lo`` /
    ``hi``), a grey line at 0. Colour = ``side`` (:func:`~fedlib.reporting.stats.side`): green where the
    interval excludes 0 on the paper's side, red against it, grey unresolved (a NaN interval draws the
    point only). The legend sits below the panels, never on them. Returns ``(fig, axes)`` with
    ``axes[(row_value, col_value)]``."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    diffs = diffs.copy()
    if row is None:
        diffs["_row"], row = "", "_row"
    if "side" not in diffs:
        diffs["side"] = "unresolved"
    rows, cols = list(dict.fromkeys(diffs[row])), list(dict.fromkeys(diffs[col]))
    labels = {r: list(dict.fromkeys(diffs.loc[diffs[row] == r, y])) for r in rows}
    longest = max((len(str(lab)) for labs in labels.values() for lab in labs), default=10)
    width = label_width + 0.075 * longest + panel_width * len(cols)
    height = sum(row_height * len(labels[r]) + 0.9 for r in rows) + 0.9
    fig, grid = plt.subplots(len(rows), len(cols), figsize=(width, height), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": [max(len(labels[r]), 1) + 1.5 for r in rows]})
    axes = {}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            ax = grid[i][j]
            axes[(r if row != "_row" else "", c)] = ax
            sub = diffs[(diffs[row] == r) & (diffs[col] == c)]
            for _, d in sub.iterrows():
                k = labels[r].index(d[y])
                colour = SIDE_COLOURS.get(d["side"], "#7f7f7f")
                if d["lo"] == d["lo"] and d["hi"] == d["hi"]:
                    ax.plot([d["lo"], d["hi"]], [k, k], color=colour, lw=2, solid_capstyle="butt")
                ax.plot([d["mean"]], [k], "o", color=colour, ms=6)
            ax.axvline(0, color="grey", lw=1, zorder=0)
            ax.set_ylim(len(labels[r]) - 0.5, -0.5)
            ax.set_yticks(range(len(labels[r])))
            ax.set_yticklabels(labels[r] if j == 0 else [])
            ax.tick_params(axis="y", length=0)
            ax.grid(axis="y", visible=False)
            if i == 0:
                ax.set_title(str(c), fontsize=10)
            if j == 0 and row != "_row":
                ax.set_ylabel(str(r), fontsize=10, fontweight="bold")
    fig.supxlabel(xlabel, fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    used = [s for s in SIDE_COLOURS if s in set(diffs["side"])]
    handles = [Line2D([0], [0], color=SIDE_COLOURS[s], marker="o", lw=2, label=SIDE_LABELS[s]) for s in used]
    fig.tight_layout(rect=(0, 0.06 if handles else 0, 1, 1))
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), frameon=False, fontsize=9,
                   bbox_to_anchor=(0.5, 0.0))
    return fig, axes


def show_forest(diffs: pd.DataFrame, name: str, profile: str, group: str = "", **kw):
    """:func:`forest_plot` of ``diffs`` (when there are any), saved as ``name`` and shown."""
    if len(diffs):
        import matplotlib.pyplot as plt

        fig, _ = forest_plot(diffs, **kw)
        save_figure(fig, name, profile, group)
        plt.show()
