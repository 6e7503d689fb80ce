"""A ledger safe to pull from a fork (issue 44): nothing written outside its folder, no bomb, no
forged config, no quiet skip; datasets verified before use; a closed pipe named as such.

Each test names the "Why" item of issue 44 it covers. Runs are the toy preset's (milliseconds).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest

from fedlib.cli import main
from fedlib.core.errors import FedlibError
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.experiments.results import ledger as ledger_mod
from fedlib.experiments.results.ledger import Ledger, export_runs, import_runs
from fedlib.experiments.results.store_safe import MAX_FILE_BYTES, gunzip_bounded


def _toy(seed=0, rounds=3):
    return RunConfig.from_preset("toy-smoke").with_overrides([f"seed={seed}", f"rounds={rounds}"])


@pytest.fixture
def filled(tmp_path):
    store = ResultStore(tmp_path / "store")
    hashes = [run(_toy(s), store=store, progress=False).config_hash for s in (0, 1)]
    return store, hashes


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _rewrite(led: Ledger, h: str, files: dict) -> None:
    """Put ``files`` back as entry ``h`` with every checksum recomputed (a consistent forgery)."""
    summary = json.loads(files["summary.json"])
    summary["files"] = {n: hashlib.sha256(files[n]).hexdigest() for n in ("history.csv", "clients.csv")}
    files["summary.json"] = json.dumps(summary).encode()
    done = json.loads(files["DONE"])
    done["files"] = {n: hashlib.sha256(files[n]).hexdigest() for n in
                     ("config.json", "history.csv", "clients.csv", "summary.json")}
    files["DONE"] = json.dumps(done).encode()
    shutil.rmtree(led.path(h))
    led.add(h, files)


# ------------------------------------------------------------- a planted symlink (Why: item 2)
@pytest.mark.parametrize("where", ["temporary-folder", "two-letter-folder", "entry-folder"])
def test_export_through_a_planted_symlink_writes_nothing_outside(where, tmp_path, filled, capsys):
    store, hashes = filled
    h = hashes[0]
    led = Ledger(tmp_path / "ledger")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text("precious")
    (led.root / h[:2]).mkdir(parents=True)
    if where == "temporary-folder":  # the old fixed temporary name
        (led.root / h[:2] / f".{h[:12]}.tmp").symlink_to(outside, target_is_directory=True)
    elif where == "two-letter-folder":
        (led.root / h[:2]).rmdir()
        (led.root / h[:2]).symlink_to(outside, target_is_directory=True)
    else:
        (led.root / h[:2] / h).symlink_to(outside, target_is_directory=True)
    before = _tree(outside)
    code = main(["results", "export", h[:12], "--results", str(store.root), "--ledger", str(led.root)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("fedlib: error: ") and "symbolic link" in err and "Traceback" not in err
    assert err.count("\n") <= 2, err  # one line (and its fix)
    assert _tree(outside) == before  # nothing written, config.json not overwritten


def test_a_ledger_root_that_is_a_symlink_is_refused(tmp_path, filled):
    store, hashes = filled
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "ledger").symlink_to(real, target_is_directory=True)
    with pytest.raises(FedlibError, match="is a symbolic link"):
        export_runs(store, Ledger(tmp_path / "ledger"), hashes)
    assert not any(real.iterdir())


@pytest.mark.parametrize("target", ["file", "entry", "two-letter"])
def test_import_never_follows_a_symlink_out_of_the_ledger(target, tmp_path, filled, capsys):
    """Symlinked files of an entry were followed and imported when their checksum matched."""
    store, hashes = filled
    h = hashes[0]
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    elsewhere = tmp_path / "elsewhere"
    if target == "file":  # the same bytes, kept outside: the checksum matches
        elsewhere.mkdir()
        shutil.copy(led.path(h) / "history.csv", elsewhere / "history.csv")
        (led.path(h) / "history.csv").unlink()
        (led.path(h) / "history.csv").symlink_to(elsewhere / "history.csv")
    elif target == "entry":
        shutil.move(str(led.path(h)), str(elsewhere))
        led.path(h).symlink_to(elsewhere, target_is_directory=True)
    else:
        shutil.move(str(led.root / h[:2]), str(elsewhere))
        (led.root / h[:2]).symlink_to(elsewhere, target_is_directory=True)
    fresh = tmp_path / "fresh"
    code = main(["results", "import", str(led.root), "--results", str(fresh)])
    err = capsys.readouterr().err
    assert code == 1 and "symbolic link" in err and "Traceback" not in err, err
    assert h not in ResultStore(fresh).hashes() and hashes[1] in ResultStore(fresh).hashes()


# ------------------------------------------------------------------ gzip bombs (Why: item 3)
def _bomb_entry(led: Ledger, h: str, size: int, honest_trailer: bool, match_checksums: bool) -> None:
    files = led.read(h)
    big = files["history.csv"] + b"0" * size
    blob = gzip.compress(big, compresslevel=1, mtime=0)
    if not honest_trailer:  # the trailer claims the original size
        blob = blob[:-4] + len(files["history.csv"]).to_bytes(4, "little")
    if match_checksums:
        files["history.csv"] = big
        _rewrite(led, h, files)
    d = led.path(h)
    (d / "history.csv").unlink(missing_ok=True)
    (d / "history.csv.gz").write_bytes(blob)


@pytest.mark.parametrize("honest_trailer", [True, False], ids=["trailer-says-huge", "trailer-lies"])
@pytest.mark.parametrize("match_checksums", [True, False], ids=["checksums-match", "checksum-wrong"])
def test_a_gzip_bomb_is_refused_early_with_bounded_memory(honest_trailer, match_checksums, tmp_path,
                                                          filled, monkeypatch, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    monkeypatch.setattr("fedlib.experiments.results.store_safe.MAX_FILE_BYTES", 8 * 2**20)
    monkeypatch.setattr(ledger_mod, "gunzip_bounded",
                        lambda data, where: gunzip_bounded(data, where, cap=8 * 2**20))
    size = 64 * 2**20  # 8x the cap (the issue's was 1 GiB from 4.5 MiB)
    _bomb_entry(led, hashes[0], size, honest_trailer, match_checksums and honest_trailer)
    fresh = tmp_path / "fresh"
    tracemalloc.start()
    code = main(["results", "import", str(led.root), "--results", str(fresh)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 1 and f"refused ledger entry {hashes[0][:12]}" in err and "Traceback" not in err
    assert "bomb" in err or "expands past" in err or "more than" in err, err
    assert peak < 3 * 8 * 2**20, peak  # never the whole 64 MiB
    assert hashes[0] not in ResultStore(fresh).hashes()
    assert not any(p.stat().st_size > 2**20 for p in fresh.rglob("*") if p.is_file())


def test_gunzip_bounded_reads_ordinary_files_and_refuses_damage():
    data = os.urandom(1000) * 50
    assert gunzip_bounded(gzip.compress(data), "x") == data
    with pytest.raises(Exception, match="data after its gzip stream"):  # fedlib writes one member
        gunzip_bounded(gzip.compress(b"a") + gzip.compress(b"b"), "x")
    crc = bytearray(gzip.compress(data))
    crc[-6] ^= 1  # the CRC-32 in the trailer
    with pytest.raises(Exception, match="damaged"):
        gunzip_bounded(bytes(crc), "x")
    with pytest.raises(Exception, match="truncated|damaged|bomb"):  # its trailer is gone too
        gunzip_bounded(gzip.compress(data)[:-30], "x")
    assert MAX_FILE_BYTES >= 16 * 2**20  # far above the ledger's largest file (0.5 MB)


# ----------------------------------------------- a config that does not give its key (Why: 4)
def test_a_forged_config_under_its_original_hash_is_refused(tmp_path, filled, capsys):
    store, hashes = filled
    h = hashes[0]
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    files = led.read(h)
    entry = json.loads(files["config.json"])
    entry["config"]["rounds"], entry["config"]["local"]["lr"] = 999, 123.0
    files["config.json"] = json.dumps(entry).encode()
    _rewrite(led, h, files)  # every checksum recomputed: damage checks pass
    fresh = tmp_path / "fresh"
    code = main(["results", "import", str(led.root), "--results", str(fresh)])
    err = capsys.readouterr().err
    assert code == 1 and f"refused ledger entry {h[:12]}: its config does not hash to its key" in err, err
    assert "forged" in err and h not in ResultStore(fresh).hashes()
    assert run(_toy(0), store=fresh, progress=False).cached is False  # never served as its result
    assert led.check(h)[0] is False


def test_an_entry_made_by_older_code_is_imported_and_listed(tmp_path, filled, capsys):
    from fedlib.experiments.results.rehash import scheme_hashes

    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes[:1])
    files = led.read(hashes[0])
    entry = json.loads(files["config.json"])
    entry["fedlib"] = "0.0.older"
    old = scheme_hashes(entry["config"], "0.0.older", entry["data_fingerprint"])["v2"]
    entry["config_hash"] = old
    files["config.json"] = json.dumps(entry).encode()
    files["DONE"] = files["DONE"].replace(hashes[0].encode(), old.encode())
    led.add(old, files)
    _rewrite(led, old, files)
    code = main(["results", "import", str(led.root), "--results", str(tmp_path / "fresh")])
    out = capsys.readouterr()
    assert code == 0 and "1 made by older code" in out.out and "made by older code (fedlib 0.0.older)" in out.err


# -------------------------------------------------------------------- quiet skips (Why: item 7)
def test_strays_in_the_ledger_are_refused_one_line_each(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    a, b = hashes
    wrong = "00" if a[:2] != "00" else "01"
    (led.root / wrong).mkdir(exist_ok=True)
    shutil.move(str(led.path(a)), str(led.root / wrong / a))  # under the wrong two-letter folder
    (led.root / "ee").write_text("a file where a folder of entries belongs")
    (led.root / b[:2] / ("e" * 64)).write_text("an entry that is a file")
    code = main(["results", "import", str(led.root), "--results", str(tmp_path / "fresh")])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 1 and "Traceback" not in err
    assert f"but its hash starts with {a[:2]}" in err
    assert "ee is a file, not a folder of entries" in err
    assert f"entry {b[:2]}/{'e' * 12} is a file" in err
    assert "1 runs imported, 0 already in the store, 3 refused" in captured.out


def test_a_killed_imports_temporary_folders_are_swept_at_the_next_import(tmp_path, filled, capsys):
    import fcntl

    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    fresh = ResultStore(tmp_path / "fresh")
    fresh.root.mkdir()
    dead = fresh.root / f".{hashes[0][:12]}.0123456789ab.tmp"
    live = fresh.root / f".{hashes[1][:12]}.ba9876543210.tmp"
    for d in (dead, live):
        d.mkdir()
        (d / "history.csv").write_text("half")
        os.utime(d, (time.time() - 60, time.time() - 60))  # younger than an hour: kept before
    fd = os.open(live, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a live writer (another import) holds its folder
    try:
        assert main(["results", "import", str(led.root), "--results", str(fresh.root)]) == 0
        assert not dead.exists() and live.exists()
        assert "removed 1 temporary folder" in capsys.readouterr().err
    finally:
        os.close(fd)
    assert sorted(fresh.hashes()) == sorted(hashes)


def test_store_write_folder_never_writes_through_a_link(tmp_path):
    store = ResultStore(tmp_path / "store")
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(FedlibError, match="not a result hash"):
        store.write_folder("../outside", {"config.json": b"{}"})
    with pytest.raises(FedlibError, match="not a file of a stored result"):
        store.write_folder("ab" * 32, {"../../outside/x": b"{}"})
    assert not any(outside.iterdir())


# ---------------------------------------------------------------- verify --changed-since (3)
def _git(cwd, *argv):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_verify_changed_since_recomputes_exactly_the_added_entries(tmp_path, capsys):
    store = ResultStore(tmp_path / "store")
    hashes = [run(_toy(s), store=store, progress=False).config_hash for s in (0, 1, 2)]
    repo = tmp_path / "repo"
    led = Ledger(repo / "ledger")
    export_runs(store, led, hashes[:1])
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one entry")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    export_runs(store, led, hashes[1:])  # what a pull brought: one committed, one not yet
    _git(repo, "add", "ledger/" + hashes[1][:2])
    _git(repo, "commit", "-q", "-m", "second entry")
    assert main(["verify", "--changed-since", base, "--ledger", str(led.root)]) == 0
    out = capsys.readouterr().out
    assert "2 ledger entries changed since" in out and "(2 added," in out and "0 refused, 2 to recompute" in out
    assert hashes[1][:12] in out and hashes[2][:12] in out and hashes[0][:12] not in out
    assert out.count("identical") == 4 and "2 consistent, 0 differ" in out  # per run and in the table
    # a forged added entry is refused before anything is recomputed
    files = led.read(hashes[2])
    entry = json.loads(files["config.json"])
    entry["config"]["rounds"] = 999
    files["config.json"] = json.dumps(entry).encode()
    _rewrite(led, hashes[2], files)
    assert main(["verify", "--changed-since", base, "--ledger", str(led.root)]) == 1
    out = capsys.readouterr().out
    assert f"refused {hashes[2][:12]}: its config does not hash to its key" in out
    assert "1 to recompute" in out
    # nothing added: nothing to do
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "all")
    assert main(["verify", "--changed-since", "HEAD", "--ledger", str(led.root)]) == 0
    assert "0 ledger entries changed since HEAD" in capsys.readouterr().out


# ------------------------------------------------ verify --changed-since cannot be bypassed (issue 59)
def _forge_history(files: dict, delta: float) -> None:
    """Shift the accuracy of the history's second row by ``delta`` (fraction), in place."""
    lines = files["history.csv"].decode().splitlines()
    acc = lines[0].split(",").index("accuracy")
    cells = lines[2].split(",")
    cells[acc] = repr(float(cells[acc]) + delta)
    lines[2] = ",".join(cells)
    files["history.csv"] = ("\n".join(lines) + "\n").encode()


