"""Figures: saving one next to the notebook's comparison, and the paired-interval plot."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fedlib.reporting.paths import report_file


def runs_caption(cfgs, profile: str | None = None) -> str:
    """What a figure's reader needs of the runs behind it, in one line: ``"3 paired seeds (0, 1, 2) ·
    T = 50 rounds · model cnn3 on cifar10 · cpu profile"`` (several values joined by ``/``)."""
    def values(get) -> list:
        return list(dict.fromkeys(str(v) for v in (get(c) for c in cfgs) if v is not None))

    seeds = sorted({int(c.seed) for c in cfgs})
    rounds, models = values(lambda c: c.rounds), values(lambda c: getattr(c.model, "name", None))
    data = values(lambda c: getattr(c.data, "dataset", None))
    arms = {}  # an arm: a config up to its seed (the seeds it ran)
    for c in cfgs:
        arms.setdefault(c.replace(seed=0).config_hash(None), set()).add(int(c.seed))  # no data fingerprint: arms differ by config
    counts = sorted({len(s) for s in arms.values()})
    many = (f"{len(seeds)} paired seed{'s' if len(seeds) != 1 else ''}" if len(counts) <= 1 else
            f"{counts[0]}–{counts[-1]} seeds an arm, a pair on the seeds both ran")
    bits = [f"{many} ({', '.join(map(str, seeds))})",
            f"T = {' / '.join(rounds)} rounds", f"model {' / '.join(models)} on {' / '.join(data)}"]
    return " · ".join(bits + ([f"{profile} profile"] if profile else []))


def save_figure(fig, name: str, profile: str, group: str = "", caption: str | None = None) -> Path:
    """Save ``fig`` as the report's ``name.png``; ``caption`` (:func:`runs_caption`: seeds, T, model,
    profile) is written under it, so the image alone says what runs it shows."""
    if caption:
        fig.text(0.5, 0.0, caption, ha="center", va="top", fontsize=8, color="0.35")
    path = report_file(profile, group, name, ".png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def show_paired(diffs: pd.DataFrame, name: str, profile: str, group: str = "", label: str = "comparison",
                col: str = "participation", **kw):
    """:func:`paired_interval_plot` of ``diffs`` (when there are any), saved as ``name`` and shown
    (``kw``: its ``title``, ``caption``, ``bands``)."""
    if len(diffs):
        import matplotlib.pyplot as plt

        g = paired_interval_plot(diffs, label, col=col, **kw)
        save_figure(g.figure, name, profile, group)
        plt.show()


#: what a paired plot's metric names mean, for its row labels (a reader meets "auc" nowhere else)
METRIC_WORDS = {"final": "final accuracy\n(mean of the last rounds)",
                "auc": "AUC: mean accuracy over\nall rounds (area under the\naccuracy curve ÷ rounds)",
                "best": "best-of-rounds accuracy", "accuracy": "convergence accuracy",
                "final_loss": "final test loss", "auc_loss": "mean test loss over all rounds"}


def row_side(row) -> str | None:
    """The :data:`SIDE_COLOURS` key of one paired difference: its ``side`` column, else from its
    ``paper sign`` (:func:`~fedlib.reporting.stats.side`; 0 = no direction claimed), else from its
    verdict's words; None when the row says nothing of the paper's direction."""
    from fedlib.reporting.stats import side

    if isinstance(row.get("side"), str):
        return row["side"]
    sign = row.get("paper sign", row.get("sign"))
    if sign == sign and sign is not None:
        return side(dict(row), int(sign)) if int(sign) in (1, -1) else "no direction claimed"
    words = str(row.get("verdict", ""))
    for start, key in (("paper's direction reproduced", "paper"), ("opposite", "opposite"),
                       ("the paper states no direction", "no direction claimed"), ("not resolved", "unresolved")):
        if words.startswith(start):
            return key
    return None


def row_fragile(row) -> bool:
    """Whether a paired difference is fragile (:func:`fedlib.reporting.stats.fragile`: resolved, its
    interval ends within the cross-CPU drift of 0): its ``fragile`` column, else judged from its
    ``value`` or ``metric`` (``"final accuracy"`` reads as ``final``) and its ``family`` or ``task``."""
    from fedlib.reporting.stats import ACCURACY_COLUMNS, fragile, task_family

    if "fragile" in row and row["fragile"] == row["fragile"] and row["fragile"] is not None:
        return bool(row["fragile"])
    value = str(row.get("value") if isinstance(row.get("value"), str) else row.get("metric", ""))
    value = value if value in ACCURACY_COLUMNS else (value.split() or [""])[0]
    family = row.get("family") if isinstance(row.get("family"), str) else \
        (task_family(row["task"]) if isinstance(row.get("task"), str) else None)
    diff = {"value": value, "mean": row.get("mean"), "lo": row.get("lo"), "hi": row.get("hi"), "n": row.get("n", 2)}
    try:
        return bool(fragile(diff, family=family))
    except (TypeError, ValueError, KeyError):
        return False


