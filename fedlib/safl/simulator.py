"""`SAFLSimulator`: the semi-asynchronous clock of :mod:`fedlib.safl.schedule` with real training.

One simulator runs every SAFL algorithm; the algorithm is a :class:`~fedlib.safl.strategy.Strategy`.
It implements the Trainer protocol (``fedlib.core.protocols.Trainer``: ``run_round``, ``state_dict``,
``load_state_dict``, ``client_rows``, ``summary``).

Semi-asynchronous mode (spec fedqs.md §1), per tick t:

1. every client that starts at t gets its LocalConfig from ``strategy.start(client, ctx)``; all
   of them are trained together, in one ``fedlib.train.train_clients`` call, from the newest
   global model (they all read the same version). Each client's random stream is keyed on
   (run seed, client id, start tick), so a result never depends on its group mates;
2. uploads due at t enter the FIFO buffer (``strategy.on_upload``);
3. if ``strategy.ready(buffer)`` (default: >= K buffered), ``strategy.select`` picks the round's
   updates (default: the oldest K), their staleness is set (round − version), and
   ``strategy.aggregate`` returns the new global model — at most one aggregation per tick. Under
   ``upload="overwrite"`` an entry's content is the client's latest training (see
   :mod:`fedlib.safl.schedule`).

``run_round`` advances ticks until one aggregation happened, then evaluates the global model on
the test set (every ``eval_every`` rounds, every round of the last ``eval_last`` and at the last
round: :func:`fedlib.core.utils.is_eval_round`) with ``fedlib.train.evaluate``, the same function
that scores a client's validation samples for ``ctx.evaluate_per_class``. A round that does not
evaluate still writes its history row, with NaN accuracy and loss.

Training happens at the start tick, so an in-flight client holds its finished result, not a
reference to a global version. The simulator keeps exactly the global versions a strategy may ask
for through ``ctx.global_history(n)`` — the newest ``max(strategy.history, 1)`` — and drops the
others (``kept_versions()``; tested). Finished results are dropped as soon as nothing refers to
them (not in flight, not buffered, not the content of a buffered entry).

Synchronous mode (spec §1, for Table 1): each round K clients are drawn uniformly without
replacement (stream (seed, "safl-sync", round)), all train from the current global model at the
same tick, and are aggregated by the same strategy (FedAvg: mean of models; FedSGD: mean of
deltas). A synchronous round lasts max_j r_j + 1 ticks (the slowest selected client, then the
restart tick), matching the semi-asynchronous clock. There is no buffer, so ``upload`` has no
effect in this mode [D] (accepted either way: the FedQS presets default to ``overwrite`` and their
synchronous runs, Table 1, keep it).

The mode is turned into a clock object once (:func:`fedlib.safl.schedule.make_clock`:
:class:`~fedlib.safl.schedule.Clock` or :class:`~fedlib.safl.schedule.SyncClock`); the round
loop, the cost, the queue columns, the summary and the checkpoint ask the clock, never the mode
(a synchronous round is one ``begin_tick`` … ``aggregate`` … ``end_tick`` of its clock, and its
``buffered = False`` means the strategy's ``ready`` / ``select`` are not consulted and no backlog
warning applies).

Skipped trainings (issue 29 item 4)
-----------------------------------
Under ``upload="overwrite"`` a buffered entry holds its client's latest training, so a training
whose client restarts before its entry is aggregated is never read; under both semantics neither
is one still in flight when the run ends (or lost by a dropout). Such a training is not trained
— its step count still enters ``cost_time`` (``LocalConfig.num_steps``, what training it would
report) and ``strategy.start`` is still called — when that is exact:

* the clock decides which trainings are read, alone: a buffered clock (not ``sync``) and a
  strategy with the default ``ready`` / ``select``; every scenario depends on ticks, rounds and
  the seed only. :func:`fedlib.safl.schedule.trainings_read` replays a copy of the clock to the
  run's last round, at construction and after ``load_state_dict``;
* the strategy declares ``reads_unaggregated = False`` (no state across a client's trainings, no
  ``on_upload`` that needs every upload): FedAvg, FedSGD, SAFA, FedBuff, WKAFL, FedAC, FADAS and
  CA2FL (DeFedAvg too, but its ``select`` is its own); not FedQS, FedAT or M-step;
* a client's result does not depend on its group mates bit for bit: the ``loop`` backend (and
  ``auto`` where it always picks ``loop``: on CPU for convolutional and recurrent models). The
  ``stacked`` backend's batched kernels may round differently for another group size
  (``tests/test_engine.py``), so with it — ``auto`` for the FCN on CPU and for every model on
  CUDA — every training is trained.

Every history column, client row, summary entry and global model stays bit-identical
(``tools/golden_histories.py``); ``skip_unread=False`` trains everything. A checkpoint holds no
result for a skipped training; resuming checks that none of those is aggregated later.
``trainings_skipped`` counts the skipped trainings of this process; the summary's
``trainings_trained`` / ``trainings_skipped`` / ``steps_trained`` / ``steps_skipped`` count the
run's (kept in the checkpoint; None after resuming from a checkpoint older than them) — what the
skip saved, the only summary entries besides the host times that differ with ``skip_unread``.

Time columns of a history row
-----------------------------
``tick``: the tick of this round's aggregation; ``virtual_time``: ticks elapsed (tick + 1);
``cost_time``: the cost model of spec §1 — every tick costs the largest number of local optimizer
steps among the trainings that *started* in it (0 if none started), summed over ticks (the
official code trains a client entirely at its start tick, so a tick lasts as long as its slowest
training); in synchronous mode a round costs the largest step count of its K clients.
``wall_time``: real seconds spent in ``run_round`` so far (carried across resumes).

Queue columns of a history row (the SAFL regime, issue 11)
----------------------------------------------------------
``uploads``: updates uploaded since the previous aggregation (in the ticks after it, up to and
including this round's tick; synchronous mode: K); ``backlog``: updates still waiting in the
buffer after this round's aggregation took its K (synchronous: 0); ``replaced``: how many of this
round's aggregated entries hold a later training than the one uploaded (``upload="overwrite"``;
always 0 for ``snapshot``). The server aggregates at most K per tick, so when clients upload more
than K per tick the backlog grows every tick and, with ``snapshot`` uploads, so does the staleness
(e.g. N = 200 at 1:50, or N = 100 at 1:20, upload ~14 per tick against K = 10). ``summary()``
reports ``uploads_per_tick``, ``k``, ``backlog_mean`` / ``backlog_max`` / ``backlog_final``,
``replaced_share`` and ``buffer_keeps_up`` (rule: :func:`fedlib.safl.schedule.buffer_keeps_up`);
the first round at which the buffer does not keep up raises one :class:`BufferBacklogWarning` per
simulator (a resumed run, in a new process, warns again). Under ``overwrite`` the backlog of
entries grows the same way (the timing does not depend on the upload semantics), but each entry
holds its client's latest training, so staleness stays bounded and most entries are replaced.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import math
import time
import warnings
from typing import Any

import torch
from torch import nn

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.core.utils import is_eval_round
from fedlib.safl.runstats import RunStats
from fedlib.safl.schedule import MODES, Scenario, Training, buffer_keeps_up, make_clock, trainings_read
from fedlib.safl.strategy import SimContext, Strategy, Update, clone_state
from fedlib.train import ClientTask, choose_backend, train_clients
from fedlib.train.evaluate import evaluate, prepare_batches

__all__ = ["SAFLSimulator", "SimSettings", "MODES", "BufferBacklogWarning", "VALIDATION_BATCH"]

STATE_FORMAT = 1
# a client's validation samples are scored in batches of this size (one batch in practice; the
# size every stored FedQS run used, so per-class accuracies stay bit-identical)
VALIDATION_BATCH = 4096


class BufferBacklogWarning(UserWarning):
    """The SAFL buffer cannot keep up: clients upload more than K updates per tick and the
    backlog grows (see the module docstring and ``fedlib.safl.schedule.buffer_keeps_up``)."""


@dataclass(frozen=True)
class SimSettings:
    """How a simulation runs (spec §1): ``k`` updates per round, ``rounds`` in all, the run
    ``seed``, the ``mode`` ("semi-async" | "sync"), the ``upload`` semantics ("snapshot" |
    "overwrite"), the ``scenario`` (name or :class:`Scenario`), the engine ``backend``, rounds
    between evaluations (``eval_every``; the last round is always evaluated), ``eval_last`` (also every
    round of the last ``eval_last``; 0: ``eval_every`` alone, issue 34) and ``max_ticks``, the
    guard against a run that never aggregates (None: from the rounds and delays); ``skip_unread``:
    skip the local training of trainings no aggregation reads, where that is exact (module
    docstring, "Skipped trainings"; False trains every one — the same results, slower)."""

    k: int
    rounds: int = 400
    seed: int = 0
    mode: str = "semi-async"
    upload: str = "snapshot"
    scenario: Scenario | str = "none"
    backend: str = "auto"
    eval_every: int = 1
    eval_last: int = 0
    max_ticks: int | None = None
    skip_unread: bool = True


def _update_to_dict(u: Update) -> dict:
    return {f.name: getattr(u, f.name) for f in dataclasses.fields(u)}


def _update_from_dict(d: dict) -> Update:
    return Update(**d)


class SAFLSimulator:
    """See the module docstring. Arguments:

    model: template ``nn.Module`` (its current weights are the initial global model);
    dataset: a :class:`fedlib.data.FedDataset`; train_parts: list[LongTensor], one per client;
    strategy: a :class:`Strategy`; settings: :class:`SimSettings`; delays: LongTensor [N] (ticks);
    local: the run's base LocalConfig; val_parts: per-client validation indices (or None);
    test_indices: evaluate on these test samples only (None = the full test set);
    device: where the model and data live.
    """

    def __init__(self, model: nn.Module, dataset, train_parts, strategy: Strategy, settings: SimSettings, *,
                 delays, local, val_parts=None, test_indices=None, device="cpu"):
        k, rounds, eval_every, mode = settings.k, settings.rounds, settings.eval_every, settings.mode
        eval_last = settings.eval_last
        check_choice("SAFL mode", mode, MODES)
        check(isinstance(strategy, Strategy), f"strategy must be a fedlib Strategy, got {type(strategy).__name__}")
        n = len(train_parts)
        check(n >= 1, "need at least one client (train_parts is empty)")
        delays = torch.as_tensor(delays, dtype=torch.long).reshape(-1)
        check(delays.numel() == n, f"{n} clients but {delays.numel()} delays",
              "give one delay per client (fedlib.safl.delays.make_delays)")
        check(int(rounds) >= 1, f"rounds must be >= 1, got {rounds}")
        check(int(eval_every) >= 1, f"eval_every must be >= 1, got {eval_every}")
        check(int(eval_last) >= 0, f"eval_last must be >= 0, got {eval_last}")
        if val_parts is not None:
            check(len(val_parts) == n, f"{n} clients but {len(val_parts)} validation parts")
        local.validate() if hasattr(local, "validate") else None
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.dataset = dataset
        self.train_parts = [torch.as_tensor(p, dtype=torch.long) for p in train_parts]
        self.val_parts = None if val_parts is None else [torch.as_tensor(p, dtype=torch.long) for p in val_parts]
        self.test_indices = None if test_indices is None else torch.as_tensor(test_indices, dtype=torch.long)
        self.strategy = strategy
        self.k, self.n, self.seed = int(k), n, int(settings.seed)
        self.backend, self.eval_every, self.eval_last = settings.backend, int(eval_every), int(eval_last)
        self.local = local
        self.total_rounds = int(rounds)
        self.delays = delays
        # the mode's clock (schedule.make_clock); also validates the delays, K <= N, upload and scenario
        self.clock = make_clock(mode, delays, self.k, settings.upload, settings.scenario, self.seed)
        self.max_ticks = settings.max_ticks if settings.max_ticks is not None else \
            100_000 + self.total_rounds * (int(delays.max()) + 2) * 8
        self._test_batches = None  # the test inputs, prepared at the first evaluation
        # mutable state
        self.round = 0
        self.global_state = clone_state({k_: v.to(self.device) for k_, v in self.model.state_dict().items()})
        self.versions: dict[int, dict] = {0: self.global_state}
        self.results: dict[int, Update] = {}
        self.agg_counts = torch.zeros(n, dtype=torch.long)
        self.stats = RunStats()  # cost, timing, staleness and queue totals (fedlib.safl.runstats)
        self._warned = False
        self._client_rows: list[dict] = []
        self.skip_unread = bool(settings.skip_unread)
        self.trainings_skipped = 0  # trainings not trained (counted in this process, not checkpointed)
        self._read: set[int] | None = None  # the trainings aggregations read (None: train all)
        self._run_ctx = SimContext(  # the fields fixed for the run; ctx adds the tick's
            n_clients=n, k=self.k, sizes=torch.tensor([len(p) for p in self.train_parts], dtype=torch.long),
            base_local=local, model=self.model, dataset=dataset, train_parts=self.train_parts,
            val_parts=self.val_parts, device=self.device, seed=self.seed,
            history_fn=self._history, per_class_fn=self._per_class)
        self.ctx = self._tick_context(self.clock.tick)
        t0 = time.perf_counter()
        strategy.setup(self.ctx)
        self.stats.add_time("strategy", time.perf_counter() - t0)
        self._plan_skips()

    def _tick_context(self, tick: int) -> SimContext:
        """The frozen context strategies read during ``tick``."""
        return self._run_ctx.at_tick(self.round, tick,
                                     torch.tensor(self.clock.current_delays(), dtype=torch.long),
                                     self.agg_counts.clone())

    @property
    def mode(self) -> str:
        """"semi-async" | "sync": the name of the clock in use."""
        return self.clock.name

    # ------------------------------------------------------------------ context callbacks
    @property
    def history_size(self) -> int:
        return max(int(getattr(self.strategy, "history", 2)), 1)

    def _history(self, n: int) -> list[dict]:
        check(n <= self.history_size,
              f"strategy asked for {n} global versions but declared history = {self.history_size}",
              "raise the strategy's class attribute `history`")
        lo = max(0, self.round - n + 1)
        return [self.versions[v] for v in range(lo, self.round + 1) if v in self.versions]

    def _per_class(self, state: dict, indices) -> torch.Tensor:
        """Per-class accuracy (fractions, NaN for absent classes) of ``state`` on the train
        samples ``indices`` — a client's validation part (``ctx.evaluate_per_class``)."""
        return evaluate(self.model, state, self.dataset, split="train", indices=indices,
                        batch_size=VALIDATION_BATCH, device=self.device).per_class_accuracy

    def _evaluate_global(self) -> dict:
        """Accuracy (fraction) and mean cross-entropy of the global model on the test samples,
        through ``fedlib.train.evaluate``. The test inputs are prepared once
        (``prepare_batches``) and reused every round; the loss is summed per batch
        (``loss_sum="batch"``, the simulator's rule since its first stored runs)."""
        if self._test_batches is None:
            self._test_batches = prepare_batches(self.model, self.dataset, "test", self.test_indices,
                                                 device=self.device)
        r = evaluate(self.model, self.global_state, batches=self._test_batches, loss_sum="batch")
        return {"accuracy": r.accuracy, "loss": r.loss}

    def kept_versions(self) -> list[int]:
        """Global versions currently held in memory (sorted)."""
        return sorted(self.versions)

    # ------------------------------------------------------------------ training
    def _train(self, trainings: list[Training], stream_round: int) -> None:
        """strategy.start for each training, then one engine call from the current global for
        those an aggregation will read (all of them unless skipping, module docstring); the
        clients' random streams are keyed on ``stream_round`` (``Clock.stream_round``). The
        cost model: the tick costs the largest step count of the trainings started (a skipped
        one's counted without training it; module docstring)."""
        meta, rule = [], self.strategy.correct_grads  # the client-side rule (Strategy, issue 61)
        t0 = time.perf_counter()
        for tr in trainings:
            cfg, info = self.strategy.start(tr.client, self.ctx)
            corr = self.strategy.correction_state(tr.client, self.ctx) if rule is not None else None
            meta.append((self.local if cfg is None else cfg, dict(info or {}), corr))
        run = [i for i, tr in enumerate(trainings) if self._read is None or tr.id in self._read]
        tasks = [ClientTask(trainings[i].client, self.train_parts[trainings[i].client], meta[i][0], 0,
                            correction=rule, correction_state=meta[i][2]) for i in run]
        t1 = time.perf_counter()
        res = train_clients(self.model, self.global_state, self.dataset, tasks, seed=self.seed,
                            round=int(stream_round), backend=self.backend, device=self.device) if tasks else []
        t2 = time.perf_counter()
        self.stats.add_time("strategy", t1 - t0)
        self.stats.add_time("train", t2 - t1)
        skipped = set(range(len(trainings))) - set(run)
        self.trainings_skipped += len(skipped)
        skipped_steps = [meta[i][0].num_steps(len(self.train_parts[trainings[i].client])) for i in sorted(skipped)]
        self.stats.record_work([int(r.steps) for r in res], skipped_steps)
        cost = max(skipped_steps, default=0)
        for i, r in zip(run, res):
            tr, (cfg, info, _) = trainings[i], meta[i]
            self.results[tr.id] = Update(
                client_id=tr.client, delta=r.delta, state=r.state, version=tr.version,
                num_samples=int(r.num_samples), steps=int(r.steps), lr=float(cfg.lr), info=info,
                loss=float(r.loss), start_tick=tr.start, upload_tick=tr.upload)
            cost = max(cost, int(r.steps))
        self.stats.cost_time += cost

    def _skip_is_exact(self, engine: bool = True) -> bool:
        """May the trainings no aggregation reads be left untrained without changing any result?
        (module docstring, "Skipped trainings"): a buffered clock, a strategy that declares
        ``reads_unaggregated = False`` and keeps the default ``ready`` / ``select`` and — with
        ``engine`` — an engine backend whose result for a client does not depend on its group
        (``loop``; ``auto`` where it always picks ``loop``)."""
        cls = type(self.strategy)
        ok = (self.clock.buffered and getattr(self.strategy, "reads_unaggregated", True) is False
              and cls.ready is Strategy.ready and cls.select is Strategy.select)
        loop = self.backend == "loop" or \
            (self.backend == "auto" and choose_backend(self.model, self.device, 2) == "loop")
        return ok and (loop or not engine)

    def _plan_skips(self) -> None:
        """The trainings to train from now on (``self._read``, None = all): those some aggregation
        of this run reads (``schedule.trainings_read``), where skipping the others is exact."""
        self._read = trainings_read(self.clock, self.total_rounds, self.max_ticks) \
            if self.skip_unread and self._skip_is_exact() else None

    # ------------------------------------------------------------------ one round
    def run_round(self) -> dict:
        check(self.round < self.total_rounds,
              f"all {self.total_rounds} rounds are done", "build a new simulator for more rounds")
        t0 = time.perf_counter()
        updates, tick, uploads, replaced = self._next_aggregation()
        backlog = len(self.clock.buffer)
        stal = [u.staleness for u in updates]
        self.stats.record_round(stal, uploads, backlog, replaced)
        row = {"round": self.round, "tick": tick, "virtual_time": float(tick + 1),
               "cost_time": float(self.stats.cost_time),
               "staleness_mean": sum(stal) / len(stal), "staleness_max": max(stal),
               "local_trainings": self.clock.n_trainings, "versions_kept": len(self.versions),
               "uploads": uploads, "backlog": backlog, "replaced": replaced}
        self._check_backlog(tick + 1, backlog)
        te = time.perf_counter()
        if is_eval_round(self.round, self.total_rounds, self.eval_every, self.eval_last):
            row.update(self._evaluate_global())
        else:
            row.update(accuracy=math.nan, loss=math.nan)
        t1 = time.perf_counter()
        self.stats.add_time("eval", t1 - te)
        self.stats.add_time("total", t1 - t0)
        self.stats.wall_time += t1 - t0
        row["wall_time"] = self.stats.wall_time
        return row

    def _check_backlog(self, ticks: int, backlog: int) -> None:
        """Warn once (per simulator) when the buffer does not keep up (module docstring)."""
        if self._warned or not self.clock.buffered:  # no queue, no backlog (sync)
            return
        rate = self.stats.upload_rate(ticks)
        if buffer_keeps_up(rate, self.k, backlog):
            return
        self._warned = True
        if self.clock.upload_mode == "snapshot":
            effect = ("with safl.upload=snapshot every waiting update keeps aging, so the staleness "
                      "of what is aggregated grows without bound and training may diverge")
            fix = ("raise safl.k, use safl.upload=overwrite (the official code's file buffer), or "
                   "fewer/faster clients (lower safl.clients or safl.ratio)")
        else:
            effect = ("with safl.upload=overwrite each waiting entry holds its client's latest training, so "
                      "staleness stays bounded, but most aggregated entries are replaced and a client's "
                      "training can be aggregated more than once")
            fix = "raise safl.k, or fewer/faster clients (lower safl.clients or safl.ratio)"
        warnings.warn(
            f"SAFL buffer cannot keep up: clients upload {rate:.2f} updates per tick but the server "
            f"aggregates at most K = {self.k} per tick; after round {self.round} (tick {ticks - 1}) "
            f"{backlog} updates are waiting in the buffer and the backlog keeps growing; {effect}. "
            f"Fix: {fix}.", BufferBacklogWarning, stacklevel=3)

    def _aggregate(self, updates: list[Update]) -> None:
        t0 = time.perf_counter()
        new = self.strategy.aggregate(self.global_state, updates, self.ctx)
        self.stats.add_time("strategy", time.perf_counter() - t0)
        check(isinstance(new, dict) and set(new) == set(self.global_state),
              f"strategy {self.strategy.name!r} returned a state with the wrong keys")
        for u in updates:
            self.agg_counts[u.client_id] += 1
        self.round += 1
        self.global_state = new
        self.versions[self.round] = new
        for v in [v for v in self.versions if v <= self.round - self.history_size]:
            del self.versions[v]
        self._client_rows.extend(self.strategy.client_rows() or [])

    def _next_aggregation(self) -> tuple[list[Update], int, int, int]:
        """Advance the clock until one aggregation: (updates, aggregation tick, uploads since the
        previous aggregation, replaced entries). A synchronous round is one clock step."""
        clock, strat = self.clock, self.strategy
        uploads = 0
        while True:
            if clock.tick > self.max_ticks:
                raise FedlibError(f"no aggregation within {self.max_ticks} ticks (round {self.round})",
                                  "check K, the delays and the scenario (too few clients left?)")
            ev = clock.begin_tick()
            self.ctx = ctx = self._tick_context(ev.tick)  # frozen for this tick
            if ev.starts:
                self._train(ev.starts, clock.stream_round(ev.tick))
            uploads += len(ev.uploads)
            t0 = time.perf_counter()
            for tr in ev.uploads:
                if tr.id in self.results:  # a skipped training has no result (never aggregated)
                    strat.on_upload(self.results[tr.id], ctx)
            self.stats.add_time("strategy", time.perf_counter() - t0)
            ready, sel = self._selection()
            if not ready:
                clock.end_tick()
                continue
            agg = clock.aggregate(sel)
            updates = [dataclasses.replace(self.results[c.id], client_id=a.client,
                                           staleness=agg.round - c.version)
                       for a, c in zip(agg.uploaded, agg.content)]
            self._aggregate(updates)
            clock.end_tick()
            self._collect()
            replaced = sum(a.id != c.id for a, c in zip(agg.uploaded, agg.content))
            return updates, agg.tick, uploads, replaced

    def _selection(self) -> tuple[bool, list[int] | None]:
        """(aggregate now?, the buffer entries to aggregate). With a buffered clock the strategy
        decides (``ready``, then ``select``); otherwise the clock's round is complete as drawn."""
        clock = self.clock
        if not clock.buffered:
            return clock.ready(), None
        t0 = time.perf_counter()
        # a skipped training's entry is None (only with the default ready/select, which read the length)
        buffer = [self.results.get(tr.id) for tr in clock.buffer]
        ready = bool(buffer) and self.strategy.ready(buffer, self.ctx)
        sel = self.strategy.select(buffer, self.ctx) if ready else None
        self.stats.add_time("strategy", time.perf_counter() - t0)
        return ready, sel

    def _collect(self) -> None:
        """Drop finished results nothing refers to any more (``Clock.live_ids``)."""
        keep = self.clock.live_ids()
        for i in [i for i in self.results if i not in keep]:
            del self.results[i]

    # ------------------------------------------------------------------ Trainer protocol
    def client_rows(self) -> list[dict]:
        rows, self._client_rows = self._client_rows, []
        return rows

    def summary(self) -> dict:
        ticks = self.clock.tick
        return {"ticks": ticks, "local_trainings": self.clock.n_trainings,
                **self.stats.summary(ticks, self.k, len(self.clock.buffer))}

    def state_dict(self) -> dict:
        clock = self.clock.checkpoint()  # format 1: "sync_tick" and "clock" (see Clock.checkpoint)
        return {
            "format": STATE_FORMAT, "mode": self.clock.name, "round": self.round,
            "sync_tick": clock["sync_tick"],
            "global": clone_state(self.global_state),
            "versions": {str(v): (None if s is self.global_state else clone_state(s))
                         for v, s in self.versions.items()},
            "clock": clock["clock"],
            "results": {str(i): _update_to_dict(u) for i, u in self.results.items()},
            "agg_counts": self.agg_counts.clone(), **self.stats.to_checkpoint(),
            "strategy": self.strategy.state_dict(),
            "client_rows": list(self._client_rows),
        }

    def load_state_dict(self, state: dict) -> None:
        check(int(state.get("format", -1)) == STATE_FORMAT and state.get("mode") == self.clock.name,
              "checkpoint does not match this SAFL simulator (format or mode differ)")
        ref = self.global_state
        g = state["global"]
        check(set(g) == set(ref) and all(g[k].shape == ref[k].shape for k in ref),
              "checkpoint does not match this model architecture")
        self.round = int(state["round"])
        self.global_state = {k: v.to(self.device) for k, v in g.items()}
        self.versions = {int(v): (self.global_state if s is None else {k: t.to(self.device) for k, t in s.items()})
                         for v, s in state["versions"].items()}
        self.clock.restore(state)
        self.results = {int(i): _update_from_dict(d) for i, d in state["results"].items()}
        self.agg_counts.copy_(state["agg_counts"])
        self.stats = RunStats.from_checkpoint(state, self.clock.n_trainings - len(self.clock.inflight))
        self.strategy.load_state_dict(state["strategy"])
        self._client_rows = list(state["client_rows"])
        self.ctx = self._tick_context(self.clock.tick)
        self._plan_skips()
        missing = self.clock.live_ids() - set(self.results)
        if missing:  # written by a run that skipped trainings: none of them may be aggregated here
            need = trainings_read(self.clock, self.total_rounds, self.max_ticks) \
                if self._skip_is_exact(engine=False) else None
            check(need is not None and not missing & need,
                  f"the checkpoint lacks the results of trainings {sorted(missing)[:5]} that this run aggregates",
                  "resume with the rounds and the strategy of the run that wrote it")

    def run(self, rounds: int | None = None, progress: bool = False) -> list[dict]:
        """Convenience: run ``rounds`` (default: all remaining) rounds; return their rows."""
        todo = self.total_rounds - self.round if rounds is None else int(rounds)
        rows = []
        it = range(todo)
        if progress:
            from fedlib.core.progress import progress_bar  # noqa: PLC0415

            it = progress_bar(it, desc=self.strategy.name)
        for _ in it:
            rows.append(self.run_round())
        return rows
