"""How far an accuracy moves when a run is recomputed on another CPU type, per task family.

Source: ``benchmarks/results/cross_cpu.json``, a list of ``fedlib verify`` comparisons across CPU
types, one entry per recomputed run: ``{"hash", "family", "rounds", "made_on", "recomputed_on",
"largest_round_diff", "final_diff", "date"}`` (points of accuracy; ``run`` and ``source`` are
optional words). Append an entry whenever a ledger run is recomputed on another CPU type.

:func:`drift` gives the drift of a family for a metric window:

- every window that reads one or more rounds' accuracy (a mean of the last k rounds, the best
  round, the AUC) takes the **largest per-round difference** measured for the family: a mean of
  per-round differences cannot exceed their largest, so it bounds every such window on the
  measured runs; ``final-round`` (the last round alone) takes the largest ``|final_diff|``;
- a family without a measurement (the Shakespeare LSTM today) falls back to the largest value
  measured on any family, and says so (``unmeasured``).

One measured run per family is a floor for the drift, not a bound: a verdict is **fragile** when
an end of its 95 % interval lies closer to 0 than twice the drift (both runs of a pair may move,
in opposite directions).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DRIFT_FILE = Path("benchmarks") / "results" / "cross_cpu.json"
FIELDS = ("hash", "family", "rounds", "made_on", "recomputed_on", "largest_round_diff", "final_diff", "date")


@dataclass(frozen=True)
class Drift:
    """The drift of one family and window: ``points`` (one run's accuracy), ``threshold`` (2 ×
    points: a paired difference), ``measured`` (False: the fallback), ``entries`` (how many runs)."""

    family: str
    window: str
    points: float
    measured: bool
    entries: int
    #: set when the family is measured, but not at the profile asked for (e.g. "unmeasured at long")
    scope: str = ""

    @property
    def threshold(self) -> float:
        return 2.0 * self.points

    def words(self) -> str:
        src = (f"{self.entries} cross-CPU run(s) of {self.family}" if self.measured
               else f"{self.family} unmeasured: the largest drift measured on any task")
        if self.scope:
            src += f"; {self.scope}"
        return f"{self.points:.2f} points per run ({src}); fragile within {self.threshold:.2f} of 0"


def load(root: Path | None = None) -> list[dict]:
    """The entries of ``cross_cpu.json`` under ``root`` (the checkout), each checked for its fields."""
    from fedlib.core.paths import checkout

    from fedlib.experiments.results.drift_record import load_drift_record

    path = Path(root or checkout()) / DRIFT_FILE
    entries = load_drift_record(path, missing_ok=False)  # damaged or merge-conflicted: one line naming the file
    for e in entries:
        missing = [f for f in FIELDS if f not in e]
        if missing:
            raise ValueError(f"{path}: an entry lacks {missing}: {e}")
    return entries


def profile_of(entry: dict) -> str:
    """The profile a drift entry's run belongs to: its ``profile`` field, else ``long`` for the long profile's run
    lengths (a CIFAR-10 SAFL run past 50 rounds, a split run of 50 rounds or more), else ``cpu``."""
    if entry.get("profile"):
        return str(entry["profile"])
    r = int(entry.get("rounds") or 0)
    long = (entry["family"] == "cnn3-safl-cifar10" and r > 50) or (entry["family"] == "split-cnn-cifar10" and r >= 50)
    return "long" if long else "cpu"


def drift(family: str, window: str = "mean", entries: list[dict] | None = None, profile: str | None = None) -> Drift:
    """The drift of ``family`` for ``window`` (see the module docstring); with ``profile``, from that profile's
    runs where any were recomputed, else the family's largest, marked "unmeasured at <profile>"."""
    entries = load() if entries is None else entries
    key = "final_diff" if window == "final-round" else "largest_round_diff"
    mine = [abs(float(e[key])) for e in entries if e["family"] == family]
    here = [abs(float(e[key])) for e in entries if e["family"] == family and profile_of(e) == profile]
    if profile and here:
        return Drift(family, window, max(here), True, len(here))
    if mine:
        return Drift(family, window, max(mine), True, len(mine),
                     scope=f"drift unmeasured at {profile}: the family's largest" if profile else "")
    every = [abs(float(e[key])) for e in entries]
    return Drift(family, window, max(every) if every else float("nan"), False, 0)


def table(entries: list[dict] | None = None) -> list[dict]:
    """One row per entry, for the README: run, family, rounds, CPUs, differences."""
    entries = load() if entries is None else entries
    return [{"run": e.get("run") or e["hash"], "family": e["family"], "rounds": e["rounds"],
             "made on": e["made_on"], "recomputed on": e["recomputed_on"],
             "largest per-round difference": e["largest_round_diff"], "final difference": e["final_diff"],
             "date": e["date"]} for e in entries]
