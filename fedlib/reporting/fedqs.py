"""The FedQS notebooks' catalogue: the thirteen SAFL methods, the paper's six task columns, and
what each profile changes on top of the paper-scale presets (``fedqs-*.yaml``, ``fedavg-*.yaml``, ...).

Two kinds of notebook build their runs here:

- the multi-task tables (Table 2, Table 3, Figure 4): :data:`TASKS` / :data:`TASK_GROUPS`,
  :func:`task_config` (preset + the profile's :func:`scale` overlay + the notebook's overrides);
- the one-task studies (Tables 1, 4, 5, 6, Figure 5): :class:`Study` (the preset, the CPU-scale
  CIFAR-10 reduction, the run label).

A run at the paper's scale is labelled ``paper`` whatever the notebook's profile, so a run that
two notebooks (or two profiles) share is one stored result.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fedlib.core.errors import FedlibError, check_choice
from fedlib.reporting.profiles import check_names, run_label
from fedlib.reporting.tables import settings_row  # noqa: F401 — the FedQS notebooks import it from here
from fedlib.claims.words import interval_words  # noqa: F401 — re-exported: the FedQS notebooks import it from here
from fedlib.safl.fedqs.readings import DEFAULT_READING, READINGS, reading_tag

PAPER_ROUNDS = 400  # T of every paper-scale FedQS run

# method -> (label, aggregation); registry names (fedlib.safl.algorithms)
METHODS = {
    "fedavg": ("FedAvg", "model"), "safa": ("SAFA", "model"), "fedat": ("FedAT", "model"),
    "m-step": ("M-step", "model"), "fedqs-avg": ("FedQS-Avg", "model"),
    "fedsgd": ("FedSGD", "gradient"), "fedbuff": ("FedBuff", "gradient"), "wkafl": ("WKAFL", "gradient"),
    "fedac": ("FedAC", "gradient"), "defedavg": ("DeFedAvg", "gradient"), "fadas": ("FADAS", "gradient"),
    "cfl": ("CFL", "gradient"), "fedqs-sgd": ("FedQS-SGD", "gradient"),
}
# FedQS and its two foundations, model aggregation first
CORE_METHODS = ["fedavg", "fedqs-avg", "fedsgd", "fedqs-sgd"]

# task -> (preset suffix, overrides, label as in the paper's Table 2, target fraction of conv. accuracy)
TASKS = {
    "cifar10-x0.1": ("cifar10", ["data.alpha=0.1"], "CV x=0.1", 0.95),
    "cifar10-x0.5": ("cifar10", ["data.alpha=0.5"], "CV x=0.5", 0.95),
    "cifar10-x1": ("cifar10", ["data.alpha=1.0"], "CV x=1", 0.95),
    "shakespeare": ("shakespeare", [], "NLP R=100", 0.95),
    "adult-gender": ("adult-gender", [], "RWD Gender", 0.98),
    "adult-ethnicity": ("adult-ethnicity", [], "RWD Ethnicity", 0.98),
}
ALL_TASKS = list(TASKS)
TASK_GROUPS = {"adult": ["adult-gender", "adult-ethnicity"], "cifar10": ["cifar10-x0.1", "cifar10-x0.5", "cifar10-x1"],
               "shakespeare": ["shakespeare"]}



def scale(suffix: str, profile: str, method: str | None = None) -> list:
    """What ``profile`` changes on top of the paper-scale preset ``<method>-<suffix>``: the preset
    profile overlay ``fedlib/presets/profiles/safl-<suffix>-<profile>.yaml`` as overrides (its
    ``profile`` label left to :func:`~fedlib.reporting.profiles.run_label`), with the overlay's
    ``algorithms:`` entry for ``method`` where it has one; ``[]`` at the paper's scale. One profile mechanism for presets and notebooks: ``fedqs-avg-cifar10-cpu`` is the run
    Table 2 makes at cpu. A :data:`~fedlib.reporting.profiles.DERIVED_PROFILES` profile (``long``) is its
    base profile's overlay with its overrides replacing the same keys: ``long`` on CIFAR-10 is
    ``["model.name=cnn3", "rounds=400", "eval_every=5", "eval_last=20"]``."""
    from fedlib.experiments.config import overlay_overrides, profile_overlay
    from fedlib.reporting.profiles import DERIVED_PROFILES

    base, extra = DERIVED_PROFILES.get(profile, (profile, ()))
    overlay = {k: v for k, v in profile_overlay("safl", suffix, base, method).items() if k != "profile"}
    keys = {e.split("=", 1)[0] for e in extra}
    return [o for o in overlay_overrides(overlay) if o.split("=", 1)[0] not in keys] + list(extra)


# Table 1's CPU-scale CV model (the FedQS SAFL-gap study's small CNN), as the cpu overlay names it
CPU_CV = [o for o in scale("cifar10", "cpu") if o.startswith("model.")]


def cadence(profile: str) -> list:
    """The evaluation cadence (``eval_every`` / ``eval_last`` overrides) of ``profile``'s CIFAR-10
    overlay: ``["eval_every=5", "eval_last=20"]`` at ``long``, ``[]`` where every round is evaluated.
    The one-task studies (Tables 1, 5) add it to their ``reduce`` so that their runs are the runs of
    ``<method>-cifar10-<profile>`` (Table 5's full-FedQS runs are Table 2's, one stored result)."""
    return [o for o in scale("cifar10", profile) if o.startswith("eval_")]


def expand_tasks(names) -> list:
    """Task names with the groups of :data:`TASK_GROUPS` expanded, in order, each once."""
    out = []
    for name in names:
        if name in TASK_GROUPS:
            out += TASK_GROUPS[name]
        elif name in TASKS:
            out.append(name)
        else:
            raise FedlibError(f"unknown task {name!r}", f"choose from {sorted(TASK_GROUPS)} or {sorted(TASKS)}")
    return list(dict.fromkeys(out))


def check_readings(readings) -> list:
    """A report's ``readings`` knob as a list, each a FedQS reading other than the default ``paper``
    (which every FedQS row runs anyway)."""
    readings = check_names(list(readings or []), READINGS, "FedQS reading", "readings")
    if DEFAULT_READING in readings:
        raise FedlibError(f"`readings` names {DEFAULT_READING!r}, the reading every FedQS row already runs",
                          f"list only the other readings: {[r for r in READINGS if r != DEFAULT_READING]}")
    return readings


FEDQS_METHODS = ("fedqs-avg", "fedqs-sgd")  # the methods a FedQS reading changes (spec "Readings")


def readings_of(method: str, read_on) -> list:
    """The readings a report runs ``method`` under: ``paper`` for every method, and the report's other
    readings ``read_on`` (:func:`check_readings`) for FedQS-Avg and FedQS-SGD only (a baseline has no
    FedQS rule to read)."""
    return readings_run(read_on if method in FEDQS_METHODS else [])


def readings_run(read_on) -> list:
    """Every reading a report runs FedQS-Avg / FedQS-SGD under: ``paper`` first, then ``read_on``."""
    return [DEFAULT_READING, *read_on]


def row_name(method: str, reading: str) -> str:
    """A report row's name for ``method`` run under ``reading``: its display name with the reading's tag
    (``FedQS-SGD · code-main``; the paper reading adds nothing)."""
    return METHODS[method][0] + reading_tag(reading)


def readings_by_task(readings, reading_tasks, tasks) -> dict:
    """{task: the FedQS readings run beside ``paper`` on it} for each of ``tasks``, from a report's two knobs:
    ``readings`` (names of :data:`~fedlib.safl.fedqs.readings.READINGS`) and ``reading_tasks`` — a list of
    tasks or groups (every reading on each of them) or a dict ``{reading: tasks}`` (each reading on its own
    tasks; a reading it does not name runs nowhere)."""
    readings = check_readings(readings)
    if isinstance(reading_tasks, str):
        reading_tasks = [reading_tasks]
    if isinstance(reading_tasks, dict):
        for r in reading_tasks:
            if r not in readings:
                raise FedlibError(f"`reading_tasks` names the reading {r!r}, which is not in `readings` {readings}",
                                  "add it to `readings`, or remove it from `reading_tasks`")
        where = {r: expand_tasks(reading_tasks.get(r) or []) for r in readings}
    else:
        where = {r: expand_tasks(reading_tasks or []) for r in readings}
    return {t: [r for r in readings if t in where[r]] for t in tasks}


def method_names(names=None) -> list:
    """The methods a ``methods`` knob names (checked against :data:`METHODS`); none named: all thirteen."""
    return check_names(names or list(METHODS), METHODS, "method")


def is_reduced(task: str, profile: str, rounds: int | None = None,
               method: str | None = None) -> tuple[bool, list]:
    """(does ``profile`` (or the ``rounds`` knob) change the paper-scale preset of ``task``?, the
    overrides it adds to ``method``'s run: the overlay's ``algorithms:`` entry included)."""
    from fedlib.experiments import RunConfig

    if task not in TASKS:
        raise FedlibError(f"unknown task {task!r}", f"choose from {list(TASKS)}")
    suffix, over = TASKS[task][:2]
    reduce = scale(suffix, profile)
    if rounds is not None:  # the knob replaces the profile's own rounds (one entry, not two)
        reduce = [r for r in reduce if not r.startswith("rounds=")] + [f"rounds={rounds}"]
    base = RunConfig.from_preset(f"fedavg-{suffix}").with_overrides(over)
    extra = [] if method is None else method_overrides(task, profile, method)
    return base.with_overrides(reduce).config_hash() != base.config_hash(), reduce + extra


def method_overrides(task: str, profile: str, method: str) -> list:
    """What the profile overlay's ``algorithms:`` entry adds to ``method``'s run of ``task`` on top of
    the overrides every method gets (``[]`` for most; FedQS's η bounds on Shakespeare at cpu)."""
    suffix = TASKS[task][0]
    common = scale(suffix, profile)
    return [o for o in scale(suffix, profile, method) if o not in common]


def task_config(method: str, task: str, profile: str, rounds: int | None = None, extra=()):
    """The run of ``method`` on ``task`` at ``profile`` (preset + the profile's reductions + ``extra``).
    Runs at the paper's scale are labelled ``paper`` (shared by the cpu and paper reports)."""
    from fedlib.experiments import RunConfig

    suffix, over = TASKS[task][:2]
    reduced, reduce = is_reduced(task, profile, rounds, method)
    label = run_label(profile, not reduced)
    return RunConfig.from_preset(f"{method}-{suffix}").with_overrides([*over, *reduce, *extra, f"profile={label}"])


def scale_summary(tasks, profile: str, rounds: int | None = None) -> tuple[list, str]:
    """(the tasks of ``tasks`` that ``profile`` reduces, the note a comparison row carries about it)."""
    reduced = [t for t in tasks if is_reduced(t, profile, rounds)[0]]
    note = "paper scale" if not reduced else \
        f"{profile} profile: reduced runs ({', '.join(reduced)}), not the paper's settings"
    return reduced, note


def task_scale(task: str, reduced, profile: str) -> str:
    """The note of a row measured on one task: ``paper scale``, or the profile's reduced run
    (``reduced``: the first item of :func:`scale_summary`)."""
    return "paper scale" if task not in reduced else f"{profile} profile: reduced run"


def target_rounds(summary: dict, task: str):
    """Rounds to the paper's convergence-speed target of ``task`` (98% of the convergence accuracy
    on RWD, 95% on CV and NLP) from a run's summary."""
    return summary["rounds_to_98"] if TASKS[task][3] == 0.98 else summary["rounds_to_95"]


# ------------------------------------------------------------------ the one-task studies
SINGLE_TASKS = {"adult": "adult-gender", "cifar10": "cifar10"}  # task knob -> preset suffix
# the older CPU-scale CV reduction Table 6 and Figure 5 keep (their stored runs use it)
CPU_CV_SUBSET = ["model.name=cnn", "data.max_train=5000", "data.max_test=1000"]


@dataclass(frozen=True)
class Study:
    """The runs of a one-task notebook: ``task`` (a :data:`SINGLE_TASKS` name) at ``profile`` for
    ``rounds`` rounds, with the profile's ``reduce`` overrides, plus ``cpu_cv`` on CIFAR-10 below
    the ``paper`` profile (a CPU cannot train ResNet-18 in minutes). ``paper_knobs``: the notebook's
    own scale knobs (Table 4: clients_scale, eval_every) are at the paper's values."""

    task: str
    profile: str
    rounds: int
    reduce: tuple = ()
    cpu_cv: tuple = tuple(CPU_CV)
    paper_knobs: bool = True

    def __post_init__(self):
        check_choice("task", self.task, tuple(SINGLE_TASKS))

    @property
    def preset(self) -> str:
        """The preset suffix: ``<method>-<preset>`` names the paper-scale preset of a method."""
        return SINGLE_TASKS[self.task]

    @property
    def reductions(self) -> list:
        """Every override that reduces the paper's setting (``reduce`` + ``cpu_cv`` where it applies)."""
        cv = list(self.cpu_cv) if self.task == "cifar10" and self.profile != "paper" else []
        return [*self.reduce, *cv]

    @property
    def paper_scale(self) -> bool:
        return self.paper_knobs and not self.reductions and self.rounds == PAPER_ROUNDS

    @property
    def label(self) -> str:
        """The runs' label in the result store (:func:`~fedlib.reporting.profiles.run_label`)."""
        return run_label(self.profile, self.paper_scale)

    def config(self, method: str, overrides=(), seed: int = 0):
        """The run of ``method`` with the notebook's ``overrides`` (the studied setting) on top of the preset."""
        from fedlib.experiments import RunConfig

        return RunConfig.from_preset(f"{method}-{self.preset}").with_overrides(
            [*overrides, *self.reductions, f"rounds={self.rounds}", f"seed={seed}", f"profile={self.label}"])


def accuracy_curves(cells, results, keys) -> pd.DataFrame:
    """One row per *evaluated* round of each run: ``keys`` (the names of each cell's fields), ``round``,
    ``accuracy`` (%). Rounds without an evaluation (``eval_every`` / ``eval_last``) are dropped."""
    frames = []
    for cell, res in zip(cells, results):
        h = res.history.dropna(subset=["accuracy"])
        frames.append(pd.DataFrame({**dict(zip(keys, cell)), "round": h["round"].to_numpy(),
                                    "accuracy": 100 * h["accuracy"].to_numpy(dtype=float)}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*keys, "round", "accuracy"])


def paired_gap_curves(curves: pd.DataFrame, pairs, by=(), method_col: str = "method",
                      pair_col: str = "seed") -> pd.DataFrame:
    """Per round and seed, ``method − baseline`` accuracy (points) of each ``(method, baseline)`` in
    ``pairs``, within each ``by`` group, from :func:`accuracy_curves` rows: columns ``*by``,
    ``comparison``, ``seed``, ``round``, ``gap``. Only rounds both runs of a pair evaluated (the
    evaluated rounds: a NaN round is never a gap of 0)."""
    rows = []
    groups = curves.groupby(list(by), sort=False) if by else [((), curves)]
    for key, sel in groups:
        key = key if isinstance(key, tuple) else (key,)
        wide = sel.pivot_table(index=[pair_col, "round"], columns=method_col, values="accuracy")
        for method, base in pairs:
            if method not in wide or base not in wide:
                continue
            gap = (wide[method] - wide[base]).dropna().rename("gap").reset_index()
            rows.append(gap.assign(comparison=f"{method} − {base}", **dict(zip(by, key))))
    cols = [*by, "comparison", pair_col, "round", "gap"]
    return pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)


