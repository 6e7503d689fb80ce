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


#: set by ``fedlib reproduce`` when a notebook runs with extra parameters: appended to every file name
#: the notebook writes, so a run of one column (``-p 'tasks=[cifar10-x0.5]'``) does not overwrite the
#: full report (:func:`fedlib.reproduce.variant_of`)
VARIANT_ENV = "FEDLIB_REPORT_VARIANT"


def report_file(profile: str, group: str, name: str, suffix: str) -> Path:
    """``<report_dir>/<name><variant><suffix>``: where a notebook saves a table or a figure."""
    return report_dir(profile, group) / f"{name}{os.environ.get(VARIANT_ENV, '')}{suffix}"
