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
    g.set_axis_labels("difference (points), 95% t-interval over seeds", "")
    return g
