"""What the notebooks share: profiles, where reports go, paper-vs-measured tables.

A *profile* names the scale a notebook runs at:

- ``smoke``: seconds, for CI (nbval); numbers mean nothing, only that the pipeline works.
- ``cpu``: real data at a scale two CPU cores finish in minutes; reduced, never the paper.
- ``paper``: the paper's settings; needs a GPU for the vision and text tasks.

``auto`` resolves to ``$FEDLIB_PROFILE`` when set, else ``paper`` on a CUDA machine and ``cpu`` otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from fedlib.errors import check_choice

PROFILES = ("smoke", "cpu", "paper")
COMPARISON_COLUMNS = ["table", "setting", "metric", "paper", "measured", "profile", "note"]


def resolve_profile(profile: str = "auto") -> str:
    """``auto`` -> $FEDLIB_PROFILE, else ``paper`` with CUDA, else ``cpu``."""
    if profile == "auto":
        profile = os.environ.get("FEDLIB_PROFILE") or _hardware_profile()
    check_choice("profile", profile, PROFILES)
    return profile


def _hardware_profile() -> str:
    import torch

    return "paper" if torch.cuda.is_available() else "cpu"


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


def comparison(rows: list[dict], profile: str) -> pd.DataFrame:
    """Paper vs measured, one row per (table, setting, metric); ``paper`` may be missing (NaN)."""
    df = pd.DataFrame(rows)
    for col in COMPARISON_COLUMNS:
        if col not in df:
            df[col] = profile if col == "profile" else ("" if col in ("note", "setting") else float("nan"))
    return df[COMPARISON_COLUMNS + [c for c in df.columns if c not in COMPARISON_COLUMNS]]


def save_comparison(df: pd.DataFrame, name: str, profile: str, group: str = "") -> Path:
    """Write the notebook's paper-vs-measured table where ``fedlib reproduce`` collects it."""
    path = report_dir(profile, group) / f"{name}.comparison.csv"
    tmp = path.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path


def save_figure(fig, name: str, profile: str, group: str = "") -> Path:
    path = report_dir(profile, group) / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def markdown_table(df: pd.DataFrame, floatfmt: str = "{:.2f}") -> str:
    """A GitHub-flavoured markdown table (no tabulate dependency)."""

    def cell(v) -> str:
        if isinstance(v, float):
            return "" if v != v else floatfmt.format(v)
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def apply_knobs(defaults: dict, namespace: dict, lists=()) -> dict:
    """The profile's settings with every knob the parameters cell set (not ``None``) applied.

    A string given for a non-string setting is parsed as YAML (papermill passes ``-p tasks "[adult]"``
    as a string); a scalar given for a knob named in ``lists`` becomes a one-element list.
    """
    import yaml

    settings = dict(defaults)
    for key, default in defaults.items():
        value = namespace.get(key)
        if value is None:
            continue
        if isinstance(value, str) and not isinstance(default, str):
            value = yaml.safe_load(value)
        if key in lists and not isinstance(value, (list, tuple)):
            value = [value]
        settings[key] = value
    return settings


def show_settings(settings: dict, profile: str) -> pd.DataFrame:
    """The settings a notebook runs with, as a one-column table printed in every report."""
    return pd.DataFrame({"value": {k: repr(v) for k, v in {"profile": profile, **settings}.items()}})
