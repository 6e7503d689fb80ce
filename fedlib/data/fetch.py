"""``fedlib data fetch NAME``: download a dataset's official files into ``<root>/<name>/``.

Sources (checksums verified where the publisher gives one):

* cifar10 — https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz (md5 from the CIFAR page /
  torchvision), unpacked to ``cifar10/cifar-10-batches-py/``.
* cifar100 — https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz -> ``cifar100/cifar-100-python/``.
* tinyimagenet — http://cs231n.stanford.edu/tiny-imagenet-200.zip -> ``tinyimagenet/tiny-imagenet-200/``.
* adult, adult_onehot — https://archive.ics.uci.edu/ml/machine-learning-databases/adult/
  ``adult.data``, ``adult.test``, ``adult.names`` -> ``adult/`` (sha256 of the two data files).
* shakespeare — the Project Gutenberg play texts LEAF's Shakespeare is built from (one
  ``<play>_gut.txt`` per work, the URLs of the 1998 Gutenberg edition) -> ``shakespeare/``.
  Gutenberg has no checksums; a LEAF ``all_data.json`` put in ``shakespeare/`` works too.

Files are downloaded to ``<file>.part`` and renamed only once complete and verified; archives
are unpacked with tarfile's ``data`` filter (no absolute paths, links or ``..`` escapes). Without
network access every download fails with a :class:`~fedlib.core.errors.FedlibError` that says where
to put the files by hand.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from fedlib.data.paths import data_root
from fedlib.core.errors import FedlibError, check_choice

GUTENBERG = "https://www.gutenberg.org/"
PLAYS = {
    'alls_well_that_ends_well': 'dirs/etext98/2ws3010.txt',
    'antony_and_cleopatra': 'dirs/etext98/2ws3510.txt',
    'as_you_like_it': 'dirs/etext98/2ws2510.txt',
    'comedy_of_errors': 'dirs/etext98/2ws0610.txt',
    'coriolanus': 'dirs/etext98/2ws3610.txt',
    'cymbeline': 'dirs/etext98/2ws3910.txt',
    'hamlet': 'dirs/etext98/2ws2610.txt',
    'henry_iv_part_1': 'dirs/etext98/2ws1910.txt',
    'henry_iv_part_2': 'dirs/etext98/2ws2110.txt',
    'henry_v': 'dirs/etext98/2ws2310.txt',
    'henry_vi_part_1': 'dirs/etext98/2ws0110.txt',
    'henry_vi_part_2': 'dirs/etext98/2ws0210.txt',
    'henry_vi_part_3': 'dirs/etext98/2ws0310.txt',
    'henry_viii': 'dirs/etext98/2ws4210.txt',
    'john': 'dirs/etext98/2ws1410.txt',
    'julius_caesar': 'dirs/etext98/2ws2410.txt',
    'lear': 'dirs/etext98/2ws3310.txt',
    'lovers_complaint': 'dirs/etext98/2ws4410.txt',
    'loves_labours_lost': 'dirs/etext98/2ws1210.txt',
    'macbeth': 'dirs/etext98/2ws3410.txt',
    'measure_for_measure': 'dirs/etext98/2ws3110.txt',
    'merchant_of_venice': 'dirs/etext98/2ws1810.txt',
    'merry_wives_of_windsor': 'dirs/etext98/2ws2010.txt',
    'midsummer_nights_dream': 'dirs/etext98/2ws1710.txt',
    'much_ado_about_nothing': 'dirs/etext98/2ws2210.txt',
    'othello': 'dirs/etext98/2ws3210.txt',
    'passionate_pilgrim': 'dirs/etext98/2ws4510.txt',
    'pericles': 'dirs/etext98/2ws3810.txt',
    'phoenix_and_the_turtle': 'dirs/etext98/2ws2710.txt',
    'rape_of_lucrece': 'dirs/etext98/2ws0810.txt',
    'richard_ii': 'dirs/etext98/2ws1510.txt',
    'richard_iii': 'dirs/etext98/2ws0410.txt',
    'romeo_and_juliet': 'dirs/etext98/2ws1610.txt',
    'sonnets': 'dirs/etext97/wssnt10.txt',
    'taming_of_the_shrew': 'dirs/etext98/2ws1010.txt',
    'tempest': 'dirs/etext98/2ws4110.txt',
    'timon_of_athens': 'dirs/etext98/2ws3710.txt',
    'tragedy_of_titus_andronicus': 'dirs/etext98/2ws0910.txt',
    'troilus_and_cressida': 'dirs/etext98/2ws2910.txt',
    'twelfth_night': 'dirs/etext98/2ws2810.txt',
    'two_gentlemen_of_verona': 'dirs/etext98/2ws1110.txt',
    'winters_tale': 'files/1539/1539.txt',
}


@dataclass(frozen=True)
class Download:
    """One file: where from, its name under the dataset folder, its checksum, what to unpack."""

    url: str
    filename: str
    md5: str | None = None
    sha256: str | None = None
    extract: bool = False
    creates: str | None = None  # path (relative to the dataset folder) the archive unpacks to


UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
SOURCES: dict[str, tuple[str, list[Download]]] = {
    "cifar10": ("cifar10", [Download("https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                                     "cifar-10-python.tar.gz", md5="c58f30108f718f92721af3b95e74349a",
                                     extract=True, creates="cifar-10-batches-py")]),
    "cifar100": ("cifar100", [Download("https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
                                       "cifar-100-python.tar.gz",
                                       md5="eb9058c3a382ffc7106e4002c42a8d85",
                                       extract=True, creates="cifar-100-python")]),
    "tinyimagenet": ("tinyimagenet", [Download("http://cs231n.stanford.edu/tiny-imagenet-200.zip",
                                               "tiny-imagenet-200.zip",
                                               md5="90528d7ca1a48142e341f4ef8d21d0de",
                                               extract=True, creates="tiny-imagenet-200")]),
    "adult": ("adult", [
        Download(UCI + "adult.data", "adult.data",
                 sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
        Download(UCI + "adult.test", "adult.test",
                 sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),
        Download(UCI + "adult.names", "adult.names"),
    ]),
    "shakespeare": ("shakespeare", [Download(GUTENBERG + path, f"{play}_gut.txt")
                                    for play, path in PLAYS.items()]),
}
SOURCES["adult_onehot"] = SOURCES["adult"]


def _digest(path: Path, algo: str) -> str:
    h = hashlib.new(algo)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verify(path: Path, d: Download) -> str | None:
    """``None`` if ``path`` matches the known checksum (or none is known), else a message."""
    for algo, want in (("md5", d.md5), ("sha256", d.sha256)):
        if want:
            got = _digest(path, algo)
            if got != want:
                return f"{algo} {got} != expected {want}"
    return None


def _download(d: Download, dest: Path, timeout: float) -> None:
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(d.url, timeout=timeout) as resp, open(part, "wb") as out:
            shutil.copyfileobj(resp, out, 1 << 20)
    except (urllib.error.URLError, OSError, ValueError) as err:
        part.unlink(missing_ok=True)
        raise FedlibError(
            f"cannot download {d.url}: {getattr(err, 'reason', err)} (no network?)",
            f"download it by hand to {dest}, or set FEDLIB_DATA to a folder that has the data",
        ) from None
    bad = _verify(part, d)
    if bad:
        part.unlink(missing_ok=True)
        raise FedlibError(f"downloaded {d.url} is damaged: {bad}", "run the fetch again")
    os.replace(part, dest)


def safe_extract(tar: tarfile.TarFile, into: Path) -> None:
    """Extract ``tar`` under ``into`` refusing members that would land outside it: tarfile's ``data``
    filter where this Python has it (3.11.4+, 3.12+), else the same check by hand (Debian 12's Python
    3.11.2 has no ``filter`` argument): absolute or ``..`` paths, links and special files are refused."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(into, filter="data")
        return
    root = os.path.realpath(into)
    for member in tar.getmembers():
        target = os.path.realpath(os.path.join(root, member.name))
        if not (target == root or target.startswith(root + os.sep)) or not (member.isfile() or member.isdir()):
            raise tarfile.TarError(f"member {member.name!r} is a link or would land outside {into}")
    tar.extractall(into)


