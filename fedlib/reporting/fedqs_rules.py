"""Which of the official code's rules moves FedQS (Table 5's companion, ``fedqs/table5_code_rules``).

From the ``paper`` reading, one code rule is switched at a time (:data:`~fedlib.safl.fedqs.readings.RULE_STEPS`);
each *arm* (the paper reading, a step, the two code readings, the FedQS variant's foundation) is one
run per seed, and every arm is read as a paired difference over the seeds against the paper reading
(the rule's effect, no direction claimed) and against the foundation (FedQS − FedSGD / FedAvg, the
paper's side positive).
"""

from __future__ import annotations

import pandas as pd

from fedlib.safl.fedqs.readings import READINGS, RULE_STEPS, reading_overrides, step_overrides

__all__ = ["FOUNDATION", "PAPER_ARM", "FOUNDATION_ARM", "arm_overrides", "rule_arms", "rule_pairs", "rule_diffs",
           "moving_rules", "check_steps"]

#: each FedQS variant's foundation (the method it modifies)
FOUNDATION = {"fedqs-sgd": "fedsgd", "fedqs-avg": "fedavg"}
PAPER_ARM = "paper reading"
FOUNDATION_ARM = "foundation"


def arm_overrides(arm: str) -> tuple[str, ...]:
    """The FedQS overrides of ``arm``: a reading (``paper reading`` is the preset), or a rule step."""
    if arm == PAPER_ARM:
        return ()
    return reading_overrides(arm) if arm in READINGS else step_overrides(arm)


def rule_arms(steps) -> list[str]:
    """The arms of an execution with rule steps ``steps``: the paper reading, each step, the two code
    readings, the foundation."""
    return [PAPER_ARM, *steps, "code-main", "code-momentum", FOUNDATION_ARM]


def rule_pairs(steps) -> list[tuple[str, str, int]]:
    """(arm, baseline, sign) pairs: every arm − the paper reading (no direction: what the rule does) and
    every FedQS arm − the foundation (the paper: FedQS ahead, +1)."""
    fedqs = [a for a in rule_arms(steps) if a != FOUNDATION_ARM]
    return [(a, PAPER_ARM, 0) for a in fedqs if a != PAPER_ARM] + [(a, FOUNDATION_ARM, 1) for a in fedqs]


def rule_diffs(runs: pd.DataFrame, steps, metrics=("accuracy", "final", "best")) -> pd.DataFrame:
    """:func:`rule_pairs` as paired differences over the seeds per FedQS variant (``runs``: one row per
    run with ``method``, ``arm``, ``seed`` and ``metrics``), with the compared ``arm`` as a column."""
    from fedlib.reporting.fedqs import paired_rows

    diffs = paired_rows(runs, rule_pairs(steps), by=["method"], metrics=metrics, method_col="arm")
    if len(diffs):
        diffs.insert(1, "arm", diffs["comparison"].str.rsplit(" − ", n=1).str[0])
    return diffs


def moving_rules(diffs: pd.DataFrame, steps) -> dict:
    """Per FedQS variant (``method`` column of :func:`~fedlib.reporting.fedqs.paired_rows` rows, metric
    ``accuracy``), the rule steps whose effect (step − paper reading) has a 95% interval excluding 0,
    as ``{method: [(step, mean, lo, hi), ...]}`` — the rules that move FedQS at this scale."""
    out = {}
    if not len(diffs):
        return out
    sel = diffs[(diffs["metric"] == "accuracy") & (diffs["baseline"] == PAPER_ARM) & diffs["arm"].isin(list(steps))]
    for method, rows in sel.groupby("method", sort=False):
        out[method] = [(r["arm"], r["mean"], r["lo"], r["hi"]) for _, r in rows.iterrows()
                       if r["lo"] > 0 or r["hi"] < 0]
    return out


def check_steps(steps) -> None:
    """Refuse an unknown rule step, naming the known ones."""
    from fedlib.core.errors import check_choice

    for step in steps:
        check_choice("FedQS rule step", step, RULE_STEPS)
