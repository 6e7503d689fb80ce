"""One rule for every root folder (issue 45, fedlib.core.paths): ``$FEDLIB_<NAME>`` when set, else a
default folder; the modules that found their roots themselves delegate to it."""

from __future__ import annotations

from pathlib import Path

from fedlib.core import paths


def test_every_root_follows_its_variable(monkeypatch, tmp_path):
    for name, var in paths.ENV.items():
        monkeypatch.setenv(var, str(tmp_path / name))
    from fedlib.data.paths import data_root
    from fedlib.experiments.results.ledger import default_ledger_root
    from fedlib.experiments.results.store import default_root
    from fedlib.reporting.paths import report_dir
    from fedlib.reporting.runs import results_store

    assert default_root() == results_store().root == paths.results_root() == tmp_path / "results"
    assert default_ledger_root() == paths.ledger_root() == tmp_path / "ledger"
    assert data_root() == paths.data_root() == tmp_path / "data"
    assert report_dir("cpu") == paths.reports_root("cpu") == tmp_path / "reports"


def test_defaults_without_variables(monkeypatch, tmp_path):
    for var in paths.ENV.values():
        monkeypatch.delenv(var, raising=False)
    checkout = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(checkout / "notebooks")
    assert paths.project_root() == checkout == paths.package_checkout()
    assert paths.results_root() == Path("results")  # run() and the CLI: the working directory's
    assert paths.results_root(base=paths.project_root()) == checkout / "results"  # the notebooks'
    assert paths.ledger_root() == checkout / "ledger"
    assert paths.reports_root("smoke") == checkout / "reports" / "smoke"
    assert paths.data_root() == Path("data")
    monkeypatch.chdir(tmp_path)
    assert paths.project_root() == tmp_path.resolve()


def test_a_relative_variable_is_made_absolute_where_it_is_read(monkeypatch, tmp_path):
    """``FEDLIB_DATA=../shared/data`` read in one folder names that folder's sibling, also after the
    process moves (a notebook's kernel starts in the notebook's folder): each path variable is made
    absolute against the working directory at the time it is read."""
    from fedlib.data.paths import cache_root, data_root, missing_dataset

    work = tmp_path / "checkout"
    work.mkdir()
    monkeypatch.chdir(work)
    for name, var in paths.ENV.items():
        monkeypatch.setenv(var, f"../shared/{name}")
    monkeypatch.setenv("FEDLIB_CACHE", "./cache")
    shared = tmp_path / "shared"
    roots = {"results": paths.results_root(), "ledger": paths.ledger_root(), "reports": paths.reports_root("cpu"),
             "data": data_root()}
    assert roots == {name: shared / name for name in roots}
    assert cache_root() == work / "cache"
    err = missing_dataset("adult", [Path("../shared/data/adult")], Path("../shared/data"))
    assert f"not found under {shared / 'data'}" in str(err) and "../" not in str(err)


def test_reproduce_passes_absolute_path_variables_to_its_kernels(monkeypatch, tmp_path):
    from fedlib.reproduce import absolute_path_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDLIB_DATA", "../shared/data")
    monkeypatch.setenv("FEDLIB_CACHE", "cache")
    monkeypatch.delenv("FEDLIB_LEDGER", raising=False)
    env = absolute_path_env()
    assert env["FEDLIB_DATA"] == str(tmp_path.parent / "shared" / "data")
    assert env["FEDLIB_CACHE"] == str(tmp_path / "cache") and "FEDLIB_LEDGER" not in env
