"""What a report is executed from: a notebook's study module (``fedlib/studies/<group>/<name>.py``), the
profiles its ``SETTINGS`` names, and the key that says whether a report is current (:func:`report_key`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from fedlib.core.errors import FedlibError


def study_module(book: Path) -> Path | None:
    """The study a notebook displays: ``fedlib/studies/<group>/<name>.py`` beside the checkout's
    ``notebooks/<group>/<name>.ipynb`` (its grid, settings per profile and evidence; None when the
    notebook has none and still holds its own logic)."""
    parts = book.resolve().parts
    if "notebooks" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("notebooks")
    path = Path(*parts[:i], "fedlib", "studies", *parts[i + 1:]).with_suffix(".py")
    return path if path.is_file() else None


def _settings_keys(source: str) -> set[str] | None:
    """The string keys of a module-level ``SETTINGS = {...}`` literal in ``source`` (None: no such dict)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        target = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if isinstance(getattr(node, "value", None), ast.Dict) and any(
                isinstance(t, ast.Name) and t.id == "SETTINGS" for t in target):
            return {k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return None


def notebook_profiles(book: Path) -> set[str] | None:
    """The profiles ``book`` defines: the string keys of the ``SETTINGS = {...}`` dict of its study
    module (:func:`study_module`), or of the notebook itself when it has none (None: no such dict)."""
    study = study_module(book)
    if study is not None:
        found = _settings_keys(study.read_text(encoding="utf-8"))
        if found is not None:
            return found
    try:
        cells = json.loads(book.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError) as err:
        raise FedlibError(f"cannot read notebook {book.name}: {err}") from None
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        found = _settings_keys("".join(src) if isinstance(src, list) else src)
        if found is not None:
            return found
    return None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def source_key(book: Path) -> str:
    """What a report was executed from: its notebook's cells (type and source), not the metadata.
    [D] A metadata-only change (a kernelspec, a jupytext header filter) alters neither what runs nor
    what a reader sees, so it leaves reports current; an unreadable notebook keys by its bytes."""
    try:
        cells = [[c.get("cell_type"), "".join(c.get("source", ""))] for c in json.loads(book.read_text())["cells"]]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return _sha(book)
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode()).hexdigest()[:16]


def report_key(book: Path) -> str:
    """What a report depends on, as one hash (its index entry's ``key["source"]``): for a notebook with
    a study module (:func:`study_module`), that module's source and the notebook's parameters cell
    (the grid, the settings per profile, the evidence; the profile and parameters are keyed beside
    it), so an edit of the notebook's markdown, figures or tables leaves its reports current; for a
    notebook that still holds its own logic, its whole source (:func:`source_key`)."""
    study = study_module(book)
    if study is None:
        return source_key(book)
    try:
        cells = json.loads(book.read_text())["cells"]
        params = ["".join(c.get("source", "")) for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return _sha(book)
    blob = json.dumps([study.read_text(encoding="utf-8"), params], ensure_ascii=False)
    return "study:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
