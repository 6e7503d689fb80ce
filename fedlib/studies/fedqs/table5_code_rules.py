"""FedQS Table 5, the official code's rules one by one (companion of ``table5_ablation``; spec
``docs/spec/fedqs.md``, "Readings"): each step switches one code rule on the paper reading
(``fedlib.safl.fedqs.readings.RULE_STEPS``), each reverse step one rule back to the text's on code-main
(``REVERSE_STEPS``), against the paper reading, code-main and FedQS's foundation.

``Table5CodeRules(profile, settings)``: ``configs`` (the arms), ``measure(results)``, ``differences()``,
``comparison()``, ``not_run(costs)``.
"""

from __future__ import annotations

import pandas as pd

from fedlib.reporting import cadence_words, check_names
from fedlib.reporting.fedqs import with_task_regime
from fedlib.reporting.fedqs import Study, alpha_variants, interval_note, paired_evidence, run_metrics, settings_row
from fedlib.reporting.fedqs_rules import (CODE_ARM, FOUNDATION, FOUNDATION_ARM, PAPER_ARM, arm_overrides, check_steps,
                                          moving_rules, rule_arms, rule_diffs)
from fedlib.safl.fedqs.readings import READING_LABELS, REVERSE_STEPS, RULE_STEPS

CPU_STEPS = ["momentum off", "angle similarity", "angle + code momentum rule", "angle + distance test and G",
             "dividers at aggregation"]  # the steps computed at cpu (the rest: not-run rows with their price)
# FedQS-Avg at cpu: momentum and the two angle steps that moved FedQS-SGD most (the others: priced not-run rows)
CPU_AVG_STEPS = ["momentum off", "angle + code momentum rule", "angle + distance test and G"]
SETTINGS = {
    "smoke": dict(task="adult", methods=["fedqs-sgd"], steps=list(RULE_STEPS), reverse_steps=list(REVERSE_STEPS),
                  method_steps={}, seeds=[0, 1], rounds=5, workers=1,
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", methods=["fedqs-sgd", "fedqs-avg"], steps=CPU_STEPS, reverse_steps=[],
                method_steps={"fedqs-avg": CPU_AVG_STEPS}, seeds=[0, 1, 2], rounds=50, workers=2,
                reduce=[]),
    "paper": dict(task="cifar10", methods=["fedqs-sgd", "fedqs-avg"], steps=list(RULE_STEPS),
                  reverse_steps=list(REVERSE_STEPS), method_steps={}, seeds=[0, 1, 2],
                  rounds=400, workers=1, reduce=[]),
}
LISTS = {'methods', 'steps', 'reverse_steps', 'seeds'}  # knobs that hold lists

NAMES = {"fedqs-sgd": "FedQS-SGD", "fedqs-avg": "FedQS-Avg"}
TABLE = "Table 5 (code rules)"
PANELS = {PAPER_ARM: "arm − paper reading (the rule's effect)", CODE_ARM: "arm − code-main (a rule switched back)",
          FOUNDATION_ARM: "arm − foundation (FedQS's lead)"}


shown = with_task_regime  # the settings as the notebook displays them (fedlib.reporting.fedqs)


