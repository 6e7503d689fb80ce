"""Small shared helpers: devices, threads, seeded random streams, atomic writes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import torch


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """``None``/``"auto"`` -> CUDA when present, else CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def set_threads(n: int | None) -> int:
    """Fix the number of intra-op threads (tiny models run faster with 1 on a busy CPU)."""
    if n:
        torch.set_num_threads(int(n))
    return torch.get_num_threads()


def default_threads() -> int:
    """Torch threads for one run: ``$FEDLIB_THREADS`` if set, else 1.

    Measured on the 2-core build machines (``benchmarks/README.md``): two threads in one process
    train the small conv nets ~10x slower than one (contention), so fedlib uses the second core
    through a second process (``fedlib.experiments.sweep``), not a second thread. ``0`` leaves
    torch's own setting alone.
    """
    raw = os.environ.get("FEDLIB_THREADS", "").strip()
    if not raw:
        return 1
    try:
        n = int(raw)
    except ValueError:
        n = -1  # not an integer: the same message as a negative one
    if n < 0:
        from fedlib.core.errors import FedlibError

        raise FedlibError(f"FEDLIB_THREADS must be an integer >= 0, got {raw!r}",
                          "unset it (one thread per run) or set e.g. FEDLIB_THREADS=2")
    return n


def derive_seed(*parts) -> int:
    """A 63-bit seed derived from any tuple of ints/strings (run seed, client id, round, ...).

    Independent of process, worker or batching order: the same parts give the same seed anywhere.
    """
    h = hashlib.sha256(repr(tuple(parts)).encode()).digest()
    return int.from_bytes(h[:8], "little") & ((1 << 63) - 1)


def generator(*parts, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` seeded by :func:`derive_seed` of ``parts``."""
    g = torch.Generator(device=device)
    g.manual_seed(derive_seed(*parts))
    return g


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file + rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_torch_save(obj, path: str | os.PathLike) -> None:
    """``torch.save`` through :func:`atomic_write_bytes` (load back with ``weights_only=True``)."""
    import io

    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write_bytes(path, buf.getvalue())


def safe_torch_load(path: str | os.PathLike, map_location="cpu"):
    """``torch.load`` that never executes code from the file."""
    return torch.load(path, map_location=map_location, weights_only=True)