def _draw_interval(ax, lo, hi, mean, k, colour, is_fragile) -> None:
    """One difference at height ``k``: its interval (dashed when fragile) and its mean (hollow when
    fragile)."""
    if lo == lo and hi == hi:
        ax.plot([lo, hi], [k, k], color=colour, lw=2, solid_capstyle="butt", ls=(0, (2, 1)) if is_fragile else "-")
    ax.plot([mean], [k], "o", color=colour, ms=6, mfc="white" if is_fragile else colour, mew=1.5)


def paired_interval_plot(diffs: pd.DataFrame, label: str = "comparison", height: float = 2.8,
                         col: str = "participation", title: str | None = None, caption: str | None = None,
                         bands: list | None = None):
    """Point-and-interval plot of paired differences (rows of ``mean``/``lo``/``hi`` per ``label``),
    one panel per ``metric`` (rows, named in words: :data:`METRIC_WORDS`) × ``col`` (columns; SMoFi:
    the setting), a grey line at zero. Colour = where the interval lands against the paper
    (:func:`row_side`), a dashed interval and a hollow point = fragile (:func:`row_fragile`), with a
    legend below. ``title`` heads the figure, ``caption`` (seeds, T, model) sits under it; ``bands``:
    the paper's stated range where a claim gives one, ``{"label": ..., "lo": 3, "hi": 7, "text":
    "paper: +3 to +7", "metric": "final" (optional), "col": value (optional)}``, shaded on that
    label's line. Returns the seaborn ``FacetGrid``."""
    import seaborn as sns

    import textwrap

    order = list(dict.fromkeys(diffs[label]))
    # tall enough for its labels; one column alone is drawn wide (it would leave the legend's width empty)
    height = max(height, 0.3 * len(order) + 1.0)
    aspect = (2.0 if diffs[col].nunique() > 1 else 3.4) * 2.8 / height
    g = sns.catplot(data=diffs, y=label, x="mean", col=col, row="metric", kind="point", order=order,
                    linestyle="none", height=height, aspect=aspect, sharex=False, color="0.75")
    used, any_fragile, band_texts = set(), False, []
    for (metric, part), ax in g.axes_dict.items():
        sub = diffs[(diffs["metric"] == metric) & (diffs[col] == part)]
        for _, r in sub.iterrows():  # a categorical axis puts the i-th label at y = i
            where, weak = row_side(r), row_fragile(r)
            used.add(where)
            any_fragile |= weak
            _draw_interval(ax, r["lo"], r["hi"], r["mean"], order.index(r[label]),
                           SIDE_COLOURS.get(where, "C0"), weak)
        for band in bands or []:
            if band["label"] in order and band.get("metric", metric) == metric and band.get("col", part) == part:
                k = order.index(band["label"])
                ax.fill_between([band["lo"], band["hi"]], k - 0.35, k + 0.35, color="#fdb863", alpha=0.45, lw=0,
                                zorder=0)
                band_texts.append(band.get("text", f"paper: {band['lo']:g} to {band['hi']:g}"))
        ax.axvline(0, color="grey", lw=1)
        ax.set_title(str(part), fontsize=10)
        # wrapped short: a long metric name must not run into the next row's
        words = textwrap.fill(METRIC_WORDS.get(metric, str(metric)), 24)
        ax.set_ylabel(words if ax in g.axes[:, 0] else "", fontsize=8.5)
        ax.set_xlabel("")
    for ax in g.axes[1:, :].flat:  # the setting heads the top row only
        ax.set_title("")
    unit = "difference in test loss" if all("loss" in str(m) for m in set(diffs["metric"])) else "difference (points)"
    for ax in g.axes[-1, :]:
        ax.set_xlabel(f"{unit}, 95% t-interval over paired seeds", fontsize=9)
    _legend(g.figure, [s for s in SIDE_COLOURS if s in used], any_fragile, list(dict.fromkeys(band_texts)),
            title, caption, OWN_SCALE_NOTE if diffs[col].nunique() > 1 else None)
    return g


