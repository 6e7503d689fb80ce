"""run(): caching, exact resume after SIGKILL or a crash, integrity of the result store, CLI."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings

import pandas as pd
import pytest
import torch

from fedlib.cli import main
from fedlib.core.errors import FedlibError
from fedlib.experiments import CorruptResultWarning, ResultStore, RunConfig, run
from fedlib.experiments.running.toy import ToyTrainer

torch.set_num_threads(1)


def cfg_(*over):
    return RunConfig.from_preset("toy-smoke").with_overrides(list(over))


def same_history(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Equal in every column but wall time, bit for bit."""
    pd.testing.assert_frame_equal(a.drop(columns=["wall_time"]), b.drop(columns=["wall_time"]),
                                  check_exact=True)


# ------------------------------------------------------------------------ basics
def test_run_writes_a_complete_result_and_reuses_it(tmp_path):
    store = ResultStore(tmp_path)
    cfg = cfg_("rounds=12", "eval_every=3")
    res = run(cfg, store=store, progress=False)
    assert not res.cached and len(res.history) == 12
    assert {"round", "accuracy", "loss", "virtual_time", "wall_time"} <= set(res.history.columns)
    assert res.history["accuracy"].isna().sum() == 8  # evaluated at rounds 3, 6, 9, 12 only
    assert len(res.clients) == 12 * cfg.safl.k and set(res.clients["round"]) == set(range(1, 13))
    s = res.summary
    assert s["config_hash"] == cfg.config_hash() and s["profile"] == "smoke"
    assert s["final_accuracy"] == res.history["accuracy"].iloc[-1]
    assert s["clients_seen"] >= 1  # the trainer's own summary is merged in
    d = tmp_path / cfg.config_hash()
    assert sorted(p.name for p in d.iterdir()) == ["DONE", "clients.csv", "config.json",
                                                    "history.csv", "summary.json"]
    again = run(cfg, store=store, progress=False)
    assert again.cached
    pd.testing.assert_frame_equal(again.history, res.history, check_exact=True)
    pd.testing.assert_frame_equal(again.clients, res.clients, check_exact=True)
    # deterministic: the same config recomputed from scratch gives the same history
    fresh = run(cfg, store=store, progress=False, resume=False)
    assert not fresh.cached
    same_history(fresh.history, res.history)


def test_progress_output_names_profile_and_hash(tmp_path, capsys):
    cfg = cfg_("rounds=3")
    run(cfg, store=ResultStore(tmp_path), progress=True)
    out = capsys.readouterr().out
    assert f"hash={cfg.config_hash()[:12]}" in out and "profile=smoke" in out


class CrashOnce:
    """Wraps the toy trainer; raises in round ``at`` (simulates a crash after a checkpoint)."""

    def __init__(self, at):
        self.at = at

    def __call__(self, cfg, options):
        trainer = ToyTrainer(cfg, options)
        orig, at = trainer.run_round, self.at

        def run_round():
            if trainer.round + 1 == at:
                raise RuntimeError("simulated crash")
            return orig()

        trainer.run_round = run_round
        return trainer


def test_crash_then_resume_gives_the_uninterrupted_history(tmp_path):
    cfg = cfg_("rounds=17", "checkpoint_every=5", "options.global_rng=true")
    ref = run(cfg, store=ResultStore(tmp_path / "ref"), progress=False)
    store = ResultStore(tmp_path / "crash")
    with pytest.raises(RuntimeError, match="simulated crash"):
        run(cfg, store=store, progress=False, trainer=CrashOnce(at=13))
    state, detail = store.status(cfg)
    assert state == "failed" and "round 13: RuntimeError: simulated crash" in detail
    assert store.checkpoint_path(cfg).exists() and not store.has(cfg)
    assert json.loads((store.path(cfg) / "progress.json").read_text())["round"] == 10
    # the global RNGs are perturbed between the runs: the checkpoint must restore them
    torch.rand(5), __import__("random").random()
    res = run(cfg, store=store, progress=False)
    assert res.summary["resumed_from_round"] == 10
    same_history(res.history, ref.history)
    pd.testing.assert_frame_equal(res.clients, ref.clients, check_exact=True)
    assert not store.checkpoint_path(cfg).exists()  # removed once the result is DONE
    assert store.status(cfg) == ("done", "")


