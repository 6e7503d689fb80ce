"""The SAFL queue regime (issue 11): uploads per tick against K, the backlog left in the buffer,
replaced entries under ``overwrite`` — in the history, the run summary, one warning, the pure
schedule replay and its CLI. A tiny synthetic task (3-11 clients, a linear model) keeps each test
to about a second; the runner test uses the usual tiny UCI Adult slice."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
from torch import nn

from fedlib.data.base import FedDataset
from fedlib.experiments.metrics import buffer_keeps_up, queue_regime, summarize
from fedlib.safl.baselines import FedSGD
from fedlib.safl.delays import make_delays
from fedlib.safl.schedule import replay
from fedlib.safl.simulator import BufferBacklogWarning, SAFLSimulator, SimSettings
from fedlib.train import LocalConfig
from fedlib.core.utils import atomic_torch_save, safe_torch_load

# delays [1, 2, 3], K = 1. Client i uploads at ticks j(r_i + 1) - 1: c0 at 1, 3, 5, ...; c1 at 2, 5,
# 8, ...; c2 at 3, 7, 11, ... One aggregation of 1 per tick once the buffer holds one:
#   tick      1  2  3  4  5  6  7  8  9 10 11
#   uploads   1  1  2  0  2  0  2  1  1  0  3
#   backlog   0  0  1  0  1  0  1  1  1  0  2   (after the server took its K = 1)
# Rate 1/2 + 1/3 + 1/4 = 13/12 > K: the backlog grows by one every 12 ticks. Up to round 10 the
# measured rate is <= 1 (10 uploads in 11 ticks); round 11 is the first with 13 / 12 > 1 and a
# backlog >= K: the buffer does not keep up.
DELAYS = [1, 2, 3]
UPLOADS = [1, 1, 2, 0, 2, 0, 2, 1, 1, 0, 3]
BACKLOG = [0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 2]


def dataset(n: int = 240) -> FedDataset:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, 11, generator=g), torch.randint(0, 2, (n,), generator=g)
    m = n * 3 // 4
    return FedDataset("synthetic", "tabular", x[:m], y[:m], x[m:], y[m:], 2)


def simulator(delays=DELAYS, k=1, rounds=11, upload="snapshot", mode="semi-async", seed=0):
    torch.manual_seed(0)
    ds = dataset()
    n = len(delays)
    parts = [torch.arange(i, ds.num_train, n) for i in range(n)]
    return SAFLSimulator(nn.Linear(11, 2), ds, parts, FedSGD(),
                         SimSettings(k=k, rounds=rounds, seed=seed, upload=upload, mode=mode), delays=delays,
                         local=LocalConfig(lr=0.05, batch_size=10, epochs=1))


def run_all(sim):
    """All remaining rows (wall_time dropped) and the BufferBacklogWarnings raised meanwhile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = [sim.run_round() for _ in range(sim.total_rounds - sim.round)]
    for r in rows:
        r.pop("wall_time")
    return rows, [w for w in caught if issubclass(w.category, BufferBacklogWarning)]


def test_rule():
    assert not buffer_keeps_up(10.5, 10, 10)
    assert buffer_keeps_up(10.5, 10, 9)  # more uploads than K, but no full round waiting (yet)
    assert buffer_keeps_up(10.0, 10, 500)  # a burst: the rate does not exceed K
    assert buffer_keeps_up(3.0, 10, 0)


def test_replay_matches_the_hand_count():
    r = replay(DELAYS, k=1, rounds=11, detail=True)
    assert r["uploads_per_round"] == UPLOADS and r["backlog_per_round"] == BACKLOG
    assert r["ticks"] == 12 and r["uploads"] == 13 and r["uploads_per_tick"] == pytest.approx(13 / 12)
    assert (r["backlog_mean"], r["backlog_max"], r["backlog_final"]) == (pytest.approx(7 / 11), 2, 2)
    assert r["buffer_keeps_up"] is False
    ten = replay(DELAYS, k=1, rounds=10)  # 10 uploads in 11 ticks: not (yet) more than K per tick
    assert ten["uploads_per_tick"] == pytest.approx(10 / 11) and ten["buffer_keeps_up"] is True
    # the server aggregates every tick from tick 1 on and the schedule repeats every 12 ticks with
    # 13 uploads: the backlog grows by exactly one per 12 rounds, for ever
    long = replay(DELAYS, k=1, rounds=48, detail=True)
    b = long["backlog_per_round"]
    assert long["agg_ticks"] == list(range(1, 49)) and all(b[i + 12] == b[i] + 1 for i in range(36))
    assert long["buffer_keeps_up"] is False


