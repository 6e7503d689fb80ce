"""A power plan per unresolved claim: the paired seeds a t-interval needs, and what they cost.

:func:`seeds_needed` iterates n: the smallest n ≥ 2 whose 95 % t-interval half-width,
``(t(0.975, n−1) + t(power, n−1)) · sd / √n``, is at most the effect. With the default
``power=0.5`` (t(0.5) = 0) an interval centred on the effect just excludes 0: the seeds at which
a true effect of that size is resolved half of the time; ``power=0.8`` asks for 80 %. ``sd`` is
the observed standard deviation of the claim's paired differences (:meth:`Interval.sd`); the
effect is (a) the paper's stated effect where it states one, (b) the observed mean.

:func:`core_hours` prices the extra seeds with the report's own runs: the mean host minutes of the
runs the report read (``Ledger.wall_minutes``: each ledger summary's ``wall_time``, one thread per
run, so host minutes are core-minutes on an unshared core) × the runs one more pair needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_SEEDS = 10_000


def seeds_needed(sd: float, effect: float, level: float = 0.95, power: float = 0.5) -> int | None:
    """The smallest n (≥ 2) that resolves ``effect`` at ``level`` (see the module docstring);
    None when it cannot be computed (NaN sd, zero effect) or exceeds :data:`MAX_SEEDS`."""
    from scipy import stats

    if sd != sd or effect != effect or effect == 0:
        return None
    if sd == 0:
        return 2
    effect = abs(effect)
    for n in range(2, MAX_SEEDS + 1):
        t = float(stats.t.ppf(0.5 + level / 2, n - 1)) + (float(stats.t.ppf(power, n - 1)) if power != 0.5 else 0.0)
        if t * sd / math.sqrt(n) <= effect:
            return n
    return None


def report_run_minutes(report: str, root=None) -> float | None:
    """The mean host minutes of the runs ``reports/<report>.runs.json`` lists (from the ledger),
    None when the report kept no record or no run records its time."""
    import json
    from pathlib import Path

    from fedlib.core.paths import checkout
    from fedlib.experiments.results.ledger import Ledger

    root = Path(root or checkout())
    path = root / "reports" / f"{report}.runs.json"
    if not path.is_file():
        return None
    ledger = Ledger(root / "ledger")
    minutes = [m for m in (ledger.wall_minutes(h) for h in json.loads(path.read_text())["runs"] if ledger.has(h))
               if m is not None]
    return sum(minutes) / len(minutes) if minutes else None


def core_hours(extra_pairs: int, runs_per_pair: int, minutes_per_run: float | None) -> float | None:
    """Core-hours of ``extra_pairs`` more paired seeds (None without a run time)."""
    if minutes_per_run is None or extra_pairs is None:
        return None
    return max(extra_pairs, 0) * runs_per_pair * minutes_per_run / 60.0


@dataclass(frozen=True)
class Plan:
    """Seeds and core-hours to resolve the paper's effect and the observed one."""

    have: int
    sd: float
    paper_seeds: int | None
    observed_seeds: int | None
    paper_hours: float | None
    observed_hours: float | None

    def words(self) -> str:
        def part(name, n, h):
            if n is None:
                return f"{name}: n/a"
            cost = "" if h is None else f", ≈ {h:.1f} core-h"
            return f"{name}: ≈ {n} seeds{cost}"
        return (f"sd {self.sd:.2f} over {self.have} pairs; " + part("paper's effect", self.paper_seeds, self.paper_hours)
                + "; " + part("observed effect", self.observed_seeds, self.observed_hours))


def plan(sd: float, have: int, observed: float, paper_effect: float | None, runs_per_pair: int,
         minutes_per_run: float | None) -> Plan:
    """The :class:`Plan` of one row."""
    ps = seeds_needed(sd, paper_effect) if paper_effect is not None else None
    os_ = seeds_needed(sd, observed)
    return Plan(have, sd, ps, os_,
                core_hours(ps - have, runs_per_pair, minutes_per_run) if ps else None,
                core_hours(os_ - have, runs_per_pair, minutes_per_run) if os_ else None)
