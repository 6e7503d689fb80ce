"""The committed reports name no path of the machine that executed them (papermill's
``input_path`` / ``output_path``, a warning's file name): a reader cannot open one, and another
machine's re-execution would change every report's bytes. ``fedlib reproduce`` relativises them
after each execution (:func:`fedlib.reporting.machine_paths.relativise_report`; its own test runs a
tiny notebook in a temporary checkout, ``tests/test_report_data.py``). This test reads the committed
reports themselves: it fails until every report has been executed by a ``fedlib reproduce`` that
does so (re-execute them: ``fedlib reproduce --profile <p> --force``)."""

from pathlib import Path

import pytest

from fedlib.reporting.machine_paths import machine_paths

ROOT = Path(__file__).resolve().parents[1] / "reports"
REPORTS = sorted(p for p in ROOT.glob("*/**/*.ipynb") if p.relative_to(ROOT).parts[0] != "smoke") \
    if ROOT.is_dir() else []


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_report_names_no_machine_path(report):
    found = machine_paths(report)
    assert not found, (f"{report.relative_to(ROOT)} names paths of the machine that executed it "
                       f"(re-execute it with fedlib reproduce --force): {found[:3]}")
