"""The raw data beside each report (``<report>.curves.csv``, ``.clients.csv``) and no machine path
in an executed report (:mod:`fedlib.reporting.curves`, :mod:`fedlib.reporting.machine_paths`)."""

import json
from types import SimpleNamespace

import nbformat
import pandas as pd

from fedlib.reporting.curves import report_data, variants, write_report_data
from fedlib.reporting.machine_paths import machine_paths, relativise_report


def _config(algorithm, seed, **over):
    data = {"dataset": "cifar10", "alpha": over.pop("alpha", 0.1), "partition": "dirichlet"}
    return {"algorithm": algorithm, "seed": seed, "paradigm": "safl", "profile": "cpu", "data": data,
            "options": over, "rounds": 3}


class FakeStore:
    """``store.get(h)`` as the result store answers it, from a dict of configs."""

    def __init__(self, configs):
        self.configs = configs

    def get(self, h, warn=True):
        if h not in self.configs:
            return None
        hist = pd.DataFrame({"round": [1, 2, 3], "accuracy": [0.1, None, 0.3], "loss": [2.0, None, 1.0],
                             "wall_time": [1.0, 2.0, 3.0]})
        clients = pd.DataFrame({"round": [1, 1], "client": [0, 1], "samples": [5, 6]})
        return SimpleNamespace(config=self.configs[h], history=hist, clients=clients)


def _hash(i):
    return f"{i:x}" * 64 if i < 10 else f"{i:064x}"


def test_variant_names_the_fewest_fields_that_tell_a_methods_runs_apart():
    configs = {"a": _config("fedavg", 0), "b": _config("fedavg", 1),
               "c": _config("fedqs-avg", 0, momentum=True), "d": _config("fedqs-avg", 0, momentum=False),
               "e": _config("fedavg", 0, alpha=0.5)}
    v = variants(configs)
    # the seed is its own column; momentum differs within FedQS-Avg, α within FedAvg
    assert v["a"] == v["b"] and "Dirichlet α=0.1" in v["a"]
    assert "options.momentum=True" in v["c"] and "options.momentum=False" in v["d"]
    assert "Dirichlet α=0.5" in v["e"]
    assert variants({"a": _config("fedavg", 0), "b": _config("fedavg", 1)}) == {"a": "", "b": ""}


def test_curves_file_has_one_row_per_evaluated_round_with_a_readable_label(tmp_path, capsys):
    h1, h2, gone = _hash(1), _hash(2), _hash(3)
    store = FakeStore({h1: _config("fedqs-avg", 0), h2: _config("fedavg", 1)})
    out = tmp_path / "reports" / "cpu"
    (out / "fedqs").mkdir(parents=True)
    (out / "fedqs" / "t.runs.json").write_text(json.dumps({"report": "fedqs/t.ipynb", "runs": [h1, h2, gone]}))
    written = write_report_data(out, "fedqs/t.ipynb", store=store)
    assert [p.name for p in written] == ["t.curves.csv"]  # this notebook reads no per-client table
    df = pd.read_csv(out / "fedqs" / "t.curves.csv", dtype={"config_hash": str})
    assert list(df.columns) == ["method", "variant", "dataset", "seed", "config_hash", "round", "accuracy", "loss"]
    assert len(df) == 4 and set(df["round"]) == {1, 3}  # round 2 was not evaluated
    assert set(df["method"]) == {"FedQS-Avg", "FedAvg"} and set(df["config_hash"]) == {h1[:12], h2[:12]}
    assert "1 of its 3 runs are in neither" in capsys.readouterr().err
    assert write_report_data(out, "fedqs/t.ipynb", store=store) == []  # unchanged: not rewritten


def test_a_large_curves_file_is_written_gzip_compressed_and_reads_back_the_same(tmp_path, monkeypatch):
    import fedlib.reporting.curves as curves_mod

    h1, h2 = _hash(1), _hash(2)
    store = FakeStore({h1: _config("fedqs-avg", 0), h2: _config("fedavg", 1)})
    out = tmp_path / "reports" / "cpu"
    (out / "fedqs").mkdir(parents=True)
    (out / "fedqs" / "t.runs.json").write_text(json.dumps({"report": "fedqs/t.ipynb", "runs": [h1, h2]}))
    plain = write_report_data(out, "fedqs/t.ipynb", store=store)[0]
    table = pd.read_csv(plain, dtype={"config_hash": str})
    monkeypatch.setattr(curves_mod, "GZIP_ABOVE", 10)  # any real table is larger
    written = write_report_data(out, "fedqs/t.ipynb", store=store)
    assert [p.name for p in written] == ["t.curves.csv.gz"] and not plain.exists()  # one form at a time
    assert curves_mod.existing(plain) == written[0]
    assert written[0].read_bytes()[:2] == b"\x1f\x8b"  # gzip
    pd.testing.assert_frame_equal(pd.read_csv(written[0], dtype={"config_hash": str}), table)
    assert write_report_data(out, "fedqs/t.ipynb", store=store) == []  # same table: not rewritten
    monkeypatch.setattr(curves_mod, "GZIP_ABOVE", 10**9)  # small again: plain CSV, the .gz removed
    assert write_report_data(out, "fedqs/t.ipynb", store=store) == [plain] and not written[0].exists()