def test_overloaded_run_history_summary_and_one_warning():
    sim = simulator(rounds=24)
    rows, warned = run_all(sim)
    want = replay(DELAYS, k=1, rounds=24, detail=True)
    assert [r["uploads"] for r in rows] == want["uploads_per_round"]
    assert [r["backlog"] for r in rows] == want["backlog_per_round"]
    assert [r["uploads"] for r in rows[:11]] == UPLOADS and [r["backlog"] for r in rows[:11]] == BACKLOG
    assert all(r["replaced"] == 0 for r in rows)  # snapshot: nothing is overwritten
    assert len(warned) == 1  # exactly once, although the condition holds from round 11 on
    msg = str(warned[0].message)
    for part in ("1.08 updates per tick", "K = 1", "after round 11", "2 updates are waiting",
                 "raise safl.k", "safl.upload=overwrite", "fewer/faster clients"):
        assert part in msg, (part, msg)
    s = sim.summary()
    assert s["k"] == 1 and s["uploads_per_tick"] == pytest.approx(want["uploads_per_tick"])
    assert (s["backlog_mean"], s["backlog_max"], s["backlog_final"]) == \
        (pytest.approx(want["backlog_mean"]), want["backlog_max"], want["backlog_final"])
    assert s["buffer_keeps_up"] is False and s["replaced_share"] == 0
    # the history alone gives the same numbers (what summarize() adds for any stored SAFL run)
    from_history = queue_regime(rows, k=1)
    assert from_history == {k: (pytest.approx(v) if isinstance(v, float) else v) for k, v in s.items()
                            if k in from_history}
    assert {"uploads_per_tick", "backlog_mean", "backlog_max", "backlog_final"} <= set(summarize(rows))


def test_balanced_run_does_not_warn():
    sim = simulator(k=2, rounds=10)
    rows, warned = run_all(sim)
    assert warned == []
    s = sim.summary()
    assert s["buffer_keeps_up"] is True and s["uploads_per_tick"] < 2 and s["backlog_max"] < 2
    assert sum(r["uploads"] for r in rows) == s["uploads_per_tick"] * s["ticks"]


def test_sync_mode_columns():
    sim = simulator(k=2, rounds=4, mode="sync")
    rows, warned = run_all(sim)
    assert warned == [] and [(r["uploads"], r["backlog"], r["replaced"]) for r in rows] == [(2, 0, 0)] * 4
    assert sim.summary()["buffer_keeps_up"] is True


def test_overwrite_same_backlog_bounded_staleness():
    """Under overwrite the timing (hence the backlog of entries) is the same as under snapshot, but
    the aggregated content is each client's latest training: staleness stays bounded and most
    entries are replaced. The warning still comes, once, without suggesting overwrite."""
    snap_rows, _ = run_all(simulator(rounds=36))
    sim = simulator(rounds=36, upload="overwrite")
    rows, warned = run_all(sim)
    assert [r["backlog"] for r in rows] == [r["backlog"] for r in snap_rows]
    assert [r["uploads"] for r in rows] == [r["uploads"] for r in snap_rows]
    assert sum(r["replaced"] for r in rows) > 0 and sim.summary()["replaced_share"] > 0
    assert max(r["staleness_max"] for r in rows) < max(r["staleness_max"] for r in snap_rows)
    assert len(warned) == 1 and "safl.upload=overwrite each waiting entry" in str(warned[0].message)
    assert "use safl.upload=overwrite" not in str(warned[0].message)
    # the Table 4 regime at N = 200, 1:50: the backlog grows in both modes, staleness only in snapshot
    r = replay(make_delays("uniform", 200, 50, 0), 10, 400)
    assert r["buffer_keeps_up"] is False and r["uploads_per_tick"] > 13 and r["backlog_final"] > 1000
    assert r["staleness_snapshot_mean"] > 30 and r["staleness_overwrite_mean"] < 10
    assert r["overwrite_replaced"] > 0.95


