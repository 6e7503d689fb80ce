"""Where a notebook's reports go: the checkout's ``reports/<profile>`` or ``$FEDLIB_REPORT_DIR``."""

from __future__ import annotations

import os
from pathlib import Path


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The checkout holding ``notebooks/`` (walking up from ``start`` or the working directory)."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "notebooks").is_dir() and (folder / "pyproject.toml").exists():
            return folder
    return here


def report_dir(profile: str, group: str = "") -> Path:
    """``$FEDLIB_REPORT_DIR`` (set by ``fedlib reproduce``) or ``<project>/reports/<profile>``."""
    root = Path(os.environ.get("FEDLIB_REPORT_DIR") or project_root() / "reports" / profile)
    out = root / group if group else root
    out.mkdir(parents=True, exist_ok=True)
    return out
