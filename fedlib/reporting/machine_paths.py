"""No path of the machine that executed a report stays in it.

papermill records where it read and wrote a notebook (``metadata.papermill.input_path`` /
``output_path``, and ``cwd`` when given one) as absolute paths of the executing machine, and a
warning printed by a cell names the file it comes from (``/home/me/fedlib/fedlib/x.py:12``). A
reader of a committed report cannot open either, and a re-execution on another machine would change
every report's bytes. :func:`relativise_report` rewrites them relative to the checkout
(``notebooks/fedqs/table2_accuracy.ipynb``), the home folder as ``~``; :func:`machine_paths` finds
what is left (the test of the committed reports uses it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: absolute path prefixes that name a machine's folders (a committed report holds none)
MACHINE_PREFIXES = ("/work/", "/root/", "/home/", "/Users/", "/tmp/")
_PAPERMILL_PATHS = ("input_path", "output_path", "cwd")


def _relative(text: str, root: str, home: str) -> str:
    text = text.replace(root + os.sep, "").replace(root, ".")
    return text.replace(home + os.sep, "~" + os.sep) if home and home != os.sep else text


def _scrub(value, root: str, home: str):
    """``value`` (a notebook's JSON: dicts, lists, strings) with ``root``/``home`` rewritten."""
    if isinstance(value, str):
        return _relative(value, root, home) if (root in value or (home and home in value)) else value
    if isinstance(value, list):
        return [_scrub(v, root, home) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, root, home) for k, v in value.items()}
    return value


def relativise_report(path: Path, root: Path) -> bool:
    """Rewrite the executed notebook ``path`` with every path under ``root`` (the checkout) made
    relative to it and the home folder written ``~``: papermill's metadata and the cells' outputs.
    True when it changed anything (the file is left as it is otherwise)."""
    import json

    from fedlib.core.utils import atomic_write_bytes

    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    real_root, home = str(Path(root).resolve()), os.path.expanduser("~")
    fixed = _scrub(nb, real_root, home)
    if str(root) != real_root:  # a checkout reached through a link: its unresolved spelling too
        fixed = _scrub(fixed, str(root), home)
    pm = fixed.get("metadata", {}).get("papermill", {})
    for key in _PAPERMILL_PATHS:  # a path outside the checkout: its file name only
        if isinstance(pm.get(key), str) and pm[key].startswith(os.sep):
            pm[key] = Path(pm[key]).name if key != "cwd" else "."
    if fixed == nb:
        return False
    text = json.dumps(fixed, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))
    return True


def machine_paths(path: Path) -> list[str]:
    """Where the notebook ``path`` still names an absolute machine path (:data:`MACHINE_PREFIXES`):
    ``"metadata.papermill.input_path: /home/..."`` or ``"cell 3 output: /home/..."`` (at most one
    per place, shortened)."""
    import json

    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    pattern = re.compile("(?<![\\w.~])(" + "|".join(re.escape(p) for p in MACHINE_PREFIXES) + r")[^\s\"']*")
    found = []

    def look(where: str, value) -> None:
        text = json.dumps(value, ensure_ascii=False)
        m = pattern.search(text.replace("\\n", " ").replace("\\/", "/"))
        if m:
            found.append(f"{where}: {m.group(0)[:120]}")

    for key, value in nb.get("metadata", {}).items():
        look(f"metadata.{key}", value)
    for i, cell in enumerate(nb.get("cells", [])):
        look(f"cell {i} outputs", cell.get("outputs", []))
        look(f"cell {i} metadata", cell.get("metadata", {}))
    return found