def test_resume_keeps_the_columns_and_counters(tmp_path):
    want, _ = run_all(simulator(rounds=20))
    full = simulator(rounds=20)
    run_all(full)
    part = simulator(rounds=20)
    part.run_round(), part.run_round()  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BufferBacklogWarning)
        first = [part.run_round() for _ in range(10)]
    for r in first:
        r.pop("wall_time")
    atomic_torch_save(part.state_dict(), tmp_path / "ck.pt")
    resumed = simulator(rounds=20)
    resumed.load_state_dict(safe_torch_load(tmp_path / "ck.pt"))
    rest, warned = run_all(resumed)
    assert first + rest == want[2:]
    assert len(warned) == 1  # a resumed run (a new process) warns again, once
    keys = ("uploads_per_tick", "k", "backlog_mean", "backlog_max", "backlog_final", "replaced_share",
            "buffer_keeps_up")
    assert {k: resumed.summary()[k] for k in keys} == {k: full.summary()[k] for k in keys}
    # a checkpoint written before the counters existed still loads
    old = part.state_dict()
    del old["queue"]
    legacy = simulator(rounds=20)
    legacy.load_state_dict(old)
    assert legacy.stats.queue["uploads"] == part.stats.queue["uploads"]
    rows, _ = run_all(legacy)
    assert rows == rest


def test_runner_records_the_regime(data_root, tmp_path, monkeypatch):
    from fedlib.experiments.config import RunConfig
    from fedlib.experiments.running.runner import run

    monkeypatch.setenv("FEDLIB_DATA", str(data_root))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    tiny = ["safl.clients=8", "safl.delays=uniform", "safl.upload=snapshot", "safl.ratio=4", "rounds=6", "data.max_train=1200", "data.max_test=300",
            "local.epochs=1", "checkpoint_every=3"]
    cfg = RunConfig.from_preset("fedsgd-adult-gender").with_overrides(tiny + ["safl.k=1"])
    with pytest.warns(BufferBacklogWarning, match="K = 1"):
        res = run(cfg, store=tmp_path / "store", progress=False)
    assert {"uploads", "backlog", "replaced"} <= set(res.history.columns)
    s = res.summary
    assert s["k"] == 1 and s["uploads_per_tick"] > 1 and s["buffer_keeps_up"] is False
    assert s["backlog_final"] == int(res.history["backlog"].iloc[-1]) >= 1
    ok = RunConfig.from_preset("fedsgd-adult-gender").with_overrides(tiny + ["safl.k=3"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", BufferBacklogWarning)
        res = run(ok, store=tmp_path / "store", progress=False)
    assert res.summary["buffer_keeps_up"] is True and res.summary["k"] == 3


def test_schedule_cli_reports_the_regime(capsys):
    from fedlib.cli import main

    assert main(["safl", "schedule", "--clients", "200", "--k", "10", "--ratio", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["buffer_keeps_up"] is False and out["uploads_per_tick"] > 10
    assert out["backlog_final"] > out["backlog_mean"] > 10 * out["k"]
    assert main(["safl", "schedule", "--delays", "official-100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["buffer_keeps_up"] is True and out["uploads_per_tick"] < 10
    assert main(["safl", "schedule", "--clients", "100", "--ratio", "20"]) == 0
    text = capsys.readouterr().out
    assert "uploads per tick vs K = 10: the buffer CANNOT keep up" in text and "backlog" in text


def test_sync_round_cost_and_streams(monkeypatch):
    """Synchronous mode: one engine call per round with its K drawn clients, random streams keyed
    on the round index, and cost_time grows by the largest step count of the K (spec §1)."""
    import fedlib.safl.simulator as simmod
    from fedlib.safl.schedule import SyncClock

    calls, real = [], simmod.train_clients

    def spy(model, state, ds, tasks, **kw):
        res = real(model, state, ds, tasks, **kw)
        calls.append((kw["round"], [t.client_id for t in tasks], max(int(r.steps) for r in res)))
        return res

    monkeypatch.setattr(simmod, "train_clients", spy)
    delays = [1, 2, 3, 4, 2]
    sim = SAFLSimulator(nn.Linear(11, 2), dataset(), [torch.arange(i, 180, 5 + i) for i in range(5)],
                        FedSGD(), SimSettings(k=2, rounds=4, mode="sync"), delays=delays,
                        local=LocalConfig(lr=0.05, batch_size=10, epochs=1))
    assert isinstance(sim.clock, SyncClock) and sim.mode == "sync"
    rows, _ = run_all(sim)
    draws = [SyncClock(delays, 2).draw(r) for r in range(4)]
    assert [(c[0], c[1]) for c in calls] == list(enumerate(draws))
    costs = [r["cost_time"] for r in rows]
    assert costs == [float(sum(c[2] for c in calls[: i + 1])) for i in range(4)]
    assert len({c[2] for c in calls}) > 1 or len(set(map(tuple, draws))) == 1  # parts differ in size
    assert sim.summary()["ticks"] == rows[-1]["tick"] + 1 and sim.summary()["local_trainings"] == 8
