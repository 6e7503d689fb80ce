"""Resolving a difference: accuracy metrics of one run's curve, paired differences over seeds, verdicts."""

from __future__ import annotations

import pandas as pd


def curve_metrics(history: pd.DataFrame, last: int = 5, target: float | None = None) -> dict:
    """Accuracy metrics of one run's history (accuracy in percent; rounds without an evaluation skipped).

    - ``final``: mean of the last ``last`` evaluated rounds (robust to the round-to-round swing);
    - ``auc``: area under the accuracy-vs-round curve divided by its length (trapezoid rule over
      the evaluated rounds): a mean accuracy over the run, which rewards converging sooner;
    - ``best``: the maximum (optimistic: best-of-N picks the luckiest round);
    - ``rounds_to_target``: first evaluated round with accuracy ≥ ``target`` (NaN if never / no target).
    """
    import numpy as np

    from fedlib.experiments.metrics import convergence_accuracy, rounds_to_target

    h = history.dropna(subset=["accuracy"])
    h = h.assign(accuracy=100.0 * h["accuracy"].astype(float))  # percent, as the notebooks report
    if h.empty:
        return {"final": float("nan"), "auc": float("nan"), "best": float("nan"), "rounds_to_target": float("nan")}
    rounds, acc = h["round"].to_numpy(dtype=float), h["accuracy"].to_numpy()
    span = rounds[-1] - rounds[0]
    trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 names it trapz
    auc = float(trapezoid(acc, rounds) / span) if span > 0 else float(acc[0])
    hit = rounds_to_target(h, target) if target is not None else None
    return {"final": convergence_accuracy(h, last), "auc": auc, "best": float(acc.max()),
            "rounds_to_target": float("nan") if hit is None else float(hit)}


def paired_difference(runs: pd.DataFrame, value: str, method: str, baseline: str, *,
                      method_col: str = "method", pair_col: str = "seed", level: float = 0.95) -> dict:
    """``method − baseline`` in column ``value``, paired on ``pair_col`` (same seed ⇒ same partition,
    selection and batches), with a Student-t confidence interval over the pairs.

    Returns ``{"mean", "lo", "hi", "n", "wins", "diffs"}``; with one pair the interval is NaN
    (one pair cannot measure its own noise).
    """
    import numpy as np
    from scipy import stats

    a = runs[runs[method_col] == method].set_index(pair_col)[value]
    b = runs[runs[method_col] == baseline].set_index(pair_col)[value]
    common = a.index.intersection(b.index)
    d = (a.loc[common] - b.loc[common]).astype(float).to_numpy()
    n = len(d)
    mean = float(d.mean()) if n else float("nan")
    if n >= 2:
        half = float(stats.t.ppf(0.5 + level / 2, n - 1) * d.std(ddof=1) / np.sqrt(n))
    else:
        half = float("nan")
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "n": n, "wins": int((d > 0).sum()),
            "diffs": [round(float(x), 3) for x in d]}


def verdict(diff: dict, expected_sign: int = 1) -> str:
    """In words: does a :func:`paired_difference` resolve the paper's direction (``expected_sign``)?"""
    if diff["n"] < 2 or diff["lo"] != diff["lo"]:
        return f"not resolved (only {diff['n']} pair)"
    lo, hi = diff["lo"], diff["hi"]
    # pairs on the paper's side: positive differences, or negative ones where lower is better (a loss)
    favour = diff["wins"] if expected_sign > 0 else sum(x < 0 for x in diff.get("diffs", []))
    if lo > 0 or hi < 0:
        sign = 1 if lo > 0 else -1
        return ("paper's direction reproduced" if sign == expected_sign else "opposite of the paper's direction") + \
            f" (interval excludes 0; {favour}/{diff['n']} pairs favour the method)"
    return f"not resolved: the interval contains 0 ({favour}/{diff['n']} pairs favour the method)"
