"""File access of the result store and the results ledger that never leaves their root (issue 44).

A ledger is pulled from other people's forks, so its folders may hold planted symbolic links, files
where folders belong, or a compressed file that expands to gigabytes. Every read and write of an
entry goes through this module:

* :func:`open_dir` opens a folder below a root one component at a time with ``O_NOFOLLOW``: a
  symbolic link anywhere on the path (the two-letter folder, the entry, its temporary folder) is
  refused with :class:`Unsafe` (one line), and the folder's resolved path is checked to lie inside
  the root's before anything is written into it;
* :func:`read_file` opens a file ``O_NOFOLLOW`` relative to an open folder, refuses anything but a
  regular file and a file larger than a cap (checked with ``fstat`` before reading);
* :func:`write_file` creates a file ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never through a link, never
  over an existing name);
* :func:`gunzip_bounded` decompresses a gzip stream incrementally, stopping as soon as the output
  exceeds ``min(the size the gzip trailer records, MAX_FILE_BYTES)``, so a bomb costs at most the cap;
* temporary folders are locked (``flock``) by their writer; :func:`sweep_temporaries` removes those
  no live process holds (a killed import's), at the next import or export;
* :func:`refuse_system_root` refuses ``/`` and the system's own folders as a store or ledger.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
import struct
import time
import zlib
from pathlib import Path

from fedlib.core.errors import FedlibError

__all__ = ["Unsafe", "MAX_FILE_BYTES", "open_dir", "read_file", "write_file", "gunzip_bounded",
           "inside", "refuse_system_root", "lock_dir", "sweep_temporaries", "SYSTEM_FOLDERS"]

#: the largest file of one entry read back [D, issue 44]: the largest in the ledger is 0.5 MB (a
#: per-client table); a 400-round, 100-client run's is a few MB. A file (or its decompressed
#: stream) above this is refused before it is held in memory.
MAX_FILE_BYTES = 64 * 2**20

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

#: folders that are never a result store or a ledger (nor anything below the virtual ones)
SYSTEM_FOLDERS = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
                  "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
                  "/var", "/var/tmp", "/usr/local")
_VIRTUAL = ("/proc", "/sys", "/dev")


class Unsafe(Exception):
    """A path of an entry that fedlib refuses to use (a link, a file for a folder, a bomb, ...)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (never followed)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file or folder"


def inside(root: Path, path: Path) -> bool:
    """True when ``path`` resolves to ``root`` (resolved) or a path below it."""
    r, p = os.path.realpath(root), os.path.realpath(path)
    return p == r or p.startswith(r.rstrip("/") + "/")