def alpha_variants(task: str, alphas) -> list:
    """The data overrides a one-task notebook averages over: one per Dirichlet x on CIFAR-10."""
    return [[f"data.alpha={a}"] for a in alphas] if task == "cifar10" else [[]]


# ------------------------------------------------------------------ the SAFL regime
from fedlib.safl.cli import REGIMES  # noqa: E402,F401 — the two regimes in two sentences each


def regime(cfg) -> str:
    """The SAFL regime of a run in words: ``upload=overwrite, delays=official-100 (N = 100)``."""
    s = cfg.safl
    delays = s.delays if s.delays != "uniform" else f"uniform 1:{s.ratio}"
    return f"upload={s.upload}, delays={delays} (N = {s.clients}, K = {s.k})"


def regimes(cfgs) -> str:
    """Every distinct :func:`regime` of ``cfgs`` (semi-asynchronous runs; sync runs have no buffer)."""
    seen = [regime(c) for c in cfgs if c.safl.mode == "semi-async"]
    return "; ".join(dict.fromkeys(seen)) or "synchronous only (no buffer)"


def task_regime(suffix: str, overrides=()) -> str:
    """:func:`regime` of the paper-scale preset ``fedavg-<suffix>`` with ``overrides``, for a
    notebook's settings display."""
    from fedlib.experiments import RunConfig

    return regime(RunConfig.from_preset(f"fedavg-{suffix}").with_overrides(list(overrides)))


