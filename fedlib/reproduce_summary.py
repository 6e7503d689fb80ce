"""The summary ``fedlib reproduce`` ends with: per notebook executed / re-rendered / skipped, the runs
it read from the results ledger or the result store or trained, and the time spent (issue 60)."""

from __future__ import annotations

from pathlib import Path


def read_runs_log(log: Path) -> dict[str, str]:
    """``$FEDLIB_RUNS_LOG``'s runs: hash -> ``"trained"`` when any line says the run was trained in
    this execution, else ``"store"`` (only read; :func:`fedlib.experiments.running.runner._log_read`)."""
    runs: dict[str, str] = {}
    lines = log.read_text().splitlines() if log.exists() else []
    for line in lines:
        h, _, how = line.partition(" ")
        if h:
            runs[h] = "trained" if "trained" in (how, runs.get(h)) else "store"
    return runs


def outcome(report: str, status: str, runs: dict | None = None, ledger=None, seconds: float = 0.0) -> dict:
    """One notebook's line of the batch summary. ``status``: ``skipped`` (its report is current),
    ``done`` or ``failed``; a finished one is ``executed`` when it trained a run (or read none of the
    shared store's), else ``re-rendered`` (every run it read was stored). ``runs``: hash -> ``store``
    | ``trained`` (:func:`read_runs_log`); a stored run the results ``ledger`` holds counts as read
    from the ledger."""
    runs = runs or {}
    trained = sum(how == "trained" for how in runs.values())
    stored = [h for h, how in runs.items() if how != "trained"]
    from_ledger = sum(bool(ledger is not None and ledger.has(h)) for h in stored)
    if status == "done":
        status = "executed" if trained or not runs else "re-rendered"
    return {"report": report, "outcome": status, "ledger": from_ledger, "store": len(stored) - from_ledger,
            "trained": trained, "seconds": seconds}


SKIPPED_NOTE = "skipped: current (its notebook and runs unchanged); --force re-executes it"


def summary_text(outcomes: list[dict], seconds: float, profile: str) -> str:
    """The summary ``fedlib reproduce`` ends with: a line per notebook (what happened to it, the runs
    it read from the ledger / the result store and trained, its time), then the totals."""
    def minutes(s: float) -> str:
        return f"{int(s // 60)} min {s % 60:02.0f} s" if s >= 60 else f"{s:.0f} s"

    width = max([len(o["report"]) for o in outcomes] + [8])
    lines = [f"fedlib reproduce --profile {profile}: summary",
             f"  {'notebook':<{width}}  {'outcome':<12} {'ledger':>6} {'store':>6} {'trained':>7}  time"]
    for o in outcomes:
        if o["outcome"] == "skipped":
            lines.append(f"  {o['report']:<{width}}  {SKIPPED_NOTE}")
        else:
            lines.append(f"  {o['report']:<{width}}  {o['outcome']:<12} {o['ledger']:>6} {o['store']:>6} "
                         f"{o['trained']:>7}  {minutes(o['seconds'])}")
    count = {k: sum(o["outcome"] == k for o in outcomes) for k in ("executed", "re-rendered", "skipped", "failed")}
    total = {k: sum(o[k] for o in outcomes) for k in ("ledger", "store", "trained")}
    lines += [f"notebooks: {count['executed']} executed (trained runs), {count['re-rendered']} re-rendered (every "
              f"run read, none trained), {count['skipped']} skipped (current; --force re-executes), "
              f"{count['failed']} failed",
              f"runs: {total['ledger']} read from the results ledger, {total['store']} read from the result store, "
              f"{total['trained']} trained (--recompute trains every one)",
              f"time: {minutes(seconds)}; index: reports/{profile}/README.md"]
    return "\n".join(lines)
