"""Convergence metrics computed from a run's history (FedQS spec §7 "Metrics", SMoFi spec).

``history`` is a DataFrame (or list of row dicts) with one row per global round and columns
``round``, ``accuracy`` and optionally ``virtual_time`` / ``wall_time``. Rounds without an
evaluation (``eval_every > 1``, ``eval_last``: :func:`fedlib.core.utils.is_eval_round`) carry NaN
accuracy and are skipped: **every metric below reads the evaluated rounds only** (issue 34, tested in
``tests/test_eval_cadence.py``) — "the last 20 rounds" are the last 20 evaluated ones, a round to a
target is the first *evaluated* round reaching it (so it resolves to the cadence), and an oscillation
is a drop between two consecutive evaluated rounds. The ``long`` profile's cadence (every 5th round,
every round of the last 20) keeps the convergence window and the final window of the reports inside
its every-round tail.

Accuracy may be stored as a fraction in [0, 1] or in percent: thresholds given in *percentage
points* (the oscillation threshold of 15) are converted by :func:`accuracy_scale`, which treats a
history whose accuracies are all <= 1 as fractions.

- convergence accuracy = mean test accuracy over the last 20 evaluated rounds [FedQS §5.1].
- convergence speed = first round reaching 95% (CV, NLP) or 98% (RWD) of the convergence accuracy.
- oscillations(threshold=15) = number of rounds whose accuracy drops by more than 15 percentage
  points from the previous evaluated round (definition of bkjod/SAFL_GAP ``ret/draw.ipynb``);
  :func:`largest_drop` is the largest such drop (how near a run came to the threshold).
- time to round T = virtual (or wall) time at round T.
- speed-up [SMoFi] = rounds the baseline needs to reach a target / rounds the method needs;
  default target = the best accuracy the baseline reaches within its budget.
- SAFL queue regime (:func:`queue_regime`, from the history columns ``uploads`` / ``backlog`` that
  :class:`fedlib.safl.simulator.SAFLSimulator` writes): mean uploads per tick, backlog mean / max /
  final; :func:`buffer_keeps_up` is the verdict against K.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fedlib.safl.schedule import buffer_keeps_up  # the rule lives with the clock it judges

__all__ = [
    "accuracy_scale",
    "convergence_accuracy",
    "rounds_to_fraction",
    "oscillations",
    "time_to_round",
    "rounds_to_target",
    "speedup",
    "buffer_keeps_up",
    "queue_regime",
    "summarize",
]


def _frame(history) -> pd.DataFrame:
    df = history if isinstance(history, pd.DataFrame) else pd.DataFrame(list(history))
    if "round" not in df.columns:
        df = df.assign(round=np.arange(1, len(df) + 1))
    return df


def _evaluated(history) -> pd.DataFrame:
    df = _frame(history)
    if "accuracy" not in df.columns:
        return df.iloc[0:0].assign(accuracy=pd.Series(dtype=float))
    acc = pd.to_numeric(df["accuracy"], errors="coerce")
    return df.assign(accuracy=acc)[acc.notna()]


def accuracy_scale(history) -> float:
    """100 if accuracies are percentages, 1 if fractions (all values <= 1)."""
    acc = _evaluated(history)["accuracy"]
    return 1.0 if acc.empty or float(acc.max()) <= 1.0 else 100.0


def convergence_accuracy(history, last: int = 20) -> float:
    """Mean accuracy of the last ``last`` evaluated rounds (NaN for an empty history)."""
    acc = _evaluated(history)["accuracy"]
    return float(acc.tail(last).mean()) if len(acc) else math.nan


def rounds_to_target(history, target: float) -> int | None:
    """First round whose accuracy is >= ``target`` (None if never reached)."""
    ev = _evaluated(history)
    hit = ev[ev["accuracy"] >= target]
    return int(hit["round"].iloc[0]) if len(hit) else None


def rounds_to_fraction(history, fraction: float = 0.95, last: int = 20) -> int | None:
    """First round reaching ``fraction`` x the convergence accuracy (FedQS convergence speed)."""
    conv = convergence_accuracy(history, last)
    if math.isnan(conv):
        return None
    return rounds_to_target(history, fraction * conv)


def _drops(history) -> np.ndarray:
    """Accuracy drop (percentage points) from each evaluated round to the next; rise < 0."""
    acc = _evaluated(history)["accuracy"].to_numpy(dtype=float)
    # rounded so that a drop of exactly 15 points (0.70 -> 0.55) is not counted by float noise
    return np.round((acc[:-1] - acc[1:]) * (100.0 / accuracy_scale(history)), 9)


def oscillations(history, threshold: float = 15.0) -> int:
    """Rounds whose accuracy drops by more than ``threshold`` percentage points from the previous one."""
    return int(np.sum(_drops(history) > threshold))


def largest_drop(history) -> float:
    """The largest accuracy drop (percentage points) between consecutive evaluated rounds, 0 if none:
    how close a run came to an oscillation."""
    return float(np.max(_drops(history), initial=0.0))


def time_to_round(history, round: int | None = None, column: str = "virtual_time") -> float:
    """Value of ``column`` at ``round`` (default: the last round); NaN if absent."""
    df = _frame(history)
    if column not in df.columns or df.empty:
        return math.nan
    row = df if round is None else df[df["round"] == round]
    if row.empty:
        return math.nan
    return float(row[column].iloc[-1])


def speedup(baseline_history, history, target: float | None = None) -> float:
    """Rounds the baseline needs to reach ``target`` / rounds ``history`` needs (SMoFi).

    ``target`` defaults to the best accuracy the baseline reaches. NaN when the method never
    reaches the target (or the baseline never does).
    """
    if target is None:
        base = _evaluated(baseline_history)["accuracy"]
        if base.empty:
            return math.nan
        target = float(base.max())
    rb = rounds_to_target(baseline_history, target)
    rm = rounds_to_target(history, target)
    if rb is None or rm is None:
        return math.nan
    return rb / rm


def queue_regime(history, k: int | None = None) -> dict:
    """The SAFL queue regime of one run from its history; ``{}`` without the columns.

    Uses the per-round columns ``uploads`` (updates uploaded since the previous aggregation),
    ``backlog`` (updates left in the buffer after the aggregation) and ``virtual_time`` (ticks
    elapsed). Returns ``uploads_per_tick`` (total uploads / ticks elapsed at the last round),
    ``backlog_mean`` / ``backlog_max`` (over rounds) and ``backlog_final``; with ``k`` also
    ``k`` and ``buffer_keeps_up`` (:func:`buffer_keeps_up`). Rows without the columns (a run
    resumed from a checkpoint written before they existed) are skipped."""
    df = _frame(history)
    if not {"uploads", "backlog", "virtual_time"} <= set(df.columns) or df.empty:
        return {}
    up = pd.to_numeric(df["uploads"], errors="coerce")
    bl = pd.to_numeric(df["backlog"], errors="coerce").dropna()
    ticks = float(pd.to_numeric(df["virtual_time"], errors="coerce").iloc[-1])
    if bl.empty or up.isna().any() or not ticks > 0:
        out = {"uploads_per_tick": None}
    else:
        out = {"uploads_per_tick": float(up.sum()) / ticks}
    out.update(backlog_mean=float(bl.mean()) if len(bl) else None,
               backlog_max=int(bl.max()) if len(bl) else None,
               backlog_final=int(bl.iloc[-1]) if len(bl) else None)
    if k is not None:
        out["k"] = int(k)
        out["buffer_keeps_up"] = None if out["uploads_per_tick"] is None or out["backlog_final"] is None \
            else buffer_keeps_up(out["uploads_per_tick"], k, out["backlog_final"])
    return out


def summarize(history, last: int = 20, threshold: float = 15.0) -> dict:
    """The standard metric set of one run, as plain Python numbers (None where undefined)."""
    ev = _evaluated(history)
    df = _frame(history)
    acc = ev["accuracy"]

    def num(x):
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

    out = {
        "rounds": int(df["round"].max()) if len(df) else 0,
        "final_accuracy": num(float(acc.iloc[-1]) if len(acc) else math.nan),
        "best_accuracy": num(float(acc.max()) if len(acc) else math.nan),
        "convergence_accuracy": num(convergence_accuracy(history, last)),
        "rounds_to_95": rounds_to_fraction(history, 0.95, last),
        "rounds_to_98": rounds_to_fraction(history, 0.98, last),
        "oscillations": oscillations(history, threshold),
        "final_loss": num(float(pd.to_numeric(ev["loss"], errors="coerce").iloc[-1])
                          if "loss" in ev.columns and len(ev) else math.nan),
        "virtual_time": num(time_to_round(history, None, "virtual_time")),
        "wall_time": num(time_to_round(history, None, "wall_time")),
    }
    out.update(queue_regime(history))  # SAFL histories only (a trainer's summary adds k and the verdict)
    return out
