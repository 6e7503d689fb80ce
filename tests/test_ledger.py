"""The results ledger (issue 28): store -> ledger -> store byte for byte, damaged entries refused
one by one, reports that record the runs they read, staleness against the ledger, ``fedlib verify``."""

from __future__ import annotations

import json

import nbformat
import pytest

from fedlib.cli import main
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.experiments.results import ledger as ledger_mod
from fedlib.experiments.results.ledger import Ledger, current_hash, export_runs, import_runs
from fedlib.experiments.results.cli import compare_histories
from fedlib.experiments.results.provenance import cpu_type


def _toy(seed=0, rounds=4):
    return RunConfig.from_preset("toy-smoke").with_overrides([f"seed={seed}", f"rounds={rounds}"])


@pytest.fixture
def filled(tmp_path):
    store = ResultStore(tmp_path / "store")
    results = [run(_toy(s), store=store, progress=False) for s in (0, 1, 2)]
    return store, [r.config_hash for r in results]


def test_export_then_import_restores_every_file_byte_for_byte(tmp_path, filled, monkeypatch):
    store, hashes = filled
    monkeypatch.setattr(ledger_mod, "COMPRESS_ABOVE", 200)  # so some files are kept compressed
    led = Ledger(tmp_path / "ledger")
    out = export_runs(store, led, [*hashes, "0" * 64])
    assert out["added"] == hashes and out["missing"] == ["0" * 64]
    assert export_runs(store, led, hashes)["present"] == hashes  # entries are only added once
    assert led.hashes() == sorted(hashes) and any(led.root.rglob("*.gz"))
    assert all(led.check(h) == (True, "") for h in hashes)
    prov = led.provenance(hashes[0])
    assert prov["cpu"] == cpu_type() and prov["fedlib"] and "threads" in prov
    fresh = ResultStore(tmp_path / "fresh")
    rep = import_runs(led, fresh)
    assert sorted(rep.imported) == sorted(hashes) and not rep.refused
    for h in hashes:
        for name in ("config.json", "history.csv", "clients.csv", "summary.json", "DONE"):
            assert (fresh.path(h) / name).read_bytes() == (store.path(h) / name).read_bytes(), name
        assert fresh.get(h) is not None
    # a second import finds them in the store; run() now loads instead of training
    assert len(import_runs(led, fresh).present) == 3
    assert run(_toy(0), store=fresh, progress=False).cached


def test_a_damaged_entry_is_refused_alone(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    hist = led.path(hashes[1]) / "history.csv"
    hist.write_text(hist.read_text().replace("0.", "1.", 1))  # an edited number
    (led.path(hashes[2]) / "config.json").write_text("{not json")  # checksum fails before parsing
    fresh = tmp_path / "fresh"
    code = main(["results", "import", str(led.root), "--results", str(fresh)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"refused ledger entry {hashes[1][:12]}: history.csv does not match its checksum" in err
    assert f"refused ledger entry {hashes[2][:12]}" in err and "Traceback" not in err
    assert ResultStore(fresh).hashes() == [hashes[0]]  # the intact one is imported


def test_current_hash_is_the_hash_todays_code_gives():
    cfg = _toy()
    entry = {"config": cfg.to_dict(), "data_fingerprint": cfg.data_fingerprint()}
    assert current_hash(entry) == cfg.config_hash()
    entry["config"]["rounds"] = 5
    assert current_hash(entry) != cfg.config_hash()
    entry["config"]["rounds"] = -1
    assert current_hash(entry) is None  # today's code refuses it


# ------------------------------------------------------------------------------ reproduce + staleness
RUN_CODE = """
from fedlib.experiments import RunConfig, run
from fedlib.reporting import comparison, save_comparison
res = [run(RunConfig.from_preset("toy-smoke").with_overrides([f"seed={s}", "rounds=3"]), progress=False) for s in (0, 1)]
rows = [{"table": "T", "setting": "s", "metric": "acc", "paper": 1.0, "measured": res[0].summary["final_accuracy"]}]
save_comparison(comparison(rows, profile), "demo", profile)
"""


def _project(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    book = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "auto"')
    params.metadata["tags"] = ["parameters"]
    book.cells = [nbformat.v4.new_markdown_cell("# demo"), params, nbformat.v4.new_code_cell(RUN_CODE)]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(book, tmp_path / "notebooks" / "demo.ipynb")
    return tmp_path


def test_reproduce_records_its_runs_fills_the_ledger_and_a_fresh_store_trains_nothing(tmp_path, monkeypatch):
    from fedlib.reproduce import reproduce, status_of

    root = _project(tmp_path / "proj")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "store"))
    index = reproduce("cpu", root=root)
    out = root / "reports" / "cpu"
    runs = json.loads((out / "demo.runs.json").read_text())["runs"]
    assert len(runs) == 2 and Ledger(root / "ledger").hashes() == sorted(runs)
    assert status_of(out, "demo.ipynb", index["demo.ipynb"]) == "done"
    # a fresh clone: an empty store; the ledger is imported and nothing is trained
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "fresh"))
    index = reproduce("cpu", root=root, force=True)
    assert index["demo.ipynb"]["status"] == "done"
    assert sorted(ResultStore(tmp_path / "fresh").hashes()) == sorted(runs)
    assert all(not (ResultStore(tmp_path / "fresh").path(h) / "checkpoint.pt").exists() for h in runs)
    # a run missing from the ledger makes the report stale, with the reason in the index
    import shutil

    shutil.rmtree(Ledger(root / "ledger").path(runs[0]))
    status = status_of(out, "demo.ipynb", index["demo.ipynb"])
    assert status == "stale: 1 of the 2 runs it read are not in the results ledger"
    # a report without a runs record is stale too
    (out / "demo.runs.json").unlink()
    assert "no record of the runs it read" in status_of(out, "demo.ipynb", index["demo.ipynb"])