def _legend(fig, sides: list, any_fragile: bool, band_texts: list, title: str | None, caption: str | None,
            note: str | None = None) -> None:
    """The legend, the note and the caption below a figure, the title above it (tight layout first)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([0], [0], color=SIDE_COLOURS[s], marker="o", lw=2, label=SIDE_LABELS[s]) for s in sides]
    if any_fragile:
        handles.append(Line2D([0], [0], color="0.3", marker="o", mfc="white", lw=2, ls=(0, (2, 1)),
                              label=FRAGILE_LABEL))
    handles += [Patch(color="#fdb863", alpha=0.45, label=t) for t in band_texts]
    lines = [t for t in (note, caption) if t]
    inch = fig.get_size_inches()[1]
    below = (0.3 * ((len(handles) + 1) // 2) if handles else 0.0) + 0.25 * len(lines)
    fig.tight_layout(rect=(0, below / inch, 1, 1 - (0.35 / inch if title else 0)))
    if title:
        fig.suptitle(title, fontsize=11)
    for i, text in enumerate(lines):
        fig.text(0.5, (0.25 * (len(lines) - 1 - i) + 0.05) / inch, text, ha="center", va="bottom", fontsize=8.5,
                 style="italic" if text == note else "normal", wrap=True)
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 2), frameon=False, fontsize=9,
                   bbox_to_anchor=(0.5, 0.25 * len(lines) / inch))


SIDE_COLOURS = {"paper": "#1b7837", "opposite": "#b2182b", "unresolved": "#7f7f7f",
                "no direction claimed": "#2166ac"}
SIDE_LABELS = {"paper": "interval excludes 0 on the paper's side", "opposite": "excludes 0 against the paper",
               "unresolved": "interval contains 0", "no direction claimed": "no direction claimed by the paper"}
FRAGILE_LABEL = "fragile (hollow, dashed): the interval ends within the cross-CPU drift of 0"
#: the visible note of a forest plot whose columns keep their own x axes
OWN_SCALE_NOTE = "Each column has its own x-scale: compare each interval with 0, not lengths across columns."


def forest_plot(diffs: pd.DataFrame, y: str = "baseline", col: str = "column", row: str | None = None,
                xlabel: str = "difference (points)", title: str | None = None,
                panel_width: float = 3.2, row_height: float = 0.34, sharex: bool = False,
                caption: str | None = None):
    """A forest plot of paired differences: one panel per ``row`` × ``col``, one line per ``y`` label
    with its mean and 95% interval (rows ``mean`` / ``lo`` / ``hi``), a grey line at 0. Each column
    has its own x axis (a task whose differences are tenths of a point is not flattened by one whose
    differences are points), and the figure then says so under the legend (:data:`OWN_SCALE_NOTE`);
    ``sharex``: one x axis for every panel (one claim's columns on one scale). Colour = ``side``
    (:func:`row_side`): green where the interval excludes 0 on the paper's side, red against it, grey
    unresolved, blue where the paper claims no direction (a NaN interval draws the point only); a
    fragile difference (:func:`row_fragile`) is drawn dashed with a hollow point. Column names head
    the top row, row names head each row on the left, the x label sits under the bottom row, the
    legend, the note and ``caption`` (seeds, T, model) below it, never on a panel. Returns ``(fig,
    axes)`` with ``axes[(row_value, col_value)]`` (row ``""`` when ``row`` is None)."""
    import matplotlib.pyplot as plt

    diffs = diffs.copy()
    if row is None:
        diffs["_row"], row = "", "_row"
    diffs["side"] = [row_side(r) or "unresolved" for _, r in diffs.iterrows()]
    diffs["_fragile"] = [row_fragile(r) for _, r in diffs.iterrows()]
    rows, cols = list(dict.fromkeys(diffs[row])), list(dict.fromkeys(diffs[col]))
    labels = {r: list(dict.fromkeys(diffs.loc[diffs[row] == r, y])) for r in rows}
    longest = max((len(str(lab)) for labs in labels.values() for lab in labs), default=10)
    note = OWN_SCALE_NOTE if len(cols) > 1 and not sharex else None
    width = 0.4 + 0.085 * longest + panel_width * len(cols)
    height = sum(row_height * len(labels[r]) + 0.75 for r in rows) + 0.55 + (0.35 if title else 0.0) + 0.45 \
        + 0.45 + 0.25 * ((note is not None) + bool(caption))
    fig, grid = plt.subplots(len(rows), len(cols), figsize=(width, height), squeeze=False,
                             sharex="all" if sharex else "col",
                             gridspec_kw={"height_ratios": [len(labels[r]) + 0.8 for r in rows]})
    axes = {}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            ax = grid[i][j]
            axes[(r if row != "_row" else "", c)] = ax
            for _, d in diffs[(diffs[row] == r) & (diffs[col] == c)].iterrows():
                _draw_interval(ax, d["lo"], d["hi"], d["mean"], labels[r].index(d[y]),
                               SIDE_COLOURS.get(d["side"], "#7f7f7f"), d["_fragile"])
            _forest_axis(ax, labels[r], first_col=j == 0)
            if i == 0:  # the column name above the row name's line
                ax.annotate(str(c), xy=(0.5, 1), xycoords="axes fraction", xytext=(0, 18 if row != "_row" else 4),
                            textcoords="offset points", ha="center", va="bottom", fontsize=10, fontweight="bold")
            if j == 0 and row != "_row":
                ax.set_title(str(r), loc="left", fontsize=10, style="italic")
            if i == len(rows) - 1:
                ax.set_xlabel(xlabel, fontsize=9)
    _unit_axes(diffs, grid, cols, col, sharex)
    _legend(fig, [s for s in SIDE_COLOURS if s in set(diffs["side"])], bool(diffs["_fragile"].any()), [],
            title, caption, note)
    return fig, axes


def _forest_axis(ax, labels: list, first_col: bool) -> None:
    ax.axvline(0, color="grey", lw=1, zorder=0)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels if first_col else [])
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="y", visible=False)


def _unit_axes(diffs: pd.DataFrame, grid, cols: list, col: str, sharex: bool) -> None:
    """A column (or, shared, the figure) whose differences are all 0: a readable unit axis, not
    ±1e-17; plain tick labels everywhere."""
    for j, c in enumerate(cols):
        vals = diffs.loc[diffs[col] == c if not sharex else slice(None), ["mean", "lo", "hi"]].to_numpy(dtype=float)
        vals = vals[vals == vals]
        if not len(vals) or vals.max() - vals.min() < 1e-9:
            centre = float(vals.mean()) if len(vals) else 0.0
            grid[0][j].set_xlim(centre - 1, centre + 1)
        for i in range(len(grid)):
            grid[i][j].ticklabel_format(axis="x", useOffset=False, style="plain")


def show_forest(diffs: pd.DataFrame, name: str, profile: str, group: str = "", **kw):
    """:func:`forest_plot` of ``diffs`` (when there are any), saved as ``name`` and shown."""
    if len(diffs):
        import matplotlib.pyplot as plt

        fig, _ = forest_plot(diffs, **kw)
        save_figure(fig, name, profile, group)
        plt.show()


def gap_curve_plot(gaps: pd.DataFrame, col: str | None = None, hue: str = "comparison", tail_from: int | None = None,
                   title: str = "", height: float = 3.2, aspect: float = 1.6, caption: str = ""):
    """Paired gaps against the round (``fedlib.reporting.fedqs.paired_gap_curves`` rows: ``round``, ``gap``,
    ``seed``, ``hue``, optionally ``col``): the mean over seeds as a line, the band the range over
    seeds (min–max: with two or three seeds an interval would claim more than they hold), 0 as a
    dashed line; ``tail_from``: the first round of the every-round tail of the cadence (shaded);
    ``caption``: a line under the figure (seeds, T, model)."""
    import seaborn as sns

    wrap = min(2, gaps[col].nunique()) if col else None
    g = sns.relplot(data=gaps, x="round", y="gap", hue=hue, col=col, col_wrap=wrap, kind="line",
                    errorbar=("pi", 100), seed=0, height=height, aspect=aspect,
                    facet_kws={"sharey": False, "sharex": False})
    # each panel spans its own rounds: a 50-round column is not squeezed into a 400-round axis
    panels = g.axes_dict.items() if col else [(None, g.ax)]
    for key, ax in panels:
        rounds = gaps.loc[gaps[col] == key, "round"] if col else gaps["round"]
        ax.axhline(0.0, color="0.3", lw=0.8, ls="--")
        ax.set_xlim(rounds.min() - 0.5, rounds.max() + 0.5)
        if tail_from is not None and tail_from <= rounds.max():
            ax.axvspan(tail_from - 0.5, rounds.max() + 0.5, color="0.85", alpha=0.5, lw=0)
    g.set_axis_labels("round (evaluated rounds only)", "gap (points)")
    if col:
        g.set_titles("{col_name}")
    if title:
        g.figure.suptitle(title, y=1.03)
    if caption:
        g.figure.text(0.5, -0.02, caption, ha="center", va="top", fontsize=8.5)
    return g


def show_gap_curves(gaps: pd.DataFrame, name: str, profile: str, group: str = "", **kw):
    """:func:`gap_curve_plot` of ``gaps`` (when there are any), saved as ``name`` and shown."""
    if len(gaps):
        import matplotlib.pyplot as plt

        g = gap_curve_plot(gaps, **kw)
        save_figure(g.figure, name, profile, group)
        plt.show()
