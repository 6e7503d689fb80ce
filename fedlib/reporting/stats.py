"""Resolving a difference: accuracy metrics of one run's curve, paired differences over seeds, verdicts
(:func:`verdict`; :func:`signed_verdict` names the paper's expected sign), censored speed-ups."""

from __future__ import annotations

import functools

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

#: The cross-CPU drift of a paired accuracy difference now comes from the per-task record
#: ``benchmarks/results/cross_cpu.json`` (:mod:`fedlib.claims.drift`): twice the largest per-round
#: accuracy difference measured for the task's family, since both runs of a pair may drift in
#: opposite directions. Without a family, the largest measured over every family (conservative).
#: :data:`CROSS_CPU_DRIFT_POINTS` is that family-less threshold, read from the record at import.
#: the accuracy columns (points) the drift applies to (AUC: a mean accuracy over the run)
ACCURACY_COLUMNS = ("final", "best", "convergence", "accuracy", "final_accuracy", "best_accuracy", "auc")
#: a FedQS task name or "smofi" -> its drift family
TASK_FAMILIES = {"cifar10": "cnn3-safl-cifar10", "adult": "fcn-safl-adult", "shakespeare": "lstm-safl-shakespeare",
                 "smofi": "split-cnn-cifar10"}


def task_family(task: str) -> str | None:
    """The drift family of a FedQS task (``"cifar10-x0.5"``, ``"adult-gender"``, ``"shakespeare"``) or
    ``"smofi"``; None when unknown."""
    for prefix, family in TASK_FAMILIES.items():
        if str(task).startswith(prefix):
            return family
    return None


def drift_threshold(family: str | None = None) -> float:
    """Twice the cross-CPU drift of ``family`` (:func:`fedlib.claims.drift.drift`), or of the largest
    measured family when ``family`` is None. The record is read once per version of the file (every
    verdict of a report asks), not once per call."""
    from fedlib.claims.drift import DRIFT_FILE
    from fedlib.core.paths import checkout

    try:
        stamp = (checkout() / DRIFT_FILE).stat().st_mtime_ns
    except OSError:  # no checkout (an installed package without benchmarks/): no drift known, nothing marked
        return float("nan")
    return _threshold(stamp, family)


@functools.lru_cache(maxsize=64)
def _threshold(stamp: int, family: str | None) -> float:
    """:func:`drift_threshold` of the drift record as it is at modification time ``stamp``."""
    from fedlib.claims.drift import drift, load

    entries = load()
    if family is None:
        return max(drift(f, "mean", entries).threshold for f in {e["family"] for e in entries})
    return drift(family, "mean", entries).threshold


CROSS_CPU_DRIFT_POINTS = round(drift_threshold(), 2)

#: the drift family of the runs a notebook read last (:func:`use_family_of`; None: mixed or unknown)
_notebook_family: str | None = None


def family_of(cfg) -> str | None:
    """The drift family of a run config: split FL (SMoFi's CNN on CIFAR-10) or the SAFL task's model."""
    from fedlib.experiments.results.provenance import drift_family

    return drift_family(cfg)


def use_family_of(cfgs) -> str | None:
    """Make the runs' common drift family the default of :func:`fragile` (a notebook's runs; called by
    :func:`fedlib.reporting.runs.run_all`); runs of several families leave no default (the largest
    measured drift applies unless a difference names its ``family``)."""
    global _notebook_family
    families = {family_of(c) for c in cfgs}
    _notebook_family = families.pop() if len(families) == 1 else None
    return _notebook_family


def fragile(diff: dict, family: str | None = None) -> bool:
    """A resolved difference whose 95% interval ends closer to 0 than the cross-CPU drift threshold
    of ``family`` (:func:`drift_threshold`; the largest measured when None): re-run on another CPU,
    its verdict could change. Only for differences of accuracy columns (``diff["value"]`` in
    :data:`ACCURACY_COLUMNS`), whatever direction the paper states. Delegates to
    :func:`fedlib.claims.verdict.fragile`."""
    from fedlib.claims.verdict import Interval
    from fedlib.claims.verdict import fragile as rule

    lo, hi = diff.get("lo", float("nan")), diff.get("hi", float("nan"))
    if diff.get("value") not in ACCURACY_COLUMNS:
        return False
    family = family or diff.get("family") or _notebook_family
    return rule(Interval(diff.get("mean", float("nan")), lo, hi, int(diff.get("n", 2))), drift_threshold(family))


from fedlib.claims.numbers import decimals, interval_text, number_text  # noqa: E402,F401  (re-exported)


def _fragile_note(diff: dict) -> str:
    family = diff.get("family") or _notebook_family
    return (f"; fragile: the interval ends {number_text(min(abs(diff['lo']), abs(diff['hi'])))} points from 0, "
            f"inside the cross-CPU drift ({drift_threshold(family):.2f} points, {family or 'largest measured'})") \
        if fragile(diff) else ""


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


def rule_side(diff: dict, expected_sign: int, kind: str = "sign") -> tuple[str, str]:
    """The one verdict rule (:func:`fedlib.claims.verdict.side`) on a :func:`paired_difference` result: the
    reports and the scoreboard give the same word for the same numbers (a zero-width interval is unresolved)."""
    from fedlib.claims.verdict import Interval
    from fedlib.claims.verdict import side as rule

    iv = Interval(diff.get("mean", float("nan")), diff.get("lo", float("nan")), diff.get("hi", float("nan")),
                  int(diff.get("n", 0)), tuple(diff.get("diffs", ())))
    return rule(iv, expected_sign if expected_sign else 1, kind if expected_sign else "differs")


def _why_text(why: str) -> str:
    return "the interval contains 0" if why == "interval contains 0" else why


