"""The files of one stored result (split from :mod:`fedlib.experiments.results.store`): their byte formats
(CSV tables that read back bit for bit, canonical JSON, the checkpoint container with the sha256 of its
payload), checksums, and the renames that put a finished result in place atomically (Linux
``renameat2(RENAME_EXCHANGE)``, else a plain rename)."""

from __future__ import annotations

import ctypes
import errno
import hashlib
import io
import json
import os
import time
from pathlib import Path

import pandas as pd

from fedlib.core.dataclass_io import json_clean
from fedlib.core.errors import FedlibError

__all__ = ["DamagedEntry", "rename_onto_free", "exchange", "json_field", "mtime_text", "check_path_length",
           "sha256_hex", "json_bytes", "frame_to_csv", "csv_to_frame", "NOFOLLOW", "CHECKPOINT_FORMAT",
           "checkpoint_bytes", "checkpoint_problem", "read_checkpoint"]


class DamagedEntry(Exception):
    """A store entry that is not a readable result folder (``entry_problem``)."""


def rename_onto_free(src: Path, dst: Path) -> bool:
    """Rename ``src`` to ``dst``; False (nothing done) when ``dst`` is taken by another entry."""
    try:
        os.rename(src, dst)
        return True
    except OSError as err:
        if err.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR, errno.ENOTDIR):
            raise
    return False


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unavailable."""
    func = _renameat2()
    if func is None:
        return False
    if func(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0:  # AT_FDCWD, RENAME_EXCHANGE
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    if err == errno.ENOENT:
        return False  # the target vanished meanwhile: a plain rename follows
    raise OSError(err, os.strerror(err), str(b))


_RENAMEAT2: list = []


def _renameat2():
    if not _RENAMEAT2:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
        except (OSError, AttributeError):
            fn = None
        _RENAMEAT2.append(fn)
    return _RENAMEAT2[0]


def json_field(blob, key: str | None = None) -> dict:
    """``json.loads(blob)`` (its ``key`` entry) as a dict; {} for a missing or unreadable blob."""
    try:
        out = json.loads(blob) if blob else {}
        out = out.get(key, {}) if key and isinstance(out, dict) else out
    except Exception:  # noqa: BLE001 - a damaged file reads as nothing; status says why
        return {}
    return out if isinstance(out, dict) else {}


def mtime_text(d: Path) -> str | None:
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(os.lstat(d).st_mtime))
    except OSError:
        return None


def check_path_length(path: Path) -> None:
    """FedlibError for a path the file system cannot hold (a name over 255 bytes, or too long)."""
    text = str(path)
    longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
    if longest > 255 or len(os.fsencode(text)) > 4000:
        raise FedlibError(f"the result store path {text[:60]!r}... ({len(text)} characters) is too long "
                          "for the file system (a folder name holds at most 255 bytes)",
                          "set FEDLIB_RESULTS (or --results / store=) to a shorter path")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_bytes(obj) -> bytes:
    return (json.dumps(json_clean(obj), indent=2, sort_keys=True, allow_nan=False) + "\n").encode()


def frame_to_csv(df: pd.DataFrame) -> bytes:
    if df is None or (df.empty and len(df.columns) == 0):
        return b""
    return df.to_csv(index=False).encode()


# pandas < 3 parses floats with a fast, slightly inexact parser unless asked for round-trip;
# pandas >= 3 is exact by default and deprecates the argument
_ROUND_TRIP = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def csv_to_frame(data: bytes) -> pd.DataFrame:
    """Exact inverse of :func:`frame_to_csv`: floats read back bit for bit."""
    if not data.strip():
        return pd.DataFrame()
    return pd.read_csv(io.BytesIO(data), **_ROUND_TRIP)


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


CHECKPOINT_FORMAT = 2  # 2: {"format", "sha256", "payload": torch.save bytes of the state}


def checkpoint_bytes(state: dict) -> bytes:
    """A checkpoint file: ``state`` saved by torch, inside a container with the sha256 of those bytes."""
    import torch

    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    out = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, "sha256": sha256_hex(payload),
                "payload": torch.frombuffer(bytearray(payload), dtype=torch.uint8)}, out)
    return out.getvalue()


def checkpoint_problem(outer) -> str | None:
    """Why a loaded checkpoint file is not a sound format-2 container (None when it is)."""
    import torch

    if not isinstance(outer, dict) or outer.get("format") != CHECKPOINT_FORMAT:
        return "it was written by an older fedlib (no checksum) or is not a checkpoint"
    if not isinstance(outer.get("payload"), torch.Tensor) or outer["payload"].dtype != torch.uint8:
        return "its payload is missing"
    if sha256_hex(outer["payload"].numpy().tobytes()) != outer.get("sha256"):
        return "its checksum does not match (truncated or modified)"
    return None


def read_checkpoint(path: Path, h: str) -> tuple[dict | None, str | None]:
    """``(state, None)`` for a sound checkpoint of config hash ``h`` at ``path``, else ``(None, why)``.
    Read with ``torch.load(weights_only=True)`` only: it never runs code."""
    import torch

    state = None
    try:
        outer = torch.load(path, map_location="cpu", weights_only=True)
        problem = checkpoint_problem(outer)
        if problem is None:
            raw = outer["payload"].numpy().tobytes()
            state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
            problem = None if isinstance(state, dict) and state.get("config_hash") == h \
                else "it belongs to another config"
    except Exception as err:  # noqa: BLE001 - corrupt or unsafe: never executed, start over
        problem = f"it is unreadable ({type(err).__name__}: {str(err)[:200]})"
    return (state, None) if problem is None else (None, problem)