def test_clients_file_only_for_a_notebook_that_reads_per_client_tables(tmp_path):
    h = _hash(4)
    store = FakeStore({h: _config("fedavg", 0)})
    out = tmp_path
    (out / "tutorials").mkdir()
    (out / "tutorials" / "safl_basics.runs.json").write_text(json.dumps({"runs": [h]}))
    written = write_report_data(out, "tutorials/safl_basics.ipynb", store=store)
    assert sorted(p.name for p in written) == ["safl_basics.clients.csv", "safl_basics.curves.csv"]
    clients = pd.read_csv(out / "tutorials" / "safl_basics.clients.csv")
    assert list(clients.columns[:5]) == ["method", "variant", "dataset", "seed", "config_hash"]
    assert len(clients) == 2
    curves, _, missing = report_data([h], store=store)
    assert not missing and curves["method"].tolist() == ["FedAvg", "FedAvg"]


def test_split_methods_read_as_the_paper_names_them():
    from fedlib.reporting.curves import method_name

    assert method_name({"paradigm": "split", "algorithm": "fedavg+smofi"}) == "FedAvg + SMoFi"
    assert method_name({"paradigm": "split", "algorithm": "fedprox+smofi"}) == "FedProx + SMoFi"
    assert method_name({"paradigm": "safl", "algorithm": "fedqs-sgd"}) == "FedQS-SGD"
    assert method_name({"paradigm": "safl", "algorithm": "unknown-x"}) == "unknown-x"


def test_executed_report_carries_no_absolute_machine_path(tmp_path):
    """A tiny notebook executed by ``fedlib reproduce``'s :func:`execute` in a temporary checkout:
    papermill's input/output paths and a path printed by a cell come out relative to the checkout."""
    from fedlib.reproduce import execute

    root = tmp_path / "checkout"
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='x'\n")
    book = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "auto"')
    params.metadata["tags"] = ["parameters"]
    book.cells = [params, nbformat.v4.new_code_cell("import os; print(os.path.abspath('notebooks/a.ipynb'))")]
    nbformat.write(book, root / "notebooks" / "a.ipynb")
    out = root / "reports" / "smoke"
    execute(root / "notebooks" / "a.ipynb", root, out, "smoke")
    report = out / "a.ipynb"
    meta = json.loads(report.read_text())["metadata"]["papermill"]
    assert meta["input_path"] == "notebooks/a.ipynb" and meta["output_path"] == "reports/smoke/a.ipynb"
    assert str(tmp_path) not in report.read_text()
    assert machine_paths(report) == []
    nbformat.read(report, as_version=4)  # still a valid notebook


def test_relativise_report_rewrites_paths_under_the_checkout_and_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    root = tmp_path / "repo"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", text=f"{root}/fedlib/x.py:3: Warning\n"
                                                          "/home/someone/.cache/y: note\n")]
    nb.cells = [cell]
    nb.metadata["papermill"] = {"input_path": "/elsewhere/in.ipynb", "output_path": str(root / "r" / "o.ipynb"),
                                "cwd": str(root)}
    path = root / "o.ipynb"
    nbformat.write(nb, path)
    assert relativise_report(path, root)
    text = path.read_text()
    assert str(tmp_path) not in text and "/home/someone" not in text and "~/.cache/y" in text
    pm = json.loads(text)["metadata"]["papermill"]
    assert pm == {"input_path": "in.ipynb", "output_path": "r/o.ipynb", "cwd": "."}
    assert not relativise_report(path, root)  # nothing left to change: the file is not rewritten


def test_reader_facing_library_text_cites_no_issue_number():
    """What the library writes into reports and indexes gives the reason, never "issue 34": a reader
    of the reports cannot open the project's issues."""
    import re

    from fedlib.reporting.coverage import not_run
    from fedlib.reporting.profiles import PROFILES

    texts = [f"{r['item']} {r['reason']}" for p in PROFILES for r in not_run(p)]
    assert texts and not [t for t in texts if re.search(r"\bissues? ?#?\d+", t, re.I)]
