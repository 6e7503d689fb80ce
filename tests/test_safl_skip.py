"""Skipping trainings no aggregation reads (issue 29 item 4): the clock replay that finds them
(``schedule.trainings_read``), and a skipping simulator against one that trains everything —
identical histories, global models, summaries and resumes; the engine trains exactly the
trainings read; no skipping where it would not be exact."""

from __future__ import annotations

import pytest
import torch

import fedlib.safl.simulator
from fedlib.core.errors import FedlibError
from fedlib.core.utils import atomic_torch_save, safe_torch_load
from fedlib.experiments.config import RunConfig
from fedlib.experiments.running.runner import build_trainer
from fedlib.safl.algorithms import build_simulator, prepare_task
from fedlib.safl.baselines import BASELINES
from fedlib.safl.delays import make_delays
from fedlib.safl.runstats import WORK
from fedlib.safl.schedule import Clock, Scenario, trainings_read
from fedlib.safl.simulator import SAFLSimulator, SimSettings

TINY = ["safl.clients=8", "safl.delays=uniform", "safl.upload=overwrite", "safl.k=3", "safl.ratio=4", "rounds=8",
        "data.max_train=1200", "data.max_test=300", "local.epochs=1", "checkpoint_every=0", "backend=loop"]


@pytest.fixture(autouse=True)
def _data(data_root, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(data_root))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def tiny(alg="fedavg", *extra):
    return RunConfig.from_preset(f"{alg}-adult-gender").with_overrides(TINY + list(extra))


def make(alg="fedavg", *extra, skip=True):
    cfg = tiny(alg, *extra)
    return build_simulator(cfg, BASELINES[alg](dict(cfg.options or {})), skip_unread=skip)


def rows(sim, n=None):
    out = [sim.run_round() for _ in range(sim.total_rounds - sim.round if n is None else n)]
    for r in out:
        r.pop("wall_time")
    return out


def untimed(summary):
    """The summary without host times and the work counts (both differ with skip_unread)."""
    return {k: v for k, v in summary.items()
            if not k.startswith("time_") and not k.endswith("_share") and k not in WORK}


def same_state(a, b):
    return set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a)


def run_clock(clock, rounds):
    while clock.round < rounds:
        clock.begin_tick()
        if clock.ready():
            clock.aggregate()
        clock.end_tick()
    return clock


# ------------------------------------------------------------------------------------ the replay
@pytest.mark.parametrize("rounds, unread, started", [(50, 146, 590), (400, 607, 4103)])
def test_trainings_read_official_100(rounds, unread, started):
    clock = Clock(make_delays("official-100", 100), 10, "overwrite")
    before = clock.state_dict()
    read = trainings_read(clock, rounds)
    assert clock.state_dict() == before  # a replay of a copy
    assert run_clock(clock, rounds).n_trainings - len(read) == unread
    assert clock.n_trainings == started


def test_trainings_read_is_what_aggregations_read():
    for upload, scenario in [("overwrite", "none"), ("snapshot", "none"), ("overwrite", "random-time"),
                             ("overwrite", Scenario("dropout", at_round=5)),
                             ("snapshot", Scenario("speed-change", change_round=4, new_ratio=9))]:
        clock = Clock(make_delays("uniform", 12, 6, 1), 3, upload, scenario, seed=1)
        run_clock(clock, 4)  # from the middle of a run, as after a resume
        read = trainings_read(clock, 15)
        want, started = set(), set()
        while clock.round < 15:
            ev = clock.begin_tick()
            started |= {t.id for t in ev.starts}
            if clock.ready():
                want |= {t.id for t in clock.aggregate().content}
            clock.end_tick()
        assert read == want, (upload, scenario)
        assert started - read, (upload, scenario)  # something to skip
        if upload == "snapshot":  # unread: only what is still in flight or buffered at the end
            assert started - read <= {t.id for t in clock.inflight.values()} | {t.id for t in clock.buffer}
    assert trainings_read(Clock([1, 50], 2), 5, max_ticks=10) is None  # beyond the tick limit