@pytest.fixture
def pulled(tmp_path, monkeypatch):
    """A checkout with two committed entries (one read by a report) and a drift record measuring
    0.5 points for the toy family; returns (repo, ledger, base revision, hashes, store)."""
    from fedlib.experiments.results import provenance

    monkeypatch.setattr(provenance, "drift_family", lambda cfg: "toy-family")
    store = ResultStore(tmp_path / "store")
    hashes = [run(_toy(s), store=store, progress=False).config_hash for s in (0, 1, 2)]
    repo = tmp_path / "repo"
    led = Ledger(repo / "ledger")
    export_runs(store, led, hashes[:2])
    (repo / "reports" / "cpu").mkdir(parents=True)
    (repo / "reports" / "cpu" / "t.runs.json").write_text(json.dumps({"runs": [hashes[1]]}))
    (repo / "benchmarks" / "results").mkdir(parents=True)
    (repo / "benchmarks" / "results" / "cross_cpu.json").write_text(json.dumps([
        {"hash": None, "family": "toy-family", "rounds": 3, "made_on": "A", "recomputed_on": "B",
         "largest_round_diff": 0.5, "final_diff": 0.5, "date": "2026-12-07"}]))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    return repo, led, base, hashes, store


def _verify(led, base, *extra):
    return main(["verify", "--changed-since", base, "--ledger", str(led.root), "--no-record", *extra])


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_changed_since_checks_a_rewritten_entry_and_its_summary(pulled, capsys):
    """Why 1a + 1c: an existing entry whose summary says 0.999 (checksums recomputed) was never
    looked at; a forged summary over a genuine history passed."""
    repo, led, base, hashes, _ = pulled
    files = led.read(hashes[1])
    summary = json.loads(files["summary.json"])
    summary["final_accuracy"] = 0.999
    files["summary.json"] = json.dumps(summary).encode()
    _rewrite(led, hashes[1], files)
    _git(repo, "commit", "-qam", "forged summary")
    assert _verify(led, base) == 1
    out = capsys.readouterr().out
    assert "(0 added, 1 rewritten, 0 deleted)" in out and f"rewritten {hashes[1][:12]}" in out
    assert "read by cpu/t.runs.json" in out
    assert "history identical, summary differs (summary: final_accuracy)" in out
    assert "1 differ beyond what their CPU type excuses" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_changed_since_names_a_deleted_entry_a_report_reads(pulled, capsys):
    repo, led, base, hashes, _ = pulled
    shutil.rmtree(led.path(hashes[0]))
    assert _verify(led, base) == 0  # no report reads it: named, not refused
    assert f"deleted {hashes[0][:12]} (no report reads it)" in capsys.readouterr().out
    shutil.rmtree(led.path(hashes[1]))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two entries gone")
    assert _verify(led, base) == 1
    out = capsys.readouterr().out
    assert f"refused {hashes[1][:12]}: deleted, but cpu/t.runs.json reads it" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_changed_since_checks_both_ends_of_a_renamed_entry(pulled, capsys):
    repo, led, base, hashes, _ = pulled
    two = "ab" if hashes[1][:2] != "ab" else "cd"
    fake = two + hashes[1][2:]  # the entry a report reads, moved under another hash
    (led.root / two).mkdir(exist_ok=True)
    _git(repo, "mv", f"ledger/{hashes[1][:2]}/{hashes[1]}", f"ledger/{two}/{fake}")
    _git(repo, "commit", "-qm", "rename")
    assert _verify(led, base) == 1
    out = capsys.readouterr().out
    assert "(1 added, 0 rewritten, 1 deleted)" in out
    assert f"refused {fake[:12]}: DONE marker belongs to another config hash" in out
    assert f"refused {hashes[1][:12]}: deleted, but cpu/t.runs.json reads it" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("delta, code", [(0.003, 0), (0.02, 1)])
