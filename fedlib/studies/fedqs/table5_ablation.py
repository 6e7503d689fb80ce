"""FedQS Table 5 (Li et al., NeurIPS 2025, §5.5): the ablation of FedQS — similarity function of
Mod① (cosine, Euclidean, Manhattan, the official code's angle), momentum (Mod②), feedback (Mod③) and
full FedQS under the official code's readings (spec ``docs/spec/fedqs.md``, Table 5, "Readings").

``Table5Ablation(profile, settings)``: ``configs`` (the grid), ``measure(results)`` (one row per run),
``gap_curves()``, ``differences()`` (variant − full FedQS, paired), ``comparison()``, ``not_run()``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fedlib.claims import FEDQS_PAPER as P  # the paper's numbers
from fedlib.experiments.metrics import oscillations
from fedlib.reporting import cadence_words, censor, check_names
from fedlib.reporting.fedqs import with_task_regime
from fedlib.reporting.fedqs import (Study, accuracy_curves, alpha_variants, cadence, claim_row, interval_note,
                                    paired_evidence, paired_gap_curves, paired_rows, run_metrics, settings_row)
from fedlib.safl.fedqs.readings import reading_overrides

VARIANTS = {  # name: FedQS option overrides
    "cosine": [], "euclidean": ["options.similarity=euclidean"], "manhattan": ["options.similarity=manhattan"],
    "angle": ["options.similarity=angle"], "w/o momentum": ["options.momentum=false"],
    "w/o feedback": ["options.feedback=false"],
    **{r: list(reading_overrides(r)) for r in ("code-main", "code-momentum")},  # full FedQS under the code's readings
}
SETTINGS = {
    "smoke": dict(task="adult", alphas=[0.5], variants=list(VARIANTS), seeds=[0, 1], rounds=5, workers=1,
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", alphas=[0.5], variants=["cosine", "euclidean", "manhattan", "w/o momentum",
                                                     "w/o feedback", "code-main", "code-momentum"], seeds=[0, 1, 2],
                rounds=50, workers=2, reduce=[]),
    "paper": dict(task="cifar10", alphas=[0.1, 0.5, 1.0], variants=list(VARIANTS), seeds=[0, 1, 2], rounds=400,
                  workers=1, reduce=[]),
    # the cpu settings at T = 400 with the long cadence (full FedQS = Table 2's long runs), w/o feedback only
    "long": dict(task="cifar10", alphas=[0.5], variants=["cosine", "w/o feedback"], seeds=[0, 1], rounds=400,
                 workers=2, reduce=cadence("long")),
}
LISTS = {'alphas', 'seeds', 'variants'}  # knobs that hold lists

METHODS = {"fedqs-avg": "FedQS-Avg", "fedqs-sgd": "FedQS-SGD"}
KEYS = ["method", "variant", "data", "seed"]  # the fields of a cell
SIGNS = {  # metric -> variant -> the paper's sign of (variant − cosine); 0: no direction claimed
    "accuracy": {"w/o momentum": -1, "w/o feedback": -1, "manhattan": 1, "euclidean": 0, "angle": 0},
    "oscillations": {"manhattan": 1, "euclidean": 1, "angle": 0, "w/o momentum": 0, "w/o feedback": 0},
    "rounds_to_95": {"w/o momentum": 1, "w/o feedback": 0, "manhattan": 0, "euclidean": 0, "angle": 0},
}
# the momentum claim under the code's rules: code-main (momentum 0) − code-momentum, the paper's sign per metric
CODE_MOMENTUM = {"accuracy": -1, "oscillations": 0, "rounds_to_95": 1}
MEASURES = {"accuracy": "convergence accuracy (points)", "oscillations": "oscillations, threshold 15 (count)",
            "rounds_to_95": "rounds to 95% (rounds)"}
PAPER_VARIANTS = ["cosine", "euclidean", "manhattan", "w/o momentum", "w/o feedback"]  # angle: not in the paper


shown = with_task_regime  # the settings as the notebook displays them (fedlib.reporting.fedqs)


class Table5Ablation:
    """The Table 5 grid at ``profile`` with ``settings`` (``SETTINGS[profile]`` with the knobs applied)."""

    def __init__(self, profile: str, settings: dict):
        S = self.settings = settings
        self.profile = profile
        check_names(S["variants"], VARIANTS, "ablation variant")
        # CIFAR-10 below `paper`: Table 1's small CNN cnn3, as Table 2 at cpu (a CPU cannot train ResNet-18)
        self.study = Study(S["task"], profile, S["rounds"], S["reduce"])
        self.cells, self.configs = [], []
        for method in METHODS:
            for variant in S["variants"]:
                for data in alpha_variants(S["task"], S["alphas"]):
                    for seed in S["seeds"]:
                        self.configs.append(self.study.config(method, [*VARIANTS[variant], *data], seed))
                        self.cells.append((METHODS[method], variant, data[0] if data else "", seed))
        self.evaluation = cadence_words(self.configs[0])  # which rounds carry an accuracy; every metric reads those only

    def describe(self) -> str:
        return f"{len(self.configs)} runs on {self.settings['task']}\nevaluation: {self.evaluation}"

    def measure(self, results) -> pd.DataFrame:
        """One row per run (``self.runs``); returns the mean per variant × method."""
        rows = []
        self.results = results
        for (method, variant, data, seed), res in zip(self.cells, results):
            s = res.summary
            rows.append({"method": method, "variant": variant, "data": data, "seed": seed,
                         "run": res.config_hash,  # named per pair in the evidence
                         "accuracy": 100 * s["convergence_accuracy"],
                         "censored": s["rounds_to_95"] is None,  # never reached: censored at T, not dropped
                         "rounds_to_95": censor([s["rounds_to_95"]], self.settings["rounds"])[0].iloc[0],
                         "oscillations": oscillations(res.history, 15.0),  # the paper's count, threshold 15 points
                         "drops > 5": oscillations(res.history, 5.0),  # descriptive only: not the paper's threshold
                         "pair": f"{data} seed {seed}", **run_metrics(res)})
        self.runs = pd.DataFrame(rows)
        self.curves = accuracy_curves(self.cells, results, KEYS)  # evaluated rounds only
        return self.runs.groupby(["variant", "method"], sort=False)[
            ["accuracy", "rounds_to_95", "oscillations", "drops > 5"]].mean()

    def curves_figure(self):
        """Test accuracy per round, one line per variant, one panel per FedQS variant."""
        import seaborn as sns

        g = sns.relplot(data=self.curves, x="round", y="accuracy", hue="variant", hue_order=self.settings["variants"],
                        col="method", kind="line", errorbar=("ci", 95), seed=0, height=3.5, aspect=1.5)
        g.set_titles("{col_name}")
        g.figure.suptitle("Ablation: test accuracy per round", y=1.03)
        return g.figure

    def gap_curves(self) -> pd.DataFrame:
        """Per round, each variant − full FedQS (cosine), same seed and x."""
        curves = self.curves
        return paired_gap_curves(curves.assign(pair=curves["data"] + " seed " + curves["seed"].astype(str)),
                                 [(v, "cosine") for v in self.settings["variants"] if v != "cosine"], by=["method"],
                                 method_col="variant", pair_col="pair")

    @property
    def tail_from(self):
        """The first round of the every-round tail of the evaluation cadence (None: no tail)."""
        last = int(self.configs[0].eval_last) if self.configs else 0
        return self.settings["rounds"] - last + 1 if last else None

    def _pairs(self, metric, signs):
        """(variant, baseline, sign) of ``metric``: each variant − cosine (a reading: no direction), and
        code-main − code-momentum where both ran."""
        variants = self.settings["variants"]
        pairs = [(v, "cosine", signs.get(v, 0)) for v in variants if v != "cosine"]
        if {"code-main", "code-momentum"} <= set(variants):
            pairs.append(("code-main", "code-momentum", CODE_MOMENTUM[metric]))
        return pairs

    def differences(self) -> pd.DataFrame:
        """Variant − full FedQS paired over the seeds (and x), per FedQS variant and metric."""
        diffs = pd.concat([paired_rows(self.runs, self._pairs(metric, signs), by=["method"],
                                       metrics=(metric,), method_col="variant", pair_col="pair")
                           for metric, signs in SIGNS.items()], ignore_index=True)
        if len(diffs):
            diffs["measure"] = diffs["metric"].map(MEASURES)
        self.diffs = diffs
        return diffs

    def _scale_note(self) -> str:
        S, profile, study = self.settings, self.profile, self.study
        reduce = study.reductions
        if study.paper_scale and S["task"] == "cifar10":
            return "paper scale"
        if S["task"] == "adult":
            return (f"{profile} profile: UCI Adult (FCN){' at the paper scale' if study.paper_scale else ', reduced'}, "
                    "not the paper's CV task")
        return (f"{profile} profile: CIFAR-10 x = {', '.join(str(a) for a in S['alphas'])} with "
                f"{', '.join(reduce) if reduce else 'ResNet-18'}, "
                f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds / x = 0.1, 0.5, 1 averaged")

    def _val(self, variant, method, col="accuracy") -> float:
        """The mean over seeds of ``col`` for ``variant``, ``method`` (NaN where it did not run)."""
        mean = self._mean
        return float(mean.loc[(variant, method), col]) if (variant, method) in mean.index else float("nan")

    def _part(self, variant, metric, baseline="cosine"):
        """The paired rows of ``variant`` − ``baseline`` in ``metric`` (both FedQS variants)."""
        diffs = self.diffs
        return (diffs[(diffs["comparison"] == f"{variant} − {baseline}") & (diffs["metric"] == metric)]
                if len(diffs) else diffs)

    def comparison(self) -> list:
        """The rows of the report: settings, one verdict per claim, the paper's numbers against the
        measured means, each variant's own numbers and the paired differences."""
        S, runs, diffs = self.settings, self.runs, self.diffs
        self._mean = runs.groupby(["variant", "method"])[["accuracy", "rounds_to_95", "oscillations", "drops > 5",
                                                          "censored"]].agg(
            {"accuracy": "mean", "rounds_to_95": "mean", "oscillations": "mean", "drops > 5": "mean", "censored": "sum"})
        out = [settings_row("Table 5", f"{self._scale_note()}; {len(S['seeds'])} paired seeds {S['seeds']}; differences "
                            "are variant − full FedQS (cosine similarity, momentum and feedback on); accuracy = "
                            "convergence accuracy (mean of the last 20 evaluated rounds); oscillations = evaluated rounds "
                            "whose accuracy drops > 15 points from the previous evaluated round (the paper's threshold); "
                            "rounds to 95% censored at T where never "
                            f"reached; {self.evaluation}; a verdict needs a 95% t-interval that excludes 0 on the paper's side")]
        out += self._claim_rows() + self._paper_rows() + self._variant_rows()
        for _, r in diffs.iterrows() if len(diffs) else []:
            out.append({"table": "Table 5", "setting": f"{r['comparison']}, {r['method']}",
                        "metric": f"paired difference, {r['measure']}", "paper": float("nan"),
                        "measured": r["mean"], "evidence": paired_evidence(r), "note": interval_note(r)})
        return out

    def _claim_rows(self) -> list:
        """One verdict per claim of Table 5 (the paper's reading; the momentum claim also under the code's)."""
        part, diffs, out = self._part, self.diffs, []
        claims = [("manhattan", "accuracy", "Manhattan slightly more accurate than cosine"),
                  ("w/o momentum", "accuracy", f"without momentum, accuracy drops (paper: {P['ablation_no_momentum']} points)"),
                  ("w/o momentum", "rounds_to_95",
                   f"without momentum, more rounds to converge (paper: +{P['ablation_no_momentum_rounds']:g}%)"),
                  ("w/o feedback", "accuracy", f"without feedback, accuracy drops (paper: {P['ablation_no_feedback_avg']} "
                                               f"Avg, {P['ablation_no_feedback_sgd']} SGD)")]
        for variant, metric, words in claims:
            sel = part(variant, metric)
            if len(sel):
                out.append(claim_row("Table 5", words, sel, label_col="method", note="reading paper"))
        for metric, words in (("accuracy", "without momentum, accuracy drops"),
                              ("rounds_to_95", "without momentum, more rounds")):
            sel = part("code-main", metric, "code-momentum")  # the same claim under the code's rules
            if len(sel):
                out.append(claim_row("Table 5", f"{words} · code reading (code-main − code-momentum)", sel,
                                     label_col="method", note="reading code: the code's rules without (main scripts) "
                                                              "and with (momentum scripts) momentum"))
        osc = pd.concat([part(v, "oscillations") for v in ("euclidean", "manhattan")]) if len(diffs) else diffs
        if len(osc):
            out.append(claim_row("Table 5", "cosine oscillates least (fewer 15-point drops than Euclidean, Manhattan)",
                                 osc.assign(where=osc["comparison"] + ", " + osc["method"]), label_col="where",
                                 note="a count of 0 in every run resolves nothing"))
        return out

    def _paper_rows(self) -> list:
        """The paper's numbers (w/o momentum, w/o feedback, the other similarities) against the measured means."""
        S, val, names, out = self.settings, self._val, METHODS.values(), []
        if "cosine" in S["variants"]:
            if "w/o momentum" in S["variants"]:
                drop = np.mean([val("w/o momentum", m) - val("cosine", m) for m in names])
                more = np.mean([100 * (val("w/o momentum", m, "rounds_to_95") / val("cosine", m, "rounds_to_95") - 1)
                                for m in names])
                n_cens = int(sum(val(v, m, "censored") for v in ("w/o momentum", "cosine") for m in names))
                out.append({"table": "Table 5", "setting": "w/o momentum (mean of Avg, SGD)",
                            "metric": "accuracy change (points)", "paper": P["ablation_no_momentum"], "measured": drop,
                            "note": "mean over seeds"})
                out.append({"table": "Table 5", "setting": "w/o momentum (mean of Avg, SGD)", "metric": "more rounds to 95% (%)",
                            "paper": P["ablation_no_momentum_rounds"], "measured": more,
                            "note": f"{n_cens} run(s) never reached 95%: censored at T" if n_cens else "every run reached 95%"})
            if "w/o feedback" in S["variants"]:
                for m, paper_value in (("FedQS-Avg", P["ablation_no_feedback_avg"]),
                                       ("FedQS-SGD", P["ablation_no_feedback_sgd"])):
                    out.append({"table": "Table 5", "setting": f"w/o feedback, {m}", "metric": "accuracy change (points)",
                                "paper": paper_value, "measured": val("w/o feedback", m) - val("cosine", m),
                                "note": "mean over seeds"})
            for other in ("euclidean", "manhattan", "angle", "code-main", "code-momentum"):
                if other in S["variants"]:
                    out.append({"table": "Table 5", "setting": f"{other} − cosine (mean of Avg, SGD)",
                                "metric": "accuracy difference (points)", "paper": float("nan"),
                                "measured": np.mean([val(other, m) - val("cosine", m) for m in names]),
                                "note": ("paper: slightly positive for Manhattan" if other == "manhattan" else
                                         "paper: comparable" if other == "euclidean" else
                                         "not in the paper (the official code's angle)" if other == "angle" else
                                         "full FedQS under the code's reading minus under the paper's: no direction claimed")})
        return out

    def _variant_rows(self) -> list:
        """Each variant's own numbers, the oscillation count among them."""
        val, mean, out = self._val, self._mean, []
        for variant in self.settings["variants"]:  # each variant's own numbers, the oscillation count among them
            for m in METHODS.values():
                if (variant, m) in mean.index:
                    out.append({"table": "Table 5", "setting": f"{variant}, {m}",
                                "metric": "oscillations (threshold 15), mean",
                                "paper": float("nan"), "measured": val(variant, m, "oscillations"),
                                "note": f"convergence accuracy {val(variant, m):.2f}; rounds to 95% "
                                        f"{val(variant, m, 'rounds_to_95'):.1f}; drops > 5 points (not the paper's "
                                        f"threshold) {val(variant, m, 'drops > 5'):.1f}"})
        return out

    def not_run(self) -> list:
        """The paper's ablation rows this execution does not run, with the reason."""
        profile = self.profile
        return [{"table": "Table 5", "setting": f"{v} (FedQS-Avg, FedQS-SGD)",
                 "reason": f"not in `variants` of this execution ({profile} profile"
                           + (": T = 400 costs hours a run, so only the without-feedback pair; the cpu report has every "
                              "variant at T = 50)" if profile == "long" else ")")}
                for v in PAPER_VARIANTS if v not in self.settings["variants"]]
