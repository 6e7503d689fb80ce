"""The committed reports hold no orphan: every file under ``reports/<profile>/`` belongs to an
execution the profile's index lists (a figure or table of a variant whose entry was dropped reads as a
current result to someone browsing the folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "reports"
# the committed profiles (reports/smoke/ is git-ignored: nbval and smoke executions write there freely)
PROFILES = sorted(p for p in ROOT.iterdir() if p.name != "smoke" and (p / "index.json").is_file()) \
    if ROOT.is_dir() else []
SUFFIXES = (".comparison.csv", ".evidence.json", ".not_run.csv", ".curves.csv.gz", ".curves.csv", ".clients.csv", ".runs.json", ".ipynb", ".png",
            ".csv")
OWN = {"README.md", "index.json", ".index.lock"}


def variant(name: str) -> tuple[str, str]:
    """(``name`` up to its first dot, the execution's variant — what follows, without the file kind):
    ``table2_accuracy_paired.tasks-cifar10-x0.5.png`` -> ``("table2_accuracy_paired", "tasks-cifar10-x0.5")``."""
    stem = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)
    base, _, rest = stem.partition(".")
    return base, rest


@pytest.mark.parametrize("folder", PROFILES, ids=lambda p: p.name)
def test_every_report_file_belongs_to_an_indexed_execution(folder):
    index = json.loads((folder / "index.json").read_text())
    listed = {(str(Path(rel).parent), variant(Path(rel).name)[1]) for rel in index}
    orphans = [str(f.relative_to(folder)) for f in sorted(folder.rglob("*"))
               if f.is_file() and f.name not in OWN
               and (str(f.parent.relative_to(folder)), variant(f.name)[1]) not in listed]
    assert not orphans, f"files of no indexed execution (remove them or re-run their report): {orphans}"


def test_variant_parsing():
    assert variant("table2_accuracy.tasks-cifar10-x0.5.comparison.csv") == ("table2_accuracy", "tasks-cifar10-x0.5")
    assert variant("table4_curves.png") == ("table4_curves", "")
    assert variant("table2_accuracy.tasks-adult.curves.csv") == ("table2_accuracy", "tasks-adult")
    assert variant("safl_basics.clients.csv") == ("safl_basics", "")


@pytest.mark.parametrize("folder", PROFILES, ids=lambda p: p.name)
def test_evidence_names_only_runs_its_report_read(folder):
    """Each run hash a committed evidence row names (per seed) is one its report read
    (``<report>.runs.json``) and the ledger holds: a reader can trace every verdict row to its runs."""
    from fedlib.experiments.results.ledger import Ledger

    ledger = Ledger(ROOT.parent / "ledger")
    bad = []
    for ev in sorted(folder.rglob("*.evidence.json")):
        runs_file = ev.with_name(ev.name.replace(".evidence.json", ".runs.json"))
        read = set(json.loads(runs_file.read_text())["runs"]) if runs_file.is_file() else set()
        for row in json.loads(ev.read_text())["rows"]:
            for pair in row.get("runs") or ():
                bad += [f"{ev.relative_to(folder)}: {row['setting']}: {h[:12]}" for h in pair[1:]
                        if h not in read or not ledger.has(h)]
    assert not bad, f"evidence names runs its report did not read or the ledger lacks: {bad[:5]}"
