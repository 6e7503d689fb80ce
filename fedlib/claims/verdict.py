"""The one verdict rule: a claim's word from the paired intervals of its rows and the paper's sign.

Per row (:func:`side`): ``paper`` when the 95 % interval excludes 0 on the paper's side,
``opposite`` when it excludes 0 on the other side, ``unresolved`` otherwise — also with one pair
(no interval) and with a zero-width interval (n equal differences, e.g. two seeds that reach a
target at the same evaluated round: no spread is not no noise). A ``small`` row (the paper calls
a difference small) is on the paper's side when its interval stays within ± the bound, against it
when it lies beyond. A ``differs`` row (a claim with no direction, e.g. "α needs tuning": the
accuracy depends on the setting) is on the paper's side when its interval excludes 0 either way and
otherwise unresolved (no interval shows that a setting does not matter). An ``exact`` row (a deterministic quantity such as virtual time) is decided by
its one value.

Per claim (:func:`claim_word`): over its rows on the paper's own datasets, splits and models — every
row on the paper's side: **reproduced**; some on the paper's side and one resolved against it:
**mixed**; some on the paper's side, the others open: **partial**; none on the paper's side but one
resolved against: **against**; else **unresolved**. A claim tested only on a dataset, split or model
the paper does not use for it is **other setting** (with what it would read: "holds on a stand-in",
never "reproduced"); a claim that holds by construction of the simulator is **not a test** (with the
reason); a claim with no row is **not run** with its reason.

Fragile (:func:`fragile`): a resolved row whose interval ends closer to 0 than the cross-CPU drift
threshold of its task (:mod:`fedlib.claims.drift`) — on accuracy, AUC and no-direction rows alike
(a loss or a count has no measured drift and is never marked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

SIDES = ("paper", "opposite", "unresolved")


@dataclass(frozen=True)
class Interval:
    """A paired difference: mean, 95 % interval, pairs and the per-pair values where known."""

    mean: float
    lo: float = float("nan")
    hi: float = float("nan")
    n: int = 0
    diffs: tuple = ()

    @property
    def has_interval(self) -> bool:
        return self.n >= 2 and not (math.isnan(self.lo) or math.isnan(self.hi))

    @property
    def resolved(self) -> bool:
        return self.has_interval and self.hi > self.lo and (self.lo > 0 or self.hi < 0)

    def sd(self) -> float:
        """The standard deviation of the paired differences: from the per-pair values, else from
        the interval's half-width (half = t · sd / √n)."""
        from scipy import stats

        if len(self.diffs) >= 2:
            m = sum(self.diffs) / len(self.diffs)
            return math.sqrt(sum((d - m) ** 2 for d in self.diffs) / (len(self.diffs) - 1))
        if not self.has_interval:
            return float("nan")
        return (self.hi - self.lo) / 2 * math.sqrt(self.n) / float(stats.t.ppf(0.975, self.n - 1))


@dataclass(frozen=True)
class RowJudgement:
    """One row's side, fragility and why."""

    side: str
    fragile: bool
    why: str = ""


def side(iv: Interval, sign: int, kind: str = "sign", small: float = 0.0) -> tuple[str, str]:
    """(side, why) of one row (see the module docstring)."""
    if kind == "exact":
        if iv.mean != iv.mean:
            return "unresolved", "no value"
        return ("paper" if iv.mean * sign > 0 else "opposite"), "deterministic quantity: one value decides"
    if not iv.has_interval:
        return "unresolved", f"{iv.n} pair(s): no interval"
    if iv.hi <= iv.lo:
        return "unresolved", f"zero-width interval from {iv.n} equal differences: no measure of noise"
    if kind == "small":
        if iv.lo > small or iv.hi < -small:
            return "opposite", f"interval beyond ±{small:g} points: not small"
        if -small <= iv.lo and iv.hi <= small:
            return "paper", f"interval within ±{small:g} points"
        return "unresolved", f"interval straddles ±{small:g} points"
    if not iv.resolved:
        return "unresolved", "interval contains 0"
    if kind == "differs":
        return "paper", "interval excludes 0 (either direction decides)"
    up = iv.lo > 0
    return ("paper" if (1 if up else -1) == sign else "opposite"), "interval excludes 0"


def fragile(iv: Interval, threshold: float, kind: str = "sign", small: float = 0.0) -> bool:
    """A resolved row whose interval ends within ``threshold`` of the line that decides it (0, or
    ± ``small`` for a ``small`` row); never for a NaN threshold (no measured drift)."""
    if threshold != threshold or not iv.has_interval or iv.hi <= iv.lo:
        return False
    if kind == "small":
        return min(abs(abs(iv.lo) - small), abs(abs(iv.hi) - small)) < threshold
    return iv.resolved and min(abs(iv.lo), abs(iv.hi)) < threshold


def judge(iv: Interval, sign: int, threshold: float, kind: str = "sign", small: float = 0.0) -> RowJudgement:
    """:func:`side` and :func:`fragile` of one row."""
    s, why = side(iv, sign, kind, small)
    return RowJudgement(s, kind != "exact" and fragile(iv, threshold, kind, small), why)


@dataclass
class ClaimWord:
    """A claim's verdict and how its rows add up."""

    word: str
    counts: dict = field(default_factory=dict)
    would_read: str = ""


def combine(sides: list[str]) -> str:
    """The claim word from its rows' sides (all on the paper's datasets and splits)."""
    if not sides:
        return "not run"
    if all(s == "paper" for s in sides):
        return "reproduced"
    if any(s == "paper" for s in sides):
        return "mixed" if any(s == "opposite" for s in sides) else "partial"
    if any(s == "opposite" for s in sides):
        return "against"
    return "unresolved"


def claim_word(sides: list[str], other_setting: list[bool]) -> ClaimWord:
    """The claim word from its rows' sides, each flagged when on a setting the paper did not use:
    only the paper's settings decide; a claim with only other-setting rows is ``other setting``."""
    counts = {s: sides.count(s) for s in SIDES}
    mine = [s for s, other in zip(sides, other_setting) if not other]
    if mine:
        return ClaimWord(combine(mine), counts)
    if sides:
        return ClaimWord("other setting", counts, would_read=combine(sides))
    return ClaimWord("not run", counts)
