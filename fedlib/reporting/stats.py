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


# ------------------------------------------------------------------ verdicts from resolved differences
SIDES = ("paper", "opposite", "unresolved")


def side(diff: dict, expected_sign: int) -> str:
    """Where a :func:`paired_difference` lands against the paper's ``expected_sign`` (+1: the paper
    says the difference is positive, −1: negative): ``"paper"`` when its 95% interval excludes 0 on
    the paper's side, ``"opposite"`` when it excludes 0 on the other side, else ``"unresolved"``
    (also with fewer than two pairs: one pair cannot measure its own noise). A nominal mean on the
    paper's side with an interval that contains 0 counts for nothing."""
    if expected_sign not in (1, -1):
        raise ValueError(f"expected_sign must be +1 or -1, got {expected_sign!r}")
    lo, hi = diff.get("lo", float("nan")), diff.get("hi", float("nan"))
    if diff.get("n", 0) < 2 or lo != lo or hi != hi:
        return "unresolved"
    if lo > 0 or hi < 0:
        return "paper" if (1 if lo > 0 else -1) == expected_sign else "opposite"
    return "unresolved"


def claim_verdict(parts) -> dict:
    """The verdict on one claim of the paper from the paired differences it rests on.

    ``parts``: ``(label, diff, expected_sign)`` for each difference the claim needs (e.g. "FedQS-Avg
    ahead of M-step" in every column: one part per column). Only resolved differences count:

    - ``reproduced``: every part's 95% interval excludes 0 on the paper's side;
    - ``partly``: at least one part does, not all (the others unresolved or opposite);
    - ``opposite``: no part on the paper's side, at least one resolved against it;
    - ``not resolved``: no part resolved either way (or no part at all).

    Returns ``{"verdict", "paper", "opposite", "unresolved", "n", "note"}``; ``note`` lists the
    parts by side, e.g. ``"2/3 resolved on the paper's side (CV x=0.5, RWD Gender); unresolved: CV x=1"``.
    """
    by = {s: [] for s in SIDES}
    for label, diff, sign in parts:
        by[side(diff, sign)].append(str(label))
    n = sum(len(v) for v in by.values())
    if n and len(by["paper"]) == n:
        word = "reproduced"
    elif by["paper"]:
        word = "partly"
    elif by["opposite"]:
        word = "opposite"
    else:
        word = "not resolved"
    bits = [f"{len(by['paper'])}/{n} resolved on the paper's side"
            + (f" ({', '.join(by['paper'])})" if by["paper"] and len(by["paper"]) < n else "")]
    if by["opposite"]:
        bits.append(f"resolved against it: {', '.join(by['opposite'])}")
    if by["unresolved"]:
        bits.append(f"unresolved (interval contains 0): {', '.join(by['unresolved'])}")
    return {"verdict": word, "paper": len(by["paper"]), "opposite": len(by["opposite"]),
            "unresolved": len(by["unresolved"]), "n": n, "note": "; ".join(bits)}


def censor(values, budget: float):
    """Rounds-to-target values with an unreached target (NaN) censored at ``budget`` (the run's T):
    a run that never reached the target needed at least T rounds, so it is kept, not dropped.
    Returns ``(values as floats with NaN -> budget, number censored)``."""
    s = pd.Series(values, dtype=float)
    n = int(s.isna().sum())
    return s.fillna(float(budget)), n
