"""The SAFL simulator's running totals, kept beside its clock (:mod:`fedlib.safl.simulator`).

:class:`RunStats` accumulates what the history rows and ``summary()`` report about a run as a
whole: the cost model of spec §1 (``cost_time``), host seconds per activity (``timers``,
``wall_time``), the staleness of everything aggregated, and the queue regime (uploads, backlog,
replaced entries; issue 11). The round loop hands it one record per round; the checkpoint stores
its fields under the keys the simulator's checkpoint format 1 has always used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fedlib.safl.schedule import buffer_keeps_up

__all__ = ["RunStats"]

TIMERS = ("train", "eval", "strategy", "total")
QUEUE = ("uploads", "aggregated", "replaced", "backlog_sum", "backlog_max", "rounds")
#: local work done and left undone (issue 34 item 4): trainings and their local steps, trained or
#: skipped as unread (simulator docstring, "Skipped trainings"); they differ with ``skip_unread``
WORK = ("trainings_trained", "trainings_skipped", "steps_trained", "steps_skipped")


@dataclass
class RunStats:
    """Totals since the start of the run (a resumed run continues its checkpoint's)."""

    cost_time: int = 0  # spec §1: per tick the largest step count among the trainings started in it
    wall_time: float = 0.0  # seconds spent in run_round (carried across resumes)
    timers: dict = field(default_factory=lambda: dict.fromkeys(TIMERS, 0.0))  # seconds per activity
    staleness_sum: int = 0
    staleness_n: int = 0
    queue: dict = field(default_factory=lambda: dict.fromkeys(QUEUE, 0))  # the queue regime's counters
    work: dict | None = field(default_factory=lambda: dict.fromkeys(WORK, 0))  # None: resumed, count unknown

    def record_work(self, trained_steps: list[int], skipped_steps: list[int]) -> None:
        """The local trainings of one start: the steps of those trained and of those skipped."""
        if self.work is not None:
            for kind, steps in (("trained", trained_steps), ("skipped", skipped_steps)):
                self.work[f"trainings_{kind}"] += len(steps)
                self.work[f"steps_{kind}"] += int(sum(steps))

    def add_time(self, activity: str, seconds: float) -> None:
        self.timers[activity] += seconds

    def record_round(self, staleness: list[int], uploads: int, backlog: int, replaced: int) -> None:
        """One aggregation: the staleness of its updates, the uploads since the previous one, the
        backlog left in the buffer and how many aggregated entries held a later training."""
        self.staleness_sum += sum(staleness)
        self.staleness_n += len(staleness)
        q = self.queue
        q["uploads"] += uploads
        q["aggregated"] += len(staleness)
        q["replaced"] += replaced
        q["backlog_sum"] += backlog
        q["backlog_max"] = max(q["backlog_max"], backlog)
        q["rounds"] += 1

    def upload_rate(self, ticks: int) -> float:
        """Uploads per elapsed tick."""
        return self.queue["uploads"] / max(ticks, 1)

    def summary(self, ticks: int, k: int, backlog_final: int) -> dict:
        """The run-level entries of the simulator's ``summary()`` (besides its clock's)."""
        t, q = self.timers, self.queue
        own = max(t["total"] - t["train"] - t["eval"] - t["strategy"], 0.0)
        rate = q["uploads"] / ticks if ticks > 0 else None
        return {
            "staleness_mean_all": self.staleness_sum / self.staleness_n if self.staleness_n else None,
            "cost_time": float(self.cost_time),
            "time_train": t["train"], "time_eval": t["eval"], "time_strategy": t["strategy"],
            "time_total": t["total"], "time_bookkeeping": own,
            "bookkeeping_share": own / t["total"] if t["total"] > 0 else None,
            "uploads_per_tick": rate, "k": k,
            "backlog_mean": q["backlog_sum"] / q["rounds"] if q["rounds"] else None,
            "backlog_max": q["backlog_max"] if q["rounds"] else None, "backlog_final": backlog_final,
            "replaced_share": q["replaced"] / q["aggregated"] if q["aggregated"] else None,
            "buffer_keeps_up": None if rate is None else buffer_keeps_up(rate, k, backlog_final),
            **(self.work or dict.fromkeys(WORK)),
        }

    def to_checkpoint(self) -> dict:
        return {"cost_time": int(self.cost_time), "wall_time": float(self.wall_time), "timers": dict(self.timers),
                "staleness": [int(self.staleness_sum), int(self.staleness_n)],
                "queue": {k: int(v) for k, v in self.queue.items()},
                **({} if self.work is None else {"work": {k: int(v) for k, v in self.work.items()}})}

    @classmethod
    def from_checkpoint(cls, state: dict, finished_trainings: int) -> "RunStats":
        """The totals a checkpoint holds. One from before the queue counters counts the queue from
        here, with ``finished_trainings`` as its uploads (exact unless clients dropped out)."""
        queue = ({k: int(v) for k, v in state["queue"].items()} if "queue" in state
                 else {**dict.fromkeys(QUEUE, 0), "uploads": int(finished_trainings)})
        s_sum, s_n = (int(x) for x in state["staleness"])
        work = {k: int(v) for k, v in state["work"].items()} if "work" in state else None  # older: unknown
        return cls(int(state["cost_time"]), float(state["wall_time"]),
                   {k: float(v) for k, v in state["timers"].items()}, s_sum, s_n, queue, work)
