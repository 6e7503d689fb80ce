"""Resolving a difference: accuracy metrics of one run's curve, paired differences over seeds, censored
speed-ups. The verdict words (:func:`verdict`, :func:`signed_verdict`, :func:`claim_verdict`) and the fragile
mark are :mod:`fedlib.claims.words`, re-exported here for the notebooks."""

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



def early_accuracy(history: pd.DataFrame, fraction: float = 1 / 3) -> float:
    """Mean accuracy (%) over the evaluated rounds in the first ``fraction`` of the run's rounds (at least the
    first evaluated round): how far a run has got early, the SMoFi paper's "slows convergence" measure
    (the momentum paradox)."""
    h = history.dropna(subset=["accuracy"])
    if h.empty:
        return float("nan")
    cutoff = max(float(h["round"].iloc[0]), fraction * float(history["round"].max()))
    return float(100.0 * h.loc[h["round"] <= cutoff, "accuracy"].astype(float).mean())

# the verdict words and the fragile mark live in fedlib.claims.words (the one package that decides verdicts)
from fedlib.claims.words import (  # noqa: E402,F401  (re-exported)
    ACCURACY_COLUMNS, TASK_FAMILIES, task_family, drift_threshold, CROSS_CPU_DRIFT_POINTS, family_of, use_family_of, fragile, rule_side, verdict, SIDES, side, claim_verdict, signed_verdict)
from fedlib.claims.numbers import decimals, interval_text, number_text  # noqa: E402,F401  (re-exported)


def paired_difference(runs: pd.DataFrame, value: str, method: str, baseline: str, *,
                      method_col: str = "method", pair_col: str = "seed", level: float = 0.95) -> dict:
    """``method − baseline`` in column ``value``, paired on ``pair_col`` (same seed ⇒ same partition,
    selection and batches), with a Student-t confidence interval over the pairs.

    Returns ``{"mean", "lo", "hi", "n", "wins", "diffs"}``; with one pair the interval is NaN
    (one pair cannot measure its own noise). Where ``runs`` has a ``run`` column (each run's config hash),
    also ``"runs"``: ``[(pair, method's hash, baseline's hash), ...]``, the evidence's run hashes per seed.
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
    out = {"mean": mean, "lo": mean - half, "hi": mean + half, "n": n, "wins": int((d > 0).sum()),
           "diffs": [round(float(x), 3) for x in d], "value": value}
    if "run" in runs.columns:
        ra = runs[runs[method_col] == method].set_index(pair_col)["run"]
        rb = runs[runs[method_col] == baseline].set_index(pair_col)["run"]
        out["runs"] = [(k.item() if hasattr(k, "item") else k, ra.loc[k], rb.loc[k]) for k in common]
    return out


def paired_evidence(row, unit: str = "seeds") -> dict:
    """The structured numbers of a :func:`paired_difference` result (or a table row with ``mean``, ``lo``, ``hi``,
    ``n`` and ``per seed``) for a comparison row's ``evidence`` (``fedlib.claims.evidence``: what the scoreboard
    reads; the row's note is rendered from the same numbers by ``fedlib.claims.evidence.interval_note``)."""
    from fedlib.claims.evidence import paired

    diffs = row["per seed"] if "per seed" in row else row["diffs"]
    runs = row["runs"] if "runs" in row and isinstance(row["runs"], (list, tuple)) else ()
    return paired({"mean": row["mean"], "lo": row["lo"], "hi": row["hi"], "n": row["n"], "diffs": list(diffs),
                   "runs": runs}, unit)


def censor(values, budget: float):
    """Rounds-to-target values with an unreached target (NaN) censored at ``budget`` (the run's T):
    a run that never reached the target needed at least T rounds, so it is kept, not dropped.
    Returns ``(values as floats with NaN -> budget, number censored)``."""
    s = pd.Series(values, dtype=float)
    n = int(s.isna().sum())
    return s.fillna(float(budget)), n