# ---------------------------------------------------------------------- skipping vs training all
@pytest.mark.parametrize("alg", ["fedavg", "fedsgd", "cfl"])
def test_skipping_changes_nothing(alg):
    a, b = make(alg), make(alg, skip=False)
    assert a._read is not None and b._read is None
    ra, rb = rows(a), rows(b)
    assert ra == rb
    assert same_state(a.global_state, b.global_state)
    assert untimed(a.summary()) == untimed(b.summary())
    assert a.strategy.state_dict().keys() == b.strategy.state_dict().keys()
    assert a.trainings_skipped > 0 and b.trainings_skipped == 0
    assert set(a.results) <= set(b.results)
    # the work counts: every training started is trained or skipped; skipping moves steps, adds none
    sa, sb = a.summary(), b.summary()
    assert sa["trainings_skipped"] == a.trainings_skipped and sb["trainings_skipped"] == sb["steps_skipped"] == 0
    assert sa["trainings_trained"] + sa["trainings_skipped"] == sb["trainings_trained"] == b.clock.n_trainings
    assert sa["steps_trained"] + sa["steps_skipped"] == sb["steps_trained"] > sa["steps_trained"] > 0


def test_engine_trains_exactly_the_trainings_read(monkeypatch):
    calls = []
    real = fedlib.safl.simulator.train_clients

    def spy(model, starts, dataset, tasks, **kw):
        calls.append(len(tasks))
        return real(model, starts, dataset, tasks, **kw)

    monkeypatch.setattr(fedlib.safl.simulator, "train_clients", spy)
    sim = make("fedsgd")
    read = trainings_read(Clock(sim.delays, sim.k, "overwrite"), sim.total_rounds)
    rows(sim)
    assert sum(calls) == len(read) == sim.clock.n_trainings - sim.trainings_skipped
    assert all(n > 0 for n in calls) and sim.trainings_skipped > 0


@pytest.mark.parametrize("first_skip, then_skip", [(True, True), (True, False), (False, True)])
def test_resume_with_and_without_skipping(first_skip, then_skip, tmp_path):
    want = rows(make("fedsgd", skip=False))
    part = make("fedsgd", skip=first_skip)
    first = rows(part, 3)
    atomic_torch_save(part.state_dict(), tmp_path / "ck.pt")
    resumed = make("fedsgd", skip=then_skip)
    resumed.load_state_dict(safe_torch_load(tmp_path / "ck.pt"))
    assert first + rows(resumed) == want
    if first_skip == then_skip:  # the work counts carry across the checkpoint
        whole = make("fedsgd", skip=then_skip)
        rows(whole)
        assert {k: resumed.summary()[k] for k in WORK} == {k: whole.summary()[k] for k in WORK}


def test_a_checkpoint_without_work_counts_resumes_with_them_unknown(tmp_path):
    part = make("fedsgd")
    rows(part, 3)
    state = part.state_dict()
    del state["work"]  # written before the counts existed
    resumed = make("fedsgd")
    resumed.load_state_dict(state)
    rows(resumed)
    assert all(resumed.summary()[k] is None for k in WORK)


def test_resume_refuses_a_checkpoint_missing_a_result_it_aggregates(tmp_path):
    part = make("fedsgd", "rounds=3")
    rows(part)
    state = part.state_dict()
    missing = part.clock.live_ids() - set(part.results)
    longer = make("fedsgd", "rounds=40")
    need = trainings_read(part.clock, 40)
    assert missing & need  # in flight at the end of a 3-round run (skipped), read in a 40-round one
    with pytest.raises(FedlibError, match="lacks the results"):
        longer.load_state_dict(state)


def test_dropout_scenario_skips_exactly():
    cfg = tiny("fedavg", "rounds=10")
    ds, parts, _, test, model = prepare_task(cfg)

    def sim(skip):
        settings = SimSettings(k=3, rounds=10, upload="overwrite", backend="loop", skip_unread=skip,
                               scenario=Scenario("dropout", at_round=4, fraction=0.5))
        return SAFLSimulator(model, ds, parts, BASELINES["fedavg"](), settings, delays=make_delays("uniform", 8, 4, 0),
                             local=cfg.local, test_indices=test)

    a, b = sim(True), sim(False)
    assert rows(a) == rows(b) and same_state(a.global_state, b.global_state) and a.trainings_skipped > 0


@pytest.mark.parametrize("alg, extra", [("fedqs-avg", []), ("fedat", []), ("m-step", []), ("defedavg", []),
                                        ("fedavg", ["backend=stacked"]), ("fedavg", ["backend=auto"]),
                                        ("fedavg", ["safl.mode=sync"])])
def test_no_skipping_where_it_is_not_exact(alg, extra):
    sim = build_trainer(tiny(alg, *extra))
    assert sim._read is None  # fedqs/fedat/m-step: strategy; defedavg: select; stacked (auto on the FCN); sync
