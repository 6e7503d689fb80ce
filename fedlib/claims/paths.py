"""Where the checkout is (the reports, the ledger and the drift record live in it)."""

from __future__ import annotations

from pathlib import Path


def checkout() -> Path:
    """The checkout fedlib is imported from (it holds ``reports/``, ``ledger/``, ``benchmarks/``),
    else the working directory."""
    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").exists() and (here / "reports").is_dir():
        return here
    return Path.cwd()
