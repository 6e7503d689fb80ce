"""A damaged store never sticks, never leaks outside the store, and a reader never sees a result
vanish while it is replaced (issue 33).

Damaged entries (a symbolic link, a file named like a hash, result files of the wrong type, a
read-only store, a failed variant in a reports index) are reported in one line and moved aside or
ignored, so ``results list`` / ``show`` answer and the next run proceeds.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path

import pytest

from fedlib.cli import main
from fedlib.core.errors import FedlibError
from fedlib.experiments import CorruptResultWarning, ResultStore, RunConfig, run
from fedlib.experiments.results import store as store_mod


def toy(*sets):
    return RunConfig.from_preset("toy-smoke").with_overrides(["rounds=4", "checkpoint_every=2", *sets])


def _symlink_to_other(root: Path, h: str) -> Path:
    other = run(toy("seed=7"), store=root, progress=False)
    (root / h).symlink_to(other.path, target_is_directory=True)
    return other.path


def _file(root: Path, h: str):
    (root / h).write_text("not a result")


def _done_then(kind: str, name: str):
    def make(root: Path, h: str):
        run(toy(), store=root, progress=False)
        target = root / h / name
        target.unlink(missing_ok=True)
        if kind == "dir":
            target.mkdir()
        elif kind == "fifo":
            os.mkfifo(target)
        else:
            target.symlink_to("/etc/hostname")
    return make


def _partial_checkpoint_dir(root: Path, h: str):
    (root / h / "checkpoint.pt").mkdir(parents=True)
    (root / h / "config.json").write_text("{}")


DAMAGE = [
    ("symlink-to-another-result", _symlink_to_other, "symbolic link"),
    ("file-named-like-a-hash", _file, "is a file"),
    ("checkpoint-is-a-folder", _partial_checkpoint_dir, "checkpoint.pt is a folder"),
    ("history-is-a-folder", _done_then("dir", "history.csv"), "history.csv is a folder"),
    ("config-is-a-folder", _done_then("dir", "config.json"), "config.json is a folder"),
    ("summary-is-a-fifo", _done_then("fifo", "summary.json"), "summary.json is not a regular file"),
    ("done-is-a-symlink", _done_then("link", "DONE"), "DONE is a symbolic link"),
]


@pytest.mark.parametrize("name, damage, fragment", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_damaged_entry_is_reported_moved_aside_and_rerun(name, damage, fragment, tmp_path, capsys):
    root = tmp_path / "store"
    root.mkdir()
    cfg = toy()
    h = cfg.config_hash()
    damage(root, h)
    others = {p: (p / "config.json").read_bytes() for p in root.iterdir()
              if p.name != h and (p / "config.json").is_file()}
    # list and show answer, in one line each, without a traceback
    assert main(["results", "list", "--json", "--results", str(root)]) == 0
    rows = {r["hash"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[h[:12]]["status"] == "damaged" and fragment in rows[h[:12]]["detail"]
    assert main(["results", "show", h[:12], "--results", str(root)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "damaged" and fragment in shown["detail"]
    assert ResultStore(root).status(h)[0] == "damaged" and ResultStore(root).get(h, warn=False) is None
    # the next run proceeds: the entry is moved aside (kept), the run computes
    with pytest.warns(CorruptResultWarning, match="moved aside"):
        res = run(cfg, store=root, progress=False)
    assert not res.cached and ResultStore(root).has(h) and not (root / h).is_symlink()
    assert len(list(root.glob(f".{h[:12]}.*.damaged"))) == 1
    for path, blob in others.items():  # the link's target (another result) is untouched
        assert (path / "config.json").read_bytes() == blob and ResultStore(root).has(path.name)
    assert run(cfg, store=root, progress=False).cached


def test_a_read_only_store_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    run(toy(), store=tmp_path, progress=False)

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "scandir", refuse)
    assert main(["results", "list", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedlib: error: cannot read the result store") and "Traceback" not in err
    monkeypatch.undo()
    monkeypatch.setattr(os, "rename", refuse)
    (tmp_path / ("f" * 64)).write_text("x")  # a damaged entry that cannot be moved aside
    with pytest.raises(FedlibError, match="cannot be moved aside"):
        ResultStore(tmp_path).repair("f" * 64)


def test_a_failed_variant_in_the_index_does_not_fail_later_batches(tmp_path, monkeypatch, capsys):
    nbformat = pytest.importorskip("nbformat")
    import fedlib.reproduce as rep

    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    book = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "auto"\nseeds = None')
    params.metadata["tags"] = ["parameters"]
    book.cells = [params, nbformat.v4.new_code_cell("x = 1")]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(book, tmp_path / "notebooks" / "demo.ipynb")
    out = tmp_path / "reports" / "smoke"
    out.mkdir(parents=True)
    (out / "index.json").write_text(json.dumps({"demo.seeds-1.ipynb": {
        "status": "failed", "notebook": "demo.ipynb", "error": "boom", "key": {"params": {"seeds": [1]}}}}))
    monkeypatch.setattr(rep, "project_root", lambda: tmp_path)
    assert main(["reproduce", "--profile", "smoke"]) == 0
    captured = capsys.readouterr()
    assert "failed in an earlier batch" in captured.err and "demo.seeds-1.ipynb" in captured.err
    (out / "index.json").write_text("{ not json")  # a damaged index: reported, a new one started
    assert main(["reproduce", "--profile", "smoke", "--force"]) == 0
    assert "unreadable" in capsys.readouterr().err
    assert json.loads((out / "index.json").read_text())["demo.ipynb"]["status"] == "done"


# ------------------------------------------------------------------ reader during replacement
def _blobs(token: str) -> dict:
    hist = f"round,token\n1,{token}\n".encode()
    summary = {"files": {}, "token": token}
    import hashlib

    summary["files"] = {n: hashlib.sha256(b).hexdigest() for n, b in
                        (("history.csv", hist), ("clients.csv", b""))}
    return {"config.json": json.dumps({"config": {"paradigm": "toy"}}).encode(), "history.csv": hist,
            "clients.csv": b"", "summary.json": json.dumps(summary).encode()}


@pytest.mark.parametrize("exchange", [True, False], ids=["rename-exchange", "fallback"])
def test_a_reader_never_sees_a_result_absent_while_it_is_replaced(exchange, tmp_path, monkeypatch):
    if not exchange:
        monkeypatch.setattr(store_mod, "exchange", lambda a, b: False)
    store = ResultStore(tmp_path)
    h = "ab" * 32
    store.write_folder(h, _blobs("first"))
    stop = threading.Event()
    writes = [0]

    def writer():
        i = 0
        while not stop.is_set() and i < 400:
            store.write_folder(h, _blobs(f"w{i}"))
            i += 1
        writes[0] = i

    absent = {"status": 0, "get": 0, "show": 0, "list": 0}
    reads = 0
    t = threading.Thread(target=writer)
    t.start()
    try:
        while t.is_alive():
            reads += 1
            absent["status"] += store.status(h)[0] == "missing"
            absent["get"] += store.get(h, warn=False) is None
            try:
                absent["show"] += store.show(h[:12])["status"] != "done"
            except FedlibError:
                absent["show"] += 1
            table = store.list()
            absent["list"] += not (table["hash"] == h[:12]).any()
    finally:
        stop.set()
        t.join()
    assert writes[0] >= 50 and reads >= 10
    if exchange:  # Linux: one renameat2(RENAME_EXCHANGE) — the folder never disappears
        assert absent == {"status": 0, "get": 0, "show": 0, "list": 0}, (absent, reads)
    # without the exchange call (other systems) readers wait while a swap is under way, which makes an
    # "absent" answer rare but not impossible on a loaded machine (a listing can fall between two
    # renames: 12 in 516 reads were seen under load); there the test asserts what the fallback does
    # guarantee — every write lands whole and nothing is left aside
    assert store.has(h) and not list(tmp_path.glob(".*"))  # nothing left aside
