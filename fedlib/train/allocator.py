"""CPU allocator tuning for the engine: keep large tensors on the heap instead of fresh mmaps.

glibc serves allocations above ``M_MMAP_THRESHOLD`` (128 KiB at start) with a fresh ``mmap`` and
returns them to the kernel on free, so every such tensor pays page faults when first written.
A client-stacked step allocates many ~1 MiB activations and gradients per step (the FCN with 10
clients: ``[10, 50, 500]`` floats), and measured on 2 CPU cores those page faults were a third of
the stacked step; a per-client loop's ~100 KiB tensors stay below the threshold. Raising the mmap
and trim thresholds (``mallopt``) lets freed blocks be reused. It changes speed and the process's
retained memory only, never results. Applied once per process on the first CPU training call;
``FEDLIB_TUNE_MALLOC=0`` turns it off. A no-op without glibc.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["tune_malloc"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done: bool | None = None


def tune_malloc(mmap_threshold: int = 64 << 20, trim_threshold: int = 1 << 30) -> bool:
    """Raise glibc's mmap/trim thresholds once; ``True`` if they are set (now or before)."""
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get("FEDLIB_TUNE_MALLOC", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) == 1
        ok = libc.mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)) == 1 and ok
    except (OSError, AttributeError):
        return False
    _done = bool(ok)
    return _done
