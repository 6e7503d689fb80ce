"""Judging one recomputed ledger run (``fedlib verify``; issue 59): history **and** summary.

* On the CPU type the run was made on, the history (host-time columns left out) and the summary
  (host-time keys, checksums and the resume round left out) must be identical.
* On another CPU type, ``strict`` (``--changed-since``: the entry came with a pull and is not trusted)
  accepts a difference only within the drift measured for the run's model family
  (:func:`fedlib.experiments.results.drift_record.drift_bounds`): the largest per-round accuracy
  difference (history, best and convergence accuracy) within the family's largest per-round drift, the
  final accuracy within its largest final drift, every non-numeric summary field equal. A family
  without a measurement excuses nothing: the CPU type an entry's ``DONE`` names is a claim, not a
  measurement. Without ``strict`` (plain ``fedlib verify``, which measures the drift) a difference on
  another CPU type is reported, not failed.
"""

from __future__ import annotations

import math
import re

__all__ = ["summary_differences", "judge"]

_HOST = re.compile(r"^time_|wall|seconds|_share$")
_NOT_RESULTS = {"files", "resumed_from_round", "fedlib"}
_ROUND_KEYS = ("best_accuracy", "convergence_accuracy")
_FINAL_KEY = "final_accuracy"
_EPS = 1e-9


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def summary_differences(old: dict, new: dict) -> list[str]:
    """The summary keys (results only) whose values differ between the ledger's and the recomputed."""
    old, new = old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {}
    keys = sorted((set(old) | set(new)) - _NOT_RESULTS)
    return [k for k in keys if not _HOST.search(k) and not _same(old.get(k, "<absent>"), new.get(k, "<absent>"))]


def _points(old: dict, new: dict, key: str) -> float | None:
    a, b = old.get(key), new.get(key)
    ok = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)  # noqa: E731
    return abs(float(b) - float(a)) * 100 if ok(a) and ok(b) else None


def judge(same_cpu: bool, hist: dict, old_summary: dict, new_summary: dict, family: str | None,
          bounds: dict | None, strict: bool) -> tuple[bool, str]:
    """(bad?, words) for one recomputed run: ``hist`` is :func:`compare_histories`'s answer,
    ``bounds`` :func:`drift_bounds` of the trusted drift record (see the module docstring)."""
    diffs = summary_differences(old_summary, new_summary)
    if hist["identical"] and not diffs:
        return False, "identical"
    where = (f"differs from round {hist['first_round']}" if not hist["identical"]
             else "history identical, summary differs")
    if diffs:
        where += f" (summary: {', '.join(diffs[:4])}{', ...' if len(diffs) > 4 else ''})"
    if same_cpu:
        return True, where + " (same CPU type: not expected)"
    if not strict:
        return False, where
    bound = (bounds or {}).get(family) if family else None
    if bound is None:
        return True, (where + f" on another CPU type, and no drift is measured for {family or 'its model family'} "
                      "in the drift record: not excused")
    numeric = {k for k in diffs if _points(old_summary, new_summary, k) is not None}
    other = [k for k in diffs if k not in numeric]
    rnd = [hist["max_acc_diff"]] + [_points(old_summary, new_summary, k) for k in _ROUND_KEYS]
    if hist["max_acc_diff"] is None or any(v is None for v in rnd):
        return True, where + " on another CPU type, with histories that cannot be compared: not excused"
    final = _points(old_summary, new_summary, _FINAL_KEY)
    if other:
        return True, where + f" on another CPU type; {', '.join(other[:4])} must not differ on any CPU: not excused"
    if max(rnd) > bound["round"] + _EPS or (final is not None and final > bound["final"] + _EPS):
        return True, (where + f" on another CPU type by {max(rnd):.3f} points a round, "
                      f"{final if final is not None else float('nan'):.3f} final: beyond the drift measured "
                      f"for {family} ({bound['round']:.2f} a round, {bound['final']:.2f} final)")
    return False, where + f" on another CPU type, within the drift measured for {family} (expected)"
