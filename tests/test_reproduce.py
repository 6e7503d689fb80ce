"""fedlib reproduce: papermill execution into reports/<profile>/, the index, and resuming a batch."""

import json

import nbformat
import pandas as pd
import pytest

from fedlib.core.errors import FedlibError
from fedlib.reporting import comparison, markdown_table, resolve_profile
from fedlib.reproduce import find_notebooks, reproduce

NOTEBOOK_CODE = """
from fedlib.reporting import comparison, save_comparison
rows = [{"table": "T", "setting": "s", "metric": "acc", "paper": 1.0, "measured": 0.5 if profile == "smoke" else 0.9}]
save_comparison(comparison(rows, profile), "demo", profile)
"""


def _project(tmp_path, failing=False):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    book = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "auto"')
    params.metadata["tags"] = ["parameters"]
    code = "raise RuntimeError('boom')" if failing else NOTEBOOK_CODE
    book.cells = [nbformat.v4.new_markdown_cell("# demo"), params, nbformat.v4.new_code_cell(code)]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(book, tmp_path / "notebooks" / "demo.ipynb")
    return tmp_path


def test_reproduce_writes_reports_index_and_resumes(tmp_path):
    root = _project(tmp_path)
    index = reproduce("smoke", root=root)
    assert index["demo.ipynb"]["status"] == "done"
    out = root / "reports" / "smoke"
    assert (out / "demo.ipynb").exists()
    table = pd.read_csv(out / "demo.comparison.csv")
    assert table.loc[0, "measured"] == 0.5 and table.loc[0, "profile"] == "smoke"
    readme = (out / "README.md").read_text()
    assert "demo.ipynb" in readme and "| acc |" in readme.replace("T | s | acc", "| acc |")
    first = json.loads((out / "index.json").read_text())["demo.ipynb"]["finished"]
    again = reproduce("smoke", root=root)  # unchanged source: skipped, entry kept
    assert again["demo.ipynb"]["finished"] == first


def test_failing_notebook_is_recorded_not_fatal(tmp_path):
    root = _project(tmp_path, failing=True)
    index = reproduce("smoke", root=root)
    assert index["demo.ipynb"]["status"] == "failed"
    assert "boom" in index["demo.ipynb"]["error"]
    assert "Not finished" in (root / "reports" / "smoke" / "README.md").read_text()


def test_bad_profile_and_missing_notebook(tmp_path, monkeypatch):
    with pytest.raises(FedlibError, match="unknown profile 'gpu'"):
        resolve_profile("gpu")
    monkeypatch.setenv("FEDLIB_PROFILE", "smoke")
    assert resolve_profile("auto") == "smoke"
    root = _project(tmp_path)
    with pytest.raises(FedlibError, match="no notebook matches"):
        find_notebooks(root, ["nonexistent"])


def test_comparison_and_markdown():
    df = comparison([{"table": "T2", "metric": "acc", "paper": 72.06, "measured": 70.1}], "cpu")
    assert list(df.columns[:7]) == ["table", "setting", "metric", "paper", "measured", "profile", "note"]
    md = markdown_table(df)
    assert "| T2 |  | acc | 72.06 | 70.10 | cpu |  |" in md


def test_markdown_rounds_numbers_a_mixed_csv_column_reads_back_as_text(tmp_path):
    """A measured column holding "not run" and numbers reads back as text: the index still shows 2 decimals."""
    import pandas as pd

    path = tmp_path / "t.csv"
    comparison([{"table": "T2", "metric": "acc", "measured": 30.049166666666668},
                {"table": "T2", "metric": "acc", "measured": "not run"}], "cpu").to_csv(path, index=False)
    md = markdown_table(pd.read_csv(path).astype(object).fillna(""))
    assert "| 30.05 |" in md and "| not run |" in md and "30.049" not in md


