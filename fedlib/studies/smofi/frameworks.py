"""SMoFi vs the split-FL frameworks SFLV1 and SFLV2 (spec §1, §5; ``notebooks/smofi/frameworks.ipynb``).

:class:`Frameworks` holds a profile's grid (``configs``: SFLV1 = FedAvg, SFLV2 with its server momentum
carried or reset, SMoFi, built as ``main_accuracy`` builds them), measures its runs (per seed: final
accuracy, AUC, rounds and lock-steps to SFLV1's final accuracy), pairs each framework with SFLV1 over the
seeds, reads SFLV2's two explanations from the numbers and builds the paper-vs-measured and not-run rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fedlib.claims.evidence import interval_note
from fedlib.reporting import (PAPER_FRAMEWORKS, PAPER_TINYIMAGENET_ROUNDS, censored_rounds, comparison, curve_metrics,
                              dataset_missing, interval_text, not_run_table, paired_difference, paper_expected_sign,
                              runs_caption, settings_row, show_settings, signed_verdict, smofi_configs,
                              smofi_scale_note, smofi_setting_title, smofi_settings)
from fedlib.reporting.profiles import check_names
from fedlib.reporting.stats import paired_evidence

# framework -> (registered algorithm, extra overrides)
FRAMEWORKS = {"SFLV1": ("fedavg", {}),
              "SFLV2": ("fedavg", {"split.framework": "sflv2"}),  # split.sflv2_momentum=carry, the default
              "SFLV2 (reset)": ("fedavg", {"split.framework": "sflv2", "split.sflv2_momentum": "reset"}),
              "SMoFi": ("fedavg+smofi", {})}
# the comparisons: (method, base); the paper's sign comes from fedlib.reporting.paper_expected_sign
COMPARISONS = [("SMoFi", "SFLV1"), ("SFLV2", "SFLV1"), ("SFLV2 (reset)", "SFLV1"), ("SFLV2 (reset)", "SFLV2")]
SETTINGS = {  # the scale knobs (rounds, model, cut, max_test) equal main_accuracy's: SFLV1/SMoFi runs are shared
    "smoke": dict(datasets=["cifar10", "tinyimagenet"], frameworks=list(FRAMEWORKS), participations=["full", "iid"],
                  iid_frameworks=["SFLV1", "SFLV2"], seeds=[0], rounds=None, model="cnn", cut="conv1", max_test=100,
                  last=1, workers=1),
    "cpu": dict(datasets=["cifar10", "tinyimagenet"], frameworks=list(FRAMEWORKS),
                participations=["full", "iid"], iid_frameworks=["SFLV1", "SFLV2"], seeds=[0, 1, 2], rounds=None,
                model="cnn", cut="conv1", max_test=5000, last=5, workers=2),
    "paper": dict(datasets=["tinyimagenet", "cifar10"], frameworks=list(FRAMEWORKS), participations=["partial"],
                  iid_frameworks=["SFLV1", "SFLV2"], seeds=[0, 1, 2], rounds=None, model="resnet18", cut="layer1",
                  max_test=None, last=10, workers=1),
    # the long profile: SFLV2 vs SFLV1 on all of CIFAR-10, 10 of 20 clients, Dirichlet 0.1, with `cnn` (no dropout: the
    # SFLV2 path draws no dropout masks, so main_accuracy's cnn3 runs are not shared): a CIFAR-10 finding, not a verdict
    # on the paper's Tiny-ImageNet claim; never `auto`
    "long": dict(datasets=["cifar10"], frameworks=["SFLV1", "SFLV2"], participations=["partial"],
                 iid_frameworks=["SFLV1", "SFLV2"], seeds=[0, 1, 2, 3, 4], rounds=None, model="cnn", cut="conv1",
                 max_test=None, last=10, workers=2),
}
LISTS = {"datasets", "frameworks", "participations", "iid_frameworks", "seeds"}  # knobs that hold lists
PAPER = PAPER_FRAMEWORKS  # spec §5, top-1 %
PAPER_ROUNDS = {"tinyimagenet": PAPER_TINYIMAGENET_ROUNDS}  # rounds to SFLV1's best accuracy
CHANCE = 12.0  # % final accuracy: below it a 10-class run counts as at chance
PAIRED_COLUMNS = ["dataset", "participation", "comparison", "metric", "mean", "lo", "hi", "n", "per seed", "verdict",
                  "claim"]


class Frameworks:
    """The frameworks table at ``profile`` with the notebook's knobs (``knobs``: its namespace; a knob
    not ``None`` overrides the profile's :data:`SETTINGS`): ``S``, ``participation``, ``label``, ``plan``
    (dataset, setting, framework, seed) and ``configs`` as in
    :class:`fedlib.studies.smofi.main_accuracy.MainAccuracy`."""

    def __init__(self, profile: str, knobs: dict):
        self.profile = profile
        self.S, self.participation, self.label = smofi_settings(SETTINGS, profile, knobs, LISTS)
        for knob in ("frameworks", "iid_frameworks"):
            check_names(self.S[knob], FRAMEWORKS, "framework", knob)
        # split_config(dataset, algorithm, seed, participation, **overrides)
        self.split_config = smofi_configs(profile, self.label, self.S)
        self.availability = {d: dataset_missing(d) for d in self.S["datasets"]}
        self.plan = [(d, part, fw, seed) for d in self.S["datasets"] if self.availability[d] is None
                     for part in self.S["participations"] for fw in self.frameworks_of(part) for seed in self.S["seeds"]]
        self.configs = [self.config(d, fw, seed, part) for d, part, fw, seed in self.plan]
        self.runs = self.curves = self.diffs = None
        self.hist = {}

    def settings_table(self) -> pd.DataFrame:
        """The settings the notebook runs with, its participation settings and run label."""
        return show_settings({**self.S, "participation settings": self.participation, "run label": self.label},
                             self.profile)

    def config(self, dataset: str, framework: str, seed: int, participation: str):
        """The run of ``framework`` on ``dataset`` in a participation setting at this profile."""
        algorithm, extra = FRAMEWORKS[framework]
        return self.split_config(dataset, algorithm, seed, participation, **extra)

    def frameworks_of(self, part: str) -> list:
        """The frameworks run in setting ``part``: ``iid_frameworks`` in the IID check, else ``frameworks``."""
        return self.S["iid_frameworks"] if part == "iid" else self.S["frameworks"]

    def measure(self, results: list) -> pd.DataFrame:
        """Per run (``results`` in :attr:`plan` order): final accuracy, AUC, best, the rounds and lock-steps
        to SFLV1's final accuracy on the same seed, lock-steps and wall seconds per round; keeps the curves
        (accuracy per round and per lock-step) in :attr:`curves`."""
        hist = self.hist = {key: res.history for key, res in zip(self.plan, results)}
        self.curves = pd.concat([pd.DataFrame({"dataset": d, "participation": part, "framework": fw, "seed": seed,
                                               "round": h["round"], "lock-steps": h["virtual_time"],
                                               "accuracy": 100.0 * pd.to_numeric(h["accuracy"], errors="coerce")})
                                 for (d, part, fw, seed), h in hist.items()], ignore_index=True) \
            if hist else pd.DataFrame()
        rows = []
        for (d, part, fw, seed), h in hist.items():
            ref = hist.get((d, part, "SFLV1", seed))
            target = curve_metrics(ref, last=self.S["last"])["final"] if ref is not None else None  # SFLV1's final
            m = curve_metrics(h, last=self.S["last"], target=target)
            r = m["rounds_to_target"]
            rows.append({"dataset": d, "participation": part, "framework": fw, "seed": seed,
                         "final": m["final"], "auc": m["auc"], "best": m["best"],
                         "target (SFLV1 final)": np.nan if target is None else target, "rounds_to_target": r,
                         "lock-steps_to_target": float(h.loc[h["round"] == r, "virtual_time"].iloc[0])
                         if r == r else np.nan,
                         "lock-steps_per_round": float(h["virtual_time"].iloc[-1]) / len(h),
                         "wall_s_per_round": float(h["wall_time"].iloc[-1]) / len(h)})
        self.runs = pd.DataFrame(rows)
        return self.runs

    def curve_figures(self):
        """(name, figure, caption) per dataset run: test accuracy per round (mean over the seeds, 95%
        band) and per lock-step (one line per seed), one row per participation setting."""
        import matplotlib.pyplot as plt
        import seaborn as sns

        curves, profile = self.curves, self.profile
        if curves is None or not len(curves):
            return
        for d in [d for d in self.S["datasets"] if d in set(curves["dataset"])]:
            parts = [p for p in self.S["participations"] if p in set(curves["participation"])]
            fig, axes = plt.subplots(len(parts), 2, figsize=(12, 4 * len(parts)), squeeze=False)
            for row, part in zip(axes, parts):
                sub = curves[(curves["dataset"] == d) & (curves["participation"] == part)]
                order = [f for f in FRAMEWORKS if f in set(sub["framework"])]
                sns.lineplot(data=sub, x="round", y="accuracy", hue="framework", hue_order=order,
                             errorbar=("ci", 95), seed=0, ax=row[0])
                sns.lineplot(data=sub, x="lock-steps", y="accuracy", hue="framework", hue_order=order,
                             units="seed", estimator=None, lw=1, ax=row[1])
                for ax, x in zip(row, ("round", "lock-steps")):
                    ax.set_title(f"{d}, {smofi_setting_title(profile, part)}: accuracy vs {x} — {profile} profile",
                                 fontsize=9)
                    ax.set_ylabel("test accuracy (%)")
            fig.tight_layout()
            yield (f"frameworks_curves_{d}", fig,
                   runs_caption([c for c, (dd, *_) in zip(self.configs, self.plan) if dd == d], profile))

    def paired(self) -> pd.DataFrame:
        """Each of :data:`COMPARISONS` on the same seeds, for the final accuracy and the AUC, with a 95%
        t-interval; the verdict against the paper's sign (none for SFLV2 (reset) − SFLV2 and the IID check)."""
        runs, diffs = self.runs, []
        for d, part in dict.fromkeys(k[:2] for k in self.hist):
            sel = runs[(runs["dataset"] == d) & (runs["participation"] == part)]
            for fw, base in COMPARISONS:
                if fw not in set(sel["framework"]) or base not in set(sel["framework"]):
                    continue
                sign, claim = paper_expected_sign(fw.replace(" (reset)", ""), base, d) if base == "SFLV1" else \
                    (0, "the paper does not publish how SFLV2's server optimizer passes between clients")
                if base == "SFLV1" and fw.startswith("SFLV2") and d != "tinyimagenet":  # paper: Tiny-ImageNet only
                    claim += f" — on {d} its own finding, not a verdict on that Tiny-ImageNet claim"
                if part == "iid":  # a diagnostic, not a claim: the paper's SFLV2 number is on Dirichlet 0.1
                    sign, claim = 0, ("IID check, a diagnostic: the paper runs no IID split (its SFLV2 claim is "
                                      "Dirichlet 0.1)")
                for metric in ("final", "auc"):
                    r = paired_difference(sel, metric, fw, base, method_col="framework")
                    diffs.append({"dataset": d, "participation": part, "comparison": f"{fw} − {base}",
                                  "metric": metric, "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"],
                                  "per seed": r["diffs"], "verdict": signed_verdict(r, sign), "claim": claim})
        self.diffs = pd.DataFrame(diffs, columns=PAIRED_COLUMNS)
        return self.diffs

    def mean_final(self, d: str, part: str, fw: str) -> float:
        runs = self.runs
        sel = runs[(runs["dataset"] == d) & (runs["participation"] == part) & (runs["framework"] == fw)] \
            if len(runs) else runs
        return float(sel["final"].mean()) if len(sel) else float("nan")

    def paired_row(self, d: str, part: str, comparison: str, metric: str = "final"):
        """The paired-difference row (mean, 95% interval) of ``comparison`` in setting ``part``, or None."""
        diffs = self.diffs
        sel = diffs[(diffs["dataset"] == d) & (diffs["participation"] == part) & (diffs["comparison"] == comparison)
                    & (diffs["metric"] == metric)]
        return sel.iloc[0] if len(sel) else None

    def sflv2_reading(self) -> list[str]:
        """SFLV2's two explanations read from the numbers, one text per dataset run: the carried server momentum
        (the paired difference reset − carry, resolved only when its interval excludes 0) and the last
        client's classes (the IID check; at chance = a mean final accuracy below :data:`CHANCE`)."""
        text = []
        for d in [d for d in self.S["datasets"] if self.availability[d] is None]:
            lines = []
            carry, reset = self.mean_final(d, "full", "SFLV2"), self.mean_final(d, "full", "SFLV2 (reset)")
            iid2, iid1 = self.mean_final(d, "iid", "SFLV2"), self.mean_final(d, "iid", "SFLV1")
            if carry == carry and reset == reset:
                r = self.paired_row(d, "full", "SFLV2 (reset) − SFLV2")
                gap = "" if r is None else f"reset − carry {r['mean']:+.2f} {interval_text(r['lo'], r['hi'])} points; "
                resolved = r is not None and r["lo"] == r["lo"] and (r["lo"] > 0 or r["hi"] < 0)
                lines.append(f"Dirichlet 0.1: SFLV2 (carry) {carry:.1f} %, SFLV2 (reset) {reset:.1f} % ({gap}"
                             + ("resolved: resetting the server momentum per client lifts SFLV2, so the carry is a cause"
                                + (", though reset SFLV2 stays near chance" if reset < CHANCE + 5 else "")
                                if resolved and r["lo"] > 0 else
                                "resolved: resetting lowers SFLV2" if resolved else
                                "not resolved: the carried momentum is not shown to be what holds SFLV2 "
                                + ("at chance" if carry < CHANCE else "back"))
                             + ")")
            if iid2 == iid2:
                lines.append(f"IID: SFLV2 {iid2:.1f} %" + (f", SFLV1 {iid1:.1f} %" if iid1 == iid1 else "") + " — "
                             + ("SFLV2 learns when every client holds every class: consistent with (b), under "
                                "Dirichlet 0.1 its server part is left with the last clients' one or two classes"
                                if iid2 >= CHANCE and carry == carry and carry < CHANCE
                                else "SFLV2 at chance even on IID data" if iid2 < CHANCE else "SFLV2 learns on IID data"))
            text.append(f"{d}:\n  " + "\n  ".join(lines or ["(SFLV2 rows not run)"]))
        return text

    def comparison(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(paper vs measured, the paper's rows not run here with the reason): per setting its scale, each
        framework's mean final accuracy, rounds to SFLV1's final accuracy (censored at the budget),
        lock-steps per round, and each paired gain with its evidence."""
        S, runs, diffs, profile = self.S, self.runs, self.diffs, self.profile
        out, not_run = [], []
        for d in S["datasets"]:
            if self.availability[d] is not None:
                for fw in S["frameworks"]:
                    p_rounds, p_note = PAPER_ROUNDS.get(d, {}).get(fw, (np.nan, ""))
                    not_run.append({"table": "frameworks", "setting": f"{d}, {fw}, top-1 accuracy (%)",
                                    "paper": PAPER.get(d, {}).get(fw, np.nan),
                                    "reason": f"dataset not on this machine ({self.availability[d]})"})
                    not_run.append({"table": "frameworks", "setting": f"{d}, {fw}, rounds to SFLV1's target",
                                    "paper": p_rounds,
                                    "reason": p_note + f"dataset not on this machine ({self.availability[d]})"})
                continue
            for part in S["participations"]:
                out.append(settings_row("frameworks", smofi_scale_note(profile, self.label, S, d, part),
                                        f"{d}, {part}"))
                for fw in self.frameworks_of(part):
                    sel = runs[(runs["dataset"] == d) & (runs["participation"] == part) & (runs["framework"] == fw)]
                    setting = f"{d}, {part}, {fw}"
                    p_rounds, p_note = PAPER_ROUNDS.get(d, {}).get(fw, (np.nan, ""))
                    out.append({"table": "frameworks", "setting": setting,
                                "metric": f"final accuracy (%), mean of last {S['last']}",
                                "paper": PAPER.get(d, {}).get(fw, np.nan),
                                "measured": round(float(sel["final"].mean()), 2),
                                "note": f"sd over seeds {sel['final'].std(ddof=1):.2f}; best-of-rounds "
                                        f"{sel['best'].mean():.2f}; AUC {sel['auc'].mean():.2f}"})
                    if "SFLV1" in self.frameworks_of(part):
                        R = S["rounds"] or self.participation[part]["rounds"][d]
                        rt = censored_rounds(sel["rounds_to_target"], R)  # an unreached seed counts as > R rounds
                        out.append({"table": "frameworks", "setting": setting,
                                    "metric": "rounds to SFLV1's final accuracy", "paper": p_rounds,
                                    "measured": rt["label"],
                                    "note": p_note + f"target = SFLV1's final on the same seed (paper: SFLV1's best); "
                                            f"mean over all seeds, an unreached one at {R + 1} ('≥': a lower bound); "
                                            f"per seed {sel['rounds_to_target'].tolist()} (NaN = not reached in {R} "
                                            f"rounds); reached by {rt['reached']}/{rt['n']} seeds; lock-steps to it "
                                            f"{sel['lock-steps_to_target'].tolist()}"})
                    out.append({"table": "frameworks", "setting": setting, "metric": "lock-steps per round",
                                "paper": np.nan, "measured": round(float(sel["lock-steps_per_round"].mean()), 1),
                                "note": "SFLV1/SMoFi: longest client per round; SFLV2: sum over clients "
                                        "(sequential server)"})
                for _, r in diffs[(diffs["dataset"] == d) & (diffs["participation"] == part)].iterrows():
                    fw, base = r["comparison"].split(" − ")
                    pg = PAPER.get(d, {}).get(fw, np.nan) - PAPER.get(d, {}).get(base, np.nan)
                    out.append({"table": "frameworks", "setting": f"{d}, {part}, {r['comparison']}",
                                "metric": f"paired gain in {r['metric']} (points)",
                                "paper": round(pg, 2) if pg == pg and r["metric"] == "final" else np.nan,
                                "measured": round(r["mean"], 2), "evidence": paired_evidence(r),
                                "note": f"{interval_note(paired_evidence(r))}; {r['verdict']}; {r['claim']}"})
        return comparison(out, profile), not_run_table(not_run, profile)
