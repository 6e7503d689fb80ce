"""FedQS Figure 5 (Li et al., NeurIPS 2025, §5.4): sensitivity to the hyperparameters of Mod② —
η0, a, m0, k — each swept with the others at the paper's defaults (spec ``docs/spec/fedqs.md`` §4,
Figure 5, "Readings").

``Figure5(profile, settings)``: ``configs`` (the grid), ``measure(results)`` (one row per run),
``figure()``, ``comparison()`` (ranges over the grids and FedQS − foundation at each η0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fedlib.experiments import RunConfig, metrics
from fedlib.reporting import check_names
from fedlib.reporting.fedqs import with_task_regime
from fedlib.reporting.fedqs import (CPU_CV_SUBSET, FEDQS_METHODS, METHODS as ALL_METHODS, Study, check_readings,
                                    claim_row, interval_note, interval_words, paired_evidence, paired_rows, readings_of,
                                    readings_run, row_name, settings_row)
from fedlib.reporting.stats import interval_text, paired_difference
from fedlib.safl.fedqs import FedQSOptions
from fedlib.safl.fedqs.readings import ACTING_HYPERPARAMETERS, reading_overrides, reading_tag

# the paper's defaults (spec §4), read where they are set: Mod②'s in FedQSOptions, η0 the preset's local.lr
DEFAULTS = {"eta0": RunConfig.from_preset("fedqs-avg-adult-gender").local.lr,
            **{hp: getattr(FedQSOptions(), hp) for hp in ("a", "m0", "k")}}
SETTINGS = {
    "smoke": dict(task="adult", seeds=[0, 1], rounds=5, workers=1, target=0.98,
                  grids={"eta0": [0.05, 0.1], "a": [0.002, 0.01], "m0": [0.1, 0.5], "k": [0.2, 0.5]},
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"],
                  readings=["code-main"]),
    "cpu": dict(task="adult", seeds=[0, 1, 2], rounds=200, workers=2, target=0.98,
                grids={"eta0": [0.01, 0.1, 0.2], "a": [0.001, 0.002, 0.005, 0.02], "m0": [0.0, 0.1, 0.5],
                       "k": [0.001, 0.2, 0.5]}, reduce=[], readings=["code-main", "code-momentum"]),
    "paper": dict(task="cifar10", seeds=[0], rounds=400, workers=1, target=0.80,
                  grids={"eta0": [0.01, 0.05, 0.1, 0.2], "a": [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02],
                         "m0": [0.0, 0.1, 0.3, 0.5], "k": [0.001, 0.01, 0.1, 0.2, 0.5]}, reduce=[],
                  readings=["code-main"]),
}
LISTS = {'seeds', 'readings'}  # knobs that hold lists

METHODS = {m: ALL_METHODS[m][0] for m in ("fedavg", "fedsgd", "fedqs-avg", "fedqs-sgd")}
KEY = {"eta0": "local.lr", "a": "options.a", "m0": "options.m0", "k": "options.k"}  # hyperparameter -> override
SYMBOL = {"eta0": "η0", "a": "a", "m0": "m0", "k": "k"}
EXPECTED = {"a": "paper: largest of a, m0, k", "k": "paper: smallest of a, m0, k",
            "m0": "paper: between a and k", "eta0": "paper: too small / large η0 hurts"}


shown = with_task_regime  # the settings as the notebook displays them (fedlib.reporting.fedqs)


def acts(hp, reading):
    """Whether ``hp`` changes a FedQS run under ``reading`` (under code-main momentum is 0: m0, k unused)."""
    return hp in ACTING_HYPERPARAMETERS[reading]


class Figure5:
    """The Figure 5 sweeps at ``profile`` with ``settings`` (``SETTINGS[profile]`` with the knobs applied)."""

    def __init__(self, profile: str, settings: dict):
        S = self.settings = settings
        self.profile = profile
        check_names(S["grids"], DEFAULTS, "hyperparameter")
        # CIFAR-10 below `paper`: the small `cnn` on 5,000 training images (a CPU cannot train ResNet-18)
        self.study = Study(S["task"], profile, S["rounds"], S["reduce"], cpu_cv=CPU_CV_SUBSET)
        self.read_on = check_readings(S["readings"])  # FedQS also under these readings, rows tagged " · code-main"
        self.cells, self.configs = [], []
        for hp, values in S["grids"].items():
            methods = list(METHODS) if hp == "eta0" else ["fedqs-avg", "fedqs-sgd"]
            for method in methods:
                for reading in [r for r in readings_of(method, self.read_on) if r == "paper" or acts(hp, r)]:
                    for value in values:
                        for seed in S["seeds"]:
                            self.cells.append((hp, value, row_name(method, reading), seed))
                            self.configs.append(self.study.config(method, [f"{KEY[hp]}={value}",
                                                                           *reading_overrides(reading)], seed))
        self.labels = list(dict.fromkeys(c[2] for c in self.cells))  # every method, each FedQS reading after its paper row
        self.fedqs = [(row_name(q, r), r) for r in readings_run(self.read_on) for q in FEDQS_METHODS]

    def describe(self) -> str:
        unique = len({c.config_hash() for c in self.configs})
        return f"{len(self.configs)} grid cells, {unique} distinct runs (the defaults are shared between the sweeps)"

    def measure(self, results) -> pd.DataFrame:
        """One row per grid cell (``self.runs``); returns the mean per hyperparameter × method × value."""
        rows = []
        for (hp, value, method, seed), res in zip(self.cells, results):
            s = res.summary
            rows.append({"hyperparameter": hp, "value": value, "method": method, "seed": seed,
                         "run": res.config_hash,  # named per seed in the evidence
                         "accuracy": 100 * s["convergence_accuracy"],
                         "rounds_to_target": metrics.rounds_to_fraction(res.history, self.settings["target"])})
        self.runs = runs = pd.DataFrame(rows)
        return runs.groupby(["hyperparameter", "method", "value"], sort=False)[["accuracy", "rounds_to_target"]].mean()

    def figure(self):
        """Accuracy (top) and rounds to the target (bottom) against each hyperparameter's value."""
        import matplotlib.pyplot as plt
        import seaborn as sns

        S, runs, labels = self.settings, self.runs, self.labels
        hps = list(S["grids"])
        palette = dict(zip(labels, sns.color_palette("tab10", len(labels))))
        markers = dict(zip(labels, ["o", "s", "X", "P", "D", "v", "^", "<"]))
        fig, axes = plt.subplots(2, len(hps), figsize=(4.2 * len(hps), 7), squeeze=False)
        for j, hp in enumerate(hps):
            sub = runs[runs["hyperparameter"] == hp]
            for i, (col, label) in enumerate((("accuracy", "convergence accuracy (%)"),
                                              ("rounds_to_target", f"rounds to {100 * S['target']:.0f}% of it"))):
                ax = axes[i][j]
                sns.lineplot(data=sub, x="value", y=col, hue="method", hue_order=list(palette), palette=palette,
                             style="method", style_order=list(palette), markers=markers, dashes=False,
                             errorbar=("ci", 95), seed=0, ax=ax)
                ax.axvline(DEFAULTS[hp], color="grey", ls=":", lw=1)
                ax.set_xscale("log" if min(v for v in S["grids"][hp] if v > 0) * 20 <= max(S["grids"][hp]) else "linear")
                ax.set_xlabel(SYMBOL[hp])
                ax.set_ylabel(label if j == 0 else "")
                if (i, j) != (0, 0) and ax.get_legend():
                    ax.get_legend().remove()
        fig.suptitle("FedQS hyperparameter sweeps (dotted: paper default)")
        fig.tight_layout()
        return fig

    def comparison(self) -> list:
        """The rows of the report: the seed-to-seed range at the defaults, each grid's accuracy range
        (best − worst paired over the seeds) and FedQS − its foundation at each η0 (paired)."""
        S, runs, profile = self.settings, self.runs, self.profile
        mean = runs.groupby(["hyperparameter", "method", "value"])["accuracy"].mean()
        scale_note = ("paper scale" if self.study.paper_scale and S["task"] == "cifar10" else
                      f"{profile} profile: {'UCI Adult (FCN)' if S['task'] == 'adult' else 'reduced CIFAR-10 (CNN)'}, "
                      f"T = {S['rounds']}; not the paper's CV task")

        def spread(hp, method, lo=-np.inf, hi=np.inf):
            """(max − min of the seed means over the grid values in [lo, hi], the note: best − worst value
            paired over the seeds with its 95% interval, so a range within the seed noise reads unresolved)."""
            vals = {v: mean.loc[(hp, method, v)] for v in S["grids"].get(hp, [])
                    if lo <= v <= hi and (hp, method, v) in mean.index}
            if len(vals) < 2:
                return float("nan"), "fewer than two grid values", None
            best, worst = max(vals, key=vals.get), min(vals, key=vals.get)
            sel = runs[(runs["hyperparameter"] == hp) & (runs["method"] == method)]
            d = paired_difference(sel, "accuracy", best, worst, method_col="value")
            return float(vals[best] - vals[worst]), (f"best {hp} = {best} − worst {worst}, paired: 95% interval "
                                                     f"{interval_text(d['lo'], d['hi'])} over {d['n']} seeds: "
                                                     f"{interval_words(d)}"), paired_evidence(d)

        # the run at the paper's defaults: a sweep's row at its own default value (the others are at theirs)
        default = runs[[DEFAULTS[hp] == value for hp, value in zip(runs["hyperparameter"], runs["value"])]]

        def seed_range(method):
            """The range over the seeds of ``method``'s run at the paper's defaults (one run per seed)."""
            acc = default[default["method"] == method].drop_duplicates("seed")["accuracy"]
            return float(acc.max() - acc.min()) if len(acc) >= 2 else float("nan")

        out = [settings_row("Figure 5", f"{scale_note}; {len(S['seeds'])} paired seeds {S['seeds']}; accuracy = "
                            "convergence accuracy (mean of the last 20 rounds), range = max − min of the seed means over "
                            "a grid; its best − worst "
                            "interval picks both ends from the same data, so it errs towards resolving")]
        for method, reading in self.fedqs:
            out.append({"table": "Figure 5", "setting": f"{method} at the paper's defaults, {len(S['seeds'])} seeds",
                        "metric": "seed-to-seed accuracy range (points)", "paper": float("nan"),
                        "measured": seed_range(method), "note": "seed-to-seed spread (partition, delays and initial "
                        "model change with the seed); each range below is read paired over the same seeds"})
            for hp in ("a", "m0", "k", "eta0"):
                if hp in S["grids"] and acts(hp, reading):
                    size, note, ev = spread(hp, method)
                    out.append({"table": "Figure 5", "setting": f"{method}, {hp} over {S['grids'][hp]}",
                                "metric": "accuracy range (points)", "paper": float("nan"), "measured": size,
                                "evidence": ev, "note": EXPECTED[hp] + "; " + note})
            for hp, lo, hi in (("a", 0.001, 0.005), ("k", 0.001, 0.2)):
                if not acts(hp, reading):
                    continue
                size, note, ev = spread(hp, method, lo, hi)
                out.append({"table": "Figure 5", "setting": f"{method}, {hp} in [{lo}, {hi}]",
                            "metric": "accuracy range (points)", "paper": float("nan"), "measured": size, "evidence": ev,
                            "note": "paper: robust (small range) inside this interval; " + note})
        if "eta0" in S["grids"]:
            gains = paired_rows(runs[runs["hyperparameter"] == "eta0"],
                                [(m, "FedAvg" if "Avg" in m else "FedSGD", 1) for m, _ in self.fedqs], by=["value"],
                                metrics=("accuracy",))
            for r in readings_run(self.read_on):  # one verdict per reading, the reading named
                sel = gains[gains["method"].isin([m for m, rr in self.fedqs if rr == r])]
                out.append(claim_row("Figure 5", f"FedQS{reading_tag(r)} ahead of its foundation at every η0", sel.assign(
                    comparison=sel["comparison"] + " at η0 = " + sel["value"].astype(str)), note=scale_note))
            for _, r in gains.iterrows():
                out.append({"table": "Figure 5", "setting": f"{r['comparison']}, η0 = {r['value']}",
                            "metric": "accuracy gain (points)", "paper": float("nan"), "measured": r["mean"],
                            "evidence": paired_evidence(r), "note": "paper: positive at every η0; " + interval_note(r)})
            # "converges faster at every η0": FedQS − its foundation in rounds to the target fraction of each run's
            # own convergence accuracy (a run that never reaches it counts as T), fewer the paper's side
            eta = runs[runs["hyperparameter"] == "eta0"].assign(
                rounds_to_target=lambda d: d["rounds_to_target"].fillna(S["rounds"]))
            speed = paired_rows(eta, [(m, "FedAvg" if "Avg" in m else "FedSGD", -1) for m, _ in self.fedqs],
                                by=["value"], metrics=("rounds_to_target",))
            for _, r in speed.iterrows():
                out.append({"table": "Figure 5", "setting": f"{r['comparison']}, η0 = {r['value']}",
                            "metric": "paired difference, rounds to target (rounds)", "paper": float("nan"),
                            "measured": r["mean"], "evidence": paired_evidence(r),
                            "note": f"rounds to {100 * S['target']:.0f}% of each run's own convergence accuracy; "
                                    "paper: FedQS faster at every η0; " + interval_note(r)})
        return out