def verdict(diff: dict, expected_sign: int = 1) -> str:
    """In words: does a :func:`paired_difference` resolve the paper's direction (``expected_sign``)? The side is
    decided by :func:`rule_side` (the scoreboard's rule)."""
    if diff["n"] < 2 or diff["lo"] != diff["lo"]:
        return f"not resolved (only {diff['n']} pair)"
    side_, why = rule_side(diff, expected_sign)
    if side_ == "unresolved":
        favour = diff["wins"] if expected_sign > 0 else sum(x < 0 for x in diff.get("diffs", []))
        return f"not resolved: {_why_text(why)} ({favour}/{diff['n']} pairs on the paper's side)"
    lo, hi = diff["lo"], diff["hi"]
    # pairs on the paper's side: positive differences, or negative ones where lower is better (a loss)
    favour = diff["wins"] if expected_sign > 0 else sum(x < 0 for x in diff.get("diffs", []))
    if lo > 0 or hi < 0:
        sign = 1 if lo > 0 else -1
        return ("paper's direction reproduced" if sign == expected_sign else "opposite of the paper's direction") + \
            f" (interval excludes 0; {favour}/{diff['n']} pairs on the paper's side{_fragile_note(diff)})"
    return f"not resolved: the interval contains 0 ({favour}/{diff['n']} pairs on the paper's side)"


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
    return rule_side(diff, expected_sign)[0]


def claim_verdict(parts) -> dict:
    """The verdict on one claim of the paper from the paired differences it rests on.

    ``parts``: ``(label, diff, expected_sign)`` for each difference the claim needs (e.g. "FedQS-Avg
    ahead of M-step" in every column: one part per column). Only resolved differences count:

    - ``reproduced``: every part's 95% interval excludes 0 on the paper's side;
    - ``mixed``: at least one part does and at least one is resolved against it;
    - ``partial``: at least one part does, the others unresolved;
    - ``against``: no part on the paper's side, at least one resolved against it;
    - ``unresolved``: no part resolved either way (or no part at all).

    Returns ``{"verdict", "paper", "opposite", "unresolved", "n", "note"}``; ``note`` lists the
    parts by side, e.g. ``"2/3 resolved on the paper's side (CV x=0.5, RWD Gender); unresolved: CV x=1"``.
    """
    by = {s: [] for s in SIDES}
    shaky = []
    for label, diff, sign in parts:
        by[side(diff, sign)].append(str(label))
        if fragile(diff):
            shaky.append(str(label))
    from fedlib.claims.verdict import combine

    n = sum(len(v) for v in by.values())
    # the scoreboard's words (fedlib.claims.verdict.combine): reproduced / mixed / partial / against / unresolved
    word = combine([s for s in SIDES for _ in by[s]]) if n else "unresolved"
    bits = [f"{len(by['paper'])}/{n} resolved on the paper's side"
            + (f" ({', '.join(by['paper'])})" if by["paper"] and len(by["paper"]) < n else "")]
    if by["opposite"]:
        bits.append(f"resolved against it: {', '.join(by['opposite'])}")
    if by["unresolved"]:
        bits.append(f"unresolved (interval contains 0): {', '.join(by['unresolved'])}")
    if shaky:
        bits.append(f"fragile (interval ends within the {CROSS_CPU_DRIFT_POINTS}-point cross-CPU drift of 0): "
                    f"{', '.join(shaky)}")
    return {"verdict": word, "paper": len(by["paper"]), "opposite": len(by["opposite"]),
            "unresolved": len(by["unresolved"]), "n": n, "note": "; ".join(bits)}


def censor(values, budget: float):
    """Rounds-to-target values with an unreached target (NaN) censored at ``budget`` (the run's T):
    a run that never reached the target needed at least T rounds, so it is kept, not dropped.
    Returns ``(values as floats with NaN -> budget, number censored)``."""
    s = pd.Series(values, dtype=float)
    n = int(s.isna().sum())
    return s.fillna(float(budget)), n
def signed_verdict(diff: dict, expected_sign: int) -> str:
    """In words, against the paper's expected sign of ``method − base`` for one claim (issue 31):
    ``+1`` the paper has the method above its base, ``−1`` below it (e.g. SlowMo under FedAvg on
    CIFAR-10), ``0`` the paper states no direction. The expectation is named in the sentence, so a
    reader never has to know which sign the verdict assumed; "on the paper's side" counts the pairs
    whose difference has the expected sign."""
    n = diff["n"]
    if n < 2 or diff["lo"] != diff["lo"]:
        return f"not resolved (only {n} pair)"
    diffs = diff.get("diffs", [])
    lo, hi = diff["lo"], diff["hi"]
    side_, why = rule_side(diff, expected_sign)
    resolved = side_ != "unresolved"
    if expected_sign == 0:
        up = sum(x > 0 for x in diffs)
        where = ("interval excludes 0, method " + ("above" if lo > 0 else "below") + " its base") if resolved \
            else why
        return f"the paper states no direction: {where} ({up}/{n} pairs above)"
    expectation = "method above its base" if expected_sign > 0 else "method below its base"
    side = sum((x > 0) if expected_sign > 0 else (x < 0) for x in diffs)
    tail = f"{side}/{n} pairs on the paper's side"
    if not resolved:
        return f"not resolved: {_why_text(why)} ({tail}; paper: {expectation})"
    sign = 1 if lo > 0 else -1
    if sign == expected_sign:
        return f"paper's direction reproduced ({expectation}; interval excludes 0; {tail}{_fragile_note(diff)})"
    return f"opposite of the paper's direction (paper: {expectation}; interval excludes 0; {tail}{_fragile_note(diff)})"


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
