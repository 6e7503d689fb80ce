"""The semi-asynchronous clock (spec fedqs.md §1) without training: hand-computed schedules,
upload semantics, dynamic scenarios, the official-100 replay figures, delay validation, CLI."""

from __future__ import annotations

import json

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.safl.delays import OFFICIAL_100, make_delays, validate_delays
from fedlib.safl.schedule import Clock, Scenario, replay


def run_clock(delays, k, rounds, scenario="none", seed=0, upload="snapshot"):
    """Drive a Clock; return (per-tick events, aggregations, clock)."""
    clock = Clock(delays, k, upload, scenario, seed)
    ticks, aggs = [], []
    while clock.round < rounds:
        ev = clock.begin_tick()
        ticks.append(ev)
        if clock.ready():
            aggs.append(clock.aggregate())
        clock.end_tick()
    return ticks, aggs, clock


def test_two_clients_by_hand():
    # delays [1, 2], K = 1:
    # t0: c0 starts (v0, uploads t1), c1 starts (v0, uploads t2)
    # t1: c0 uploads -> round 0 aggregates it (staleness 0)
    # t2: c0 restarts from v1; c1 uploads -> round 1 (staleness 1 - 0 = 1)
    # t3: c1 restarts from v2; c0 uploads (trained from v1) -> round 2 (staleness 2 - 1 = 1)
    ticks, aggs, clock = run_clock([1, 2], 1, 3)
    assert [[(t.client, t.start, t.upload, t.version) for t in ev.starts] for ev in ticks] == [
        [(0, 0, 1, 0), (1, 0, 2, 0)], [], [(0, 2, 3, 1)], [(1, 3, 5, 2)]]
    assert [[t.client for t in ev.uploads] for ev in ticks] == [[], [0], [1], [0]]
    assert [(a.round, a.tick, [t.client for t in a.uploaded]) for a in aggs] == [(0, 1, [0]), (1, 2, [1]), (2, 3, [0])]
    assert [a.round - a.uploaded[0].version for a in aggs] == [0, 1, 1]
    assert clock.tick == 4 and clock.n_trainings == 4 and clock.buffer == []


def test_overwrite_semantics_by_hand():
    # delays [1, 3], K = 2. Training ids in start order: t0: c0 #0, c1 #1; t2: c0 #2; t4: c0 #3, c1 #4.
    # t3: buffer [c0#0, c0#2, c1#1] -> round 0 takes c0#0, c0#2. Under overwrite both entries hold
    #     c0's latest training (#2, started t2 <= 3).
    # t5: buffer [c1#1, c0#3] -> round 1. c1#1 was trained from v0 (staleness 1) but c1 restarted at
    #     t4 from v1, so its file holds #4 (effective staleness 0).
    clock = Clock([1, 3], 2, "overwrite")
    aggs = []
    while clock.round < 2:
        clock.begin_tick()
        if clock.ready():
            aggs.append(clock.aggregate())
        clock.end_tick()
    assert [(a.round, a.tick) for a in aggs] == [(0, 3), (1, 5)]
    assert [[t.id for t in a.uploaded] for a in aggs] == [[0, 2], [1, 3]]
    assert [[t.id for t in a.content] for a in aggs] == [[2, 2], [4, 3]]
    assert [[a.round - t.version for t in a.uploaded] for a in aggs] == [[0, 0], [1, 0]]
    assert [[a.round - t.version for t in a.content] for a in aggs] == [[0, 0], [0, 0]]
    r = replay([1, 3], 2, 2)
    assert r["ticks"] == 6 and r["local_trainings"] == 5
    assert r["staleness_snapshot_mean"] == pytest.approx(0.25) and r["staleness_snapshot_max"] == 1
    assert r["staleness_overwrite_mean"] == 0 and r["overwrite_replaced"] == pytest.approx(0.5)
    # the official code names files by the round that produced them: +1 for non-initial versions
    assert r["staleness_snapshot_code_mean"] == pytest.approx(0.25 + 1 / 4)


def test_at_most_one_aggregation_per_tick():
    # four clients with delay 1 all upload at t1 (and again every 2 ticks) but K = 1: the buffer
    # is drained one round per tick, so the oldest entries grow stale: 0, 1, 2
    _, aggs, clock = run_clock([1, 1, 1, 1], 1, 3)
    assert [a.tick for a in aggs] == [1, 2, 3]
    assert [(a.uploaded[0].client, a.round - a.uploaded[0].version) for a in aggs] == [(0, 0), (1, 1), (2, 2)]
    assert clock.tick == 4 and len(clock.buffer) == 8 - 3  # uploads at t1 and t3, 3 aggregated
    assert len({t.id for t in clock.buffer}) == len(clock.buffer)


