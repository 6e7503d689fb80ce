"""The SMoFi notebooks' figures: paired differences with the paper's 3–7 point band, speed-ups per
seed with the paper's 4.61–5.54×, each with its settings spelled out (the split, not the notebook's
key for it) and a caption giving seeds, rounds and model."""

from __future__ import annotations

import pandas as pd

from fedlib.claims.smofi_claims import PAPER_CIFAR10_SPEEDUP, PAPER_PLUGIN_GAIN
from fedlib.reporting.figures import save_figure, show_paired
from fedlib.reporting.smofi import SMOFI_PARTICIPATION, smofi_setting_title

#: the comparisons the paper's plug-in claim ("SMoFi adds 3–7 points to each base") covers
PLUGIN_COMPARISONS = ("+ SMoFi − FedAvg", "FedProx + SMoFi − FedProx", "FedNAR + SMoFi − FedNAR")
SPEEDUP_BAND_COLOUR = "#fdb863"


def _dirichlet(profile: str, part: str) -> bool:
    return SMOFI_PARTICIPATION[profile][part].get("partition", "dirichlet") == "dirichlet"


def smofi_caption(profile: str, settings: dict, participations=None, dataset: str = "cifar10") -> str:
    """``"3 paired seeds (0, 1, 2) · T = 15 rounds · model cnn, cut after conv1 · cpu profile"``: what a
    reader needs beside a SMoFi figure (``settings``: the notebook's ``S``)."""
    parts = list(participations or settings.get("participations") or [])
    rounds = sorted({settings.get("rounds") or SMOFI_PARTICIPATION[profile][p]["rounds"][dataset] for p in parts}) \
        if parts or settings.get("rounds") else []
    seeds = list(settings.get("seeds") or [])
    bits = [f"{len(seeds)} paired seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))})"]
    if rounds:
        bits.append("T = " + " / ".join(map(str, rounds)) + " rounds")
    model = settings.get("model")
    if model:
        bits.append(f"model {model}" + (f", cut after {settings['cut']}" if settings.get("cut") else ""))
    return " · ".join(bits + [f"{profile} profile"])


def plugin_bands(profile: str, diffs: pd.DataFrame, col: str = "setting") -> list:
    """The paper's 3–7 point band (:data:`~fedlib.claims.smofi_claims.PAPER_PLUGIN_GAIN`) on each
    plug-in comparison's final-accuracy line, in the Dirichlet 0.1 settings only (the paper's split;
    the equal-size shards are not the paper's), as :func:`~fedlib.reporting.figures.paired_interval_plot`
    ``bands``; ``diffs[col]`` holds the setting titles of :func:`smofi_setting_title`."""
    lo, hi = PAPER_PLUGIN_GAIN
    titles = {smofi_setting_title(profile, p): p for p in SMOFI_PARTICIPATION[profile]}
    return [{"label": c, "lo": lo, "hi": hi, "metric": "final", "col": t,
             "text": f"paper: SMoFi adds +{lo:g} to +{hi:g} points (Dirichlet 0.1, final accuracy)"}
            for t in dict.fromkeys(diffs[col]) if t in titles and _dirichlet(profile, titles[t])
            for c in PLUGIN_COMPARISONS if c in set(diffs["comparison"])]


def show_smofi_paired(diffs: pd.DataFrame, name: str, profile: str, settings: dict, title: str) -> None:
    """The paired differences of a SMoFi notebook (rows with ``participation``, ``comparison``,
    ``metric``, ``mean``/``lo``/``hi``), one column per setting named by its split, the paper's band
    on the plug-in lines, ``title`` above and :func:`smofi_caption` below; saved as ``name``."""
    if not len(diffs):
        return
    diffs = diffs.assign(setting=diffs["participation"].map(lambda p: smofi_setting_title(profile, p)))
    show_paired(diffs, name, profile, "smofi", col="setting", title=title,
                caption=smofi_caption(profile, settings, list(dict.fromkeys(diffs["participation"]))),
                bands=plugin_bands(profile, diffs, col="setting"))


