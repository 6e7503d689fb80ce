"""The results ledger (issue 28): every run a committed report reads, kept in the repository.

Layout: ``<ledger>/<h[:2]>/<h>/`` holds the result store's files of the finished run with config hash
``h`` — ``config.json``, ``summary.json``, ``history.csv``, ``clients.csv`` and ``DONE`` (the sha256 of
each file and the run's provenance: code revision, CPU type, torch) — byte for byte; a history,
clients or summary file larger than :data:`COMPRESS_ABOVE` is kept gzip-compressed as ``<name>.gz`` (mtime 0: the same bytes give
the same file). Entries only ever get added: a hash names one config, so a later result of the same
config is the same entry.

* :func:`export_runs` — store → ledger (``fedlib results export``);
* :func:`import_runs` — ledger → store (``fedlib results import``; ``fedlib reproduce`` does it
  first), each entry's hash and checksums verified; a damaged entry is refused with one line and
  the others are imported;
* :func:`current_hash` — what today's code hashes an entry's config to (a report reading an entry
  whose config hashes differently is stale).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from fedlib.core.paths import ENV, ledger_root
from fedlib.core.errors import FedlibError
from fedlib.experiments.results.entry_check import done_problem, loads_bounded, table_problem
from fedlib.experiments.results.store import ResultStore
from fedlib.experiments.results.store_safe import (Unsafe, gunzip_bounded, inside, lock_dir, open_dir, read_file,
                                           refuse_system_root, sweep_temporaries, write_file)

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

__all__ = ["Ledger", "ImportReport", "default_ledger_root", "export_runs", "import_runs", "current_hash",
           "COMPRESS_ABOVE"]

COMPRESS_ABOVE = 64 * 1024  # bytes: larger files are stored as <name>.gz
#: [D, issue 44] all files of one entry together, read back (each file: store_safe.MAX_FILE_BYTES)
MAX_ENTRY_BYTES = 96 * 2**20
_FILES = ("config.json", "summary.json", "history.csv", "clients.csv", "DONE")
_PLAIN = ("DONE", "config.json")  # never compressed: the marker and what a reader looks up
_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
LEDGER_ENV = ENV["ledger"]


def default_ledger_root() -> Path:
    """``$FEDLIB_LEDGER``, else ``ledger/`` of the checkout fedlib is imported from, else ``./ledger``
    (:func:`fedlib.core.paths.ledger_root`)."""
    return ledger_root()


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


class Ledger:
    """A folder of finished runs (see the module docstring).

    Every read and write stays inside :attr:`root` (issue 44): folders are opened one component at
    a time without following links, files are opened ``O_NOFOLLOW`` and read with a size cap, gzip
    files are decompressed with a ceiling (:mod:`fedlib.experiments.results.store_safe`); a symbolic link,
    a file where a folder belongs or a bomb is refused in one line and nothing is written.
    """

    def __init__(self, root: str | os.PathLike | None = None):
        if root is not None and not isinstance(root, (str, os.PathLike)):
            raise FedlibError(f"a ledger root must be a folder path, got {type(root).__name__} {root!r:.60}",
                              "pass e.g. Ledger('ledger') (or None: $FEDLIB_LEDGER or ledger/ of the checkout)")
        self.root = Path(root) if root is not None else default_ledger_root()
        self.older: dict[str, str] = {}  # hash -> "made by older code (...)" (filled by check)
        refuse_system_root(self.root, "ledger", "pass the ledger folder of a checkout (--ledger DIR)")

    def __repr__(self) -> str:
        return f"Ledger({str(self.root)!r})"

    def _check_root(self) -> None:
        if self.root.is_symlink():
            raise FedlibError(f"the ledger {str(self.root)!r} is a symbolic link (to "
                              f"{os.path.realpath(self.root)!r}); fedlib never follows one out of a ledger",
                              "pass the real folder with --ledger if you mean it")

    @staticmethod
    def _valid(h) -> str:
        if not isinstance(h, str) or not _HASH_RE.match(h):
            raise FedlibError(f"{str(h)[:80]!r} is not a ledger entry hash (64 hex characters)",
                              "see the folder names under ledger/<two letters>/")
        return h

    def path(self, h: str) -> Path:
        return self.root / h[:2] / h

    def scan(self) -> tuple[list[str], list[tuple[str, str]]]:
        """(the entries' hashes, [(path relative to the root, why it is not an entry)]): a two-letter
        folder that is a file or a link, a folder not named by two hex characters, an entry under the
        wrong two-letter folder, an entry that is a file or a link. Hidden names (temporary folders)
        and other files are not entries."""
        if not self.root.is_dir():
            return [], []
        self._check_root()
        hashes, strays = [], []
        for sub in sorted(os.scandir(self.root), key=lambda e: e.name):
            if sub.name.startswith("."):
                continue
            if not re.fullmatch(r"[0-9a-f]{2}", sub.name):
                if sub.is_dir(follow_symlinks=False):  # files (a README) are no entries' folders
                    strays.append((f"{sub.name}/", f"{sub.name}/ is a folder that is not named by two hex "
                                   "characters: nothing in it is read (move its entries to <hash[:2]>/)"))
                continue
            if sub.is_symlink() or not sub.is_dir(follow_symlinks=False):
                kind = "a symbolic link (never followed)" if sub.is_symlink() else "a file"
                strays.append((sub.name, f"{sub.name} is {kind}, not a folder of entries"))
                continue
            for e in sorted(os.scandir(sub.path), key=lambda e: e.name):
                if e.name.startswith("."):
                    if e.is_symlink():
                        strays.append((f"{sub.name}/{e.name}", f"{sub.name}/{e.name} is a symbolic link "
                                       "(a planted temporary folder?); never followed"))
                    continue
                if not _HASH_RE.match(e.name):
                    continue
                rel = f"{sub.name}/{e.name[:12]}"
                if e.is_symlink() or not e.is_dir(follow_symlinks=False):
                    kind = "a symbolic link (never followed)" if e.is_symlink() else "a file"
                    strays.append((rel, f"entry {rel} is {kind}, not an entry folder"))
                elif e.name[:2] != sub.name:
                    strays.append((rel, f"entry {e.name[:12]} is under {sub.name}/, but its hash starts "
                                        f"with {e.name[:2]} (move it to {e.name[:2]}/)"))
                else:
                    hashes.append(e.name)
        return sorted(hashes), strays

    def hashes(self) -> list[str]:
        return self.scan()[0]

    def has(self, h: str) -> bool:
        if not isinstance(h, str) or not _HASH_RE.match(h):
            return False
        p = self.path(h)
        return not p.parent.is_symlink() and not p.is_symlink() and (p / "DONE").is_file() \
            and not (p / "DONE").is_symlink()

    def read(self, h: str, names=_FILES) -> dict[str, bytes]:
        """The entry's files (``names``, default all) as the store holds them (decompressed);
        FedlibError if unreadable, a link, larger than the cap or a decompression bomb."""
        self._valid(h)
        self._check_root()
        d, out = self.path(h), {}
        try:
            fd = open_dir(self.root, (h[:2], h))
        except Unsafe as err:
            raise FedlibError(f"ledger entry {h[:12]}: {err}",
                              "delete it (or restore it from git); fedlib reads nothing through it") from None
        except OSError as err:
            raise FedlibError(f"ledger entry {h[:12]}: cannot open its folder ({err.strerror})",
                              f"restore it from git (git checkout -- {d}) or delete the entry") from None
        total = 0
        try:
            for name in names:
                try:
                    try:
                        out[name] = read_file(fd, name, str(d))
                    except FileNotFoundError:
                        out[name] = gunzip_bounded(read_file(fd, f"{name}.gz", str(d)), f"{d}/{name}.gz")
                    total += len(out[name])
                    if total > MAX_ENTRY_BYTES:
                        raise Unsafe(f"its files hold more than the {MAX_ENTRY_BYTES:,} bytes an entry may hold")
                except FileNotFoundError:
                    continue
                except Unsafe as err:
                    raise FedlibError(f"ledger entry {h[:12]}: {err}",
                                      f"delete the entry (or restore it from git: git checkout -- {d})") \
                        from None
                except OSError as err:
                    raise FedlibError(f"ledger entry {h[:12]}: cannot read {name} ({err.strerror or err})",
                                      f"restore it from git (git checkout -- {d}) or delete the entry") from None
        finally:
            os.close(fd)
        return out

    def check(self, h: str) -> tuple[bool, str]:
        """(intact?, why not): the entry's files match the sha256 its DONE lists, DONE and config.json
        name this hash, and today's code hashes its config to this hash."""
        files, why = self._intact(h)
        return files is not None, why

    def _intact(self, h: str) -> tuple[dict | None, str]:
        """The entry's files if they are intact (see :meth:`check`), else (None, why not). Every
        file is parsed before the entry is accepted (issue 59): JSON with bounded nesting, each
        DONE field's type, both tables as the store reads them back."""
        try:
            files = self.read(h)
        except FedlibError as err:
            return None, err.problem
        try:
            parsed = {n: loads_bounded(files[n], n) for n in ("DONE", "config.json", "summary.json") if n in files}
        except ValueError as err:
            return None, str(err)
        if "DONE" in parsed and done_problem(parsed["DONE"]):
            return None, done_problem(parsed["DONE"])
        if not isinstance(parsed.get("summary.json", {}), dict):
            return None, "summary.json is not a JSON object"
        state, why = ResultStore.verify(h, files)
        if state != "done":
            return None, why or state
        entry = parsed["config.json"]
        if not isinstance(entry, dict) or entry.get("config_hash") != h:
            return None, "config.json names another config hash"
        for name, need in (("history.csv", ("round",)), ("clients.csv", ())):
            why = table_problem(files[name], name, need)
            if why:
                return None, why
        why, older = rehash_status(h, entry)
        self.older[h] = older
        return (None, why) if why else (files, "")

    def provenance(self, h: str) -> dict:
        """What the entry's DONE records of where it ran ({} for a run made before it was recorded)."""
        try:
            prov = loads_bounded(self.read(h, ("DONE",))["DONE"], "DONE").get("provenance")
        except (FedlibError, KeyError, ValueError, AttributeError):
            return {}
        return prov if isinstance(prov, dict) else {}

    def config(self, h: str) -> dict:
        """The entry's ``config.json`` (config, data fingerprint, hash)."""
        return json.loads(self.read(h, ("config.json",))["config.json"])

    def wall_minutes(self, h: str) -> float | None:
        """The run's wall time in minutes as its ``summary.json`` records it (None when absent)."""
        try:
            return float(json.loads(self.read(h, ("summary.json",))["summary.json"])["wall_time"]) / 60
        except (FedlibError, KeyError, ValueError, TypeError):
            return None

    def add(self, h: str, files: dict[str, bytes]) -> bool:
        """Write one entry (False when it is already there). Written into a temporary folder (locked
        while it is written) and renamed into place, so an interrupted export leaves no half entry;
        FedlibError, with nothing written, when a link or a file is on the entry's path."""
        self._valid(h)
        self._check_root()
        if self.has(h):
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        sub = self.root / h[:2]
        try:
            sub_fd = open_dir(self.root, (h[:2],), create=True)
        except Unsafe as err:
            raise FedlibError(f"cannot add ledger entry {h[:12]}: {err}; nothing was written",
                              f"remove {str(sub)!r} (a ledger holds only folders) and export again") from None
        tmp_fd, token = None, f".{h[:12]}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            for e in os.scandir(sub_fd):
                if e.name.startswith(f".{h[:12]}.") and e.is_symlink():
                    raise FedlibError(f"cannot add ledger entry {h[:12]}: {sub / e.name} is a symbolic link "
                                      "(planted?); nothing was written", f"remove {str(sub / e.name)!r}")
            try:
                st = os.stat(h, dir_fd=sub_fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISDIR(st.st_mode):
                raise FedlibError(f"cannot add ledger entry {h[:12]}: {sub / h} is "
                                  f"{'a symbolic link' if stat.S_ISLNK(st.st_mode) else 'a file'}; nothing "
                                  "was written", f"remove {str(sub / h)!r} and export again")
            if not inside(self.root, sub):
                raise FedlibError(f"cannot add ledger entry {h[:12]}: {sub} resolves outside the ledger")
            os.mkdir(token, 0o755, dir_fd=sub_fd)
            tmp_fd = os.open(token, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW, dir_fd=sub_fd)
            lock_dir(tmp_fd)
            for name in _FILES:
                data = files[name]
                big = len(data) > COMPRESS_ABOVE and name not in _PLAIN
                write_file(tmp_fd, f"{name}.gz" if big else name, _gzip(data) if big else data, sync=False)
            if st is not None:  # a half entry without DONE (not ours to keep): aside, then removed
                aside = f".{h[:12]}.{uuid.uuid4().hex[:12]}.old"
                os.rename(h, aside, src_dir_fd=sub_fd, dst_dir_fd=sub_fd)
                shutil.rmtree(sub / aside, ignore_errors=True)
            os.rename(token, h, src_dir_fd=sub_fd, dst_dir_fd=sub_fd)
        finally:
            if tmp_fd is not None:
                os.close(tmp_fd)
            os.close(sub_fd)
            if (sub / token).is_dir() and not (sub / token).is_symlink():
                shutil.rmtree(sub / token, ignore_errors=True)
        return True

    def sweep_temporaries(self) -> list[str]:
        """Remove the temporary folders of killed exports (no live writer holds them)."""
        if not self.root.is_dir() or self.root.is_symlink():
            return []
        out = []
        for sub in os.scandir(self.root):
            if re.fullmatch(r"[0-9a-f]{2}", sub.name) and sub.is_dir(follow_symlinks=False):
                out += [f"{sub.name}/{n}" for n in sweep_temporaries(Path(sub.path))]
        return out

    def size(self) -> int:
        """Bytes on disk of every entry (links are not followed)."""
        if not self.root.is_dir():
            return 0
        total = 0
        for dirpath, _, names in os.walk(self.root):
            for n in names:
                try:
                    st = os.lstat(os.path.join(dirpath, n))
                except OSError:
                    continue
                total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        return total


def rehash_problem(h: str, entry: dict) -> str:
    """Why an entry's config does not give its key ``h`` ("" when it does, or older code made it)."""
    return rehash_status(h, entry)[0]


def rehash_status(h: str, entry: dict) -> tuple[str, str]:
    """(problem, older): why an entry's ``config.json`` does not give its key ``h`` under today's code
    ("" when it does), and which older code made it ("" unless today's code hashes it differently).

    An entry hashed by an older hash scheme or fedlib version (its config gives ``h`` under that
    scheme, :func:`fedlib.experiments.results.rehash.scheme_hashes`) is "made by older code": today's code
    never asks for ``h``, so it is imported as it is. Any other mismatch is a config that was edited
    after the run (or forged): refused, since the store would serve it as the result of its config.
    """
    cur = current_hash(entry)
    if cur == h:
        return "", ""
    from fedlib.experiments.results.rehash import scheme_hashes

    config, version = entry.get("config"), entry.get("fedlib", "")
    if isinstance(config, dict) and isinstance(version, str):
        try:
            older = scheme_hashes(config, version, entry.get("data_fingerprint", "absent"))
        except (TypeError, ValueError):
            older = {}
        if h in older.values():  # made by older code: imported, and listed (ImportReport.older)
            return "", (f"made by older code (fedlib {version or '?'}); today's code "
                        + ("refuses its config" if cur is None else f"hashes its config to {cur[:12]}"))
    if cur is None:
        return "today's code refuses its config (config.json edited, or made by another fedlib)", ""
    return (f"its config does not hash to its key (today's code gives {cur[:12]}): config.json was "
            "edited or forged after the run"), ""


def export_runs(store: ResultStore, ledger: Ledger, hashes: list[str]) -> dict:
    """Copy the finished results ``hashes`` from ``store`` into ``ledger``: {"added", "present",
    "missing"} (lists of hashes; missing = not finished in the store)."""
    out = {"added": [], "present": [], "missing": []}
    ledger.sweep_temporaries()
    for h in dict.fromkeys(hashes):
        if ledger.has(h):
            out["present"].append(h)
            continue
        snap = store.snapshot(h)
        if snap is None or store.verify(h, snap)[0] != "done":
            out["missing"].append(h)
            continue
        ledger.add(h, {name: snap[name] for name in _FILES})
        out["added"].append(h)
    return out


@dataclass
class ImportReport:
    imported: list = field(default_factory=list)
    present: list = field(default_factory=list)
    refused: list = field(default_factory=list)  # (hash, or a path relative to the ledger, why)
    older: list = field(default_factory=list)    # (hash, why): imported, made by older code
    swept: list = field(default_factory=list)    # temporary folders of killed imports, removed

    def line(self) -> str:
        older = f" ({len(self.older)} made by older code)" if self.older else ""
        return (f"ledger: {len(self.imported)} runs imported{older}, {len(self.present)} already in the "
                f"store, {len(self.refused)} refused")


#: [D, issue 59] what one import may write: the entries' files as stored take at most this many
#: times their bytes in the ledger (today's gzip'ed tables expand 3.8 times at most), plus a slack
MAX_IMPORT_RATIO, IMPORT_SLACK_BYTES = 16, 64 * 2**20


def _disk_bytes(ledger: Ledger, h: str) -> int:
    total = 0
    try:
        for e in os.scandir(ledger.path(h)):
            st = e.stat(follow_symlinks=False)
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    except OSError:
        pass
    return total


def import_runs(ledger: Ledger, store: ResultStore, hashes: list[str] | None = None) -> ImportReport:
    """Install ledger entries into ``store`` (every entry, or ``hashes``): each one's checksums are
    verified and its config re-hashed by today's code first; a damaged entry, a link, a stray file
    or folder, or an entry whose config does not give its key is refused (one line each in
    ``refused``) and the rest are imported. An entry whose result the store already holds intact is
    left alone. Temporary folders of a killed earlier import are removed first."""
    rep = ImportReport()
    rep.swept = store.sweep_temporaries()
    if hashes is None:
        hashes, strays = ledger.scan()
        rep.refused += strays
    read = written = 0
    for h in hashes:
        try:
            if store.has(h):
                rep.present.append(h)
                continue
            files, why = ledger._intact(h) if ledger.has(h) else (None, "not in the ledger")
        except FedlibError as err:
            files, why = None, err.problem
        if files is None:
            rep.refused.append((h, why))
            continue
        read += _disk_bytes(ledger, h)
        size = sum(len(b) for b in files.values())
        if written + size > MAX_IMPORT_RATIO * read + IMPORT_SLACK_BYTES:
            rep.refused.append((h, f"importing it would write {(written + size) / 2**20:,.0f} MiB from "
                                   f"{read / 2**20:,.1f} MiB of ledger (more than {MAX_IMPORT_RATIO} times, "
                                   "a decompression bomb?); not imported"))
            continue
        written += size
        done = json.loads(files["DONE"])
        older = ledger.older.get(h)
        if older:
            rep.older.append((h, older))
        store.write_folder(h, {n: files[n] for n in _FILES if n != "DONE"}, extra_done=done)
        rep.imported.append(h)
    return rep


def current_hash(entry_config: dict) -> str | None:
    """The hash today's code gives the config of a ledger entry's ``config.json`` (with the data
    fingerprint it recorded), or None if today's code refuses that config."""
    from fedlib.experiments.config import RunConfig

    try:
        cfg = RunConfig.from_dict(entry_config["config"]).validated()
    except (FedlibError, KeyError, TypeError, ValueError):
        return None
    return cfg.config_hash(entry_config.get("data_fingerprint"))