def test_another_cpu_excuses_only_the_measured_drift(pulled, capsys, delta, code):
    """Why 1b: a forged entry whose DONE names another CPU type had every difference "expected"."""
    repo, led, base, hashes, store = pulled
    export_runs(store, led, hashes[2:])
    files = led.read(hashes[2])
    _forge_history(files, delta)
    done = json.loads(files["DONE"])
    done["provenance"]["cpu"] = "Forged CPU [AVX9000]"
    files["DONE"] = json.dumps(done).encode()
    _rewrite(led, hashes[2], files)
    # the pull also widens the drift record: the record as it was at the base revision counts
    (repo / "benchmarks" / "results" / "cross_cpu.json").write_text(json.dumps([
        {"hash": None, "family": "toy-family", "rounds": 3, "made_on": "A", "recomputed_on": "B",
         "largest_round_diff": 99, "final_diff": 99, "date": "2026-12-07"}]))
    assert _verify(led, base) == code
    out = capsys.readouterr().out
    assert "toy-family 0.50" in out
    if code:
        assert "beyond the drift measured for toy-family (0.50 a round" in out
    else:
        assert "within the drift measured for toy-family (expected)" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_another_cpu_without_a_measured_family_excuses_nothing(pulled, capsys, monkeypatch):
    from fedlib.experiments.results import provenance

    repo, led, base, hashes, store = pulled
    monkeypatch.setattr(provenance, "drift_family", lambda cfg: "unmeasured-family")
    export_runs(store, led, hashes[2:])
    files = led.read(hashes[2])
    _forge_history(files, 0.001)
    done = json.loads(files["DONE"])
    done["provenance"]["cpu"] = "Forged CPU [AVX9000]"
    files["DONE"] = json.dumps(done).encode()
    _rewrite(led, hashes[2], files)
    assert _verify(led, base) == 1
    assert "no drift is measured for unmeasured-family" in capsys.readouterr().out


