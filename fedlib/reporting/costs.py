"""What a report's runs cost, read off each run (issue 34 item 4).

Per SAFL run, from its summary and history: host minutes (``time_total``, one thread: CPU-minutes
when the core is not shared), split into local training and evaluation, and two ratios measured
on the run itself, against the same run without each saving:

- ``every_round_x``: the run's cost had it evaluated every round, over its cost — each skipped
  evaluation priced at the run's own mean evaluation time (one evaluation = the full test set);
- ``train_all_x``: the run's cost had it also trained the trainings no aggregation reads
  (``fedlib.safl.simulator``, "Skipped trainings"), over its cost — the skipped local steps priced
  at the run's own training time per step (``steps_trained`` / ``steps_skipped`` of the summary;
  NaN for a run stored before the simulator counted them).

A run resumed from a checkpoint carries its timers across the resume, so its minutes are the
whole run's. Not CPU time measured by the OS: on a busy machine host seconds exceed CPU seconds.
"""

from __future__ import annotations

import math

import pandas as pd

NAN = float("nan")
COST_COLUMNS = ("minutes", "train_min", "eval_min", "evaluations", "rounds", "every_round_x",
                "trainings_skipped", "train_all_x")


def _num(summary: dict, key: str) -> float:
    v = summary.get(key)
    return NAN if v is None else float(v)


def run_cost(res) -> dict:
    """The cost entries (:data:`COST_COLUMNS`) of one :class:`~fedlib.experiments.RunResult`."""
    s, h = res.summary, res.history
    total, train, ev = _num(s, "time_total"), _num(s, "time_train"), _num(s, "time_eval")
    rounds = len(h)
    evals = int(h["accuracy"].notna().sum()) if "accuracy" in h else 0
    every = (total + ev / evals * (rounds - evals)) / total if evals and total > 0 else NAN
    st, ss = _num(s, "steps_trained"), _num(s, "steps_skipped")
    train_all = (total + train * ss / st) / total if st > 0 and total > 0 and not math.isnan(ss) else NAN
    return {"minutes": total / 60, "train_min": train / 60, "eval_min": ev / 60, "evaluations": evals,
            "rounds": rounds, "every_round_x": every, "trainings_skipped": _num(s, "trainings_skipped"),
            "train_all_x": train_all}


def cost_table(cells, results, keys) -> pd.DataFrame:
    """One row per run: ``keys`` (the names of each cell's fields) and :func:`run_cost`'s entries."""
    rows = [{**dict(zip(keys, cell)), **run_cost(res)} for cell, res in zip(cells, results)]
    return pd.DataFrame(rows, columns=[*keys, *COST_COLUMNS])


def cost_note(costs: pd.DataFrame) -> str:
    """One sentence on a :func:`cost_table`: the report's runs in CPU-minutes, and what evaluating
    every round and training the unread trainings would have added (means of the runs' ratios)."""
    if costs.empty or costs["minutes"].isna().all():
        return "no run here records its host time"
    m = costs["minutes"].dropna()
    bits = [f"{len(m)} runs, {m.sum():.0f} host minutes in all (one thread each; mean {m.mean():.1f}, "
            f"range {m.min():.1f}–{m.max():.1f} a run)"]
    every = costs["every_round_x"].dropna()
    if len(every) and (costs["evaluations"] < costs["rounds"]).any():
        bits.append(f"evaluating every round would have cost {every.mean():.2f}× ({every.min():.2f}–{every.max():.2f})")
    skip = costs["train_all_x"].dropna()
    if len(skip):
        bits.append(f"training the {costs['trainings_skipped'].sum():.0f} trainings no aggregation read "
                    f"would have cost {skip.mean():.2f}× ({skip.min():.2f}–{skip.max():.2f})")
    else:
        bits.append("skipped trainings: not counted by these runs (stored before the count existed)")
    return "; ".join(bits)
