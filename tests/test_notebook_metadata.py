"""Notebooks open cleanly in JupyterLab (issue 20): kernelspec, language_info, stable open/save
through jupytext, spec links that resolve, parameter hints; no tqdm warning in the reports."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
IDS = [str(p.relative_to(ROOT)) for p in BOOKS]


def _tool():
    spec = importlib.util.spec_from_file_location("notebook_meta", ROOT / "tools" / "notebook_meta.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_mechanical_parts_are_uniform(capsys):
    """`python tools/notebook_meta.py --fix` has nothing left to do."""
    assert _tool().main(["--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("book", BOOKS, ids=IDS)
def test_metadata_is_what_jupyterlab_writes(book):
    tool = _tool()
    meta = json.loads(book.read_text())["metadata"]
    assert meta["kernelspec"] == tool.KERNELSPEC  # else: a "Select Kernel" dialog / a rewrite
    assert meta["language_info"] == tool.LANGUAGE_INFO  # else: modified as soon as the kernel starts
    assert meta["jupytext"]["formats"] == "ipynb,py:percent"
    assert "main_language" not in meta["jupytext"]
    cells = json.loads(book.read_text())["cells"]
    assert all(c.get("id") for c in cells), "cell ids, as JupyterLab writes them"


def test_open_and_save_through_jupytext_change_no_file(tmp_path):
    """JupyterLab's contents manager (jupytext's) reads each pair and saves it: every byte stays."""
    from jupyter_server.services.contents.largefilemanager import LargeFileManager
    from jupytext.sync_contentsmanager import build_sync_jupytext_contents_manager_class

    TextFileContentsManager = build_sync_jupytext_contents_manager_class(LargeFileManager)

    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy2(ROOT / "jupytext.toml", tmp_path / "jupytext.toml")
    cm = TextFileContentsManager(root_dir=str(tmp_path))
    for book in BOOKS:
        rel = book.relative_to(ROOT).as_posix()
        model = cm.get(rel)
        assert model["content"]["metadata"]["kernelspec"]["name"] == "python3"
        cm.save({"type": "notebook", "content": model["content"]}, rel)
    changed = [p.relative_to(tmp_path).as_posix() for p in sorted((tmp_path / "notebooks").rglob("*"))
               if p.is_file() and ".ipynb_checkpoints" not in p.parts and p.read_bytes() != (ROOT / p.relative_to(tmp_path)).read_bytes()]
    assert changed == []


@pytest.mark.parametrize("book", BOOKS, ids=IDS)
def test_first_cell_links_the_spec_it_cites(book):
    first = "".join(json.loads(book.read_text())["cells"][0]["source"])
    links = re.findall(r"\]\(([^)]+\.md)\)", first)
    assert any("docs/spec/" in link for link in links), "link docs/spec/<paper>.md"
    for link in links:
        assert (book.parent / link).resolve().is_file(), link
    assert not re.search(r"spec `(fedqs|smofi)\.md`", first), "an unlinked spec reference"


@pytest.mark.parametrize("book", BOOKS, ids=IDS)
def test_parameters_cell_says_how_to_change_a_value(book):
    cells = json.loads(book.read_text())["cells"]
    params = next(c for c in cells if "parameters" in c["metadata"].get("tags", []))
    first = params["source"][0]
    assert "Run All" in first and "-p NAME=VALUE" in first


def test_jupytext_config_lives_in_the_repository():
    text = (ROOT / "jupytext.toml").read_text()
    assert "outdated_text_notebook_margin" in text
    import tomllib

    tomllib.loads(text)


def test_no_report_carries_a_tqdm_warning_or_a_venv_path():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "reports").rglob("*.ipynb")
                 if re.search(r"TqdmWarning|IProgress not found|site-packages|/\.venv/", p.read_text())]
    assert offenders == []


def test_parameter_lines_parse_for_papermill():
    """papermill reads each parameter's name, type and help from its line, and fails on some comments
    (one holding "=", e.g. "(data.validation=holdout)"): it then warns "Unable to parse line" and
    "Passed unknown parameter" at every execution. Every assignment of a parameters cell must parse."""
    import json
    import logging
    from pathlib import Path

    import nbformat
    from papermill.translators import PythonTranslator

    bad = []
    logging.disable(logging.WARNING)
    try:
        for book in sorted((Path(__file__).resolve().parents[1] / "notebooks").rglob("*.ipynb")):
            for cell in json.loads(book.read_text())["cells"]:
                if "parameters" not in cell.get("metadata", {}).get("tags", []):
                    continue
                source = "".join(cell["source"])
                names = {p.name for p in PythonTranslator.inspect(nbformat.v4.new_code_cell(source))}
                for line in source.splitlines():
                    target = line.split("=")[0].strip()
                    if "=" in line and not line.startswith("#") and target.isidentifier() and target not in names:
                        bad.append(f"{book.name}: {line.strip()}")
    finally:
        logging.disable(logging.NOTSET)
    assert not bad, bad
