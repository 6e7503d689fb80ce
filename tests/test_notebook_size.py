"""Issue 56: the paper notebooks display their study; the logic lives in ``fedlib/studies``.

Every paper notebook (``notebooks/fedqs``, ``notebooks/smofi``) has a study module beside it, whose ``SETTINGS``
names the profiles ``fedlib reproduce`` runs it at, and the notebooks' code stays small (the issue's budget:
900 code lines in all, comments and blank lines aside)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedlib.reproduce import notebook_profiles, study_module

ROOT = Path(__file__).resolve().parents[1]
PAPER_BOOKS = sorted(p for group in ("fedqs", "smofi") for p in (ROOT / "notebooks" / group).glob("*.ipynb"))
CODE_BUDGET = 900


def code_lines(script: Path) -> int:
    """Non-blank lines of a jupytext script that are not comments (markdown cells are comments there)."""
    return sum(1 for line in script.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.lstrip().startswith("#"))


@pytest.mark.parametrize("book", PAPER_BOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_paper_notebook_has_a_study_module_that_names_its_profiles(book):
    study = study_module(book)
    assert study is not None, f"{book.name}: no fedlib/studies/{book.parent.name}/{book.stem}.py"
    assert {"smoke", "cpu", "paper"} <= notebook_profiles(book)


def test_the_paper_notebooks_stay_within_the_code_budget():
    lines = {p.stem: code_lines(p.with_suffix(".py")) for p in PAPER_BOOKS}
    assert len(lines) == 13 and sum(lines.values()) <= CODE_BUDGET, lines