def test_markdown_keeps_two_significant_digits_of_small_numbers():
    df = comparison([{"table": "F4", "metric": "loss", "measured": -0.0027959},
                     {"table": "F4", "metric": "acc", "measured": 0.0}], "cpu")
    md = markdown_table(df)
    assert "| -0.0028 |" in md and "| 0.00 |" in md


def test_interval_text_never_prints_an_interval_that_excludes_0_as_zeros():
    from fedlib.reporting.stats import interval_text, number_text

    assert interval_text(1.954, 3.091) == "[1.95, 3.09]"
    assert interval_text(-0.0041, -0.0012) == "[-0.0041, -0.0012]"
    assert interval_text(-0.21, -0.0004) == "[-0.21, -0.00040]"
    assert interval_text(float("nan"), float("nan")) == "[nan, nan]"
    assert number_text(0.0) == "0.00" and number_text(2.5, sign=True) == "+2.50" and number_text(1e-12) == "0.000000"


def test_parse_params():
    from fedlib.reproduce import parse_params

    assert parse_params(["tasks=[adult]", "seeds=3"]) == {"tasks": ["adult"], "seeds": 3}
    with pytest.raises(FedlibError, match="bad notebook parameter"):
        parse_params(["tasks"])


def test_two_batches_sharing_an_index_keep_each_others_entries(tmp_path):
    """Two ``fedlib reproduce`` processes over different notebooks write one index: none is lost."""
    from fedlib.reproduce import _load_index, _record

    out = tmp_path / "reports" / "cpu"
    out.mkdir(parents=True)
    stale_view = _load_index(out)  # what a second batch read when it started: nothing
    _record(out, "a.ipynb", {"status": "done"})
    stale_view["b.ipynb"] = {"status": "done"}
    merged = _record(out, "b.ipynb", stale_view["b.ipynb"])
    assert set(merged) == {"a.ipynb", "b.ipynb"}
    assert set(json.loads((out / "index.json").read_text())) == {"a.ipynb", "b.ipynb"}


def test_apply_knobs_overrides_parses_and_listifies():
    from fedlib.reporting import apply_knobs

    defaults = {"tasks": ["adult-gender"], "rounds": None, "seeds": [0], "preset": "a"}
    knobs = {"tasks": "[adult]", "rounds": "40", "seeds": 3, "preset": None}
    out = apply_knobs(defaults, knobs, lists={"tasks", "seeds"})
    assert out == {"tasks": ["adult"], "rounds": 40, "seeds": [3], "preset": "a"}
    assert defaults["tasks"] == ["adult-gender"]  # the profile's defaults are not modified
    assert apply_knobs({"preset": "a"}, {"preset": "b"}) == {"preset": "b"}  # strings stay strings


def test_index_marks_a_report_stale_when_its_notebook_changed(tmp_path):
    from fedlib.reproduce import write_index

    root = _project(tmp_path)
    index = reproduce("smoke", root=root)
    out = root / "reports" / "smoke"
    assert "stale" not in (out / "README.md").read_text()
    book = nbformat.read(root / "notebooks" / "demo.ipynb", as_version=4)
    book.cells[0].source = "# demo, edited"
    nbformat.write(book, root / "notebooks" / "demo.ipynb")
    write_index(out, "smoke", index)
    readme = (out / "README.md").read_text()
    assert "| stale: executed from an earlier source of the notebook |" in readme
    assert "**Stale** (executed from an earlier source of the notebook)" in readme and "--only demo.ipynb" in readme


def test_a_metadata_only_change_leaves_the_report_current(tmp_path):
    from fedlib.reproduce import write_index

    root = _project(tmp_path)
    index = reproduce("smoke", root=root)
    out = root / "reports" / "smoke"
    book = nbformat.read(root / "notebooks" / "demo.ipynb", as_version=4)
    book.metadata["jupytext"] = {"notebook_metadata_filter": "-jupytext.text_representation.jupytext_version"}
    nbformat.write(book, root / "notebooks" / "demo.ipynb")
    write_index(out, "smoke", index)
    assert "stale" not in (out / "README.md").read_text()
    assert reproduce("smoke", root=root)["demo.ipynb"]["key"] == index["demo.ipynb"]["key"]  # not re-executed


