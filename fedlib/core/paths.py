"""Where fedlib finds its folders: every root by one rule (issue 45).

    a root = ``$FEDLIB_<NAME>`` when set, else ``<base>/<folder>``

=========  ======================  ==================================================================
root       variable                default (``<base>/<folder>``)
=========  ======================  ==================================================================
project    —                       the checkout (``pyproject.toml`` + ``notebooks/``) above the working
                                   directory, else the working directory (:func:`project_root`)
results    ``FEDLIB_RESULTS``      ``./results`` for ``run()`` and the CLI; ``<project>/results`` for
                                   the notebooks (:func:`results_root` with ``base=project_root()``)
checkout   —                       the checkout fedlib is imported from, else the working directory
                                   (:func:`checkout`: ``reports/``, ``benchmarks/`` for the claims)
ledger     ``FEDLIB_LEDGER``       ``ledger/`` of the checkout fedlib is imported from, else ``./ledger``
reports    ``FEDLIB_REPORT_DIR``   ``<project>/reports/<profile>`` (set by ``fedlib reproduce``)
data       ``FEDLIB_DATA``         ``./data`` (the tensor caches: ``fedlib.data.paths.cache_root``)
=========  ======================  ==================================================================

A variable's value is made absolute where it is read (:func:`absolute`: ``~`` expanded, a relative
value taken against the working directory of that moment), so error messages show the folder fedlib
looked in; ``fedlib reproduce`` passes the absolute values on to its kernels, which start in another
folder.

The modules that used to state these rules themselves delegate here: ``fedlib.reporting.paths``
(project, reports), ``fedlib.reporting.runs.results_store`` and ``fedlib.experiments.results.store.default_root``
(results), ``fedlib.experiments.results.ledger.default_ledger_root`` (ledger), ``fedlib.data.paths.data_root``
(data).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV", "PATH_VARIABLES", "absolute", "is_checkout", "project_root", "package_checkout", "checkout", "env_root", "results_root",
           "ledger_root", "reports_root", "data_root"]

#: the environment variable of each root
ENV = {"results": "FEDLIB_RESULTS", "ledger": "FEDLIB_LEDGER", "reports": "FEDLIB_REPORT_DIR",
       "data": "FEDLIB_DATA"}


#: path variables that name no root here (the tensor caches, :func:`fedlib.data.paths.cache_root`)
PATH_VARIABLES = ("FEDLIB_CACHE",)


def absolute(value: str | os.PathLike) -> Path:
    """``value`` with ``~`` expanded, as an absolute path (a relative one against the working directory)."""
    return Path(os.path.abspath(Path(value).expanduser()))


def is_checkout(folder: Path) -> bool:
    """A fedlib checkout: ``pyproject.toml`` beside ``notebooks/``."""
    return (folder / "pyproject.toml").exists() and (folder / "notebooks").is_dir()


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The checkout holding ``notebooks/`` (walking up from ``start`` or the working directory),
    else that directory."""
    here = Path(start or os.getcwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), here)


def package_checkout() -> Path | None:
    """The checkout fedlib is imported from (None for an installed package)."""
    checkout = Path(__file__).resolve().parents[2]
    return checkout if is_checkout(checkout) else None


def checkout() -> Path:
    """The checkout fedlib is imported from (it holds ``reports/``, ``ledger/``, ``benchmarks/``),
    else the working directory."""
    return package_checkout() or Path.cwd()


def env_root(name: str, default: Path | str) -> Path:
    """The rule: ``$FEDLIB_<NAME>`` (:data:`ENV`) when set, made absolute (:func:`absolute`), else ``default``."""
    value = os.environ.get(ENV[name])
    return absolute(value) if value else Path(default)


def results_root(base: Path | None = None) -> Path:
    """The result store's root: ``$FEDLIB_RESULTS``, else ``<base>/results`` (``./results``)."""
    return env_root("results", Path(base or "") / "results")


def ledger_root() -> Path:
    """The ledger: ``$FEDLIB_LEDGER``, else ``ledger/`` of :func:`package_checkout`, else ``./ledger``."""
    return env_root("ledger", Path(package_checkout() or "") / "ledger")


def reports_root(profile: str) -> Path:
    """A profile's report folder: ``$FEDLIB_REPORT_DIR``, else ``<project>/reports/<profile>``."""
    return env_root("reports", project_root() / "reports" / profile)


def data_root() -> Path:
    """The raw datasets: ``$FEDLIB_DATA``, else ``./data``."""
    return env_root("data", "data").expanduser()
