"""Where datasets live (``FEDLIB_DATA``) and where their converted tensor caches go (``FEDLIB_CACHE``)."""

from __future__ import annotations

import os
from pathlib import Path

from fedlib.core import paths
from fedlib.core.errors import FedlibError


def data_root() -> Path:
    """Root folder of the raw datasets: ``$FEDLIB_DATA``, default ``./data`` (:mod:`fedlib.core.paths`)."""
    return paths.data_root()


def user_cache_root() -> Path:
    """The platform's user cache folder for fedlib: ``$XDG_CACHE_HOME/fedlib`` (an absolute path),
    else ``~/Library/Caches/fedlib`` on macOS, ``%LOCALAPPDATA%\\fedlib\\cache`` on Windows,
    ``~/.cache/fedlib`` elsewhere."""
    import sys

    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "fedlib"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fedlib"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "fedlib" / "cache"
    return Path.home() / ".cache" / "fedlib"


def cache_root(root: str | os.PathLike | None = None) -> Path:
    """Folder of converted tensor caches (issue 59): ``$FEDLIB_CACHE`` if set, else the user's cache
    folder (:func:`user_cache_root`); a relative value is made absolute (:func:`fedlib.core.paths.absolute`) — never inside the data folder unless asked (a data folder may
    be shared or read-only, and a cache is not data). ``root`` (the data folder) is not used: it is
    accepted for the callers that pass it. An empty ``FEDLIB_CACHE`` is refused."""
    env = os.environ.get("FEDLIB_CACHE")
    if env is not None:
        if not env.strip():
            raise FedlibError("FEDLIB_CACHE is set but empty (it would put the cache in an unintended folder)",
                              "unset it (the cache then goes to ~/.cache/fedlib) or give a folder, "
                              "e.g. FEDLIB_CACHE=$PWD/data/cache")
        return paths.absolute(env)
    return user_cache_root()


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