class Table5CodeRules:
    """The rule-by-rule arms at ``profile`` with ``settings`` (``SETTINGS[profile]`` with the knobs applied)."""

    def __init__(self, profile: str, settings: dict):
        S = self.settings = settings
        self.profile = profile
        check_names(S["methods"], FOUNDATION, "FedQS variant", "methods")
        check_names(list(S["method_steps"] or {}), S["methods"], "FedQS variant", "method_steps")
        self.steps = {m: list((S["method_steps"] or {}).get(m, S["steps"])) for m in S["methods"]}  # each variant's steps
        self.all_steps = list(dict.fromkeys(s for m in S["methods"] for s in self.steps[m]))
        for m in S["methods"]:
            check_steps(self.steps[m])
        check_steps(S["reverse_steps"], reverse=True)
        self.study = Study(S["task"], profile, S["rounds"], S["reduce"])
        data = alpha_variants(S["task"], [0.5])[0]  # CIFAR-10 x = 0.5, Table 2's column (Adult: its own split)
        self.cells, self.configs = [], []
        for method in S["methods"]:
            for arm in rule_arms(self.steps[method], S["reverse_steps"]):
                for seed in S["seeds"]:
                    run_of = FOUNDATION[method] if arm == FOUNDATION_ARM else method
                    overrides = [] if arm == FOUNDATION_ARM else list(arm_overrides(arm))
                    self.configs.append(self.study.config(run_of, [*overrides, *data], seed))
                    self.cells.append((NAMES[method], arm, seed))
        self.evaluation = cadence_words(self.configs[0])

    def describe(self) -> str:
        S = self.settings
        return f"{len(self.configs)} runs on {S['task']}: " + "; ".join(
            f"{NAMES[m]} {len(rule_arms(self.steps[m], S['reverse_steps']))} arms" for m in S["methods"]) + \
            f" × {len(S['seeds'])} seeds"

    def measure(self, results) -> pd.DataFrame:
        """One row per run (``self.runs``); returns the mean per FedQS variant × arm."""
        self.runs = pd.DataFrame([{"method": m, "arm": arm, "seed": seed, "run": r.config_hash,  # per seed in the evidence
                                   "accuracy": 100 * r.summary["convergence_accuracy"], **run_metrics(r)}
                                  for (m, arm, seed), r in zip(self.cells, results)])
        return self.runs.groupby(["method", "arm"], sort=False)[["accuracy", "final", "best"]].mean()

    def differences(self) -> pd.DataFrame:
        """Each arm − where its step starts, and each FedQS arm − the foundation, paired over the seeds
        (``self.diffs``); returns the accuracy rows with the forest plot's ``panel``."""
        self.diffs = diffs = rule_diffs(self.runs, self.all_steps, reverse=self.settings["reverse_steps"])
        acc = diffs[diffs["metric"] == "accuracy"] if len(diffs) else diffs
        return acc.assign(panel=acc["baseline"].map(PANELS)) if len(acc) else acc

    @property
    def title(self) -> str:
        S = self.settings
        return (f"FedQS rule by rule: {self.study.label} profile, {S['task']}, T = {S['rounds']}, "
                f"{len(S['seeds'])} paired seeds, 95% t-intervals")

    def comparison(self) -> list:
        """The rows of the report: per FedQS variant the rules that move it, then one row per arm and comparison."""
        S, study, diffs, profile = self.settings, self.study, self.diffs, self.profile
        scale = ("paper scale" if study.paper_scale else
                 f"{profile} profile: {S['task']}{' x = 0.5' if S['task'] == 'cifar10' else ''}"
                 f"{' with ' + ', '.join(study.reductions) if study.reductions else ''}, "
                 f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds")
        out = [settings_row(TABLE, f"{scale}; {len(S['seeds'])} paired seeds {S['seeds']}; each step switches one "
                            "code rule on the paper reading (fedlib.safl.fedqs.readings.RULE_STEPS), each reverse step one "
                            "rule back to the text's on code-main (REVERSE_STEPS); accuracy = convergence "
                            f"accuracy (mean of the last 20 evaluated rounds); {self.evaluation}; readings: "
                            + "; ".join(f"{r}: {w}" for r, w in READING_LABELS.items()))]
        moving = moving_rules(diffs, [*self.all_steps, *S["reverse_steps"]])
        for key, method in NAMES.items():
            if key not in S["methods"]:
                continue
            found = moving.get(method, [])
            out.append({"table": TABLE, "setting": f"{method}: rules that move it (effect's interval excludes 0)",
                        "metric": "rule steps", "paper": float("nan"),
                        "measured": "; ".join(f"{s} {m:+.2f} [{lo:.2f}, {hi:.2f}]" for s, m, lo, hi in found) or "none",
                        "note": f"of {len(self.steps[key])} steps run: {', '.join(self.steps[key])}; of "
                                f"{len(S['reverse_steps'])} reverse steps (from code-main): "
                                f"{', '.join(S['reverse_steps']) or 'none'}"})
        steps_tags = {**RULE_STEPS, **REVERSE_STEPS}
        for _, r in diffs.iterrows() if len(diffs) else []:
            tag = steps_tags[r["arm"]][0] if r["arm"] in steps_tags else READING_LABELS.get(r["arm"], r["arm"])
            out.append({"table": TABLE, "setting": f"{r['method']}: {r['comparison']}",
                        "metric": f"paired difference, {r['metric']} (points)", "paper": float("nan"),
                        "measured": r["mean"], "evidence": paired_evidence(r), "note": f"{interval_note(r)}; {tag}"})
        return out

    def not_run(self, costs: pd.DataFrame) -> list:
        """The steps this execution does not run, priced at the mean host minutes of its FedQS runs
        (``costs``: ``fedlib.reporting.costs.cost_table`` of the runs)."""
        S, profile, steps = self.settings, self.profile, self.steps
        per_run = costs.loc[costs["arm"] != FOUNDATION_ARM, "minutes"].mean()
        n = len(S["seeds"])
        rows = [{"table": TABLE, "setting": f"{step} ({NAMES[m]})",
                 "reason": f"not in `steps` / `method_steps` of this execution ({profile} profile); "
                           f"{n} runs ≈ {n * per_run:.0f} host minutes"}
                for step in RULE_STEPS for m in S["methods"] if step not in steps[m]]
        rows += [{"table": TABLE, "setting": f"every step ({NAMES[m]})",
                  "reason": f"not in `methods` of this execution ({profile} profile); "
                            f"{len(RULE_STEPS) * n} runs ≈ {len(RULE_STEPS) * n * per_run:.0f} host minutes"}
                 for m in NAMES if m not in S["methods"]]
        rows += [{"table": TABLE, "setting": f"{step} (from code-main; {', '.join(NAMES[m] for m in S['methods'])})",
                  "reason": f"not in `reverse_steps` of this execution ({profile} profile); "
                            f"{n * len(S['methods'])} runs ≈ {n * len(S['methods']) * per_run:.0f} host minutes"}
                 for step in REVERSE_STEPS if step not in S["reverse_steps"]]
        return rows