def test_a_run_with_parameters_is_a_variant_beside_the_full_report(tmp_path):
    from fedlib.reproduce import report_rel, variant_of

    assert variant_of({"tasks": ["cifar10-x0.5", "adult"]}) == ".tasks-cifar10-x0.5+adult"
    assert variant_of({}) == "" and report_rel("fedqs/t2.ipynb", None) == "fedqs/t2.ipynb"
    # workers changes how a report is computed, not what it reports: -p workers=2 is the full report
    assert variant_of({"workers": 2}) == "" and variant_of({"workers": 2, "tasks": ["x1"]}) == ".tasks-x1"
    root = _project(tmp_path)
    reproduce("smoke", root=root)
    index = reproduce("smoke", root=root, params={"tasks": ["x1"]})
    out = root / "reports" / "smoke"
    assert index["demo.ipynb"]["status"] == "done"  # the full report is kept
    variant = index["demo.tasks-x1.ipynb"]
    assert variant["status"] == "done" and variant["notebook"] == "demo.ipynb"
    assert (out / "demo.ipynb").exists() and (out / "demo.tasks-x1.ipynb").exists()
    assert (out / "demo.comparison.csv").exists() and (out / "demo.tasks-x1.comparison.csv").exists()
    readme = (out / "README.md").read_text()
    assert "[demo.ipynb (tasks=[x1])](demo.tasks-x1.ipynb)" in readme
    book = nbformat.read(root / "notebooks" / "demo.ipynb", as_version=4)
    book.cells[0].source += " "  # a source edit, however small, makes the reports of the old source stale
    nbformat.write(book, root / "notebooks" / "demo.ipynb")
    reproduce("smoke", root=root, params={"tasks": ["x2"]})
    stale = (out / "README.md").read_text()
    assert "--only demo.ipynb -p 'tasks=[\"x1\"]'" in stale  # the variant is stale, named with its flags


def test_index_adds_a_notebooks_not_run_rows_with_their_reason(tmp_path, monkeypatch):
    """Issue 31: a notebook saves the paper's rows it does not run (``save_not_run``) beside its
    comparison; the index shows them as "not run: reason" rows, and an empty list adds nothing."""
    from fedlib.reporting import not_run_table, save_comparison, save_not_run
    from fedlib.reproduce import write_index

    out = tmp_path / "reports" / "cpu"
    monkeypatch.setenv("FEDLIB_REPORT_DIR", str(out))
    save_comparison(comparison([{"table": "T", "setting": "s", "metric": "acc", "paper": 1.0, "measured": 0.9}],
                               "cpu"), "demo", "cpu", "g")
    rows = [{"table": "T", "setting": "cifar100, FedAvg", "paper": 48.1, "reason": "needs download"},
            {"table": "T", "setting": "vgg16", "reason": "needs a GPU (profile=paper)"}]
    df = not_run_table(rows, "cpu")
    assert list(df.columns) == ["table", "setting", "paper", "reason", "profile"] and df["paper"].isna().iloc[1]
    save_not_run(df, "demo", "cpu", "g")
    save_comparison(comparison([], "cpu"), "empty", "cpu", "g")
    save_not_run(not_run_table([], "cpu"), "empty", "cpu", "g")
    entry = {"status": "done", "seconds": 1.0, "key": {}, "notebook": "g/demo.ipynb"}
    readme = write_index(out, "cpu", {"g/demo.ipynb": entry, "g/empty.ipynb": {**entry, "notebook": "g/empty.ipynb"}})
    text = readme.read_text()
    assert "Rows of the paper not run at this profile (2):" in text
    assert "| T | cifar100, FedAvg | 48.10 | not run: needs download | cpu |" in text
    assert "not run: needs a GPU (profile=paper)" in text
    assert text.count("Rows of the paper not run") == 1  # the empty list adds nothing


