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
                xlabel: str = "difference (points)", title: str | None = None,
                panel_width: float = 3.2, row_height: float = 0.34):
    """A forest plot of paired differences: one panel per ``row`` × ``col`` (each column its own x
    axis, so a task whose differences are tenths of a point is not flattened by one whose differences
    are points), one line per ``y`` label with its mean and 95% interval (rows ``mean`` / ``lo`` /
    ``hi``), a grey line at 0. Colour = ``side`` (:func:`~fedlib.reporting.stats.side`): green where the
    interval excludes 0 on the paper's side, red against it, grey unresolved, blue where the paper
    claims no direction (a NaN interval draws the point only). Column names head the top row, row
    names head each row on the left, the x label sits under the bottom row and the legend below it,
    never on a panel. Returns ``(fig, axes)`` with ``axes[(row_value, col_value)]`` (row ``""`` when
    ``row`` is None)."""
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
    used = [s for s in SIDE_COLOURS if s in set(diffs["side"])]
    legend_in = 0.45 if used else 0.0
    head_in = 0.55 + (0.35 if title else 0.0)
    width = 0.4 + 0.085 * longest + panel_width * len(cols)
    height = sum(row_height * len(labels[r]) + 0.75 for r in rows) + head_in + legend_in + 0.45
    fig, grid = plt.subplots(len(rows), len(cols), figsize=(width, height), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": [len(labels[r]) + 0.8 for r in rows]})
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
            if i == 0:  # the column name above the row name's line
                ax.annotate(str(c), xy=(0.5, 1), xycoords="axes fraction", xytext=(0, 18 if row != "_row" else 4),
                            textcoords="offset points", ha="center", va="bottom", fontsize=10, fontweight="bold")
            if j == 0 and row != "_row":
                ax.set_title(str(r), loc="left", fontsize=10, style="italic")
            if i == len(rows) - 1:
                ax.set_xlabel(xlabel, fontsize=9)
    for j, c in enumerate(cols):  # a column whose differences are all 0: a readable unit axis, not ±1e-17
        vals = diffs.loc[diffs[col] == c, ["mean", "lo", "hi"]].to_numpy(dtype=float)
        vals = vals[vals == vals]
        if not len(vals) or vals.max() - vals.min() < 1e-9:
            centre = float(vals.mean()) if len(vals) else 0.0
            grid[0][j].set_xlim(centre - 1, centre + 1)
        for i in range(len(rows)):
            grid[i][j].ticklabel_format(axis="x", useOffset=False, style="plain")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, legend_in / height, 1, 1), h_pad=1.2)
    if used:
        handles = [Line2D([0], [0], color=SIDE_COLOURS[s], marker="o", lw=2, label=SIDE_LABELS[s]) for s in used]
        fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 2), frameon=False, fontsize=9,
                   bbox_to_anchor=(0.5, 0.0))
    return fig, axes


def show_forest(diffs: pd.DataFrame, name: str, profile: str, group: str = "", **kw):
    """:func:`forest_plot` of ``diffs`` (when there are any), saved as ``name`` and shown."""
    if len(diffs):
        import matplotlib.pyplot as plt

        fig, _ = forest_plot(diffs, **kw)
        save_figure(fig, name, profile, group)
        plt.show()