def speedup_per_seed_plot(plot: pd.DataFrame, parts: list, profile: str, caption: str = "",
                          dataset: str = "cifar10"):
    """Speed-up per seed (``plot`` rows: ``participation``, ``pair``, ``value`` — the speed-up or its
    bound —, ``target``, ``reached``) on a log axis, one panel per setting named by its split, a
    hollow ``<`` at the bound where the method never reached the target, 1× as a grey line and, on
    CIFAR-10 under Dirichlet 0.1 (where the paper states it), the paper's 4.61–5.54× shaded on the
    SMoFi pairs' lines. Returns the figure."""
    import matplotlib
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.patches import Patch

    fig, axes = plt.subplots(1, len(parts), figsize=(6.5 * len(parts) + 2, 3.9), squeeze=False, sharex=True)
    hue_order = list(dict.fromkeys(plot["target"]))
    lo, hi = PAPER_CIFAR10_SPEEDUP
    for i, (ax, part) in enumerate(zip(axes[0], parts)):
        sub = plot[plot["participation"] == part]
        sns.scatterplot(data=sub, x="value", y="pair", hue="target", hue_order=hue_order, style="reached",
                        style_order=["reached", "not reached (bound)"],
                        markers={"reached": "o", "not reached (bound)": "<"}, s=50, ax=ax, legend=i == len(parts) - 1)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.axvline(1.0, color="grey", lw=0.8)
        if dataset == "cifar10" and _dirichlet(profile, part):  # on the SMoFi pairs' lines only
            for k, tick in enumerate(ax.get_yticklabels()):
                if "SMoFi" in tick.get_text():
                    ax.fill_between([lo, hi], k - 0.35, k + 0.35, color=SPEEDUP_BAND_COLOUR, alpha=0.45, lw=0, zorder=0)
        ax.set_xlabel("speed-up (×), per seed; '<' = upper bound (target not reached)")
        ax.set_ylabel("")
        ax.set_title(smofi_setting_title(profile, part), fontsize=10)
    handles, labels = axes[0][-1].get_legend_handles_labels()
    if any(_dirichlet(profile, p) for p in parts) and dataset == "cifar10":
        handles.append(Patch(color=SPEEDUP_BAND_COLOUR, alpha=0.45))
        labels.append(f"paper: {lo:g}–{hi:g}× (CIFAR-10, Dirichlet 0.1)")
    if axes[0][-1].get_legend():
        axes[0][-1].get_legend().remove()
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8, frameon=False)
    fig.suptitle(f"{dataset}: speed-up of each method over its base, per seed", fontsize=11)
    if caption:
        fig.text(0.5, -0.02, caption, ha="center", va="top", fontsize=8.5)
    fig.tight_layout()
    return fig


def show_speedup_per_seed(plot: pd.DataFrame, parts: list, profile: str, caption: str = "", name: str =
                          "convergence_speedup_per_seed", dataset: str = "cifar10") -> None:
    """:func:`speedup_per_seed_plot`, saved as ``name`` and shown (nothing when ``plot`` is empty)."""
    if len(plot):
        import matplotlib.pyplot as plt

        save_figure(speedup_per_seed_plot(plot, parts, profile, caption, dataset), name, profile, "smofi")
        plt.show()


#: line styles cycled with the colours, so that two methods of similar colour still differ
_DASHES = ("", (4, 1.5), (1, 1), (6, 2, 1, 2))


def method_styles(methods: list) -> tuple[dict, dict]:
    """A colour (``tab10``: ten that stay apart, then ``tab20``) and a line style per method, in order."""
    import seaborn as sns

    colours = sns.color_palette("tab10" if len(methods) <= 10 else "tab20", len(methods))
    return dict(zip(methods, colours)), {m: _DASHES[i % len(_DASHES)] for i, m in enumerate(methods)}


def accuracy_curves_plot(curves: pd.DataFrame, parts: list, methods: list, titles: dict,
                         ylabel: str = "test accuracy (%)"):
    """Test accuracy against the round (``curves`` rows: ``participation``, ``method``, ``seed``,
    ``round``, ``accuracy``), one panel per setting of ``parts`` titled ``titles[part]``: the mean over
    seeds and its 95% band, one colour and line style per method (:func:`method_styles`, 8–9 methods
    stay apart), the legend beside the panels (never over the early rounds). Returns the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    order = [m for m in methods if m in set(curves["method"])]
    palette, dashes = method_styles(order)
    fig, axes = plt.subplots(1, len(parts), figsize=(5.5 * len(parts) + 2.5, 4), squeeze=False)
    for i, (ax, part) in enumerate(zip(axes[0], parts)):
        sel = curves[curves["participation"] == part]
        sns.lineplot(data=sel, x="round", y="accuracy", hue="method", hue_order=order, style="method",
                     style_order=order, palette=palette, dashes=dashes, errorbar=("ci", 95), seed=0, ax=ax,
                     legend=i == 0)
        ax.set_title(titles.get(part, str(part)), fontsize=9)
        ax.set_ylabel(ylabel if i == 0 else "")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if axes[0][0].get_legend():
        axes[0][0].get_legend().remove()
    fig.tight_layout(rect=(0, 0, 1 - 2.3 / fig.get_figwidth(), 1))
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1 - 2.2 / fig.get_figwidth(), 0.93),
               fontsize=8, frameon=False, title="method")
    return fig