def test_an_entry_made_under_another_hash_makes_its_report_stale(tmp_path, filled):
    from fedlib.reproduce import status_of

    store, hashes = filled
    root = tmp_path / "proj"
    out = root / "reports" / "cpu"
    out.mkdir(parents=True)
    led = Ledger(root / "ledger")
    export_runs(store, led, hashes[:1])
    (out / "demo.runs.json").write_text(json.dumps({"runs": hashes[:1]}))
    assert status_of(out, "demo.ipynb", {"status": "done"}) == "done"
    # the same entry, as if its config had hashed to this name under an older code (another fedlib
    # version in its config.json, issue 44: the key must be what that code gives the config)
    from fedlib.experiments.results.rehash import scheme_hashes

    cfg_file = led.path(hashes[0]) / "config.json"
    files = led.read(hashes[0])
    entry = json.loads(files["config.json"])
    entry["fedlib"] = "0.0.older"
    fake = scheme_hashes(entry["config"], "0.0.older", entry["data_fingerprint"])["v2"]
    entry["config_hash"] = fake
    files["config.json"] = json.dumps(entry).encode()
    files["DONE"] = files["DONE"].replace(hashes[0].encode(), fake.encode())
    import hashlib

    done = json.loads(files["DONE"])
    done["files"]["config.json"] = hashlib.sha256(files["config.json"]).hexdigest()
    files["DONE"] = json.dumps(done).encode()
    led.add(fake, files)
    assert led.check(fake) == (True, "") and cfg_file.exists()
    (out / "demo.runs.json").write_text(json.dumps({"runs": [fake]}))
    assert "hashes differently" in status_of(out, "demo.ipynb", {"status": "done"})


# ------------------------------------------------------------------------------ verify
def test_verify_recomputes_identically_and_flags_a_difference_on_the_same_cpu(tmp_path, filled, capsys):
    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes)
    assert main(["verify", "--sample", "2", "--ledger", str(led.root)]) == 0
    out = capsys.readouterr().out
    assert out.count("identical") >= 2 and "0 differ on the CPU type they were made on" in out
    # an entry whose history was changed consistently (checksums rewritten): verify finds the round
    import hashlib

    h = hashes[0]
    files = led.read(h)
    text = files["history.csv"].decode().splitlines()
    head, rows = text[0], text[1:]
    cols = head.split(",")
    acc = cols.index("accuracy")
    cells = rows[2].split(",")
    cells[acc] = repr(float(cells[acc]) + 0.01)
    rows[2] = ",".join(cells)
    files["history.csv"] = ("\n".join([head, *rows]) + "\n").encode()
    summary = json.loads(files["summary.json"])
    summary["files"]["history.csv"] = hashlib.sha256(files["history.csv"]).hexdigest()
    files["summary.json"] = json.dumps(summary).encode()
    done = json.loads(files["DONE"])
    done["files"].update({n: hashlib.sha256(files[n]).hexdigest() for n in ("history.csv", "summary.json")})
    files["DONE"] = json.dumps(done).encode()
    import shutil

    shutil.rmtree(led.path(h))
    led.add(h, files)
    assert led.check(h) == (True, "")
    assert main(["verify", "--ledger", str(led.root)]) == 1
    out = capsys.readouterr().out
    assert "differs from round 3 (same CPU type: not expected)" in out


