"""The identity of a dataset's files: what a run's config hash records about its data (issue 19).

    dataset_fingerprint("cifar10")   # {"dataset": "cifar10", "files": 8, "bytes": 186214114,
                                     #  "sha256": "3f1c…"}  (None when the dataset is not there)

The fingerprint covers every source file the loader reads (``registry.SPECS[name].sources``, folders
walked): each file's path *relative to the data root*, its size and the sha256 of its content, folded
into one sha256. The same files under another root give the same fingerprint (a copy, another
machine); one changed byte gives another, so a result computed on a damaged or different copy is
never served for the real data.

Hashing ~20 MB of CIFAR-10 takes a fraction of a second, but it happens once per file version: each
file's digest is cached under its (absolute path, size, mtime) in ``<cache_root>/fingerprints.json``
(written atomically; a read-only cache folder only costs a re-hash) and in memory for the process.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from fedlib.core.errors import FedlibError
from fedlib.core.utils import atomic_write_bytes

__all__ = ["dataset_fingerprint", "dataset_files"]

CACHE_NAME = "fingerprints.json"
_MEMO: dict[str, str] = {}        # "abs path|size|mtime_ns" -> sha256 of the file
_DISK: dict[str, dict] = {}       # cache file path -> its loaded content
_LOCK = threading.Lock()


def dataset_files(name: str, root=None) -> tuple[Path, list[Path]] | None:
    """(data root, every source file of dataset ``name`` sorted), or None if it is not there."""
    from fedlib.data.registry import SPECS, dataset_root

    root = dataset_root(root)
    spec = SPECS[name]
    try:
        source, layout = spec.locate(root)
    except FedlibError:
        return None
    files: set[Path] = set()
    for src in spec.sources(source, layout):
        src = Path(src)
        if src.is_dir():
            for dirpath, dirnames, filenames in os.walk(src):
                dirnames.sort()
                files.update(Path(dirpath) / f for f in filenames)
        elif src.is_file():
            files.add(src)
    return root, sorted(files)


def _file_digest(path: Path, disk: dict) -> tuple[str, int]:
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    digest = _MEMO.get(key) or disk.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
        disk[key] = digest
    _MEMO[key] = digest
    return digest, st.st_size


def _load_disk(path: Path) -> dict:
    if str(path) not in _DISK:
        try:
            raw = json.loads(path.read_bytes())
            _DISK[str(path)] = raw if isinstance(raw, dict) else {}
        except (OSError, ValueError):
            _DISK[str(path)] = {}
    return _DISK[str(path)]


def dataset_fingerprint(name: str, root=None, cache_dir=None) -> dict | None:
    """The fingerprint of dataset ``name`` under ``root`` (default ``$FEDLIB_DATA``); None when the
    dataset is not there [D: a run cannot start without it, so no stored run carries None]."""
    from fedlib.data.paths import cache_root

    found = dataset_files(name, root)
    if found is None:
        return None
    root, files = found
    cache = Path(cache_dir) if cache_dir is not None else cache_root(root)
    cache_file = cache / CACHE_NAME
    with _LOCK:
        disk = _load_disk(cache_file)
        before = len(disk)
        total, outer = 0, hashlib.sha256()
        base = root.resolve()
        for f in files:
            digest, size = _file_digest(f, disk)
            try:
                rel = f.resolve().relative_to(base).as_posix()
            except ValueError:  # a source outside the root (a symlink): its name only
                rel = f.name
            outer.update(f"{rel}\0{size}\0{digest}\n".encode())
            total += size
        if len(disk) != before:
            try:
                atomic_write_bytes(cache_file, (json.dumps(disk, sort_keys=True) + "\n").encode())
            except OSError:  # a read-only cache folder: hash again next process
                pass
    return {"dataset": name, "files": len(files), "bytes": total, "sha256": outer.hexdigest()}
