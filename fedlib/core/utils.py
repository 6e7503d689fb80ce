"""Small shared helpers: devices, threads, seeded random streams, atomic writes, the evaluation cadence."""

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


def check_device(device) -> None:
    """Raise :class:`~fedlib.core.errors.FedlibError` unless ``device`` exists on this machine
    (``auto`` always does: it falls back to the CPU)."""
    from fedlib.core.errors import FedlibError

    name = str(device)
    if name in ("auto", "cpu"):
        return
    try:
        dev = torch.device(name)
    except (RuntimeError, TypeError, ValueError):
        raise FedlibError(f"unknown device {name!r}", "use auto, cpu, cuda, cuda:N or mps") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise FedlibError(f"device {name!r} was asked for, but this machine has no usable CUDA GPU",
                              "use device=auto (CUDA when present, else CPU) or device=cpu")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise FedlibError(f"device {name!r} does not exist: this machine has "
                              f"{torch.cuda.device_count()} CUDA device(s)",
                              f"use cuda:0 .. cuda:{torch.cuda.device_count() - 1} or device=auto")
    elif dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if not (mps is not None and mps.is_available()):
            raise FedlibError(f"device {name!r} was asked for, but this machine has no MPS (Apple GPU)",
                              "use device=auto or device=cpu")
    elif dev.type != "cpu":
        raise FedlibError(f"unknown device {name!r}", "use auto, cpu, cuda, cuda:N or mps")


def check_threads(n, where: str = "threads") -> None:
    """Raise FedlibError unless ``n`` is None or an integer >= 0 (0: leave torch's setting)."""
    from fedlib.core.errors import FedlibError

    if n is None:
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise FedlibError(f"{where} must be an integer >= 0 (0: leave torch's setting), got {n!r}",
                          f"use e.g. {where}=1")
    if n > max_threads():
        raise FedlibError(f"{where}={n} exceeds {max_threads()} threads (this machine has "
                          f"{os.cpu_count() or 1} CPU cores; torch cannot start that many)",
                          f"use {where}=1 (or at most {os.cpu_count() or 1}, one per core)")


def max_threads() -> int:
    """The most torch threads fedlib accepts: 8 per core, at least 64 [D, issue 33: 100,000 ran
    torch out of memory]."""
    return max(64, 8 * (os.cpu_count() or 1))


def set_threads(n: int | None) -> int:
    """Fix the number of intra-op threads (tiny models run faster with 1 on a busy CPU)."""
    check_threads(n)
    if n:
        torch.set_num_threads(int(n))
    return torch.get_num_threads()


def default_threads() -> int:
    """Torch threads for one run: ``$FEDLIB_THREADS`` if set, else 1.

    Measured on the 2-core build machines (``benchmarks/README.md``): two threads in one process
    train the small conv nets ~10x slower than one (contention), so fedlib uses the second core
    through a second process (``fedlib.experiments.running.sweep``), not a second thread. ``0`` leaves
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
    check_threads(n, "FEDLIB_THREADS")
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


def is_eval_round(round_: int, total: int, every: int = 1, last: int = 0) -> bool:
    """Whether round ``round_`` (1-based) of a ``total``-round run evaluates the global model: every
    ``every``-th round, every round of the last ``last`` (``round_ > total - last``), and always the
    last round (issue 34). ``last=0`` is the cadence from before ``eval_last`` existed. The one rule
    the SAFL simulator, the split trainer and the toy paradigm apply; a round that does not evaluate
    keeps its history row with NaN accuracy and loss."""
    return round_ % every == 0 or round_ > total - last or round_ == total


def eval_rounds(total: int, every: int = 1, last: int = 0) -> list[int]:
    """The rounds :func:`is_eval_round` evaluates, in order (e.g. 400 rounds, every 5, last 20: 96)."""
    return [r for r in range(1, total + 1) if is_eval_round(r, total, every, last)]


def check_writable_dir(path, what: str, env: str | None = None) -> None:
    """Raise FedlibError unless ``path`` is (or can be created as) a writable folder."""
    from fedlib.core.errors import FedlibError

    path = Path(path)
    how = f"set {env} to a folder you can write to" if env else "pass a folder you can write to"
    if max((len(os.fsencode(x)) for x in path.parts), default=0) > 255:
        raise FedlibError(f"the {what} {str(path)[:60]!r}... ({len(str(path))} characters) has a "
                          "folder name over 255 bytes, more than the file system holds", how)
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    if p.exists() and not p.is_dir():
        raise FedlibError(f"the {what} {str(path)!r} is not a folder ({str(p)!r} is a file)", how)
    if not os.access(p, os.W_OK | os.X_OK):
        raise FedlibError(f"the {what} {str(path)!r} is not writable (no write permission on "
                          f"{str(p)!r})", how)


def output_kind(path: str | os.PathLike) -> str | None:
    """None when ``path`` may be written as an output file (a regular file, or nothing there yet);
    else what it is ("a folder", "a device", "a FIFO", ...), links followed (issue 59)."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"unreadable ({err.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    return "not a regular file"


def check_output_file(path: str | os.PathLike, what: str = "output file") -> None:
    """FedlibError (one line) unless ``path`` is a regular file or a new one: fedlib writes by
    temporary file + rename, which would replace a device node, a FIFO or a folder's name."""
    kind = output_kind(path)
    if kind is not None:
        from fedlib.core.errors import FedlibError

        raise FedlibError(f"the {what} {str(path)!r} is {kind}, not a regular file; fedlib writes only "
                          "regular files", "give the path of a regular (or new) file")


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file + rename: never a half-written file. A path
    that is a device, a FIFO or a folder is refused (:func:`check_output_file`)."""
    path = Path(path)
    check_output_file(path)
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
