"""fedlib.reporting.runs.run_all: one line of runs read vs trained; a recompute batch retrains each run once."""

from fedlib.experiments import RunConfig
from fedlib.reporting.runs import run_all


def test_run_all_prints_one_line_instead_of_a_cached_line_per_run(tmp_path, capsys):
    cfgs = [RunConfig.from_preset("toy-smoke").replace(seed=s) for s in (0, 1)]
    run_all(cfgs[:1], desc=None, store=tmp_path)
    capsys.readouterr()
    results = run_all(cfgs, desc=None, store=tmp_path)
    out, err = capsys.readouterr()
    assert [r.cached for r in results] == [True, False]
    assert "(cached)" not in out + err
    assert "[fedlib] 2 run(s): 1 read from the result store, 1 trained" in out


def test_a_recompute_batch_trains_each_stored_run_once(tmp_path, monkeypatch):
    from fedlib.experiments.running.runner import RECOMPUTE_ENV

    cfg = RunConfig.from_preset("toy-smoke")
    run_all([cfg], desc=None, store=tmp_path / "store", progress=False)
    monkeypatch.setenv(RECOMPUTE_ENV, str(tmp_path / "recomputed.log"))
    first = run_all([cfg], desc=None, store=tmp_path / "store", progress=False)
    second = run_all([cfg], desc=None, store=tmp_path / "store", progress=False)
    assert [first[0].cached, second[0].cached] == [False, True]
    assert (tmp_path / "recomputed.log").read_text().split() == [cfg.config_hash()]