def _extract(archive: Path, into: Path) -> None:
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for name in z.namelist():
                    target = (into / name).resolve()
                    if not str(target).startswith(str(into.resolve()) + os.sep):
                        raise FedlibError(f"{archive} has an unsafe member {name!r}",
                                          "delete the archive and download it again")
                z.extractall(into)
        else:
            with tarfile.open(archive) as t:
                safe_extract(t, into)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as err:
        raise FedlibError(f"cannot unpack {archive}: {err}",
                          "delete the archive and run the fetch again") from None


def fetch(name: str, root=None, *, force: bool = False, timeout: float = 60.0,
          progress=print) -> Path:
    """Download (and unpack) dataset ``name`` under ``root`` (default ``$FEDLIB_DATA``).

    Files already present and matching their checksum are kept (``force=True`` re-downloads).
    Returns the dataset folder.
    """
    check_choice("dataset", name, SOURCES)
    folder, files = SOURCES[name]
    target = (Path(root).expanduser() if root is not None else data_root()) / folder
    from fedlib.core.utils import check_writable_dir

    check_writable_dir(target, "data folder", "--root (or $FEDLIB_DATA)")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FedlibError(f"cannot create the data folder {str(target)!r}: {err.strerror}",
                          "pass --root (or set $FEDLIB_DATA) to a folder you can write to") from None
    for d in files:
        dest = target / d.filename
        if dest.exists() and not force and _verify(dest, d) is None:
            if progress:
                progress(f"fedlib: {dest} already there")
        else:
            if progress:
                progress(f"fedlib: downloading {d.url} -> {dest}")
            _download(d, dest, timeout)
        if d.extract and (force or not (d.creates and (target / d.creates).exists())):
            if progress:
                progress(f"fedlib: unpacking {dest}")
            _extract(dest, target)
    return target
