"""FedQS Table 2 (Li et al., NeurIPS 2025, §5.2): accuracy and convergence speed of FedQS and the eleven
baselines on the six task columns, read as paired differences over seeds (spec ``docs/spec/fedqs.md``).

:class:`Table2` is the grid (tasks × methods × seeds, the 8:2 holdout pair, FedQS under the code's
readings), the measurement (per-run accuracy, rounds to target, per-column table) and the
comparison rows (settings, not-run rows, one verdict per claim, column by column differences).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fedlib.claims import FEDQS_PAPER as P
from fedlib.experiments.metrics import largest_drop
from fedlib.reporting import cadence_words, censor, check_names, dataset_missing, paired_difference
from fedlib.reporting.fedqs import with_tasks_regime
from fedlib.reporting.fedqs import (ALL_TASKS, FEDQS_METHODS, METHODS, TASKS, accuracy_curves, claim_row, expand_tasks,
                                   interval_note, is_reduced, mean_pairs, method_names, method_overrides, not_run_row,
                                   paired_evidence, paired_gap_curves, paired_rows, readings_by_task, run_metrics,
                                   settings_row, target_rounds, task_config, tasks_regime)
from fedlib.reporting.stats import interval_text, verdict
from fedlib.safl.fedqs.readings import READING_LABELS, READINGS, reading_overrides, reading_tag

MAIN = ["fedavg", "m-step", "fedqs-avg", "fedsgd", "wkafl", "fedqs-sgd"]  # FedQS, foundations, paper's best baselines
SETTINGS = {
    "smoke": dict(tasks=["adult-gender"], methods=None, reduced_methods=None, full_tasks=[],
                  holdout_tasks=["adult-gender"], readings=["code-main"], reading_tasks=["adult-gender"],
                  reading_methods=None, reading_seeds={}, method_seeds={},
                  seeds=[0, 1], rounds=None, task_rounds={}, workers=1),
    "cpu": dict(tasks=["cifar10", "shakespeare", "adult"], methods=None, reduced_methods=MAIN,
                full_tasks=["cifar10-x0.5"], holdout_tasks=["cifar10-x0.5"], readings=["code-main", "code-momentum"],
                reading_tasks={"code-main": ["cifar10", "shakespeare", "adult"],
                               "code-momentum": ["cifar10-x0.5", "adult"]},
                reading_methods=None, reading_seeds={"shakespeare": [0, 1]}, method_seeds={}, seeds=[0, 1, 2], rounds=None,
                task_rounds={"cifar10-x0.1": 50, "cifar10-x0.5": 50, "cifar10-x1": 50}, workers=2),
    "paper": dict(tasks=ALL_TASKS, methods=None, reduced_methods=None, full_tasks=[],
                  holdout_tasks=["cifar10-x0.5"], readings=["code-main", "code-momentum"],
                  reading_tasks={"code-main": ALL_TASKS, "code-momentum": ["cifar10-x0.5", "adult"]},
                  reading_methods=None, reading_seeds={}, method_seeds={}, seeds=[0, 1, 2], rounds=None, task_rounds={},
                  workers=1),
    # T = 400 (the cpu overlay + rounds=400, eval_every=5, eval_last=20), x = 0.5, FedQS and its two foundations
    # code-momentum: FedQS-SGD only so far (a 400-round run is ~1 CPU-hour on an AVX2 EPYC; FedQS-Avg's is a
    # priced not-run row); the gradient family (FedSGD, FedQS-SGD under every reading) at three seeds, the model
    # family at two (its third seed: a priced not-run row)
    "long": dict(tasks=["cifar10-x0.5"], methods=["fedqs-sgd", "fedsgd", "fedqs-avg", "fedavg"], reduced_methods=None,
                 full_tasks=[], holdout_tasks=[], readings=["code-main", "code-momentum"], reading_tasks=["cifar10-x0.5"],
                 reading_methods={"code-main": ["fedqs-avg", "fedqs-sgd"], "code-momentum": ["fedqs-avg", "fedqs-sgd"]},
                 reading_seeds={}, method_seeds={}, seeds=[0, 1, 2],
                 rounds=None, task_rounds={}, workers=2),
}
LISTS = {'methods', 'reduced_methods', 'seeds', 'tasks', 'full_tasks', 'holdout_tasks', 'readings'}  # knobs that hold lists
VARIANTS = ["fedqs-avg", "fedqs-sgd"]
HOLDOUT = "holdout"  # the variant of a FedQS run under the paper's 8:2 split
TABLE = "Table 2"


shown_settings = with_tasks_regime  # the settings as the notebook displays them (fedlib.reporting.fedqs)


def chance_level(task):
    """The accuracy (%) of a model that learnt nothing: 1/10 on CIFAR-10; on Shakespeare the share of
    the most frequent next character (a space) in the test set, where an LSTM sits on its plateau.
    None for Adult, whose majority class is a real baseline, not "chance"."""
    if task.startswith("cifar10"):
        return 10.0
    if task.startswith("shakespeare"):
        from fedlib.data import load_dataset
        y = load_dataset("shakespeare").test_y
        return round(100 * float(y.bincount().max()) / len(y), 2)
    return None


class Table2:
    """The Table 2 study at ``profile`` with ``settings`` (:data:`SETTINGS` with the notebook's knobs applied).

    ``cells`` are ``(task, method, seed, variant)`` (variant ``""``: the paper reading, ``holdout``: the
    8:2 split, else a reading of ``readings``) and ``cfgs`` their run configs; :meth:`measure` reads the
    runs' results, :meth:`comparison` gives the rows of the paper-vs-measured table."""

    def __init__(self, profile: str, settings: dict):
        self.profile, self.S = profile, settings
        S = settings
        self.method_list = method_names(S["methods"])
        check_names(S["reduced_methods"] or [], METHODS, "method", "reduced_methods")
        self.requested = expand_tasks(S["tasks"])
        # a dataset not here: a "not run" row, no crash
        self.missing = {t: dataset_missing(t.split("-")[0]) for t in self.requested}
        self.task_list = [t for t in self.requested if not self.missing[t]]
        self.full_tasks = expand_tasks(S["full_tasks"] or [])
        self.holdout_tasks = [t for t in expand_tasks(S["holdout_tasks"] or []) if t in self.task_list]
        self.read_on = readings_by_task(S["readings"], S["reading_tasks"], self.task_list)  # {task: readings}
        check_names(list(S["reading_seeds"] or {}), list(TASKS), "task", "reading_seeds")
        check_names(list(S["method_seeds"] or {}), METHODS, "method", "method_seeds")
        # a FedQS row's variant: "" (paper reading, all data trains), the paper's 8:2 holdout, or another reading
        self.extra = {HOLDOUT: ("data.validation=holdout",), **{r: reading_overrides(r) for r in S["readings"] or []}}
        self.tag = {"": "", HOLDOUT: " · 8:2 holdout", **{r: reading_tag(r) for r in S["readings"] or []}}
        self.holdout_tag = self.tag[HOLDOUT]
        tl = self.task_list
        cells = [(t, m, s, "") for t in tl for m in self.methods_on(t) for s in self.seeds_of(t, m)]
        cells += [(t, m, s, HOLDOUT) for t in self.holdout_tasks for m in FEDQS_METHODS if m in self.methods_on(t)
                  for s in self.seeds_of(t, m)]
        cells += [(t, m, s, r) for t in tl for r in self.read_on[t] for m in self.read_methods(r) if m in self.methods_on(t)
                  for s in self.seeds_of(t, m, r)]
        self.cells = cells
        self.cfgs = [task_config(m, t, profile, self.rounds_of(t), extra=self.extra.get(v, ())).replace(seed=s)
                     for t, m, s, v in cells]
        # which rounds carry an accuracy, per column; every metric reads those only
        self.evaluation = {t: cadence_words(next(c for c, (task, *_) in zip(self.cfgs, cells) if task == t)) for t in tl}
        self.fedqs = {"model": METHODS["fedqs-avg"][0], "gradient": METHODS["fedqs-sgd"][0]}
        fq, tag = self.fedqs, self.tag
        self.pairs = [(fq[METHODS[b][1]], METHODS[b][0], 1) for b in self.method_list if b not in FEDQS_METHODS]
        self.weaker = [(METHODS[a][0], METHODS[b][0], -1)
                       for a, b in (("safa", "fedavg"), ("fedat", "fedavg"), ("fedbuff", "fedsgd"))]
        self.split = [(fq[a] + self.holdout_tag, fq[a], 0) for a in ("model", "gradient")]  # no direction claimed
        # each further reading: FedQS under it − every baseline of its family (the paper's side), and − the paper reading
        self.read = [(f + tag[r], b, sign) for r in S["readings"] or [] for f, b, sign in self.pairs]
        self.read += [(fq[a] + tag[r], fq[a], 0) for r in S["readings"] or [] for a in ("model", "gradient")]

    # ------------------------------------------------------------------ the grid
    def read_methods(self, reading):
        """The FedQS variants run under ``reading``: ``reading_methods`` (a list, or {reading: list}; None: both)."""
        chosen = self.S["reading_methods"]
        chosen = chosen.get(reading, VARIANTS) if isinstance(chosen, dict) else chosen
        return check_names([chosen] if isinstance(chosen, str) else (chosen or VARIANTS), VARIANTS, "FedQS variant",
                           "reading_methods")

    def rounds_of(self, task):
        """T of ``task``: its ``task_rounds`` entry, else ``rounds`` (None: the profile's)."""
        return (self.S["task_rounds"] or {}).get(task, self.S["rounds"])

    def methods_on(self, task):
        """The methods run on ``task``: all of ``methods`` where the profile runs the paper's scale or the task is
        in ``full_tasks``, else only ``reduced_methods``."""
        S = self.S
        if S["reduced_methods"] is None or task in self.full_tasks or not is_reduced(task, self.profile,
                                                                                     self.rounds_of(task))[0]:
            return self.method_list
        return [m for m in self.method_list if m in S["reduced_methods"]]

    def seeds_of(self, task, method, reading=None):
        """The seeds of ``method``'s runs on ``task`` (under ``reading``, None: the paper reading or the holdout):
        its ``method_seeds`` entry, else under a reading the task's ``reading_seeds``, else ``seeds``. A pair
        reads the seeds its two methods share."""
        own = (self.S["method_seeds"] or {}).get(method)
        if own is not None:
            return list(own)
        return self.reading_seeds_on(task) if reading else self.S["seeds"]

    def method_seeds_note(self) -> str:
        """``; seeds per method (method_seeds): FedSGD [0, 1, 2], …`` (empty without ``method_seeds``)."""
        own = self.S["method_seeds"] or {}
        return ("; seeds per method (method_seeds, under every reading): "
                + ", ".join(f"{METHODS[m][0]} {list(v)}" for m, v in own.items())) if own else ""

    def reading_seeds_on(self, task):
        """The seeds of the runs under the readings on ``task``: its ``reading_seeds`` entry, else ``seeds``."""
        return (self.S["reading_seeds"] or {}).get(task, self.S["seeds"])

    def describe(self) -> str:
        """What runs: the number of runs, tasks, seeds, holdout and reading runs, and the evaluation cadence."""
        cells, S = self.cells, self.S
        return (f"{len(self.cfgs)} runs: {len(self.task_list)} task(s), {len(S['seeds'])} seed(s){self.method_seeds_note()}, "
                f"{sum(v == HOLDOUT for *_, v in cells)} of them under the 8:2 holdout, "
                f"{sum(v not in ('', HOLDOUT) for *_, v in cells)} under the readings {S['readings'] or []}\n"
                f"evaluation: {self.evaluation}")

    @property
    def tail_from(self):
        """The first round of the every-round evaluation tail when all runs share it (None otherwise)."""
        tails = {c.rounds - c.eval_last + 1 for c in self.cfgs if c.eval_last}
        return min(tails) if len(tails) == 1 else None

    # ------------------------------------------------------------------ the measurement
    def measure(self, results) -> pd.DataFrame:
        """Per-run numbers (``runs``), the per-column table (``per_task``), the paired differences (``diffs``)
        and their forest panels, and each column's margin over chance; returns the per-column table."""
        self.results = results
        rows = []
        for (task, method, seed, variant), cfg, res in zip(self.cells, self.cfgs, results):
            s = res.summary
            rows.append({
                "task": task, "column": TASKS[task][2], "method": METHODS[method][0] + self.tag[variant],
                "aggregation": METHODS[method][1], "variant": variant, "seed": seed, "T": cfg.rounds,
                "run": cfg.config_hash(),  # named per seed in the evidence
                "accuracy": 100 * s["convergence_accuracy"],  # the paper's metric: mean of the last 20 rounds
                "rounds_to_target": target_rounds(s, task),  # NaN: never reached (censored at T below)
                "oscillations": s["oscillations"], "largest_drop": largest_drop(res.history),
                "virtual_time": s["virtual_time"], "wall_time": s["wall_time"],
                # the round-to-round swing inside the averaged window: the noise floor of a one-seed difference
                "swing": 100 * res.history["accuracy"].dropna().tail(20).std(),
                **run_metrics(res),  # final (mean of the last 10 rounds) and best accuracy
            })
        runs = pd.DataFrame(rows)
        if len(runs):
            runs["censored"] = runs["rounds_to_target"].isna()
            runs["rounds_to_target"] = [censor([r], t)[0].iloc[0] for r, t in zip(runs["rounds_to_target"], runs["T"])]
        self.runs = runs
        self.main_runs = runs[runs["variant"] == ""] if len(runs) else runs
        self.per_task = runs.groupby(["column", "aggregation", "method"], sort=False)[
            ["accuracy", "final", "best", "rounds_to_target", "swing"]].mean()
        self._differences()
        self._chance()
        table = self.per_task.unstack("column")
        table.columns = [f"{metric} · {col}" for metric, col in table.columns]
        return table

    def _differences(self):
        fq = self.fedqs
        diffs = paired_rows(self.runs, self.pairs + self.weaker + self.split + self.read, by=["task"],
                            metrics=("accuracy", "final", "best"))
        if len(diffs):
            diffs["column"] = diffs["task"].map(lambda t: TASKS[t][2])
            diffs["panel"] = diffs["method"].map({fq["model"]: f"{fq['model']} − each model-aggregation baseline",
                                                  fq["gradient"]: f"{fq['gradient']} − each gradient-aggregation baseline"})
        self.diffs = diffs
        main = diffs[diffs["sign"].eq(1) & diffs["method"].isin(fq.values())] if len(diffs) else diffs
        # FedQS − each baseline of its family: the main forest
        self.acc = main[main["metric"] == "accuracy"] if len(main) else main
        others = diffs[diffs["comparison"].isin({f"{a} − {b}" for a, b, _ in self.weaker + self.split})
                       & (diffs["metric"] == "accuracy")] if len(diffs) else diffs
        if len(others):
            others = others.assign(panel=np.where(others["sign"] == -1, "paper: below its foundation (negative)",
                                                  "FedQS under the 8:2 holdout of the paper − default FedQS"),
                                   comparison=others["comparison"].str.replace(self.holdout_tag, " (8:2)", regex=False))
        self.others = others  # SAFA / FedAT / FedBuff − their foundations, and the 8:2 holdout − default FedQS
        read_rows = diffs[diffs["comparison"].isin({f"{a} − {b}" for a, b, _ in self.read})
                          & (diffs["metric"] == "accuracy")] if len(diffs) else diffs
        if len(read_rows):
            read_rows = read_rows.assign(panel=np.where(read_rows["sign"] == 1, "FedQS under a reading − each baseline",
                                                        "FedQS under a reading − FedQS under the paper reading"))
        self.read_rows = read_rows  # FedQS under each reading − each baseline, and − the paper reading
        # "FedQS converges fastest": FedQS (each reading) − each baseline of its family in rounds to target,
        # fewer rounds the paper's side (sign −1); a run that never reached its target is censored at T
        fast = [(a, b, -1) for a, b, sign in self.pairs + self.read if sign == 1]
        rounds = paired_rows(self.runs, fast, by=["task"], metrics=("rounds_to_target",))
        if len(rounds):
            rounds["column"] = rounds["task"].map(lambda t: TASKS[t][2])
        self.rounds = rounds

    def _censored_note(self, r) -> str:
        """How many of a rounds row's runs never reached their target (censored at T: the difference is a bound)."""
        runs = self.runs
        sel = runs[(runs["task"] == r["task"]) & runs["method"].isin([r["method"], r["baseline"]]) & runs["censored"]]
        return f"{len(sel)} run(s) censored at T (the difference is a bound); " if len(sel) else ""

    def _chance(self):
        chance = {}
        for task in self.task_list:
            level = chance_level(task)
            sel = self.main_runs[self.main_runs["task"] == task]
            if level is not None and len(sel):
                top = float(sel.groupby("method")["final"].mean().max())
                T = next(c.rounds for c, (t, *_) in zip(self.cfgs, self.cells) if t == task)  # the rounds this column ran
                chance[task] = {"rounds": T, "level": level, "margin": round(top - level, 2),
                                "near_chance": top - level < 3}
        self.chance = chance

    @property
    def readings_title(self) -> str:
        """The title of the readings forest (the seeds of a column whose readings ran on fewer seeds)."""
        return (f"FedQS's readings, convergence accuracy (mean of the last 20 rounds), {len(self.S['seeds'])} paired seeds"
                + "".join(f"; {TASKS[t][2]}: seeds {self.reading_seeds_on(t)}" for t in self.task_list
                          if self.read_on[t] and self.reading_seeds_on(t) != self.S["seeds"]))

    def gap_curves(self) -> pd.DataFrame:
        """Per column, FedQS − FedAvg / M-step / FedSGD / WKAFL (those that ran) at each evaluated round, per seed."""
        cells, results = self.cells, self.results
        curves = accuracy_curves([(TASKS[t][2], METHODS[m][0], s) for t, m, s, v in cells if not v],
                                 [r for (*_, v), r in zip(cells, results) if not v], ["column", "method", "seed"])
        fq = self.fedqs
        pairs = [(fq[METHODS[b][1]], METHODS[b][0]) for b in ("fedavg", "m-step", "fedsgd", "wkafl")
                 if b in self.method_list]
        return paired_gap_curves(curves, pairs, by=["column"])

    def reading_curves(self) -> pd.DataFrame | None:
        """Per column, FedQS under each reading − its foundation at each evaluated round (None: no reading ran)."""
        read_cells = [(c, r) for c, r in zip(self.cells, self.results)
                      if c[3] != HOLDOUT and c[1] in (*FEDQS_METHODS, "fedavg", "fedsgd")]
        if not any(c[3] for c, _ in read_cells):
            return None
        tag = self.tag
        curves = accuracy_curves([(TASKS[t][2], METHODS[m][0] + tag[v], s) for (t, m, s, v), _ in read_cells],
                                 [r for _, r in read_cells], ["column", "method", "seed"])
        pairs = [(METHODS[f][0] + tag[v], METHODS[b][0]) for f, b in (("fedqs-avg", "fedavg"), ("fedqs-sgd", "fedsgd"))
                 for v in ["", *(self.S["readings"] or [])]]
        return paired_gap_curves(curves, pairs, by=["column"])

    # ------------------------------------------------------------------ the comparison rows
    def comparison(self) -> list:
        """The rows of the paper-vs-measured table: settings, not-run rows, one verdict per claim, the column
        means, the relative gains and fewer rounds, the paired differences per column and the measured table."""
        S, profile, tl = self.S, self.profile, self.task_list
        self.everywhere = set.intersection(*(set(self.methods_on(t)) for t in tl)) if tl else set()
        self.six = six = set(tl) == set(ALL_TASKS)  # the paper's means are over its six columns
        cols_note = ", ".join(TASKS[t][2] for t in tl)
        self.mean_note = "mean over the six columns" if six else f"mean over {len(tl)} of the six columns"
        means_rule = ("means over the six columns, beside the paper's" if six else
                      f"means over {len(tl)} of the paper's six columns ({cols_note}): the paper's means are over "
                      "all six, so its numbers stand beside them only when all six ran")
        out = [settings_row(TABLE, "; ".join(self._col_scale(t) for t in tl)
                            + f"; {len(S['seeds'])} paired seeds {S['seeds']}{self.method_seeds_note()}"
                            f"; SAFL regime {tasks_regime(tl, profile)}"
                            "; accuracy = convergence accuracy (mean of the last 20 evaluated rounds); a verdict needs a "
                            "95% t-interval that excludes 0 on the paper's side; unreached targets censored at T; "
                            f"{means_rule}; evaluation: "
                            + "; ".join(f"{TASKS[t][2]}: {w}" for t, w in self.evaluation.items()))]
        out += self._not_run_rows()
        out += self._claim_rows()
        out += self.gain_rows()
        for r in S["readings"] or []:  # a reading that ran on every column of this execution
            if tl and all(r in self.read_on[t] for t in tl):
                out += self.gain_rows(r)
        out += self._measured_rows()
        return out

    def _col_scale(self, task):
        reduced, over = is_reduced(task, self.profile, self.rounds_of(task))
        own = {METHODS[m][0]: method_overrides(task, self.profile, m) for m in self.methods_on(task)}
        own = "".join(f"; {name} also {', '.join(extra)}" for name, extra in own.items() if extra)
        return f"{TASKS[task][2]}: " + (f"{self.profile} profile ({', '.join(over)}{own})" if reduced else "paper scale")

    def _not_run_rows(self) -> list:
        S, profile, out = self.S, self.profile, []
        for task in self.requested:  # what the paper has and this execution does not run
            if self.missing[task]:
                out.append(not_run_row(TABLE, TASKS[task][2], self.missing[task]))
        for task in self.task_list:  # the code's readings of FedQS on the columns that ran without them
            for r in self.read_on[task]:
                skipped = [METHODS[m][0] for m in FEDQS_METHODS if m in self.methods_on(task) and m not in self.read_methods(r)]
                if skipped:
                    out.append(not_run_row(TABLE, f"{TASKS[task][2]}: {', '.join(skipped)} under the reading {r}",
                                           f"not in `reading_methods` of this execution ({profile} profile): "
                                           f"{len(skipped) * len(self.reading_seeds_on(task))} more runs of this column's cost"))
            fewer = [s for s in S["seeds"] if s not in self.reading_seeds_on(task)]
            if self.read_on[task] and fewer:
                out.append(not_run_row(TABLE, f"{TASKS[task][2]}: FedQS under the readings {', '.join(self.read_on[task])}, "
                                       f"seed(s) {fewer}", f"not in `reading_seeds` of this execution ({profile} profile): "
                                       f"{sum(len(self.read_methods(r)) for r in self.read_on[task]) * len(fewer)} more runs "
                                       "of this column's cost"))
            out += self._method_seeds_rows(task)
            left = [r for r in READINGS if r != "paper" and r not in self.read_on[task]]
            if left:
                out.append(not_run_row(TABLE, f"{TASKS[task][2]}: FedQS-Avg / FedQS-SGD under the readings {', '.join(left)}",
                                       f"not in `readings` / `reading_tasks` of this execution ({profile} profile): "
                                       f"{2 * len(left) * len(S['seeds'])} more runs of this column's cost"))
        for task in ALL_TASKS:
            if task not in self.requested:
                out.append(not_run_row(TABLE, TASKS[task][2], f"not in `tasks` of this execution ({profile} profile)"))
            elif task in self.task_list and len(self.methods_on(task)) < len(METHODS):
                left = [METHODS[m][0] for m in METHODS if m not in self.methods_on(task)]
                cut = (is_reduced(task, profile, self.rounds_of(task))[0] and task not in self.full_tasks
                       and S["reduced_methods"] is not None)
                out.append(not_run_row(TABLE, f"{TASKS[task][2]}: {', '.join(left)}",
                                       "left out of this column by `reduced_methods` (cost: a reduced column outside "
                                       "`full_tasks` runs only those)"
                                       if cut and set(self.method_list) - set(self.methods_on(task))
                                       else "left out by `methods` in this execution"))
        return out

    def _method_seeds_rows(self, task) -> list:
        """A not-run row for the seeds ``method_seeds`` gives some methods of ``task`` and not the others."""
        own = self.S["method_seeds"] or {}
        if not own:
            return []
        runs = [(m, r) for m in self.methods_on(task) for r in [None, *(r for r in self.read_on[task] if m in self.read_methods(r))]]
        every = sorted({s for m, r in runs for s in self.seeds_of(task, m, r)})
        short = {(m, r): [s for s in every if s not in self.seeds_of(task, m, r)] for m, r in runs}
        short = {k: v for k, v in short.items() if v}
        if not short:
            return []
        names = ", ".join(METHODS[m][0] + (reading_tag(r) if r else "") for m, r in short)
        seeds = sorted({s for v in short.values() for s in v})
        return [not_run_row(TABLE, f"{TASKS[task][2]}: {names}, seed(s) {seeds}",
                            f"not in `method_seeds` of this execution ({self.profile} profile): "
                            f"{sum(map(len, short.values()))} more runs of this column's cost")]

    def _family(self, fedqs_label, base_label=None):
        """The accuracy rows of ``fedqs_label`` − its baselines (only ``base_label`` if given)."""
        acc = self.acc
        sel = acc[acc["method"] == fedqs_label] if len(acc) else acc
        return sel[sel["baseline"] == base_label] if base_label is not None and len(sel) else sel

    def _claim_rows(self) -> list:
        S, six, mean_note, main_runs, out = self.S, self.six, self.mean_note, self.main_runs, []
        for fedqs, agg, paper_acc, paper_gap, best in (
                ("fedqs-avg", "model", P["table2_mean_avg"], P["table2_avg_minus_mstep"], "m-step"),
                ("fedqs-sgd", "gradient", P["table2_mean_sgd"], P["table2_sgd_minus_wkafl"], "wkafl")):
            label, best_label = METHODS[fedqs][0], METHODS[best][0]
            if fedqs not in self.method_list:
                continue
            m = main_runs[main_runs["method"] == label]
            out.append({"table": TABLE, "setting": label, "metric": "mean convergence accuracy (%)",
                        "paper": paper_acc if six else float("nan"), "measured": m.groupby("task")["accuracy"].mean().mean(),
                        "note": f"{mean_note}; paper: {paper_acc} (six columns)"})
            if best in self.method_list:
                per_col = self._family(label, best_label)
                if len(per_col):
                    out.append(claim_row(TABLE, f"{label} ahead of {best_label} (the paper's best {agg} baseline) in "
                                         "every column", per_col, label_col="column"))
                pair = mean_pairs(main_runs[main_runs["method"].isin([label, best_label])], "task", "accuracy")
                d = paired_difference(pair, "accuracy", label, best_label)
                if d["n"]:
                    out.append({"table": TABLE, "setting": f"{label} − {best_label}, mean over the columns",
                                "metric": "paired difference of the column means (points)",
                                "paper": paper_gap if six else float("nan"), "measured": d["mean"],
                                "evidence": paired_evidence(d),
                                "note": f"95% interval {interval_text(d['lo'], d['hi'])} over {d['n']} seeds; "
                                        f"{verdict(d, 1)}; {mean_note}; paper: +{paper_gap} (six columns)"})
            fam = self._family(label)
            if len(fam):
                out.append(claim_row(TABLE, f"{label} ahead of every {agg}-aggregation baseline in every column",
                                     fam.assign(where=fam["column"] + ": " + fam["baseline"]), label_col="where",
                                     note="paper: the highest accuracy across almost all tasks"))
            for r in ["", *(S["readings"] or [])]:  # fewer rounds to target, per reading (paper first)
                fast = self.rounds[self.rounds["method"] == label + self.tag[r]] if len(self.rounds) else self.rounds
                if len(fast):
                    out.append(claim_row(TABLE, f"{label}{self.tag[r]} reaches its target in fewer rounds than every "
                                         f"{agg}-aggregation baseline ({', '.join(fast['column'].unique())})",
                                         fast.assign(where=fast["column"] + ": " + fast["baseline"]), label_col="where",
                                         note="paper: the fastest convergence on almost all tasks"
                                              + (f"; reading {r}: {READING_LABELS[r]}" if r else "")))
            read_rows = self.read_rows
            for r in S["readings"] or []:  # the same claim under each further reading, on the tasks it ran
                fam_r = read_rows[(read_rows["method"] == label + self.tag[r]) & (read_rows["sign"] == 1)] \
                    if len(read_rows) else read_rows
                if len(fam_r):
                    out.append(claim_row(TABLE, f"{label}{self.tag[r]} ahead of every {agg}-aggregation baseline "
                                         f"({', '.join(fam_r['column'].unique())})", fam_r.assign(
                                             where=fam_r["column"] + ": " + fam_r["baseline"]), label_col="where",
                                         note=f"reading {r}: {READING_LABELS[r]}"))
        diffs = self.diffs
        weak = diffs[(diffs["sign"] == -1) & (diffs["metric"] == "accuracy")] if len(diffs) else diffs
        if len(weak):
            out.append(claim_row(TABLE, "SAFA, FedAT and FedBuff less accurate than their foundations FedAvg / FedSGD",
                                 weak.assign(where=weak["column"] + ": " + weak["comparison"]), label_col="where"))
        return out

    def gain_rows(self, variant=""):
        """The introduction's relative-gain and fewer-rounds rows of FedQS under ``variant`` ("": the paper reading)
        against the baselines (their own runs) that ran on every column (rounds censored at T where unreached)."""
        tag, runs, S, six = self.tag[variant], self.runs, self.S, self.six
        sel = runs[runs["variant"].isin(["", variant])] if len(runs) else runs
        if variant and len(sel):  # on each column, the seeds FedQS ran under the reading (`reading_seeds`)
            mine = runs[runs["variant"] == variant]
            ran = set(zip(mine["task"], mine["seed"]))
            sel = sel[[(t, s) in ran for t, s in zip(sel["task"], sel["seed"])]]
        mean = sel.groupby(["aggregation", "method"])[["accuracy", "rounds_to_target", "censored"]].agg(
            {"accuracy": "mean", "rounds_to_target": "mean", "censored": "sum"}) if len(sel) else None

        def val(method, col="accuracy"):
            key = (METHODS[method][1], METHODS[method][0] + (tag if method in FEDQS_METHODS else ""))
            return float(mean.loc[key, col]) if mean is not None and key in mean.index else float("nan")

        rows = []
        for fedqs, agg, paper_fast, paper_speed in (
                ("fedqs-avg", "model", P["gain_vs_fastest_model"], P["fewer_rounds_vs_best_model"]),
                ("fedqs-sgd", "gradient", P["gain_vs_fastest_gradient"], P["fewer_rounds_vs_best_gradient"])):
            label = METHODS[fedqs][0] + tag
            baselines = [m for m in self.method_list
                         if METHODS[m][1] == agg and m != fedqs and m in self.everywhere and val(m) == val(m)]
            if not baselines or fedqs not in self.method_list or val(fedqs) != val(fedqs):
                continue
            best = max(baselines, key=val)
            fastest = min(baselines, key=lambda m: (val(m, "rounds_to_target"), -val(m)))
            cens = {m: int(val(m, "censored")) for m in (fedqs, best, fastest)}
            cens_note = ("; unreached targets censored at T: " + ", ".join(
                f"{METHODS[m][0] + (tag if m == fedqs else '')} {c}" for m, c in cens.items() if c)
                if any(cens.values()) else "")
            fewer = {TASKS[t][2]: self.reading_seeds_on(t) for t in self.task_list if self.reading_seeds_on(t) != S["seeds"]}
            read_note = (f"; reading {variant}: {READING_LABELS[variant]}" + (
                "; every method on the seeds the reading ran (" + ", ".join(f"{c}: {v}" for c, v in fewer.items()) + ")"
                if fewer else "")) if variant else ""
            rows.append({"table": TABLE, "setting": f"{label} vs fastest-converging {agg} baseline",
                         "metric": "accuracy gain (%)", "paper": paper_fast if six else float("nan"),
                         "measured": 100 * (val(fedqs) - val(fastest)) / val(fastest),
                         "note": f"relative gain; fastest here (fewest rounds to target): {METHODS[fastest][0]}; "
                                 f"{self.mean_note}{read_note}"})
            rows.append({"table": TABLE, "setting": f"{label} vs most accurate {agg} baseline",
                         "metric": "fewer rounds to target (%)", "paper": paper_speed if six else float("nan"),
                         "measured": 100 * (val(best, "rounds_to_target") - val(fedqs, "rounds_to_target"))
                         / val(best, "rounds_to_target"),
                         "note": f"most accurate here: {METHODS[best][0]}; target 98% (RWD) / 95% (CV, NLP) of the "
                                 f"convergence accuracy; {self.mean_note}{cens_note}{read_note}"})
        return rows

    def _measured_rows(self) -> list:
        diffs, runs, out = self.diffs, self.runs, []
        for _, r in diffs[diffs["metric"] == "accuracy"].iterrows() if len(diffs) else []:  # column by column
            out.append({"table": TABLE, "setting": f"{r['column']}, {r['comparison']}",
                        "metric": "paired difference, convergence accuracy (points)", "paper": float("nan"),
                        "measured": r["mean"], "evidence": paired_evidence(r),
                        "note": interval_note(r) + ("" if r["sign"] else "; paper: no direction (the paper's own split)"
                                                    if self.holdout_tag in r["comparison"]
                                                    else "; no direction: a reading against the paper reading")})
        for _, r in self.rounds.iterrows() if len(self.rounds) else []:
            out.append({"table": TABLE, "setting": f"{r['column']}, {r['comparison']}",
                        "metric": "paired difference, rounds to target (rounds)", "paper": float("nan"),
                        "measured": r["mean"], "evidence": paired_evidence(r),
                        "note": f"rounds to {100 * TASKS[r['task']][3]:.0f}% of each run's own convergence accuracy; "
                                + self._censored_note(r) + interval_note(r)})
        for task, c in self.chance.items():
            out.append({"table": TABLE, "setting": f"{TASKS[task][2]}, best method's final accuracy",
                        "metric": "points above chance", "paper": float("nan"), "measured": c["margin"],
                        "note": (f"T = {c['rounds']}; chance = {c['level']}%; " + (
                            "every method within 3 points of chance: this column cannot rank the methods — raise its "
                            "rounds (task_rounds)" if c["near_chance"] else
                            "above the 3-point floor: the rounds suffice to compare"))})
        by_method = runs.groupby(["column", "method"]) if len(runs) else None
        for (col, agg, method), r in self.per_task.iterrows():  # the measured table itself (the paper's is an image)
            task = next(t for t in self.task_list if TASKS[t][2] == col)
            mine = by_method.get_group((col, method))
            n_cens = int(mine["censored"].sum())
            out.append({"table": TABLE, "setting": f"{col}, {method}", "metric": "convergence accuracy (%)",
                        "paper": float("nan"), "measured": r["accuracy"],
                        "note": f"rounds to {100 * TASKS[task][3]:.0f}%: {r['rounds_to_target']:.0f}"
                                + (f" ({n_cens} run(s) never reached it: censored at T)" if n_cens else "")
                                + f"; oscillations (drops > 15 points between evaluated rounds) "
                                  f"{int(mine['oscillations'].sum())} over {len(mine)} runs, largest drop "
                                  f"{mine['largest_drop'].max():.1f} points"})
        return out
