"""Which of the official code's rules moves FedQS (Table 5's companion, ``fedqs/table5_code_rules``).

From the ``paper`` reading, one code rule is switched at a time (:data:`~fedlib.safl.fedqs.readings.RULE_STEPS`),
and the reverse, from ``code-main`` one rule switched back to the text's (:data:`~fedlib.safl.fedqs.readings.REVERSE_STEPS`);
each *arm* (the paper reading, a step, the two code readings, a reverse step, the FedQS variant's
foundation) is one run per seed, and every arm is read as a paired difference over the seeds against
where its step starts — the paper reading, or ``code-main`` for a reverse step (the rule's effect, no
direction claimed) — and against the foundation (FedQS − FedSGD / FedAvg, the paper's side positive).
"""

from __future__ import annotations

import pandas as pd

from fedlib.safl.fedqs.readings import READINGS, REVERSE_STEPS, RULE_STEPS, reading_overrides, step_overrides

__all__ = ["FOUNDATION", "PAPER_ARM", "FOUNDATION_ARM", "CODE_ARM", "arm_overrides", "start_of", "rule_arms",
           "rule_pairs", "rule_diffs", "moving_rules", "check_steps"]

#: each FedQS variant's foundation (the method it modifies)
FOUNDATION = {"fedqs-sgd": "fedsgd", "fedqs-avg": "fedavg"}
PAPER_ARM = "paper reading"
FOUNDATION_ARM = "foundation"
#: where the reverse steps start
CODE_ARM = "code-main"


def arm_overrides(arm: str) -> tuple[str, ...]:
    """The FedQS overrides of ``arm``: a reading (``paper reading`` is the preset), or a rule step."""
    if arm == PAPER_ARM:
        return ()
    return reading_overrides(arm) if arm in READINGS else step_overrides(arm)


def rule_arms(steps, reverse=()) -> list[str]:
    """The arms of an execution with rule steps ``steps`` and reverse steps ``reverse``: the paper reading,
    each step, code-main, each reverse step, code-momentum, the foundation."""
    return [PAPER_ARM, *steps, CODE_ARM, *reverse, "code-momentum", FOUNDATION_ARM]


def start_of(arm: str) -> str:
    """The arm a step's effect is read against: code-main for a reverse step, else the paper reading."""
    return CODE_ARM if arm in REVERSE_STEPS else PAPER_ARM


def rule_pairs(steps, reverse=()) -> list[tuple[str, str, int]]:
    """(arm, baseline, sign) pairs: every arm − where its step starts (:func:`start_of`; no direction: what
    the rule does) and every FedQS arm − the foundation (the paper: FedQS ahead, +1)."""
    fedqs = [a for a in rule_arms(steps, reverse) if a != FOUNDATION_ARM]
    return [(a, start_of(a), 0) for a in fedqs if a != PAPER_ARM] + [(a, FOUNDATION_ARM, 1) for a in fedqs]


def rule_diffs(runs: pd.DataFrame, steps, metrics=("accuracy", "final", "best"), reverse=()) -> pd.DataFrame:
    """:func:`rule_pairs` as paired differences over the seeds per FedQS variant (``runs``: one row per
    run with ``method``, ``arm``, ``seed`` and ``metrics``), with the compared ``arm`` as a column."""
    from fedlib.reporting.fedqs import paired_rows

    diffs = paired_rows(runs, rule_pairs(steps, reverse), by=["method"], metrics=metrics, method_col="arm")
    if len(diffs):
        diffs.insert(1, "arm", diffs["comparison"].str.rsplit(" − ", n=1).str[0])
    return diffs


def moving_rules(diffs: pd.DataFrame, steps) -> dict:
    """Per FedQS variant (``method`` column of :func:`~fedlib.reporting.fedqs.paired_rows` rows, metric
    ``accuracy``), the rule steps (forward or reverse) whose effect (step − where it starts) has a 95%
    interval excluding 0, as ``{method: [(step, mean, lo, hi), ...]}`` — the rules that move FedQS at this scale."""
    out = {}
    if not len(diffs):
        return out
    steps = list(steps)
    sel = diffs[(diffs["metric"] == "accuracy") & diffs["arm"].isin(steps)
                & (diffs["baseline"] == diffs["arm"].map(start_of))]
    for method, rows in sel.groupby("method", sort=False):
        out[method] = [(r["arm"], r["mean"], r["lo"], r["hi"]) for _, r in rows.iterrows()
                       if r["lo"] > 0 or r["hi"] < 0]
    return out


def check_steps(steps, reverse: bool = False) -> None:
    """Refuse an unknown rule step (``reverse``: an unknown reverse step), naming the known ones."""
    from fedlib.core.errors import check_choice

    for step in steps:
        check_choice("FedQS reverse step" if reverse else "FedQS rule step", step,
                     REVERSE_STEPS if reverse else RULE_STEPS)