# ------------------------------------------------------------------ seeds that resolve (issue 17)
FINAL_LAST = 10  # "final" accuracy = mean of the last 10 evaluated rounds [D]


def run_metrics(res) -> dict:
    """``final`` (mean of the last :data:`FINAL_LAST` evaluated rounds) and ``best`` accuracy (%) of a run."""
    from fedlib.reporting.stats import curve_metrics

    m = curve_metrics(res.history, last=FINAL_LAST)
    return {"final": m["final"], "best": m["best"]}


def paired_rows(runs, pairs, by=(), metrics=("final", "best"), method_col: str = "method",
                pair_col: str = "seed"):
    """Paired differences (:func:`~fedlib.reporting.stats.paired_difference`, 95% t-interval over the
    seeds) of ``runs`` (one row per run: ``by`` columns, ``method_col``, ``seed``, ``metrics``).

    ``pairs``: ``(method, baseline, expected_sign)``; sign +1/−1 is the paper's direction (verdict),
    0 a claim without a direction (:func:`interval_words`). One row per group × pair × metric, with the
    pair's ``sign`` and ``side`` (:func:`~fedlib.reporting.stats.side`; ``no direction claimed`` for 0)."""
    import pandas as pd

    from fedlib.claims.words import interval_words, side, task_family, verdict
    from fedlib.reporting.stats import paired_difference

    rows = []
    groups = runs.groupby(list(by), sort=False) if by else [((), runs)]
    for key, sel in groups:
        key = key if isinstance(key, tuple) else (key,)
        present = set(sel[method_col])
        for method, base, sign in pairs:
            if method not in present or base not in present:
                continue
            for metric in metrics:
                r = paired_difference(sel, metric, method, base, method_col=method_col, pair_col=pair_col)
                if "task" in by:  # the fragile mark reads this task's cross-CPU drift
                    r["family"] = task_family(dict(zip(by, key))["task"])
                # the compared pair as ``method`` / ``baseline`` unless a ``by`` column has that name
                pair = {k: v for k, v in (("method", method), ("baseline", base)) if k not in by}
                rows.append({**dict(zip(by, key)), "comparison": f"{method} − {base}", "metric": metric,
                             "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"],
                             "verdict": verdict(r, sign) if sign else interval_words(r), **pair, "sign": sign,
                             "side": side(r, sign) if sign else "no direction claimed",
                             **({"runs": r["runs"]} if "runs" in r else {})})
    return pd.DataFrame(rows)


