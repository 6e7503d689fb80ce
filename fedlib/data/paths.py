"""Where datasets live (``FEDLIB_DATA``) and where their converted tensor caches go (``FEDLIB_CACHE``)."""

from __future__ import annotations

import os
from pathlib import Path

from fedlib.core import paths
from fedlib.core.errors import FedlibError


def data_root() -> Path:
    """Root folder of the raw datasets: ``$FEDLIB_DATA``, default ``./data`` (:mod:`fedlib.core.paths`)."""
    return paths.data_root()


def _writable(path: Path) -> bool:
    """True if ``path`` exists and is writable, or could be created under a writable parent."""
    p = path
    while not p.exists():
        if p.parent == p:
            return False
        p = p.parent
    return p.is_dir() and os.access(p, os.W_OK | os.X_OK)


def cache_root(root: str | os.PathLike | None = None) -> Path:
    """Folder of converted tensor caches.

    ``$FEDLIB_CACHE`` if set (made absolute: :func:`fedlib.core.paths.absolute`); else ``<root>/cache`` (``root`` defaults to :func:`data_root`) when
    writable; else ``~/.cache/fedlib``. A read-only data folder is fine: the cache goes elsewhere.
    """
    env = os.environ.get("FEDLIB_CACHE")
    if env:
        return paths.absolute(env)
    base = Path(root).expanduser() if root is not None else data_root()
    candidate = base / "cache"
    if _writable(candidate):
        return candidate
    return Path.home() / ".cache" / "fedlib"


def missing_dataset(name: str, looked: list[Path], root: Path) -> FedlibError:
    """The error for a dataset that is not where fedlib looks for it."""
    where = "\n    ".join(str(paths.absolute(p)) for p in looked)
    return FedlibError(
        f"dataset {name!r} not found under {paths.absolute(root)}; looked for:\n    {where}",
        f"set FEDLIB_DATA=/path/to/data (the folder holding {name}/), "
        f"or run `fedlib data fetch {name}` to download it",
    )


def corrupt_file(path, what: str, err: BaseException | str) -> FedlibError:
    """The error for a dataset file that exists but cannot be read."""
    return FedlibError(
        f"cannot read {what} {path}: {err} (the file is there but damaged, or not the expected format)",
        "delete it and download it again (`fedlib data fetch NAME --force`); fedlib never trains on it",
    )
