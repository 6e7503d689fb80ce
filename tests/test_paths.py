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
