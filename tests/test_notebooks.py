"""Every notebook follows the conventions (docs/NOTEBOOKS.md) and is covered by CI's nbval run."""

import re
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
SCRIPTS = sorted((ROOT / "notebooks").rglob("*.py"))
EXPECTED_GROUPS = {"fedqs", "smofi", "tutorials"}


def test_there_are_notebooks_for_every_group():
    groups = {p.parent.name for p in BOOKS}
    assert EXPECTED_GROUPS <= groups, f"missing notebook groups: {EXPECTED_GROUPS - groups}"


def test_ci_runs_nbval_over_every_notebook():
    """CI's test command runs nbval on the whole notebooks/ folder, so no notebook is left out."""
    makefile = (ROOT / "Makefile").read_text()
    test_recipe = makefile.split("\ntest:")[1].split("\n\n")[0]
    assert re.search(r"--nbval-lax\b.*\bnotebooks\s*$", test_recipe, re.M), test_recipe
    assert "FEDLIB_PROFILE=smoke" in makefile or "FEDLIB_PROFILE ?= smoke" in makefile
    from fedlib.reproduce import find_notebooks

    assert find_notebooks(ROOT) == BOOKS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_script_has_its_notebook(script):
    assert script.with_suffix(".ipynb").exists(), f"run: jupytext --sync {script.relative_to(ROOT)}"


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_conventions(book):
    nb = nbformat.read(book, as_version=4)
    assert nb.cells[0].cell_type == "markdown", "first cell must state the paper's claim"
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    assert re.search(r"^profile\s*=\s*\"auto\"", params[0].source, re.M)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit notebooks without outputs"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "resolve_profile(profile)" in code
    if book.parent.name in ("fedqs", "smofi"):  # the paper-table notebooks (not the tutorials, not the scoreboard)
        assert "save_comparison(" in code, "table notebooks end with the paper-vs-measured table"


@pytest.mark.parametrize("book", BOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_is_in_sync_with_its_script(book):
    script = book.with_suffix(".py")
    assert script.exists(), f"pair it: jupytext --set-formats ipynb,py:percent {book.relative_to(ROOT)}"
    from_script = [c.source.strip() for c in jupytext.read(script).cells if c.cell_type == "code"]
    from_book = [c.source.strip() for c in nbformat.read(book, as_version=4).cells if c.cell_type == "code"]
    assert from_script == from_book, f"out of sync: jupytext --sync {script.relative_to(ROOT)}"