def test_strategy_selection_any_subset():
    clock = Clock([1, 1, 1], 2)
    clock.begin_tick()
    clock.end_tick()
    clock.begin_tick()  # 3 uploads at t1
    agg = clock.aggregate([2, 0])
    assert [t.client for t in agg.uploaded] == [2, 0] and [t.client for t in clock.buffer] == [1]
    with pytest.raises(FedlibError, match="distinct"):
        clock.aggregate([0, 0])


def test_speed_change_rescales_at_change_round():
    sc = Scenario("speed-change", change_round=1, new_ratio=100)
    clock = Clock([1, 25, 50], 1, scenario=sc)
    assert clock.delays_at(0) == [1, 25, 50]
    assert clock.delays_at(1) == [1, 1 + round(24 * 99 / 49), 100]
    ticks, aggs, _ = run_clock([1, 25, 50], 1, 2, scenario=sc)
    # c0 (delay 1) restarts at t2 after round 0 -> still delay 1 (it stays the fastest)
    assert all(t.upload - t.start == 1 for ev in ticks for t in ev.starts if t.client == 0)
    late = [t for ev in ticks for t in ev.starts if t.version >= 1]
    assert late and all(t.upload - t.start == clock_delay for t, clock_delay in
                        ((t, [1, 49, 100][t.client]) for t in late))


def test_random_time_per_training_seeded():
    a = replay(make_delays("uniform", 20, 50, 0), 5, 30, scenario="random-time", seed=1, detail=True)
    b = replay(make_delays("uniform", 20, 50, 0), 5, 30, scenario="random-time", seed=1, detail=True)
    c = replay(make_delays("uniform", 20, 50, 0), 5, 30, scenario="random-time", seed=2, detail=True)
    assert a == b and a["agg_ticks"] != c["agg_ticks"]
    clock = Clock([3] * 20, 5, scenario=Scenario("random-time", max_delay=7), seed=1)
    ds = {clock.delay(c, t) for c in range(20) for t in range(50)}
    assert ds <= set(range(1, 8)) and len(ds) == 7


def test_dropout_removes_half_for_good():
    ticks, aggs, clock = run_clock([1] * 8, 2, 6, scenario=Scenario("dropout", at_round=2, fraction=0.5), seed=3)
    gone = next(a.left for a in aggs if a.left)
    assert len(gone) == 4 and sorted(clock.active_clients() + gone) == list(range(8))
    after = next(i for i, ev in enumerate(ticks) if any(a.left for a in aggs if a.tick == ev.tick))
    assert not any(t.client in gone for ev in ticks[after + 1:] for t in ev.starts + ev.uploads)
    with pytest.raises(FedlibError, match="fewer than K"):
        Clock([1] * 8, 5, scenario=Scenario("dropout"))


def test_official_100_replay_matches_spec():
    # spec §1: ~446 ticks, ~4000 local trainings, staleness ~9.8 (snapshot) vs ~2.5 (overwrite),
    # ~77% of aggregated entries are really the client's next update
    r = replay(make_delays("official-100", 100), 10, 400)
    assert abs(r["ticks"] - 446) <= 5
    assert 3900 <= r["local_trainings"] <= 4200 and r["aggregated"] == 4000
    assert r["staleness_snapshot_mean"] == pytest.approx(9.8, abs=0.15)
    assert r["staleness_overwrite_mean"] == pytest.approx(2.5, abs=0.15)
    assert r["overwrite_replaced"] == pytest.approx(0.77, abs=0.02)


def test_clock_state_roundtrip_resumes_exactly():
    delays = make_delays("uniform", 30, 10, 4)
    full = replay(delays, 4, 40, detail=True)
    clock = Clock(delays, 4, "overwrite")
    while clock.round < 15:
        clock.begin_tick()
        if clock.ready():
            clock.aggregate()
        clock.end_tick()
    clone = Clock(delays, 4, "overwrite")
    clone.load_state_dict(json.loads(json.dumps(clock.state_dict())))
    ticks = []
    while clone.round < 40:
        clone.begin_tick()
        if clone.ready():
            clone.aggregate()
            ticks.append(clone.tick)
        clone.end_tick()
    assert ticks == full["agg_ticks"][15:]