# ------------------------------------------------ crafted entries refused at import (issue 59, Why 5)
def _put_raw(led: Ledger, h: str, files: dict, done: bytes) -> None:
    """Entry ``h`` with ``files`` and the DONE bytes ``done`` as they are (no checksum recomputed)."""
    shutil.rmtree(led.path(h))
    led.add(h, {**files, "DONE": done})


def _import_refuses(tmp_path, led, capsys, words: str) -> str:
    store = ResultStore(tmp_path / "fresh")
    assert main(["results", "import", str(led.root), "--results", str(store.root)]) == 1
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    return err


def test_a_history_that_is_not_csv_is_refused_at_import(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    files = led.read(hashes[0])
    files["history.csv"] = b"round,accuracy\n1,0.5\n2,0.5,7,8\n"
    _rewrite(led, hashes[0], files)
    err = _import_refuses(tmp_path, led, capsys, f"refused ledger entry {hashes[0][:12]}: history.csv is not a CSV")
    assert len([x for x in err.splitlines() if "refused" in x]) == 1  # the other entry is imported
    assert ResultStore(tmp_path / "fresh").has(hashes[1]) and not ResultStore(tmp_path / "fresh").has(hashes[0])


def test_a_config_nested_very_deep_is_refused_without_recursion_error(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes[:1])
    files = led.read(hashes[0])
    files["config.json"] = files["config.json"].rstrip()[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    _rewrite(led, hashes[0], files)
    _import_refuses(tmp_path, led, capsys, "config.json nests deeper than 32 levels")
    assert main(["verify", "--ledger", str(led.root), "--no-record"]) == 1
    assert "refused: config.json nests deeper" in capsys.readouterr().out


@pytest.mark.parametrize("field, value, words", [
    ("files", ["a", "b"], "DONE's files is not an object"),
    ("provenance", ["cpu"], "DONE's provenance is a JSON list"),
    ("provenance", {"cpu": {"x": 1}}, "DONE's provenance field 'cpu' is a JSON dict"),
    ("config_hash", 7, "DONE's config_hash is not 64 hex"),
])
def test_a_done_with_a_field_of_the_wrong_type_is_refused(tmp_path, filled, capsys, field, value, words):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes[:1])
    files = led.read(hashes[0])
    done = json.loads(files.pop("DONE"))
    done[field] = value
    _put_raw(led, hashes[0], files, json.dumps(done).encode())
    _import_refuses(tmp_path, led, capsys, words)


def test_an_entry_under_a_non_hex_folder_is_named(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    (led.root / "zz").mkdir()
    os.rename(led.path(hashes[0]), led.root / "zz" / hashes[0])
    (led.root / "README.md").write_text("a file beside the entries is no stray")
    err = _import_refuses(tmp_path, led, capsys, "refused ledger entry zz/: zz/ is a folder that is not named")
    assert "README" not in err


def test_import_caps_what_it_writes_in_total(tmp_path, filled, capsys, monkeypatch):
    """Why 5: a 1.08 MiB ledger wrote 1,080 MiB. Here: a 4 MiB history in a few KB of gzip."""
    monkeypatch.setattr(ledger_mod, "IMPORT_SLACK_BYTES", 2**20)
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    files = led.read(hashes[1])
    head = files["history.csv"].decode().splitlines()
    files["history.csv"] = ("\n".join([head[0]] + [head[1]] * (4 * 2**20 // len(head[1]))) + "\n").encode()
    _rewrite(led, hashes[1], files)
    assert led.size() < 2**20
    err = _import_refuses(tmp_path, led, capsys, f"refused ledger entry {hashes[1][:12]}: importing it would write")
    assert "a decompression bomb?" in err
    assert ResultStore(tmp_path / "fresh").has(hashes[0])


# ------------------------------------------------------------------ datasets (Why: items 3, 5, 8)
def _cifar_archive(path: Path, member_bytes: bytes, name="cifar10/train/a/0.jpg"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(member_bytes)
        tar.addfile(info, io.BytesIO(member_bytes))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(buf.getvalue(), compresslevel=1, mtime=0))


def test_an_archive_with_a_bad_crc_is_refused_naming_the_redownload(tmp_path):
    from fedlib.data.files import FileTree

    path = tmp_path / "cifar10" / "cifar10-jpg.tar.gz"
    _cifar_archive(path, os.urandom(200_000))  # incompressible: a flip lands in the member's bytes
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0x01
    path.write_bytes(bytes(blob))
    with pytest.raises(FedlibError) as info:
        FileTree(path)
    msg = str(info.value)
    assert "cifar10-jpg.tar.gz" in msg and "damaged" in msg and "download it again" in msg
    assert "CRC" in msg or "invalid" in msg or "Error" in msg


def test_a_truncated_archive_is_refused(tmp_path):
    from fedlib.data.files import FileTree

    path = tmp_path / "a.tar.gz"
    _cifar_archive(path, os.urandom(100_000))
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(FedlibError, match="damaged"):
        FileTree(path)


def test_an_archive_bomb_is_refused_before_extraction(tmp_path, monkeypatch, capsys):
    from fedlib.data import files

    monkeypatch.setattr(files, "MIN_ARCHIVE_BUDGET", 4 * 2**20)
    monkeypatch.setattr(files, "MAX_MEMBER_BYTES", 8 * 2**20)
    path = tmp_path / "data" / "cifar10" / "cifar10-jpg.tar.gz"
    _cifar_archive(path, b"\0" * (48 * 2**20))  # 48 MiB of zeros in ~50 KB (the issue's: 1 GiB)
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    tracemalloc.start()
    code = main(["data", "info", "cifar10"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2 and "decompression bomb" in err and "Traceback" not in err, err
    assert peak < 16 * 2**20, peak


def _tar_with_header(kind: bytes, declared: int) -> bytes:
    """A tar whose first block is a PAX (``x``) or GNU long-name (``L``) header declaring
    ``declared`` bytes of header data, followed by that many zeros (issue 59, Why 2)."""
    info = tarfile.TarInfo("././@PaxHeader" if kind == b"x" else "././@LongLink")
    info.type, info.size = kind, declared
    return info.tobuf(tarfile.USTAR_FORMAT) + b"\0" * declared


@pytest.mark.parametrize("kind", [b"x", b"L"])
def test_a_tar_header_declaring_a_gigabyte_counts_against_the_budget(kind, tmp_path, monkeypatch):
    from fedlib.data import files

    monkeypatch.setattr(files, "MIN_ARCHIVE_BUDGET", 2 * 2**20)
    path = tmp_path / "cifar10-jpg.tar.gz"
    path.write_bytes(gzip.compress(_tar_with_header(kind, 48 * 2**20), compresslevel=1, mtime=0))
    budget = max(2 * 2**20, files.MAX_EXPANSION * path.stat().st_size)
    assert budget < 16 * 2**20 < 48 * 2**20
    tracemalloc.start()
    with pytest.raises(FedlibError) as info:
        files.FileTree(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "decompression bomb" in str(info.value) and f"expands past {budget:,} bytes" in str(info.value)
    assert peak < budget + 4 * 2**20, peak


@pytest.mark.parametrize("compress", ["gzip", "bz2", "xz"])
def test_trailing_compressed_streams_stop_at_the_budget(compress, tmp_path, monkeypatch):
    """A small valid tar followed by many compressed streams of zeros (the issue's: 1,500 bzip2
    streams, 146 GiB): decompression stops at the budget, for every compressor the loader reads."""
    import bz2
    import lzma

    from fedlib.data import files

    monkeypatch.setattr(files, "MIN_ARCHIVE_BUDGET", 2 * 2**20)
    pack = {"gzip": lambda b: gzip.compress(b, mtime=0), "bz2": bz2.compress, "xz": lzma.compress}[compress]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("cifar10/train/a/0.jpg")
        info.size = 10
        tar.addfile(info, io.BytesIO(b"x" * 10))
    zeros = pack(b"\0" * 2**20)
    path = tmp_path / f"a.tar.{ {'gzip': 'gz'}.get(compress, compress)}"
    path.write_bytes(pack(buf.getvalue()) + zeros * 40)  # 40 MiB of trailing zeros
    with pytest.raises(FedlibError, match="decompression bomb"):
        files.FileTree(path)
    path.write_bytes(pack(buf.getvalue()) + zeros)  # 1 MiB of trailing data: within the budget
    assert files.FileTree(path).names() == ["cifar10/train/a/0.jpg"]


def test_a_damaged_adult_copy_is_damaged_not_missing(tmp_path, monkeypatch, capsys):
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.data").write_bytes(os.urandom(3000))
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    assert main(["data", "info", "adult"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "not found" not in err, err
    (tmp_path / "adult" / "adult.test").write_text("39, State-gov, 77516, Bach")  # truncated
    assert main(["data", "info", "adult"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "not found" not in err and "download it again" in err, err


# ------------------------------------------------------------------ a closed pipe (Why: item 8)
def test_a_closed_output_pipe_is_named_as_such():
    """``fedlib ... | head`` said "fix: check that path's permissions and free space"."""
    proc = subprocess.Popen([sys.executable, "-m", "fedlib", "presets"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader is gone before fedlib writes a byte
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    lines = [x for x in err.splitlines() if x.strip()]
    assert err.startswith("fedlib: error: the pipe on standard output was closed"), err
    assert "permissions" not in err and "Traceback" not in err and len(lines) == 2, err
    assert code == 141


# ------------------------------------------------ a damaged drift record (issue 59, Why 6)
DAMAGED_RECORDS = {
    "conflict": '[\n<<<<<<< HEAD\n {"hash": null, "family": "f"}\n=======\n {"hash": "x"}\n>>>>>>> fork\n]\n',
    "not-json": '[{"hash": null, "family": ',
    "not-a-list": '{"hash": null}',
    "list-of-numbers": "[1, 2]",
}


@pytest.mark.parametrize("case", sorted(DAMAGED_RECORDS))
def test_a_damaged_drift_record_is_one_line_naming_the_file(case, tmp_path, filled, capsys):
    from fedlib.experiments.results.drift_record import load_drift_record

    record = tmp_path / "cross_cpu.json"
    record.write_text(DAMAGED_RECORDS[case])
    with pytest.raises(FedlibError, match="the drift record .*cross_cpu.json"):
        load_drift_record(record)
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes[:1])
    assert main(["verify", "--ledger", str(led.root), "--record", str(record)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedlib: error: the drift record") and str(record) in err and "Traceback" not in err
    assert record.read_text() == DAMAGED_RECORDS[case]  # named before any run is recomputed, untouched


def test_drift_bounds_take_the_largest_measured_per_family():
    from fedlib.experiments.results.drift_record import drift_bounds

    entries = [{"family": "a", "largest_round_diff": 0.3, "final_diff": -0.2},
               {"family": "a", "largest_round_diff": -0.5, "final_diff": 0.1},
               {"family": "b", "largest_round_diff": "x"}, {"run": "no family", "largest_round_diff": 9}]
    assert drift_bounds(entries) == {"a": {"round": 0.5, "final": 0.2}}