def test_sigkill_mid_run_then_same_command_resumes_exactly(tmp_path):
    """The acceptance test of issue 4: kill -9 a CLI run mid-way, run it again, compare."""
    root = tmp_path / "results"
    args = ["--preset", "toy-smoke", "--set", "rounds=40", "--set", "checkpoint_every=4",
            "--set", "options.global_rng=true", "--results", str(root), "--quiet"]
    cmd = [sys.executable, "-m", "fedlib", "run", *args]
    env = dict(os.environ, OMP_NUM_THREADS="1", FEDLIB_TOY_SLEEP="0.05")
    cfg = cfg_("rounds=40", "checkpoint_every=4", "options.global_rng=true")
    progress = root / cfg.config_hash() / "progress.json"

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if json.loads(progress.read_text())["round"] >= 12:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.01)
        assert proc.poll() is None, f"run ended before it could be killed: {proc.stderr.read()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    store = ResultStore(root)
    assert store.status(cfg)[0] == "partial" and not store.has(cfg)

    out = subprocess.run(cmd, env=dict(env, FEDLIB_TOY_SLEEP="0"), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert 12 <= summary["resumed_from_round"] < 40
    assert summary["config_hash"] == cfg.config_hash()

    ref = run(cfg, store=ResultStore(tmp_path / "ref"), progress=False)
    got = store.get(cfg)
    same_history(got.history, ref.history)
    pd.testing.assert_frame_equal(got.clients, ref.clients, check_exact=True)
    assert got.summary["final_accuracy"] == ref.summary["final_accuracy"]


# ------------------------------------------------------------------------ integrity
@pytest.mark.parametrize("damage", ["truncate-history", "edit-clients", "edit-summary",
                                    "delete-done", "garbage-done", "delete-history"])
def test_damaged_result_is_detected_and_recomputed(tmp_path, damage):
    store = ResultStore(tmp_path)
    cfg = cfg_("rounds=6")
    ref = run(cfg, store=store, progress=False)
    d = store.path(cfg)
    if damage == "truncate-history":
        data = (d / "history.csv").read_bytes()
        (d / "history.csv").write_bytes(data[: len(data) // 2])
    elif damage == "edit-clients":
        (d / "clients.csv").write_text((d / "clients.csv").read_text().replace("1", "2", 1))
    elif damage == "edit-summary":
        s = json.loads((d / "summary.json").read_text())
        s["final_accuracy"] = 1.0
        (d / "summary.json").write_text(json.dumps(s))
    elif damage == "delete-done":
        (d / "DONE").unlink()
    elif damage == "garbage-done":
        (d / "DONE").write_bytes(b"\x00\x01")
    elif damage == "delete-history":
        (d / "history.csv").unlink()
    assert not store.has(cfg)
    expected = "partial" if damage == "delete-done" else "corrupt"
    assert store.status(cfg)[0] == expected
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run(cfg, store=store, progress=False)
    if expected == "corrupt":
        assert any(issubclass(w.category, CorruptResultWarning) for w in caught)
    assert not res.cached
    same_history(res.history, ref.history)
    assert store.has(cfg)


def test_corrupt_checkpoint_is_reported_and_run_restarts(tmp_path):
    store = ResultStore(tmp_path)
    cfg = cfg_("rounds=9", "checkpoint_every=3")
    with pytest.raises(RuntimeError):
        run(cfg, store=store, progress=False, trainer=CrashOnce(at=8))
    ck = store.checkpoint_path(cfg)
    ck.write_bytes(ck.read_bytes()[:100])
    with pytest.warns(CorruptResultWarning, match="unreadable"):
        res = run(cfg, store=store, progress=False)
    assert res.summary["resumed_from_round"] == 0 and len(res.history) == 9


class _Evil:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ.get('EVIL_MARK', '/tmp/fedlib-evil')}",))


def test_checkpoints_are_loaded_weights_only(tmp_path, monkeypatch):
    """A results folder from someone else must not be able to run code."""
    mark = tmp_path / "pwned"
    monkeypatch.setenv("EVIL_MARK", str(mark))
    store = ResultStore(tmp_path / "r")
    cfg = cfg_("rounds=4")
    store.path(cfg).mkdir(parents=True)

    def plant(fmt):
        with open(store.checkpoint_path(cfg), "wb") as f:
            payload = {"config_hash": cfg.config_hash(), "x": _Evil()}
            torch.save(payload, f) if fmt == "torch" else pickle.dump(payload, f, protocol=2)

    for fmt in ("torch", "pickle"):
        plant(fmt)
        with pytest.warns(CorruptResultWarning):
            assert store.load_checkpoint(cfg) is None
        assert not mark.exists()
        assert not store.checkpoint_path(cfg).exists()  # discarded: the next run starts over
    # and the run simply starts from round 0
    plant("torch")
    with pytest.warns(CorruptResultWarning):
        assert run(cfg, store=store, progress=False).summary["resumed_from_round"] == 0
    assert not mark.exists()


def test_csv_round_trip_is_exact():
    from fedlib.experiments.results.store import csv_to_frame, frame_to_csv

    g = torch.Generator().manual_seed(0)
    df = pd.DataFrame({"round": [1, 2, 3], "accuracy": [0.1 + 0.2, float("nan"), 1 / 3],
                       "tiny": (torch.rand(3, generator=g, dtype=torch.float64) * 1e-300).tolist(),
                       "type": ["FSBC", "SWBC", None]})
    back = csv_to_frame(frame_to_csv(df))
    pd.testing.assert_frame_equal(back, df, check_exact=True)
    assert csv_to_frame(frame_to_csv(pd.DataFrame())).empty


# ------------------------------------------------------------------------ store API + CLI
def test_store_list_show_rm_and_cli(tmp_path, capsys):
    store = ResultStore(tmp_path)
    a = run(cfg_("rounds=3"), store=store, progress=False)
    b = run(cfg_("rounds=3", "seed=1"), store=store, progress=False)
    table = store.list()
    assert set(table["hash"]) == {a.config_hash[:12], b.config_hash[:12]}
    assert set(table["status"]) == {"done"} and set(table["seed"]) == {0, 1}
    shown = store.show(a.config_hash[:8])
    assert shown["status"] == "done" and shown["summary"]["seed"] == 0
    with pytest.raises(FedlibError, match="no result"):
        store.show("ffffffffffff0")

    assert main(["results", "list", "--results", str(tmp_path)]) == 0
    assert a.config_hash[:12] in capsys.readouterr().out
    assert main(["results", "show", a.config_hash[:10], "--results", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["hash"] == a.config_hash
    assert main(["results", "rm", a.config_hash[:10], "--results", str(tmp_path)]) == 0
    assert store.hashes() == [b.config_hash]
    assert main(["results", "rm", "--all", "--results", str(tmp_path)]) == 0
    assert store.hashes() == []
    assert main(["results", "rm", "--results", str(tmp_path)]) == 2  # neither hash nor --all


def test_cli_run_prints_json_summary_and_rejects_bad_config(tmp_path, capsys):
    args = ["run", "--preset", "toy-smoke", "--set", "rounds=4", "--results", str(tmp_path),
            "--quiet"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rounds"] == 4 and summary["profile"] == "smoke" and not summary["cached"]
    assert len(summary["config_hash"]) == 64
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["cached"]
    assert main(["run", "--preset", "toy-smoke", "--set", "safl.k=11", "--results",
                 str(tmp_path)]) == 2
    assert "safl.k=11 updates per aggregation exceeds safl.clients=10" in capsys.readouterr().err
    assert main(["presets"]) == 0
    assert "toy-smoke" in capsys.readouterr().out


def test_default_store_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "env-root"))
    res = run(cfg_("rounds=2"), progress=False)
    assert res.path.parent == tmp_path / "env-root"


def test_a_factory_returning_no_trainer_is_named(tmp_path):
    class Half:  # run_round only: not a fedlib.core.protocols.Trainer
        def run_round(self):
            return {"round": 1}

    with pytest.raises(TypeError, match=r"lacks the Trainer method\(s\) state_dict, load_state_dict, summary"):
        run(cfg_("rounds=1"), store=tmp_path, progress=False, trainer=lambda cfg, options: Half())


def test_a_report_records_the_runs_of_the_shared_store_only(tmp_path, monkeypatch):
    """``fedlib reproduce`` learns which runs a notebook read from ``$FEDLIB_RUNS_LOG``: runs of the
    shared result store are logged (cached or computed); a notebook's store of its own is not."""
    shared, own, log = tmp_path / "shared", tmp_path / "own", tmp_path / "runs.log"
    monkeypatch.setenv("FEDLIB_RESULTS", str(shared))
    monkeypatch.setenv("FEDLIB_RUNS_LOG", str(log))
    cfg = RunConfig.from_preset("toy-smoke")
    h = cfg.config_hash()
    run(cfg, store=ResultStore(shared), progress=False)
    run(cfg, store=ResultStore(shared), progress=False)  # cached: read again, logged again
    run(cfg.replace(seed=1), store=ResultStore(own), progress=False)
    assert log.read_text().splitlines() == [f"{h} trained", f"{h} store"]


@pytest.mark.parametrize("every", [0, 3600])
def test_reproduce_says_what_a_notebook_trains_and_where_a_run_resumes(tmp_path, every):
    """``fedlib reproduce`` prints a line when a run starts, resumes at its checkpoint and ends (issue 58:
    a 400-round run on a fresh clone looked hung); a checkpoint line only ``every`` seconds after the run's
    last line."""
    from fedlib.experiments.running.runner import TRAINING_LOG_ENV
    from fedlib.reproduce_watch import TrainingWatch

    cfg = cfg_("rounds=17", "checkpoint_every=5")
    store, lines = ResultStore(tmp_path / "s"), []
    with TrainingWatch("table9.ipynb", poll=60, every=every, write=lines.append):
        with pytest.raises(RuntimeError, match="simulated crash"):
            run(cfg, store=store, progress=False, trainer=CrashOnce(at=13))
        run(cfg, store=store, progress=False)
        run(cfg, store=store, progress=False)  # stored: nothing trained, nothing said
    assert TRAINING_LOG_ENV not in os.environ
    head = f"fedlib reproduce: table9.ipynb: {cfg.config_hash()[:8]} {cfg.algorithm} seed {cfg.seed}: "
    assert all(line.startswith(head) for line in lines)
    said = [line[len(head):] for line in lines]
    checkpoints = ["round 5/17 (checkpoint written)", "round 10/17 (checkpoint written)"]
    assert said == ["training 17 rounds", *(checkpoints if every == 0 else []),
                    "training 17 rounds, resuming at round 10",
                    *(["round 15/17 (checkpoint written)"] if every == 0 else []), said[-1]]
    assert said[-1].startswith("trained in ") and said[-1].endswith(" s")  # seconds under a minute