def test_delay_profiles_and_validation():
    assert make_delays("official-100", 100).tolist() == list(OFFICIAL_100) and len(OFFICIAL_100) == 100
    for n, ratio in ((50, 20), (200, 100), (100, 50)):
        d = make_delays("uniform", n, ratio, seed=0)
        assert d.shape == (n,) and int(d.min()) >= 1 and int(d.max()) <= ratio
        assert torch.equal(d, make_delays("uniform", n, ratio, seed=0))
    assert not torch.equal(make_delays("uniform", 100, 50, 0), make_delays("uniform", 100, 50, 1))
    with pytest.raises(FedlibError, match=">= 1 tick"):
        validate_delays([1, 0, 3], 3)
    with pytest.raises(FedlibError, match="one delay per client"):
        validate_delays([1, 2], 3)
    with pytest.raises(FedlibError, match="official-100"):
        make_delays("official-100", 50)
    with pytest.raises(FedlibError, match="unknown delay profile"):
        make_delays("fast", 10)
    with pytest.raises(FedlibError, match="safl.k=5 updates per aggregation exceeds safl.clients=3"):
        Clock([1, 2, 3], 5)
    with pytest.raises(FedlibError, match="unknown SAFL scenario"):
        Scenario("earthquake")


def test_schedule_cli_json(capsys):
    from fedlib.cli import main

    assert main(["safl", "schedule", "--delays", "official-100", "--clients", "100", "--k", "10",
                 "--rounds", "400", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ticks"] == replay(make_delays("official-100", 100), 10, 400)["ticks"]
    assert out["snapshot"]["staleness_mean"] > 3 * out["overwrite"]["staleness_mean"]
    assert main(["safl", "schedule", "--delays", "official-100", "--clients", "50"]) == 2


def test_sync_clock_rounds_by_hand():
    """SyncClock (spec §1, Table 1): K clients drawn from stream (seed, "safl-sync", round), all
    start at the round's first tick from version = round, aggregated together at start + max r;
    the next round starts one tick later."""
    from fedlib.core.utils import generator
    from fedlib.safl.schedule import MODES, SyncClock, make_clock

    delays, k, seed = [1, 2, 3, 4, 2], 2, 7
    clock = make_clock("sync", delays, k, "overwrite", "none", seed)
    assert isinstance(clock, SyncClock) and isinstance(make_clock("semi-async", delays, k), Clock)
    assert MODES == ("semi-async", "sync") and clock.name == "sync" and not clock.buffered
    start, seen = 0, set()
    for r in range(6):
        want = sorted(torch.randperm(5, generator=generator(seed, "safl-sync", r))[:k].tolist())
        assert clock.draw(r) == want and clock.tick == start and clock.stream_round(start) == r
        ev = clock.begin_tick()
        assert [t.to_list() for t in ev.starts] == \
            [[r * k + j, c, start, start + delays[c], r] for j, c in enumerate(want)]
        assert ev.uploads == ev.starts and clock.ready() and clock.n_trainings == (r + 1) * k
        assert clock.live_ids() == {r * k, r * k + 1} and not clock.inflight
        agg = clock.aggregate()
        end = start + max(delays[c] for c in want)  # the round lasts as long as its slowest client
        assert (agg.round, agg.tick, agg.uploaded, agg.content) == (r, end, ev.starts, ev.starts)
        assert clock.round == r + 1 and clock.buffer == [] and clock.live_ids() == set()
        clock.end_tick()
        start = end + 1
        seen.add(tuple(want))
    assert len(seen) > 1  # the draw changes with the round
    assert clock.tick == start and clock.current_delays() == delays


def test_sync_clock_checkpoint_and_errors():
    from fedlib.safl.schedule import SyncClock, make_clock

    clock = SyncClock([1, 3, 2], 2, seed=1)
    for _ in range(3):
        clock.begin_tick(), clock.aggregate(), clock.end_tick()  # noqa: B018
    # the simulator checkpoint (format 1): tick in "sync_tick", the idle semi-async clock in "clock"
    ck = clock.checkpoint()
    assert ck["sync_tick"] == clock.tick and ck["clock"] == Clock([1, 3, 2], 2).state_dict()
    clone = SyncClock([1, 3, 2], 2, seed=1)
    clone.restore({**ck, "round": 3})
    assert clone.state_dict() == clock.state_dict() == {"tick": clock.tick, "round": 3}
    again = SyncClock([1, 3, 2], 2, seed=1)
    again.load_state_dict(json.loads(json.dumps(clock.state_dict())))
    assert [t.to_list() for t in again.begin_tick().starts] == [t.to_list() for t in clone.begin_tick().starts]
    with pytest.raises(FedlibError, match="all its K"):
        again.aggregate([0])
    with pytest.raises(FedlibError, match="semi-asynchronous clock only"):
        SyncClock([1, 2], 1, scenario="dropout")
    with pytest.raises(FedlibError, match="safl.k"):
        SyncClock([1, 2], 3)
    with pytest.raises(FedlibError, match="unknown SAFL mode"):
        make_clock("async", [1, 2], 1)
