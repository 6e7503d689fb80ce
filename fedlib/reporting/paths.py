"""Where a notebook's reports go: the checkout's ``reports/<profile>`` or ``$FEDLIB_REPORT_DIR``."""

from __future__ import annotations

import os
from pathlib import Path

from fedlib.core.paths import project_root, reports_root  # noqa: F401  (project_root: re-exported)


def report_dir(profile: str, group: str = "") -> Path:
    """``$FEDLIB_REPORT_DIR`` (set by ``fedlib reproduce``) or ``<project>/reports/<profile>``
    (:func:`fedlib.core.paths.reports_root`), created."""
    root = reports_root(profile)
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