def claim_row(table: str, claim: str, parts: pd.DataFrame | list, label_col: str = "comparison",
              paper=float("nan"), note: str = "") -> dict:
    """The comparison row of one claim: ``measured`` is the :func:`~fedlib.reporting.stats.claim_verdict`
    word (reproduced / mixed / partial / against / unresolved) over the :func:`paired_rows` rows in ``parts``
    (each with its own ``sign``), the note lists which parts resolved on which side."""
    from fedlib.reporting.stats import claim_verdict

    if isinstance(parts, pd.DataFrame):
        parts = [(r[label_col], r, int(r["sign"])) for _, r in parts.iterrows()]
    v = claim_verdict(parts)
    return {"table": table, "setting": claim, "metric": "verdict (95% intervals)", "paper": paper,
            "measured": v["verdict"], "note": v["note"] + (f"; {note}" if note else "")}


def mean_pairs(runs: pd.DataFrame, over: str, value: str, method_col: str = "method",
               pair_col: str = "seed") -> pd.DataFrame:
    """Per method and seed, the mean of ``value`` over the groups ``over`` (e.g. the task columns) in
    which that method ran with that seed: the paired data of a claim about an average over columns
    (the paper's 68.88 / 72.06 %). Only groups where *every* method of ``runs`` ran with the seed are
    averaged, so two methods' means are over the same columns."""
    complete = runs.groupby([over, pair_col])[method_col].nunique() == runs[method_col].nunique()
    keep = complete[complete].index
    sel = runs.set_index([over, pair_col]).loc[lambda d: d.index.isin(keep)].reset_index()
    return sel.groupby([method_col, pair_col], as_index=False)[value].mean()


