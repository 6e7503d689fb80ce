"""The reports' verdict words, from the one rule of :mod:`fedlib.claims.verdict`: a paired difference's
side against the paper's sign (:func:`side`, :func:`rule_side`), its sentence (:func:`verdict`,
:func:`signed_verdict`, :func:`interval_words`), a claim's word over its parts (:func:`claim_verdict`),
and the fragile mark from the cross-CPU drift record (:func:`fragile`). The notebooks reach them through
``fedlib.reporting`` (re-exported); no other package defines a verdict word."""

from __future__ import annotations

import functools

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


def drift_threshold(family: str | None = None, profile: str | None = None) -> float:
    """Twice the cross-CPU drift of ``family`` (:func:`fedlib.claims.drift.drift`), or of the largest
    measured family when ``family`` is None, at ``profile`` (default: the notebook's, :func:`use_profile`),
    as the scoreboard reads it: that profile's recomputed runs where any, else the family's largest. The
    record is read once per version of the file (every verdict of a report asks), not once per call."""
    from fedlib.claims.drift import DRIFT_FILE
    from fedlib.core.paths import checkout

    try:
        stamp = (checkout() / DRIFT_FILE).stat().st_mtime_ns
    except OSError:  # no checkout (an installed package without benchmarks/): no drift known, nothing marked
        return float("nan")
    return _threshold(stamp, family, profile or _notebook_profile)


@functools.lru_cache(maxsize=64)
def _threshold(stamp: int, family: str | None, profile: str | None = None) -> float:
    """:func:`drift_threshold` of the drift record as it is at modification time ``stamp``."""
    from fedlib.claims.drift import drift, load

    entries = load()
    if family is None:
        return max(drift(f, "mean", entries, profile).threshold for f in {e["family"] for e in entries})
    return drift(family, "mean", entries, profile).threshold


#: the profile of the notebook being executed (:func:`use_profile`; None: none, the family's largest drift)
_notebook_profile: str | None = None


def use_profile(profile: str | None) -> str | None:
    """Make ``profile`` the default of :func:`drift_threshold` (called by
    :func:`fedlib.reporting.profiles.resolve_profile`, so a report's fragile marks read the drift the
    scoreboard reads for its profile); None restores the family's largest."""
    global _notebook_profile
    _notebook_profile = profile
    return profile


CROSS_CPU_DRIFT_POINTS = round(drift_threshold(), 2)  # every family, no profile: the largest measured

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
    return rule(Interval(diff.get("mean", float("nan")), lo, hi, int(diff.get("n", 2))), fragile_threshold(diff, family))


def fragile_threshold(diff: dict, family: str | None = None) -> float:
    """The drift threshold :func:`fragile` reads for ``diff``: of ``family``, else the difference's own
    ``family``, else the notebook's (:func:`use_family_of`), at the notebook's profile."""
    return drift_threshold(family or diff.get("family") or _notebook_family)


from fedlib.claims.numbers import number_text  # noqa: E402


def _fragile_note(diff: dict) -> str:
    family = diff.get("family") or _notebook_family
    return (f"; fragile: the interval ends {number_text(min(abs(diff['lo']), abs(diff['hi'])))} points from 0, "
            f"inside the cross-CPU drift ({drift_threshold(family):.2f} points, {family or 'largest measured'})") \
        if fragile(diff) else ""


def rule_side(diff: dict, expected_sign: int, kind: str = "sign") -> tuple[str, str]:
    """The one verdict rule (:func:`fedlib.claims.verdict.side`) on a :func:`fedlib.reporting.stats.paired_difference` result: the
    reports and the scoreboard give the same word for the same numbers (a zero-width interval is unresolved)."""
    from fedlib.claims.verdict import Interval
    from fedlib.claims.verdict import side as rule

    iv = Interval(diff.get("mean", float("nan")), diff.get("lo", float("nan")), diff.get("hi", float("nan")),
                  int(diff.get("n", 0)), tuple(diff.get("diffs", ())))
    return rule(iv, expected_sign if expected_sign else 1, kind if expected_sign else "differs")


def _why_text(why: str) -> str:
    return "the interval contains 0" if why == "interval contains 0" else why


def verdict(diff: dict, expected_sign: int = 1) -> str:
    """In words: does a :func:`fedlib.reporting.stats.paired_difference` resolve the paper's direction (``expected_sign``)? The side is
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
    """Where a :func:`fedlib.reporting.stats.paired_difference` lands against the paper's ``expected_sign`` (+1: the paper
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
    shaky, limits = [], set()
    for label, diff, sign in parts:
        by[side(diff, sign)].append(str(label))
        if fragile(diff):
            shaky.append(str(label))
            limits.add(round(fragile_threshold(diff), 2))
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
        drift = " / ".join(f"{x:g}" for x in sorted(limits))  # the thresholds the marks read (profile, family)
        bits.append(f"fragile (interval ends within the {drift}-point cross-CPU drift of 0): {', '.join(shaky)}")
    return {"verdict": word, "paper": len(by["paper"]), "opposite": len(by["opposite"]),
            "unresolved": len(by["unresolved"]), "n": n, "note": "; ".join(bits)}


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


def interval_words(diff: dict) -> str:
    """A paired difference where the paper claims no direction: does its interval exclude 0?"""
    if diff["n"] < 2 or diff["lo"] != diff["lo"]:
        return f"not resolved (only {diff['n']} pair)"
    side_, why = rule_side(diff, 0)  # the scoreboard's rule: a zero-width interval resolves nothing
    where = "excludes 0" if side_ == "paper" else ("contains 0" if why == "interval contains 0" else f"unresolved, {why}")
    return f"interval {where} ({diff['wins']}/{diff['n']} pairs positive)"