def test_compare_histories_ignores_host_time():
    import pandas as pd

    a = pd.DataFrame({"round": [1, 2], "accuracy": [0.1, 0.2], "wall_time": [1.0, 2.0]})
    b = a.assign(wall_time=[5.0, 9.0])
    assert compare_histories(a, b) == {"identical": True, "first_round": None, "max_acc_diff": 0.0}
    c = b.assign(accuracy=[0.1, 0.25])
    r = compare_histories(a, c)
    assert r["first_round"] == 2 and r["max_acc_diff"] == pytest.approx(5.0)


def test_index_gives_the_minutes_a_reports_runs_took_from_their_own_records(tmp_path, filled):
    """The index's *run minutes*: the runs' recorded wall times summed, however quickly the report
    itself was last re-rendered; a partial sum says how many runs it covers."""
    from fedlib.reproduce import run_minutes

    store, hashes = filled
    out = tmp_path / "proj" / "reports" / "cpu"
    out.mkdir(parents=True)
    led = Ledger(tmp_path / "proj" / "ledger")
    export_runs(store, led, hashes[:2])
    assert run_minutes(out, "demo.ipynb") == ""  # no record of its runs
    (out / "demo.runs.json").write_text(json.dumps({"runs": hashes}))
    walls = [json.loads((store.path(h) / "summary.json").read_text())["wall_time"] / 60 for h in hashes[:2]]
    assert led.wall_minutes(hashes[0]) == pytest.approx(walls[0])
    assert run_minutes(out, "demo.ipynb") == f"{sum(walls):.0f} (2 of 3 runs)"
    export_runs(store, led, hashes[2:])
    assert "of" not in run_minutes(out, "demo.ipynb")


def test_verify_on_another_cpu_type_appends_to_the_drift_record(tmp_path, filled, capsys, monkeypatch):
    from fedlib.experiments.results import provenance

    store, hashes = filled
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, hashes[:1])
    monkeypatch.setattr(provenance, "cpu_type", lambda: "Other CPU [X]")
    monkeypatch.setattr(provenance, "drift_family", lambda cfg: "toy-family")
    record = tmp_path / "cross_cpu.json"
    record.write_text('[{"hash": null, "run": "a measurement without a hash"}]')
    for _ in range(2):  # the same comparison twice: replaced, not duplicated
        assert main(["verify", "--ledger", str(led.root), "--record", str(record)]) == 0
    assert "1 cross-CPU comparison(s) recorded" in capsys.readouterr().out
    entries = json.loads(record.read_text())
    assert len(entries) == 2 and entries[0]["run"] == "a measurement without a hash"
    new = entries[1]
    assert new["hash"] == hashes[0][:12] and new["family"] == "toy-family" and new["rounds"] == 4
    assert new["made_on"] == cpu_type() and new["recomputed_on"] == "Other CPU [X]"
    assert new["largest_round_diff"] == 0 and new["final_diff"] == 0
    main(["verify", "--ledger", str(led.root), "--record", str(record), "--no-record"])
    assert len(json.loads(record.read_text())) == 2


def test_verify_replays_a_run_recorded_as_diverged(tmp_path, capsys):
    """A ledger entry whose run diverged (stored with ``diverged="record"``) is replayed the same way,
    not refused: its recomputation diverges at the same round and matches."""
    store = ResultStore(tmp_path / "store")
    cfg = RunConfig.from_preset("fedavg-adult-gender-smoke", ["local.lr=1e30", "rounds=3"])
    res = run(cfg, store=store, progress=False, diverged="record")
    assert res.summary["diverged_round"] == 1
    led = Ledger(tmp_path / "ledger")
    export_runs(store, led, [res.config_hash])
    assert main(["verify", "--ledger", str(led.root)]) == 0
    assert "identical" in capsys.readouterr().out