def not_run_row(table: str, setting: str, reason: str) -> dict:
    """A row the paper has and this profile does not run: ``measured`` is ``not run``, the note the reason."""
    return {"table": table, "setting": setting, "metric": "", "paper": float("nan"), "measured": "not run",
            "note": reason}


from fedlib.reporting.stats import paired_evidence  # noqa: E402  (re-exported: the notebooks import it from here)


def interval_note(row, unit: str = "seeds") -> str:
    """``95% interval [lo, hi] over n seeds, per seed [...]; verdict`` of a :func:`paired_rows` row
    (``unit``: what one pair is, e.g. ``"pairs (setting × seed)"`` for a pooled difference), rendered from
    :func:`paired_evidence` (``fedlib.claims.evidence.interval_note``)."""
    from fedlib.claims.evidence import interval_note as numbers

    return f"{numbers(paired_evidence(row, unit))}; {row['verdict']}"


def tasks_regime(tasks, profile: str) -> str:
    """The SAFL regime(s) of the Table 2 / 3 / Figure 4 tasks at ``profile`` (settings display)."""
    return "; ".join(dict.fromkeys(regime(task_config("fedavg", t, profile)) for t in expand_tasks(tasks)))


def with_tasks_regime(settings: dict, profile: str) -> dict:
    """A multi-task notebook's settings as it displays them: the knobs and the SAFL regime of their tasks."""
    return {**settings, "SAFL regime": tasks_regime(settings["tasks"], profile)}


def with_task_regime(settings: dict) -> dict:
    """A one-task study's settings as it displays them: the knobs and the SAFL regime of its runs."""
    return {**settings, "SAFL regime": task_regime(SINGLE_TASKS[settings["task"]], settings["reduce"])}
