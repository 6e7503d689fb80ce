"""Read a dataset's files the same way from a folder, a ``.tar[.gz]`` or a ``.zip``.

Users keep what the usual download gave them (an archive or its unpacked folder); fedlib reads
either directly, so nothing has to be unpacked first. Every read error becomes one
:class:`~fedlib.core.errors.FedlibError` naming the file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from fedlib.data.paths import corrupt_file

# [D, issue 44] what a dataset archive may expand to, checked from the members' declared sizes
# before anything is extracted: one member at most MAX_MEMBER_BYTES (CIFAR's largest, a 31 MB
# pickle batch), all members together at most MAX_EXPANSION x the archive's size (image archives
# barely compress; CIFAR's pickles 1.1x) but at least MIN_ARCHIVE_BUDGET, and never more than
# MAX_ARCHIVE_BYTES. A 4.5 MiB archive declaring a 1 GiB member is refused before reading it.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_EXPANSION = 20
MIN_ARCHIVE_BUDGET = 64 * 2**20
MAX_ARCHIVE_BYTES = 8 * 2**30

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".ppm")


class _Bomb(Exception):
    """A compressed stream expanded past the archive's budget (see :class:`_Bounded`)."""


class _Bounded(io.RawIOBase):
    """A read-only view of a decompressing stream that stops (:class:`_Bomb`) once ``cap`` bytes have
    come out [issue 59]: every byte counts — tar header blocks (PAX ``x`` / ``g``, GNU long names
    ``L`` / ``K``, sparse maps), members skipped by ``keep``, and trailing streams after the tar's end
    — so memory and time are bounded whatever the headers declare, for gzip, bzip2 and xz alike.
    A single read asks for at most 1 MiB, so a header declaring 1 GiB is refused at the cap."""

    def __init__(self, stream, cap: int):
        self._stream, self._cap, self.total = stream, cap, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        left = -1 if n is None or n < 0 else n
        parts = []
        while left != 0:
            want = 1 << 20 if left < 0 else min(left, 1 << 20)
            data = self._stream.read(min(want, self._cap - self.total + 1))
            self.total += len(data)
            if self.total > self._cap:
                raise _Bomb(self.total)
            if not data:
                break
            parts.append(data)
            left = left - len(data) if left > 0 else left
        return b"".join(parts)

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def is_archive(path: Path) -> bool:
    return Path(path).is_file() and str(path).lower().endswith(ARCHIVE_SUFFIXES)


class FileTree:
    """Relative POSIX names -> bytes, backed by a folder, a tar archive or a zip archive.

    Tar archives (often gzip streams) are read in one sequential pass into memory — the
    fastest way to read a ``.tar.gz``; folders and zips are read lazily.
    """

    def __init__(self, path: str | os.PathLike, keep=None):
        """``keep(name) -> bool`` limits which members of a tar archive are held in memory."""
        self.path = Path(path)
        self._dir = self._zip = None
        self._mem: dict[str, bytes] | None = None
        try:
            if self.path.is_dir():
                self._dir = self.path
                self._names = sorted(
                    str(Path(dp, fn).relative_to(self.path).as_posix())
                    for dp, _, fns in os.walk(self.path) for fn in fns
                )
            elif str(self.path).lower().endswith(".zip"):
                self._zip = zipfile.ZipFile(self.path)
                self._names = sorted(i.filename for i in self._zip.infolist() if not i.is_dir())
            else:
                self._mem = self._read_tar(keep)
                self._names = sorted(self._mem)
        except _Bomb as err:
            raise self._bomb(err.args[0]) from None
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError, lzma.LZMAError) as err:
            raise corrupt_file(self.path, "archive", err) from None
        if self._zip is not None:
            self._check_zip_sizes(keep)

    def _budget(self) -> int:
        """Bytes the archive's members may expand to (see :data:`MAX_EXPANSION`)."""
        return min(MAX_ARCHIVE_BYTES, max(MIN_ARCHIVE_BUDGET, MAX_EXPANSION * self.path.stat().st_size))

    def _too_big(self, name: str, size: int, total: int, budget: int):
        return corrupt_file(self.path, "archive",
                            f"member {name!r} declares {size:,} bytes ({total:,} in all), more than the "
                            f"{budget:,} an archive of {self.path.stat().st_size:,} bytes may expand to "
                            "(a decompression bomb, or a damaged header)")

    def _read_tar(self, keep) -> dict[str, bytes]:
        """Every kept regular member, read in one pass; each member's declared size is checked against
        the budget before it is read, and the compressed stream is read to its end so that its
        checksum (gzip CRC-32 and length, bzip2 / xz CRCs) is verified: a flipped byte is refused."""
        budget, total, mem = self._budget(), 0, {}
        with open(self.path, "rb") as raw:
            magic = raw.read(6)
            raw.seek(0)
            if magic[:2] == b"\x1f\x8b":
                stream = gzip.GzipFile(fileobj=raw, mode="rb")
            elif magic[:3] == b"BZh":
                stream = bz2.BZ2File(raw, mode="rb")
            elif magic == b"\xfd7zXZ\x00":
                stream = lzma.LZMAFile(raw, mode="rb")
            else:
                stream = raw
            stream = _Bounded(stream, budget)
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for m in tar:
                    if m.isfile() and (keep is None or keep(m.name)):
                        total += m.size
                        if m.size > MAX_MEMBER_BYTES or total > budget:
                            raise self._too_big(m.name, m.size, total, min(budget, MAX_MEMBER_BYTES))
                        mem[_clean(m.name)] = tar.extractfile(m).read()
            while stream.read(1 << 20):  # to the end: the gzip / bzip2 / xz checksums are checked there
                pass
        return mem

    def _bomb(self, total: int):
        return corrupt_file(self.path, "archive",
                            f"it expands past {self._budget():,} bytes (headers, members and trailing data "
                            f"together; an archive of {self.path.stat().st_size:,} bytes may expand "
                            f"{MAX_EXPANSION} times): a decompression bomb, or a damaged archive")

    def _check_zip_sizes(self, keep) -> None:
        budget, total = self._budget(), 0
        for info in self._zip.infolist():
            if info.is_dir() or (keep is not None and not keep(info.filename)):
                continue
            total += info.file_size
            if info.file_size > MAX_MEMBER_BYTES or total > budget:
                self._zip.close()
                raise self._too_big(info.filename, info.file_size, total, min(budget, MAX_MEMBER_BYTES))

    def names(self) -> list[str]:
        return self._names

    def read(self, name: str) -> bytes:
        try:
            if self._mem is not None:
                return self._mem[name]
            if self._zip is not None:
                return self._zip.read(name)
            return (self._dir / name).read_bytes()
        except KeyError:
            raise corrupt_file(self.path, "archive", f"member {name!r} is missing") from None
        except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as err:
            raise corrupt_file(f"{self.path}:{name}", "file", err) from None

    def close(self):
        if self._zip is not None:
            self._zip.close()
        self._mem = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _clean(name: str) -> str:
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    return name.lstrip("/")


