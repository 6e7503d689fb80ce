"""Sweeps: local process pool and Ray give the same results; idempotent; failures reported."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from fedlib.cli import main
from fedlib.core.errors import FedlibError
from fedlib.experiments import ResultStore, RunConfig
from fedlib.experiments.running.sweep import expand, grid, parse_grid, sweep


def base():
    return RunConfig.from_preset("toy-smoke").with_overrides(["rounds=8"])


def good_cells():
    return grid(base(), {"safl.k": [2, 4]})  # x seeds [0, 1] = 4 cells


def history(store, cfg):
    res = store.get(cfg)
    assert res is not None, f"cell {cfg.short_hash} not stored"
    return res.history.drop(columns=["wall_time"])


@pytest.fixture(scope="module")
def local_store(tmp_path_factory):
    """One local sweep (2 worker processes): 4 good cells + 1 failing cell."""
    store = ResultStore(tmp_path_factory.mktemp("local"))
    failing = base().with_overrides(["options.fail_at_round=3"])
    table = sweep(good_cells() + [failing], seeds=[0, 1], backend="local",
                  workers=2, store=store, progress=False)
    return store, table, failing


def test_grid_and_expand():
    cfgs = grid(base(), parse_grid(["safl.k=2,4", "options.dim=3,5"]))
    assert [(c.safl.k, c.options["dim"]) for c in cfgs] == [(2, 3), (2, 5), (4, 3), (4, 5)]
    cells = expand(cfgs + cfgs[:1], seeds=[0, 1])   # duplicates removed
    assert len(cells) == 8 and {c.seed for c in cells} == {0, 1}
    assert len({c.config_hash() for c in cells}) == 8
    with pytest.raises(FedlibError, match="unknown sweep backend 'dask'"):
        sweep(cfgs, backend="dask")
    with pytest.raises(FedlibError, match="did you mean safl.k"):
        grid(base(), {"safl.kk": [1]})


def test_local_sweep_runs_cells_and_reports_failures(local_store):
    store, table, failing = local_store
    assert len(table) == 6
    failed = table[table["status"] == "failed"]
    assert len(failed) == 2  # the failing config under both seeds; the other cells went on
    assert failed["error"].str.contains("deliberate failure at round 3").all()
    assert store.status(failing)[0] == "failed"  # and `fedlib results list` says why
    assert (table[table["status"] != "failed"]["status"] == "done").all()
    for cfg in expand(good_cells(), seeds=[0, 1]):
        assert store.has(cfg)
    # each cell equals the same run done in this process (seeds never depend on the worker)
    from fedlib.experiments import run

    one = expand(good_cells(), seeds=[1])[0]
    ref = run(one, store=ResultStore(store.root.parent / "ref-inproc"), progress=False)
    pd.testing.assert_frame_equal(history(store, one), ref.history.drop(columns=["wall_time"]),
                                  check_exact=True)


def test_sweep_is_idempotent(local_store, capsys):
    store, _, _ = local_store
    table = sweep(good_cells(), seeds=[0, 1], store=store, progress=False)
    assert list(table["status"]) == ["cached"] * 4
    # the CLI: same grid, all cached, no pool needed; exit 0 without failures
    rc = main(["sweep", "--preset", "toy-smoke", "--set", "rounds=8", "--grid", "safl.k=2,4",
               "--seeds", "0", "1", "--results", str(store.root), "--quiet", "--json"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in rows] == ["cached"] * 4


@pytest.mark.ray
def test_ray_sweep_equals_local_sweep(local_store, tmp_path):
    ray = pytest.importorskip("ray")
    store, _, _ = local_store
    ray_store = ResultStore(tmp_path / "ray")
    try:
        table = sweep(good_cells(), seeds=[0, 1], backend="ray", workers=2, store=ray_store,
                      progress=False)
    finally:
        ray.shutdown()
    assert list(table["status"]) == ["done"] * 4, table.get("error")
    for cfg in expand(good_cells(), seeds=[0, 1]):
        pd.testing.assert_frame_equal(history(ray_store, cfg), history(store, cfg),
                                      check_exact=True)
        assert ray_store.get(cfg).clients.equals(store.get(cfg).clients)


def test_ray_missing_gives_a_clear_error(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *a, **k):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(FedlibError, match=r"(?s)needs Ray.*pip install 'fedlib\[ray\]'"):
        sweep([base()], backend="ray", store=ResultStore(tmp_path), progress=False)


DRIVER = '''
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing as mp

from fedlib.experiments.running.sweep import _init_worker


def work(path):
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)


if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                               initargs=(1, os.getpid()))
    pool.submit(work, sys.argv[1])
    while not (os.path.exists(sys.argv[1]) and open(sys.argv[1]).read()):
        time.sleep(0.05)
    os.kill(os.getpid(), 9)  # the driver dies without any cleanup, as a killed `fedlib reproduce` does
'''


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_pool_workers_end_with_a_killed_driver(tmp_path):
    """A worker busy with a cell stops when the process that started it is killed (it used to train on,
    racing the next run for the same results)."""
    import subprocess
    import time

    script, marker = tmp_path / "driver.py", tmp_path / "worker.pid"
    script.write_text(DRIVER)
    subprocess.run([sys.executable, str(script), str(marker)], cwd=tmp_path, timeout=120)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), f"pool worker {pid} outlived its killed driver"
