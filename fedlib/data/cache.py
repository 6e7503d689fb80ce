"""Convert a raw dataset once into a compact tensor file, then load that file in seconds.

A cache file holds ``{"format", "name", "options", "fingerprint", "checksum", "payload"}``:

* ``fingerprint`` — (path, size, mtime) of every source file (for a folder: file count, total
  size and newest mtime of everything under it). A changed source rebuilds the cache.
* ``checksum`` — CRC-32 of every tensor's bytes (and of the non-tensor payload), so a damaged
  or truncated cache is detected and rebuilt instead of silently feeding wrong data.
* ``payload`` — ``train_x, train_y, test_x, test_y`` tensors, ``num_classes``, ``meta``,
  ``mean``, ``std`` (only plain types: it is loaded with ``weights_only=True``).

Files are written atomically (temp file + rename), so an interrupted conversion leaves no
half-written cache behind.
"""

from __future__ import annotations

import hashlib
import logging
import os
import zlib
from pathlib import Path

import torch

from fedlib.core.utils import atomic_torch_save, safe_torch_load

FORMAT = 1
SPLIT_KEYS = ("train_x", "train_y", "test_x", "test_y")
log = logging.getLogger("fedlib.data")


def fingerprint(paths) -> list:
    """(path, size, mtime) of each source; folders are summarised by walking them."""
    out = []
    for p in paths:
        p = Path(p).resolve()
        if p.is_dir():
            count = size = newest = 0
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                for fn in filenames:
                    st = os.stat(os.path.join(dirpath, fn))
                    count += 1
                    size += st.st_size
                    newest = max(newest, st.st_mtime_ns)
            out.append([str(p), "dir", count, size, newest])
        else:
            st = p.stat()
            out.append([str(p), "file", 1, st.st_size, st.st_mtime_ns])
    return out


def _crc(obj, crc: int = 0) -> int:
    """CRC-32 over the tensors (bytes, dtype, shape) and plain values of a nested payload."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        crc = zlib.crc32(f"{t.dtype}{tuple(t.shape)}".encode(), crc)
        if t.numel():
            crc = zlib.crc32(t.view(torch.uint8).reshape(-1).numpy() if t.dtype != torch.bool
                             else t.to(torch.uint8).numpy(), crc)
        return crc
    if isinstance(obj, dict):
        for k in sorted(obj, key=str):
            crc = _crc(obj[k], zlib.crc32(str(k).encode(), crc))
        return crc
    if isinstance(obj, (list, tuple)):
        for v in obj:
            crc = _crc(v, crc)
        return crc
    return zlib.crc32(repr(obj).encode(), crc)


def cache_path(cache_dir: Path, name: str, source: Path, options: dict) -> Path:
    """One file per (dataset, source location, loader options, cache format)."""
    key = repr((str(Path(source).resolve()), sorted(options.items()), FORMAT))
    h = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(cache_dir) / f"{name}-{h}.pt"


def _valid(blob, name: str, fp: list, options: dict) -> str | None:
    """``None`` if ``blob`` is a sound cache for these sources/options, else the reason."""
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        return "old or unknown format"
    if blob.get("name") != name or blob.get("options") != _plain(options):
        return "different dataset/options"
    if blob.get("fingerprint") != fp:
        return "source files changed"
    payload = blob.get("payload")
    if not isinstance(payload, dict):
        return "missing payload"
    if "train_x" in payload:  # a split payload (images, tabular); text stores a compact stream
        if any(not isinstance(payload.get(k), torch.Tensor) for k in SPLIT_KEYS):
            return "missing tensors"
        if payload["train_x"].shape[0] != payload["train_y"].shape[0] or \
                payload["test_x"].shape[0] != payload["test_y"].shape[0]:
            return "inconsistent shapes"
    if _crc(payload) != blob.get("checksum"):
        return "checksum mismatch"
    return None


def _plain(options: dict) -> dict:
    return {str(k): (list(v) if isinstance(v, tuple) else v) for k, v in sorted(options.items())}


def load_or_build(name: str, source: Path, sources: list, options: dict, build, cache_dir: Path):
    """Return the cached payload for ``name`` built from ``source``, converting on first use.

    ``sources`` are the files/folders whose fingerprint guards the cache; ``build()`` returns
    the payload dict. Returns ``(payload, path, built)``.
    """
    fp = fingerprint(sources)
    path = cache_path(cache_dir, name, source, options)
    if path.exists():
        try:
            blob = safe_torch_load(path)
            reason = _valid(blob, name, fp, options)
        except Exception as err:  # truncated/garbled file: rebuild it
            reason = f"unreadable ({type(err).__name__})"
        if reason is None:
            return blob["payload"], path, False
        log.warning("fedlib: rebuilding cache %s (%s)", path, reason)
    log.info("fedlib: converting %s from %s (once) -> %s", name, source, path)
    payload = build()
    blob = {"format": FORMAT, "name": name, "options": _plain(options), "fingerprint": fp,
            "checksum": _crc(payload), "payload": payload}
    try:
        atomic_torch_save(blob, path)
    except OSError as err:  # a read-only cache folder must not stop the run
        log.warning("fedlib: could not write cache %s (%s); continuing without it", path, err)
    return payload, path, True