def _decode_pil(data: bytes, where: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGB")).transpose(2, 0, 1)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:
        raise corrupt_file(where, "image", err) from None


def _decode_chunk(tree: FileTree, names: list[str]) -> list[np.ndarray]:
    """(3, H, W) uint8 arrays. JPEGs go through torchvision's batched libjpeg-turbo decoder
    (about 3x faster than PIL here, pixel-identical); anything else, or a JPEG that fails,
    through PIL, whose error then names the bad file."""
    datas = [tree.read(n) for n in names]
    out: list[np.ndarray | None] = [None] * len(names)
    jpeg = [i for i, d in enumerate(datas) if d[:2] == b"\xff\xd8"]
    if jpeg:
        try:
            import warnings

            import torch

            with warnings.catch_warnings():  # torchvision 0.29 flags its decoders as deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                from torchvision.io import ImageReadMode, decode_jpeg

                imgs = decode_jpeg([torch.frombuffer(bytearray(datas[i]), dtype=torch.uint8)
                                    for i in jpeg], mode=ImageReadMode.RGB)
            for i, im in zip(jpeg, imgs):
                out[i] = im.numpy()
        except (ImportError, RuntimeError, ValueError):
            pass  # decoded one by one below
    return [o if o is not None else _decode_pil(d, f"{tree.path}:{n}")
            for o, d, n in zip(out, datas, names)]


def decode_images(tree: FileTree, names: list[str], size: int | None = None,
                  chunk: int = 2048) -> np.ndarray:
    """Decode images into one ``uint8`` array (N, 3, H, W) (grey/RGBA converted to RGB).

    All images must share one size (``size`` x ``size`` when given).
    """
    out = None
    for start in range(0, len(names), chunk):
        part = names[start:start + chunk]
        for j, arr in enumerate(_decode_chunk(tree, part)):
            name = part[j]
            if out is None:
                h, w = arr.shape[1:]
                if size is not None and (h, w) != (size, size):
                    raise corrupt_file(f"{tree.path}:{name}", "image",
                                       f"size {w}x{h}, expected {size}x{size}")
                out = np.empty((len(names), 3, h, w), dtype=np.uint8)
            if arr.shape != out.shape[1:]:
                raise corrupt_file(f"{tree.path}:{name}", "image",
                                   f"size {arr.shape[2]}x{arr.shape[1]} differs from the others "
                                   f"({out.shape[3]}x{out.shape[2]})")
            out[start + j] = arr
    if out is None:
        return np.empty((0, 3, size or 0, size or 0), dtype=np.uint8)
    return out


def is_image(name: str) -> bool:
    return name.lower().endswith(IMAGE_SUFFIXES)
