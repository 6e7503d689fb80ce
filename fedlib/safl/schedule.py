"""Event-driven replay of the semi-asynchronous clock (spec fedqs.md §1), without any training.

Semantics (one *tick* = one pass of the official code's client loop)
--------------------------------------------------------------------
* Every client starts at tick 0. A client that starts at tick t trains on the newest global model
  at tick t (i.e. after every aggregation up to the end of tick t−1), uploads at tick t + r and
  starts again at tick t + r + 1 (r = its delay for that training, >= 1).
* Within a tick: first the starts (client-id order), then the uploads (client-id order), which are
  appended to a FIFO buffer. At the end of the tick, if the buffer holds >= K updates, the oldest K
  are aggregated (a strategy may pick others via ``select``) — at most one aggregation per tick.
  One aggregation = one global round.
* Versions: the initial model is version 0; the model produced by the (r+1)-th aggregation is
  version r+1. ``round`` = number of aggregations done = version of the current global. An update
  trained from version v and aggregated while ``round`` = e has staleness e − v (a fresh update has
  staleness 0). The official code names files by the round index that produced them, so its logged
  staleness is e − max(v − 1, 0), i.e. +1 for every update not trained from the initial model;
  :func:`replay` reports that convention too (``*_code``).

Upload semantics
----------------
``snapshot`` (default)
    the buffer holds each update as uploaded.
``overwrite``
    the official code's artefact: the buffer holds the *path* of the client's update file, and the
    client rewrites that file when it next starts (it trains immediately at its start tick). So the
    content aggregated for a buffered entry of client i at the end of tick A is the result of the
    latest training client i started at a tick <= A (the entry's own training if the client has not
    restarted yet). The same content can be aggregated twice if a client has two entries.
    :func:`replay` measures the *effective* staleness (of the content actually aggregated).

Dynamic scenarios (Table 6; the official code has none — these are fedlib's definitions)
-----------------------------------------------------------------------------------------
``speed-change`` (paper §5.3 "Dynamic Resource Scale")
    "the speed ratio shifts from 1:50 to 1:100 at round 200": trainings that start once the global
    round is >= ``change_round`` (200) use r' = 1 + round((r − 1)·(new_ratio − 1)/(R − 1)), where
    R = the largest delay of the profile (50) and new_ratio = 100 — every client keeps its rank,
    the spread doubles. In-flight trainings keep the delay they started with.
``random-time`` (paper: "each client's resource fluctuates ... per update, between 1 and 50")
    every single training takes a delay uniform in [1, max_delay] (default 50): 1 +
    derive_seed(seed, "random-time", client, start tick) mod max_delay.
``dropout`` (paper: "50% of clients randomly churn at round 100")
    right after the aggregation that completes round ``at_round`` (= 100), floor(fraction·N)
    clients (fraction 0.5), the first of randperm(N) from the stream (seed, "safl-dropout"), leave
    for good: they never start again and their in-flight training is lost (never uploaded);
    updates they already uploaded stay in the buffer. Requires N − floor(fraction·N) >= K.

Synchronous clock (:class:`SyncClock`, spec §1, for Table 1)
-------------------------------------------------------------
Each round K clients are drawn uniformly without replacement (stream (seed, "safl-sync", round)),
all start at the round's first tick t from the current global model (version = round) and are
aggregated together at its last tick t + max_j r_j (the slowest of them); the next round starts at
the tick after. Staleness is always 0 and there is no buffer, so the upload semantics and the
scenarios do not apply. :func:`make_clock` maps a mode of :data:`MODES` to its clock.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.safl.delays import validate_delays
from fedlib.core.utils import derive_seed, generator

UPLOADS = ("snapshot", "overwrite")
SCENARIOS = ("none", "speed-change", "random-time", "dropout")


@dataclass(frozen=True)
class Scenario:
    """A dynamic scenario (Table 6) and its parameters; see the module docstring."""

    name: str = "none"
    change_round: int = 200  # speed-change: round from which the new ratio applies
    new_ratio: int = 100  # speed-change: the slowest client's delay afterwards
    max_delay: int = 50  # random-time: delays drawn in [1, max_delay]
    at_round: int = 100  # dropout: clients leave after this many rounds
    fraction: float = 0.5  # dropout: share of clients that leave

    def __post_init__(self):
        check_choice("SAFL scenario", self.name, SCENARIOS)
        check(self.change_round >= 0, f"speed-change change_round must be >= 0, got {self.change_round}")
        check(self.new_ratio >= 1, f"speed-change new_ratio must be >= 1, got {self.new_ratio}")
        check(self.max_delay >= 1, f"scenario max_delay must be >= 1, got {self.max_delay}")
        check(self.at_round >= 0, f"dropout at_round must be >= 0, got {self.at_round}")
        check(0.0 <= self.fraction < 1.0, f"dropout fraction must be in [0, 1), got {self.fraction}")


@dataclass
class Training:
    """One local training: client ``client`` starts at tick ``start`` from global version
    ``version`` and uploads at tick ``upload``. ``id`` counts trainings in start order."""

    id: int
    client: int
    start: int
    upload: int
    version: int

    def to_list(self) -> list[int]:
        return [self.id, self.client, self.start, self.upload, self.version]


@dataclass
class Tick:
    tick: int
    starts: list[Training] = field(default_factory=list)
    uploads: list[Training] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)  # clients whose in-flight training was lost


@dataclass
class Aggregation:
    """One global round: ``uploaded`` = the buffered entries aggregated (FIFO order of the
    selection), ``content`` = the trainings whose result is actually aggregated (== uploaded for
    snapshot; the client's latest training for overwrite)."""

    round: int  # round index e (global version before this aggregation)
    tick: int
    uploaded: list[Training]
    content: list[Training]
    left: list[int] = field(default_factory=list)  # clients that left right after (dropout)


def check_k(k: int, clients: int) -> None:
    """The one K ≤ N rule (issue 45), in one wording: K updates per aggregation need at least K
    clients. Checked where a run's config is validated (``experiments.config``) and where a clock
    is built from bare arguments (:class:`Clock` / :class:`SyncClock`), nowhere else."""
    check(int(k) <= int(clients), f"safl.k={k} updates per aggregation exceeds safl.clients={clients}",
          "lower safl.k or raise safl.clients")


def _validated_delays(delays, k: int, upload: str) -> list[int]:
    """The per-client delays (ticks, >= 1) as ints, checked against K and the upload semantics."""
    delays = validate_delays(delays, len(torch.as_tensor(delays).reshape(-1)))
    n = int(delays.numel())
    check(n >= 1, "need at least one client")
    check(int(k) >= 1, f"K (updates per aggregation) must be >= 1, got {k}")
    check_k(k, n)
    check_choice("upload semantics", upload, UPLOADS)
    return [int(d) for d in delays.tolist()]


class Clock:
    """The semi-asynchronous clock as a step-by-step state machine (see module docstring).

    Driven by :func:`replay` (no training) and by :class:`fedlib.safl.simulator.SAFLSimulator`::

        ev = clock.begin_tick()          # starts, then uploads (entering the buffer)
        if clock.ready(): agg = clock.aggregate(selected)   # selected: indices into clock.buffer
        clock.end_tick()

    Its whole state is plain ints/lists (:meth:`state_dict`), so a run resumes exactly.
    """

    name = "semi-async"  # the simulator's ``mode`` (stored in its checkpoints)
    buffered = True  # a FIFO buffer: the strategy decides when and what to aggregate; it may back up

    def __init__(self, delays, k: int, upload: str = "snapshot", scenario: Scenario | str = "none",
                 seed: int = 0):
        self.base_delays = _validated_delays(delays, k, upload)
        self.n = len(self.base_delays)
        if isinstance(scenario, str):
            scenario = Scenario(scenario)
        self.k, self.upload_mode, self.scenario, self.seed = int(k), upload, scenario, int(seed)
        if scenario.name == "dropout":
            left = int(scenario.fraction * self.n)
            check(self.n - left >= self.k,
                  f"dropout leaves {self.n - left} clients, fewer than K = {self.k}",
                  "lower safl.k or the dropout fraction")
        self._changed = self._rescale(self.base_delays, scenario.new_ratio) \
            if scenario.name == "speed-change" else self.base_delays
        # mutable state
        self.tick = 0
        self.round = 0
        self.n_trainings = 0
        self.next_start = [0] * self.n  # -1: gone (dropout)
        self.inflight: dict[int, Training] = {}  # client -> its training not yet uploaded
        self.latest: dict[int, Training] = {}  # client -> its latest started training
        self.buffer: list[Training] = []

    # -- delays ----------------------------------------------------------------------------
    @staticmethod
    def _rescale(delays: list[int], new_ratio: int) -> list[int]:
        top = max(delays)
        if top == 1:
            return [1 for _ in delays]
        return [1 + int(round((d - 1) * (new_ratio - 1) / (top - 1))) for d in delays]

    def delays_at(self, round_: int) -> list[int]:
        """The delay vector in force while the global round is ``round_`` (speed-change)."""
        if self.scenario.name == "speed-change" and round_ >= self.scenario.change_round:
            return self._changed
        return self.base_delays

    def delay(self, client: int, tick: int) -> int:
        """Delay of the training ``client`` starts at ``tick`` (with the current round)."""
        if self.scenario.name == "random-time":
            return 1 + derive_seed(self.seed, "random-time", client, tick) % self.scenario.max_delay
        return self.delays_at(self.round)[client]

    def current_delays(self) -> list[int]:
        """Each client's delay for a training starting now (random-time: the bound)."""
        if self.scenario.name == "random-time":
            return [self.scenario.max_delay] * self.n
        return list(self.delays_at(self.round))

    # -- one tick ---------------------------------------------------------------------------
    def begin_tick(self) -> Tick:
        t = self.tick
        ev = Tick(t)
        for c in range(self.n):
            if self.next_start[c] == t:
                tr = Training(self.n_trainings, c, t, t + self.delay(c, t), self.round)
                self.n_trainings += 1
                self.inflight[c] = tr
                self.latest[c] = tr
                self.next_start[c] = -2  # busy
                ev.starts.append(tr)
        for c in sorted(self.inflight):
            tr = self.inflight[c]
            if tr.upload == t:
                del self.inflight[c]
                self.buffer.append(tr)
                self.next_start[c] = t + 1
                ev.uploads.append(tr)
        return ev

    def ready(self) -> bool:
        return len(self.buffer) >= self.k

    def content_of(self, tr: Training) -> Training:
        """The training whose result a buffered entry holds at aggregation time."""
        if self.upload_mode == "overwrite":
            return self.latest.get(tr.client, tr)
        return tr

    def aggregate(self, selected: list[int] | None = None) -> Aggregation:
        """Remove the selected buffered entries (default: the oldest K) and start a new round.

        ``selected``: distinct indices into :attr:`buffer` (a strategy may pick any non-empty
        subset, e.g. FedAT one tier's K updates)."""
        if selected is None:
            check(self.ready(), f"aggregate() needs >= K = {self.k} buffered updates, has {len(self.buffer)}")
            selected = list(range(self.k))
        selected = [int(i) for i in selected]
        if not selected or len(set(selected)) != len(selected) or \
                not all(0 <= i < len(self.buffer) for i in selected):
            raise FedlibError(f"strategy selected {selected}: need distinct indices into the "
                              f"buffer of {len(self.buffer)} updates")
        chosen = [self.buffer[i] for i in selected]
        agg = Aggregation(self.round, self.tick, chosen, [self.content_of(tr) for tr in chosen])
        keep = set(range(len(self.buffer))) - set(selected)
        self.buffer = [tr for i, tr in enumerate(self.buffer) if i in keep]
        self.round += 1
        if self.scenario.name == "dropout" and self.round == self.scenario.at_round:
            agg.left = self._drop()
        return agg

    def _drop(self) -> list[int]:
        n_left = int(self.scenario.fraction * self.n)
        perm = torch.randperm(self.n, generator=generator(self.seed, "safl-dropout")).tolist()
        gone = sorted(perm[:n_left])
        for c in gone:
            self.next_start[c] = -1
            self.inflight.pop(c, None)
        return gone

    def end_tick(self) -> None:
        self.tick += 1

    def active_clients(self) -> list[int]:
        return [c for c in range(self.n) if self.next_start[c] != -1]

    def stream_round(self, tick: int) -> int:
        """The index keying the random streams of the trainings starting at ``tick``
        (``fedlib.train.train_clients(round=...)``): the start tick itself."""
        return tick

    def live_ids(self) -> set[int]:
        """Ids of the trainings whose results may still be aggregated: in flight, buffered, or
        (``overwrite``) the content of a buffered entry."""
        keep = {tr.id for tr in self.buffer} | {tr.id for tr in self.inflight.values()}
        if self.upload_mode == "overwrite":
            keep |= {self.content_of(tr).id for tr in self.buffer}
        return keep

    # -- persistence ------------------------------------------------------------------------
    def checkpoint(self) -> dict:
        """This clock's entries of a simulator checkpoint (format 1): ``clock`` (its state) and
        ``sync_tick`` (the synchronous clock's slot, 0 here)."""
        return {"sync_tick": 0, "clock": self.state_dict()}

    def restore(self, checkpoint: dict) -> None:
        """Inverse of :meth:`checkpoint` (``checkpoint`` = the whole simulator checkpoint)."""
        self.load_state_dict(checkpoint["clock"])

    def state_dict(self) -> dict:
        return {
            "tick": self.tick, "round": self.round, "n_trainings": self.n_trainings,
            "next_start": list(self.next_start),
            "inflight": [tr.to_list() for _, tr in sorted(self.inflight.items())],
            "latest": [tr.to_list() for _, tr in sorted(self.latest.items())],
            "buffer": [tr.to_list() for tr in self.buffer],
        }

    def load_state_dict(self, d: dict) -> None:
        self.tick, self.round, self.n_trainings = int(d["tick"]), int(d["round"]), int(d["n_trainings"])
        self.next_start = [int(x) for x in d["next_start"]]
        mk = lambda row: Training(*[int(x) for x in row])  # noqa: E731
        self.inflight = {tr.client: tr for tr in map(mk, d["inflight"])}
        self.latest = {tr.client: tr for tr in map(mk, d["latest"])}
        self.buffer = [mk(r) for r in d["buffer"]]


class SyncClock:
    """Synchronous FL (spec fedqs.md §1, Table 1) behind the :class:`Clock` interface: one round
    per ``begin_tick() … aggregate() … end_tick()`` (module docstring, "Synchronous clock").

    ``begin_tick`` draws the round's K clients and returns them both as the tick's starts and as
    its uploads (they fill :attr:`buffer`); :meth:`ready` is then true and :meth:`aggregate` takes
    all K at the round's last tick. ``buffered`` is False: there is no waiting queue, so the
    strategy neither decides when to aggregate nor which updates (``Strategy.ready`` / ``select``
    are not consulted), and the buffer can never back up. ``upload`` is validated but has no
    effect [D]; scenarios are defined for the semi-asynchronous clock only."""

    name = "sync"
    buffered = False

    def __init__(self, delays, k: int, upload: str = "snapshot", scenario: Scenario | str = "none",
                 seed: int = 0):
        if isinstance(scenario, str):
            scenario = Scenario(scenario)
        check(scenario.name == "none",
              f"scenario {scenario.name!r} is defined for the semi-asynchronous clock only",
              "use safl.scenario=none with safl.mode=sync")
        self.base_delays = _validated_delays(delays, k, upload)
        self.n = len(self.base_delays)
        self.k, self.upload_mode, self.scenario, self.seed = int(k), upload, scenario, int(seed)
        # mutable state: the tick (start of the next round, once a round is over) and the round
        self.tick = 0
        self.round = 0
        self.buffer: list[Training] = []  # the current round's K trainings (begin_tick .. aggregate)
        self.inflight: dict[int, Training] = {}  # always empty: a round's uploads come with its starts

    @property
    def n_trainings(self) -> int:
        return self.round * self.k + len(self.buffer)

    def draw(self, round_: int) -> list[int]:
        """Round ``round_``'s K clients, sorted: uniform without replacement, stream (seed,
        "safl-sync", round)."""
        g = generator(self.seed, "safl-sync", round_)
        return sorted(torch.randperm(self.n, generator=g)[: self.k].tolist())

    def current_delays(self) -> list[int]:
        return list(self.base_delays)

    def active_clients(self) -> list[int]:
        return list(range(self.n))

    def begin_tick(self) -> Tick:
        """Start the round: its K clients start now (training ids round·K + j, version = round)."""
        check(not self.buffer, "begin_tick() while a synchronous round is open (call aggregate())")
        t = self.tick
        trs = [Training(self.round * self.k + j, c, t, t + self.base_delays[c], self.round)
               for j, c in enumerate(self.draw(self.round))]
        self.buffer = trs
        return Tick(t, starts=list(trs), uploads=list(trs))

    def ready(self) -> bool:
        return len(self.buffer) >= self.k

    def content_of(self, tr: Training) -> Training:
        return tr

    def aggregate(self, selected: list[int] | None = None) -> Aggregation:
        """Aggregate the round's K updates at its last tick, start + max_j r_j (the slowest
        selected client); ``selected`` must be None or all of them."""
        check(self.ready(), f"aggregate() needs the round's K = {self.k} updates, has {len(self.buffer)}")
        check(selected is None or sorted(int(i) for i in selected) == list(range(len(self.buffer))),
              f"a synchronous round aggregates all its K = {self.k} updates, got selection {selected}")
        chosen, self.buffer = self.buffer, []
        end = self.tick + max(tr.upload - tr.start for tr in chosen)
        agg = Aggregation(self.round, end, chosen, list(chosen))
        self.round += 1
        self.tick = end
        return agg

    def end_tick(self) -> None:
        """After the round's last tick: the next round starts at the following tick."""
        self.tick += 1

    def stream_round(self, tick: int) -> int:
        """The trainings of a round draw their random streams keyed on the round index."""
        return self.round

    def live_ids(self) -> set[int]:
        return {tr.id for tr in self.buffer}

    # -- persistence ------------------------------------------------------------------------
    def checkpoint(self) -> dict:
        """This clock's entries of a simulator checkpoint (format 1): ``sync_tick`` (the tick) and
        ``clock``, the slot of the semi-asynchronous clock, which holds its initial state (as
        always written in synchronous mode); the round is the simulator's ``round``."""
        idle = {"tick": 0, "round": 0, "n_trainings": 0, "next_start": [0] * self.n,
                "inflight": [], "latest": [], "buffer": []}
        return {"sync_tick": self.tick, "clock": idle}

    def restore(self, checkpoint: dict) -> None:
        self.tick, self.round, self.buffer = int(checkpoint["sync_tick"]), int(checkpoint["round"]), []

    def state_dict(self) -> dict:
        return {"tick": self.tick, "round": self.round}

    def load_state_dict(self, d: dict) -> None:
        self.tick, self.round, self.buffer = int(d["tick"]), int(d["round"]), []


CLOCKS = {"semi-async": Clock, "sync": SyncClock}
MODES = tuple(CLOCKS)  # the simulator's modes (``safl.mode``)


def make_clock(mode: str, delays, k: int, upload: str = "snapshot", scenario: Scenario | str = "none",
               seed: int = 0) -> Clock | SyncClock:
    """The clock of SAFL mode ``mode`` ("semi-async" -> :class:`Clock`, "sync" -> :class:`SyncClock`)."""
    check_choice("SAFL mode", mode, MODES)
    return CLOCKS[mode](delays, k, upload, scenario, seed)


def buffer_keeps_up(uploads_per_tick: float, k: int, backlog_final: int) -> bool:
    """Does a semi-asynchronous server keep up with its clients?

    The server aggregates at most ``k`` updates per tick (one aggregation of K per tick), so when
    clients upload more than K per tick on average the excess piles up in the buffer and the
    staleness of what is aggregated grows without bound. The buffer is judged *not* to keep up
    when both hold:

    * ``uploads_per_tick > k`` — the mean number of uploads per elapsed tick exceeds K (with fixed
      delays the measured mean never exceeds the steady-state rate sum_i 1/(r_i + 1), so this is
      not fooled by the start, where every client starts at tick 0), and
    * ``backlog_final >= k`` — at least one full round is still waiting after the last
      aggregation (the pile-up is visible, not a start-up burst).

    Otherwise it keeps up (the backlog stays below about K between aggregations)."""
    return not (float(uploads_per_tick) > int(k) and int(backlog_final) >= int(k))


def replay(delays, k: int = 10, rounds: int = 400, scenario: Scenario | str = "none", seed: int = 0,
           max_ticks: int | None = None, detail: bool = False) -> dict:
    """Replay the clock for ``rounds`` aggregations (no training) and measure it.

    Returns ticks (ticks elapsed until the last aggregation, inclusive), local trainings started by
    then, uploads, and for both upload semantics the mean / max staleness of the aggregated
    updates (``overwrite`` = effective staleness of the content really aggregated; the share of
    aggregated entries whose content is a later training is ``overwrite_replaced``). ``*_code``:
    the same in the official code's file-index convention (see module docstring).

    The queue regime (the same numbers as a training run's summary, see
    :mod:`fedlib.safl.simulator`): ``uploads_per_tick`` (uploads / ticks), ``backlog_mean`` /
    ``backlog_max`` / ``backlog_final`` (updates left in the buffer after each aggregation; the
    same under both upload semantics) and ``buffer_keeps_up``
    (:func:`buffer_keeps_up`). ``detail`` adds the per-round lists
    (``agg_ticks``, staleness, ``uploads_per_round`` = uploads since the previous aggregation,
    ``backlog_per_round``).
    """
    check(int(rounds) >= 1, f"rounds must be >= 1, got {rounds}")
    clock = Clock(delays, k, "overwrite", scenario, seed)
    limit = max_ticks if max_ticks is not None else 10_000 + int(rounds) * (max(clock.base_delays) + 2) * 4
    snap, eff, snap_code, eff_code, replaced, ticks = [], [], [], [], 0, []
    uploads = 0
    per_round_uploads, backlog, since = [], [], 0
    code = lambda e, v: e - max(v - 1, 0)  # noqa: E731
    while clock.round < rounds:
        if clock.tick > limit:
            raise FedlibError(f"schedule did not reach {rounds} rounds within {limit} ticks",
                              "check the delays / K / scenario (too few clients left?)")
        ev = clock.begin_tick()
        uploads += len(ev.uploads)
        since += len(ev.uploads)
        if clock.ready():
            agg = clock.aggregate()
            per_round_uploads.append(since)
            backlog.append(len(clock.buffer))
            since = 0
            e = agg.round
            snap.append([e - tr.version for tr in agg.uploaded])
            eff.append([e - tr.version for tr in agg.content])
            snap_code.append([code(e, tr.version) for tr in agg.uploaded])
            eff_code.append([code(e, tr.version) for tr in agg.content])
            replaced += sum(a.id != c.id for a, c in zip(agg.uploaded, agg.content))
            ticks.append(clock.tick)
        clock.end_tick()

    def stats(rows):
        flat = [x for r in rows for x in r]
        return sum(flat) / len(flat), max(flat)

    out = {
        "clients": clock.n, "k": clock.k, "rounds": int(rounds), "scenario": clock.scenario.name,
        "ticks": clock.tick, "local_trainings": clock.n_trainings, "uploads": uploads,
        "aggregated": len(snap) * clock.k, "overwrite_replaced": replaced / (len(snap) * clock.k),
        "uploads_per_tick": uploads / clock.tick, "backlog_mean": sum(backlog) / len(backlog),
        "backlog_max": max(backlog), "backlog_final": backlog[-1],
        "buffer_keeps_up": buffer_keeps_up(uploads / clock.tick, clock.k, backlog[-1]),
    }
    for name, rows in (("snapshot", snap), ("overwrite", eff), ("snapshot_code", snap_code),
                       ("overwrite_code", eff_code)):
        out[f"staleness_{name}_mean"], out[f"staleness_{name}_max"] = stats(rows)
    if detail:
        out.update(agg_ticks=ticks, staleness_snapshot=snap, staleness_overwrite=eff,
                   uploads_per_round=per_round_uploads, backlog_per_round=backlog)
    return out


def trainings_read(clock: Clock, rounds: int, max_ticks: int | None = None) -> set[int] | None:
    """Ids of the trainings whose result some aggregation reads before the run ends — the
    ``content`` of an entry aggregated by one of the rounds ``clock.round`` … ``rounds − 1`` —
    from a replay of a copy of ``clock`` (``clock`` itself is not changed) with the default buffer
    rules (ready at >= K buffered, the oldest K aggregated).

    Every other training, started already or later, is never read by an aggregation: under
    ``overwrite`` one whose client restarted before its entry was aggregated, under both upload
    semantics one still in flight when the run ends or lost by a dropout. The clock is pure (its
    scenarios depend on the tick, the round and the seed, never on a result), so the replay is
    exact. ``None`` when the replay does not reach ``rounds`` by tick ``max_ticks`` (the run
    itself stops there with an error). Used by :class:`fedlib.safl.simulator.SAFLSimulator` to
    skip the local training of such trainings."""
    copy = Clock(clock.base_delays, clock.k, clock.upload_mode, clock.scenario, clock.seed)
    copy.load_state_dict(clock.state_dict())
    read: set[int] = set()
    while copy.round < int(rounds):
        if max_ticks is not None and copy.tick > max_ticks:
            return None
        copy.begin_tick()
        if copy.ready():
            read.update(tr.id for tr in copy.aggregate().content)
        copy.end_tick()
    return read