def censored_speedup(base_rounds, method_rounds, budget: int) -> dict:
    """Speed-ups (``base_rounds / method_rounds``, one pair per seed) where a run may never reach
    the target within ``budget`` rounds (NaN rounds): a censored observation, never dropped.

    Per seed: both reached -> the value; the method did not (it needs > ``budget`` rounds) ->
    an upper bound ``< base / budget``; the base did not -> a lower bound ``> budget / method``;
    neither -> unknown. The summary is the geometric mean over **all** seeds with each censored seed
    at its bound: exact when every seed reached the target, an upper (lower) bound when every
    censored seed is an upper (lower) bound, and no number otherwise — never a mean over the seeds
    that happened to reach it (issue 31: per seed <0.87, 1.25, <0.87 is not "1.25×", it is
    "< 0.98×, 1/3 seeds reached").

    Returns ``{"value", "relation"}`` (relation "=", "<", ">" or "none"; value NaN for "none"),
    ``"reached"`` (seeds where both reached), ``"n"``, ``"per_seed"`` (strings: ``"1.25"``,
    ``"<0.87"``, ``">1.07"``, ``"n/a"``) and ``"text"`` (e.g. ``"< 0.98× (1/3 seeds reached the
    target; the others at their bound)"``).
    """
    import numpy as np

    values, kinds, per_seed = [], [], []
    for rb, rm in zip(base_rounds, method_rounds):
        rb, rm = float(rb), float(rm)
        if rb == rb and rm == rm:
            values.append(rb / rm), kinds.append("="), per_seed.append(f"{rb / rm:.2f}")
        elif rb == rb:
            values.append(rb / budget), kinds.append("<"), per_seed.append(f"<{rb / budget:.2f}")
        elif rm == rm:
            values.append(budget / rm), kinds.append(">"), per_seed.append(f">{budget / rm:.2f}")
        else:
            values.append(float("nan")), kinds.append("?"), per_seed.append("n/a")
    n, reached = len(kinds), kinds.count("=")
    censored = {k for k in kinds if k != "="}
    if not n or "?" in censored or censored == {"<", ">"}:
        relation, value = "none", float("nan")
    else:
        relation = censored.pop() if censored else "="
        value = float(np.exp(np.mean(np.log(values))))
    if relation == "none":
        text = f"no bound ({reached}/{n} seeds reached the target; per seed {', '.join(per_seed)})" if n else "no seeds"
    elif relation == "=":
        text = f"{value:.2f}× (geometric mean, {n}/{n} seeds reached the target)"
    else:
        text = (f"{relation} {value:.2f}× (geometric mean over {n} seeds, {reached}/{n} reached the target; "
                f"the others enter at their bound)")
    return {"value": value, "relation": relation, "reached": reached, "n": n, "per_seed": per_seed,
            "text": text}


def speedup_label(summary: dict) -> str | float:
    """A :func:`censored_speedup` summary as a table cell: the number when exact, ``"< 0.98"`` /
    ``"> 1.10"`` for a bound, ``"no bound"`` otherwise."""
    if summary["relation"] == "=":
        return round(summary["value"], 2)
    if summary["relation"] == "none":
        return "no bound"
    return f"{summary['relation']} {summary['value']:.2f}"


def censored_rounds(rounds, budget: int) -> dict:
    """Rounds to a target over seeds, where NaN means "not reached within ``budget`` rounds" (a
    censored seed, > ``budget``): the mean when every seed reached it, else a lower bound — the
    mean with each unreached seed at ``budget + 1`` — never the mean of the seeds that reached it.

    Returns ``{"value", "relation"}`` (``"="``, ``"≥"``, or ``"none"`` when no seed reached it),
    ``"reached"``, ``"n"`` and ``"label"`` (``12.0``, ``"≥ 14.3"``, ``"not reached in 15 rounds"``).
    """
    import numpy as np

    r = [float(x) for x in rounds]
    n, reached = len(r), sum(x == x for x in r)
    if not n or not reached:
        return {"value": float("nan"), "relation": "none", "reached": reached, "n": n,
                "label": f"not reached in {budget} rounds" + (f" by any of {n} seeds" if n else "")}
    value = float(np.mean([x if x == x else budget + 1 for x in r]))
    relation = "=" if reached == n else "≥"
    return {"value": value, "relation": relation, "reached": reached, "n": n,
            "label": round(value, 2) if relation == "=" else f"≥ {value:.1f}"}


def censored_extreme(summaries, smallest: bool) -> str | float | None:
    """The smallest (``smallest=True``) or largest of several :func:`censored_speedup` summaries
    (dicts or rows with ``relation`` and ``value``), as a table cell: a number where the bounds fix
    it, ``"< x"`` / ``"≤ x"`` / ``"> x"`` / ``"≥ x"`` where they only bound it, None where a summary has
    no bound or there is none. E.g. the largest of ``= 2.0`` and ``< 3.0`` is ``"< 3.00"`` (the
    bounded entry may be anything below 3), the smallest of the two ``"≤ 2.00"``."""
    rows = [(str(s["relation"]), float(s["value"])) for s in summaries]
    if not rows or any(r == "none" for r, _ in rows):
        return None
    if smallest:  # flip: the smallest of t is minus the largest of -t
        flipped = [({"<": ">", ">": "<"}.get(r, r), -v) for r, v in rows]
        out = _largest(flipped)
        if out is None or isinstance(out, float):
            return None if out is None else -out
        rel, val = out
        return f"{ {'<': '>', '>': '<', '≤': '≥', '≥': '≤'}[rel] } {-val:.2f}".strip()
    out = _largest(rows)
    return out if out is None or isinstance(out, float) else f"{out[0]} {out[1]:.2f}"


def _largest(rows):
    """max of true values t_i given (relation, v_i): '=' t=v, '<' t<v, '>' t>v. A float when fixed,
    else (relation, value)."""
    top = max(v for _, v in rows)
    if all(r in ("=", "<") for r, _ in rows):  # every t_i ≤ v_i ≤ top
        if any(r == "=" and v == top for r, v in rows):
            return round(top, 2)
        return ("<", top)
    floor = max(v for r, v in rows if r in ("=", ">"))  # a '>' entry leaves the top open
    strict = any(r == ">" and v == floor for r, v in rows)
    return (">" if strict else "≥", floor)
