"""The store keys on the data, reads and writes whole results, and never sticks on a checkpoint
(issue 19)."""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import os
import shutil
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
import torch

from fedlib.data.fingerprint import dataset_fingerprint
from fedlib.data.paths import data_root
from fedlib.experiments import CorruptResultWarning, ResultStore, RunConfig, run
from fedlib.experiments.results.store_files import sha256_hex as _sha256

ADULT = "fedavg-adult-gender-smoke"


def small_adult():
    return RunConfig.from_preset(ADULT).with_overrides(["rounds=2"])


def toy(*sets):
    return RunConfig.from_preset("toy-smoke").with_overrides(["rounds=6", "checkpoint_every=2", *sets])


# ------------------------------------------------------------------ the data fingerprint
def test_fingerprint_is_content_not_location(tmp_path):
    real = data_root() / "adult"
    if not real.is_dir():
        pytest.skip("UCI Adult not under FEDLIB_DATA")
    shutil.copytree(real, tmp_path / "copy" / "adult")
    a = dataset_fingerprint("adult")
    b = dataset_fingerprint("adult", tmp_path / "copy", cache_dir=tmp_path / "cache")
    assert a == b and a["files"] >= 2 and a["bytes"] > 1_000_000
    assert json.loads((tmp_path / "cache" / "fingerprints.json").read_text())  # digests cached
    with open(tmp_path / "copy" / "adult" / "adult.data", "ab") as f:
        f.write(b"\n")
    c = dataset_fingerprint("adult", tmp_path / "copy", cache_dir=tmp_path / "cache")
    assert c["sha256"] != a["sha256"] and c["bytes"] == a["bytes"] + 1
    assert dataset_fingerprint("adult", tmp_path / "empty") is None


def test_a_run_on_changed_data_is_not_served_for_the_real_data(tmp_path, monkeypatch):
    real = data_root() / "adult"
    if not real.is_dir():
        pytest.skip("UCI Adult not under FEDLIB_DATA")
    copy = tmp_path / "data"
    shutil.copytree(real, copy / "adult")
    lines = (copy / "adult" / "adult.data").read_bytes().rstrip(b"\n").split(b"\n")
    with open(copy / "adult" / "adult.data", "ab") as f:  # one more (duplicated) training row
        f.write(b"\n" + lines[-1] + b"\n")
    store = ResultStore(tmp_path / "results")
    cfg = small_adult()
    real_hash = cfg.config_hash()
    monkeypatch.setenv("FEDLIB_DATA", str(copy))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    on_copy = run(cfg, store=store, progress=False)
    assert on_copy.config_hash != real_hash
    stored = json.loads((on_copy.path / "config.json").read_text())
    assert stored["data_fingerprint"] == dataset_fingerprint("adult")
    monkeypatch.undo()
    on_real = run(cfg, store=store, progress=False)
    assert not on_real.cached and on_real.config_hash == real_hash
    assert sorted(store.hashes()) == sorted([real_hash, on_copy.config_hash])
    assert run(cfg, store=store, progress=False).cached


# ------------------------------------------------------------------ atomic reads and writes
def _token_frames(token: str, n: int):
    hist = pd.DataFrame({"round": range(1, n + 1), "token": [token] * n})
    clients = pd.DataFrame({"client": [0, 1], "token": [token] * 2})
    return hist, clients


def _writer(root: str, cfg_dict: dict, count: int, deadline: float) -> None:
    """Rewrite one hash ``count`` times; every file of write i carries token i."""
    store = ResultStore(root)
    cfg = RunConfig.from_dict(cfg_dict)
    for i in range(count):
        if time.time() > deadline:
            return
        token = f"{os.getpid()}-{i}"
        hist, clients = _token_frames(token, 50 + i % 7)
        store.write_result(cfg, hist, clients, {"token": token})


def _reader(root: str, h: str, count: int, deadline: float, out) -> None:
    """Read the hash ``count`` times; report (reads that saw a result, mixed results)."""
    store = ResultStore(root)
    seen = mixed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn read reported as corrupt is a failure too
        for _ in range(count):
            if time.time() > deadline:
                break
            res = store.get(h)
            if res is None:
                continue
            seen += 1
            tokens = set(res.history["token"]) | set(res.clients["token"]) | {res.summary["token"]}
            mixed += len(tokens) != 1
    out.put((seen, mixed))