def open_dir(root: Path, parts: tuple[str, ...], create: bool = False) -> int:
    """An ``O_DIRECTORY`` descriptor of ``root/parts...`` opened one component at a time without
    following a link (``create``: make missing components). :class:`Unsafe` for a link or a
    non-folder on the path; the caller closes the descriptor."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    where = Path(root)
    try:
        for part in parts:
            where = where / part
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise
            if not stat.S_ISDIR(st.st_mode):
                raise Unsafe(f"{where} is {_kind(st.st_mode)}, not a folder")
            try:
                nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Unsafe(f"{where} is a symbolic link (never followed)") from None
                raise
            os.close(fd)
            fd = nxt
        if not inside(root, Path(f"/proc/self/fd/{fd}")) and os.path.exists(f"/proc/self/fd/{fd}"):
            raise Unsafe(f"{where} resolves outside {root}")
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_file(dir_fd: int, name: str, where: str, cap: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of regular file ``name`` in the open folder ``dir_fd``; :class:`Unsafe` for a link,
    a non-regular file or one over ``cap`` bytes (FileNotFoundError when absent)."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Unsafe(f"{where}/{name} is a symbolic link (never followed)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unsafe(f"{where}/{name} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > cap:
            raise Unsafe(f"{where}/{name} holds {st.st_size:,} bytes, more than the {cap:,} a result file "
                         "may hold")
        chunks, total = [], 0
        while True:
            block = os.read(fd, 1 << 20)
            if not block:
                break
            total += len(block)
            if total > cap:
                raise Unsafe(f"{where}/{name} grew past {cap:,} bytes while it was read")
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(dir_fd: int, name: str, data: bytes, sync: bool = True) -> None:
    """Create ``name`` in the open folder ``dir_fd`` (never through a link, never over a name)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def gunzip_bounded(data: bytes, where: str, cap: int = MAX_FILE_BYTES) -> bytes:
    """``gzip.decompress(data)`` of a one-member gzip file (what :meth:`Ledger.add` writes), streamed
    with a ceiling: at most the size the gzip trailer records (ISIZE) and at most ``cap``;
    :class:`Unsafe` as soon as the output would pass it, or for a damaged stream (bad CRC, truncated,
    data after the member)."""
    if len(data) < 18 or data[:2] != b"\x1f\x8b":
        raise Unsafe(f"{where} is not a gzip file")
    recorded = struct.unpack("<I", data[-4:])[0]
    limit = min(recorded, cap)
    if recorded > cap:
        raise Unsafe(f"{where} records {recorded:,} bytes uncompressed, more than the {cap:,} a result "
                     "file may hold (a decompression bomb?)")
    out, total = [], 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending = data
    while pending and not d.eof:
        try:
            block = d.decompress(pending, max(1, limit + 1 - total))
        except zlib.error as err:
            raise Unsafe(f"{where} is damaged ({err})") from None
        total += len(block)
        if total > limit:
            raise Unsafe(f"{where} expands past the {limit:,} bytes its gzip trailer records (a "
                         "decompression bomb?)")
        out.append(block)
        pending = d.unconsumed_tail
    if not d.eof:
        raise Unsafe(f"{where} is truncated")
    if d.unused_data.strip(b"\0"):  # fedlib writes one gzip member; its trailer bounds the size
        raise Unsafe(f"{where} holds data after its gzip stream (damaged, or not written by fedlib)")
    return b"".join(out)


def refuse_system_root(path, what: str, fix: str) -> None:
    """FedlibError when ``path`` is ``/``, a system folder (:data:`SYSTEM_FOLDERS`) or lies below
    ``/proc``, ``/sys`` or ``/dev``."""
    real = os.path.realpath(os.path.expanduser(str(path)))
    if real in SYSTEM_FOLDERS or any(real.startswith(v + "/") for v in _VIRTUAL):
        raise FedlibError(f"the {what} {str(path)!r} is the system folder {real!r}: fedlib would write one "
                          "folder per run into it", fix)


def lock_dir(fd: int) -> None:
    """Hold an exclusive lock on an open temporary folder while it is written (released when the
    descriptor is closed or the process dies): :func:`sweep_temporaries` leaves a locked one alone."""
    fcntl.flock(fd, fcntl.LOCK_EX)


def sweep_temporaries(folder: Path, suffix: str = ".tmp", min_age: float = 2.0) -> list[str]:
    """Remove the hidden ``.*<suffix>`` folders in ``folder`` that no live writer holds (a killed
    import or export left them): each is locked without waiting and removed only if the lock is
    free and it is older than ``min_age`` seconds. Links are never followed (only unlinked). The
    names removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for e in entries:
        if not (e.name.startswith(".") and e.name.endswith(suffix)):
            continue
        try:
            st = os.lstat(e.path)
            if stat.S_ISLNK(st.st_mode):
                continue  # not ours: an import refuses the entry it would shadow
            if not stat.S_ISDIR(st.st_mode) or now - st.st_mtime < min_age:
                continue
            fd = os.open(e.path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live writer holds it
        try:
            shutil.rmtree(e.path, ignore_errors=True)
            removed.append(e.name)
        finally:
            os.close(fd)
    return removed