TRAINING_CODE = """
from fedlib.experiments import RunConfig
from fedlib.reporting.runs import run_all
run_all([RunConfig.from_preset("toy-smoke")], desc=None)
"""


def test_the_summary_says_executed_skipped_and_recomputed(tmp_path, monkeypatch, capfd):
    """Issue 60: a first batch executes the notebook and trains its run; a second skips it (current,
    naming --force); --force re-renders it from the stored run; --recompute retrains that run. The
    kernels log no "TCP without encryption" warning."""
    from fedlib.reproduce import SKIPPED_NOTE, _cli, register

    root = _project(tmp_path)
    book = nbformat.read(root / "notebooks" / "demo.ipynb", as_version=4)
    book.cells.append(nbformat.v4.new_code_cell(TRAINING_CODE))
    nbformat.write(book, root / "notebooks" / "demo.ipynb")
    monkeypatch.chdir(root)
    monkeypatch.setenv("FEDLIB_RESULTS", "results")  # relative: the kernel gets it made absolute
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())

    def batch(*flags) -> str:
        assert _cli(parser.parse_args(["reproduce", "--profile", "smoke", *flags])) == 0
        out, err = capfd.readouterr()
        assert "IPKernelApp" not in err
        return out

    def row(text: str) -> list[str]:
        return next(line for line in text.splitlines() if line.strip().startswith("demo.ipynb")).split()

    first = batch()
    assert row(first)[1:5] == ["executed", "0", "0", "1"] and "1 executed (trained runs)" in first
    assert (root / "results").is_dir()  # the relative FEDLIB_RESULTS named the checkout's folder
    second = batch()
    assert SKIPPED_NOTE in second and "1 skipped" in second and "0 trained" in second
    forced = batch("--force")
    assert row(forced)[1:5] == ["re-rendered", "0", "1", "0"]
    again = batch("--recompute")
    assert row(again)[1:5] == ["executed", "0", "0", "1"] and "1 trained" in again


def test_a_notebook_with_a_study_module_is_keyed_by_the_study_and_its_parameters(tmp_path):
    """Issue 56: a report depends on its study (``fedlib/studies/<name>.py``), its parameters and its
    profile; a figure-title or markdown edit of the notebook leaves it current, a study edit or a new
    parameter default makes it stale, and the study's ``SETTINGS`` names the notebook's profiles."""
    from fedlib.reproduce import notebook_profiles, report_key, study_module, write_index

    root = _project(tmp_path)
    book_path = root / "notebooks" / "demo.ipynb"
    assert study_module(book_path) is None
    study = root / "fedlib" / "studies" / "demo.py"
    study.parent.mkdir(parents=True)
    study.write_text('SETTINGS = {"smoke": {}, "long": {}}\n')
    assert study_module(book_path) == study and notebook_profiles(book_path) == {"smoke", "long"}
    index = reproduce("smoke", root=root)
    out = root / "reports" / "smoke"
    assert index["demo.ipynb"]["key"]["source"] == report_key(book_path) and \
        index["demo.ipynb"]["key"]["source"].startswith("study:")
    book = nbformat.read(book_path, as_version=4)
    book.cells[0].source = "# demo, a new title"
    book.cells[2].source += "\n# a figure title edited"
    nbformat.write(book, book_path)
    write_index(out, "smoke", index)
    assert "stale" not in (out / "README.md").read_text()
    study.write_text('SETTINGS = {"smoke": {"seeds": [0, 1]}, "long": {}}\n')
    write_index(out, "smoke", index)
    assert "stale: executed from an earlier study (fedlib/studies) or parameters" in (out / "README.md").read_text()
    study.write_text('SETTINGS = {"smoke": {}, "long": {}}\n')
    book.cells[1].source = 'profile = "auto"\nseeds = None'
    nbformat.write(book, book_path)
    write_index(out, "smoke", index)
    assert "stale" in (out / "README.md").read_text()