def test_a_reader_never_sees_a_mixed_result_while_two_writers_rewrite_it(tmp_path):
    root = str(tmp_path)
    cfg = toy()
    h = cfg.config_hash()
    ResultStore(root).write_result(cfg, *_token_frames("first", 50), {"token": "first"})
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    deadline = time.time() + 90
    procs = [ctx.Process(target=_writer, args=(root, cfg.to_dict(), 80, deadline)) for _ in range(2)]
    procs.append(ctx.Process(target=_reader, args=(root, h, 400, deadline, out)))
    for p in procs:
        p.start()
    seen, mixed = out.get(timeout=150)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert mixed == 0
    assert seen > 0  # the reader did read results (not only misses)
    final = ResultStore(root).get(h)
    assert final is not None and len(set(final.history["token"])) == 1  # one complete result
    assert [p.name for p in tmp_path.iterdir()] == [h]  # no temp or aside folder left


# ------------------------------------------------------------------ checkpoints
def _interrupted(store, cfg, at):
    """A run of ``cfg`` that crashed in round ``at`` (a checkpoint before it)."""
    from fedlib.experiments.config.registry import get_algorithm

    class Crash:
        def __init__(self, c, options):
            self.inner = get_algorithm(c.paradigm, c.algorithm).trainer(c, options)
            self.n = 0

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def run_round(self):
            self.n += 1
            if self.n == at:
                raise RuntimeError("crash")
            return self.inner.run_round()

    with pytest.raises(RuntimeError):
        run(cfg, store=store, progress=False, trainer=lambda c, options: Crash(c, options))
    assert store.checkpoint_path(cfg).exists()


def _rewrite(store, cfg, edit):
    """Load the checkpoint's state, ``edit`` it, and save it back (with a valid checksum)."""
    state = store.load_checkpoint(cfg)
    edit(state)
    store.save_checkpoint(cfg, state, round=2, total=6)


@pytest.mark.parametrize("case", ["no-trainer", "round-past-total", "round-vs-history",
                                  "bad-trainer-state", "edited-bytes", "old-format"])
def test_a_stuck_checkpoint_is_discarded_and_the_run_restarts(tmp_path, case):
    store = ResultStore(tmp_path)
    cfg = toy()
    clean = run(cfg, store=ResultStore(tmp_path / "clean"), progress=False)
    _interrupted(store, cfg, at=4)
    ck = store.checkpoint_path(cfg)
    if case == "no-trainer":
        _rewrite(store, cfg, lambda s: s.pop("trainer"))
    elif case == "round-past-total":
        _rewrite(store, cfg, lambda s: s.update(round=20))
    elif case == "round-vs-history":
        _rewrite(store, cfg, lambda s: s["history"].pop())
    elif case == "bad-trainer-state":
        _rewrite(store, cfg, lambda s: s.update(trainer={"nonsense": torch.zeros(1)}))
    elif case == "edited-bytes":  # an edit inside the payload without fixing the checksum
        outer = torch.load(ck, weights_only=True)
        outer["payload"][-20] ^= 1
        buf = io.BytesIO()
        torch.save(outer, buf)
        ck.write_bytes(buf.getvalue())
    else:  # written by fedlib before checksums: the state itself, no container
        state = store.load_checkpoint(cfg)
        torch.save(state, ck)
    with pytest.warns(CorruptResultWarning, match="starts again from round 0"):
        res = run(cfg, store=store, progress=False)
    assert res.summary["resumed_from_round"] == 0
    pd.testing.assert_frame_equal(res.history.drop(columns="wall_time"),
                                  clean.history.drop(columns="wall_time"), check_exact=True)
    assert run(cfg, store=store, progress=False).cached  # and it is not stuck afterwards


def test_checkpoint_carries_a_checksum_and_resume_is_exact(tmp_path):
    store = ResultStore(tmp_path)
    cfg = toy()
    clean = run(cfg, store=ResultStore(tmp_path / "clean"), progress=False)
    _interrupted(store, cfg, at=4)
    outer = torch.load(store.checkpoint_path(cfg), weights_only=True)
    assert outer["sha256"] == _sha256(outer["payload"].numpy().tobytes())
    # a write killed half-way leaves a temp file in the folder: it goes when the run finishes
    stale = store.path(cfg) / ".checkpoint.pt.abc123.tmp"
    stale.write_bytes(b"\0" * 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = run(cfg, store=store, progress=False)
    assert res.summary["resumed_from_round"] == 2
    pd.testing.assert_frame_equal(res.history.drop(columns="wall_time"),
                                  clean.history.drop(columns="wall_time"), check_exact=True)
    assert sorted(p.name for p in store.path(cfg).iterdir()) == \
        ["DONE", "clients.csv", "config.json", "history.csv", "summary.json"]
    assert [p.name for p in Path(tmp_path).iterdir() if p.name.startswith(".")] == []
