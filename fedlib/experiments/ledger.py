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
from dataclasses import dataclass, field
from pathlib import Path

from fedlib.core.errors import FedlibError
from fedlib.experiments.store import ResultStore

__all__ = ["Ledger", "ImportReport", "default_ledger_root", "export_runs", "import_runs", "current_hash",
           "COMPRESS_ABOVE"]

COMPRESS_ABOVE = 64 * 1024  # bytes: larger files are stored as <name>.gz
_FILES = ("config.json", "summary.json", "history.csv", "clients.csv", "DONE")
_PLAIN = ("DONE", "config.json")  # never compressed: the marker and what a reader looks up
_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
LEDGER_ENV = "FEDLIB_LEDGER"


def default_ledger_root() -> Path:
    """``$FEDLIB_LEDGER``, else ``ledger/`` of the checkout fedlib is imported from, else ``./ledger``."""
    if os.environ.get(LEDGER_ENV):
        return Path(os.environ[LEDGER_ENV])
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").exists() and (checkout / "notebooks").is_dir():
        return checkout / "ledger"
    return Path("ledger")


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


class Ledger:
    """A folder of finished runs (see the module docstring)."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_ledger_root()

    def __repr__(self) -> str:
        return f"Ledger({str(self.root)!r})"

    def path(self, h: str) -> Path:
        return self.root / h[:2] / h

    def hashes(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for sub in self.root.iterdir() if sub.is_dir() and len(sub.name) == 2
                      for p in sub.iterdir() if p.is_dir() and _HASH_RE.match(p.name) and p.name[:2] == sub.name)

    def has(self, h: str) -> bool:
        return (self.path(h) / "DONE").is_file()

    def read(self, h: str, names=_FILES) -> dict[str, bytes]:
        """The entry's files (``names``, default all) as the store holds them (decompressed);
        FedlibError if unreadable."""
        d, out = self.path(h), {}
        for name in names:
            try:
                if (d / name).is_file():
                    out[name] = (d / name).read_bytes()
                elif (d / f"{name}.gz").is_file():
                    out[name] = gzip.decompress((d / f"{name}.gz").read_bytes())
            except (OSError, EOFError, gzip.BadGzipFile) as err:
                raise FedlibError(f"ledger entry {h[:12]}: cannot read {name} ({err})",
                                  f"restore it from git (git checkout -- {d}) or delete the entry") from None
        return out

    def check(self, h: str) -> tuple[bool, str]:
        """(intact?, why not): the entry's files match the sha256 its DONE lists, DONE and config.json
        name this hash."""
        files, why = self._intact(h)
        return files is not None, why

    def _intact(self, h: str) -> tuple[dict | None, str]:
        """The entry's files if they are intact (see :meth:`check`), else (None, why not)."""
        try:
            files = self.read(h)
        except FedlibError as err:
            return None, err.problem
        state, why = ResultStore._verify(h, files)
        if state != "done":
            return None, why or state
        try:
            if json.loads(files["config.json"]).get("config_hash") != h:
                return None, "config.json names another config hash"
        except ValueError as err:
            return None, f"unreadable config.json ({err})"
        return files, ""

    def provenance(self, h: str) -> dict:
        """What the entry's DONE records of where it ran ({} for a run made before it was recorded)."""
        try:
            return json.loads(self.read(h, ("DONE",))["DONE"]).get("provenance") or {}
        except (FedlibError, KeyError, ValueError):
            return {}

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
        """Write one entry (False when it is already there). Written into a temporary folder and
        renamed into place, so an interrupted export leaves no half entry."""
        if self.has(h):
            return False
        final = self.path(h)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".{h[:12]}.tmp"
        tmp.mkdir(exist_ok=True)
        for name in _FILES:
            data = files[name]
            big = len(data) > COMPRESS_ABOVE and name not in _PLAIN
            (tmp / (f"{name}.gz" if big else name)).write_bytes(_gzip(data) if big else data)
        if final.exists():  # a half entry without DONE (not ours to keep)
            shutil.rmtree(final)
        os.rename(tmp, final)
        return True

    def size(self) -> int:
        """Bytes on disk of every entry."""
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file()) if self.root.is_dir() else 0


def export_runs(store: ResultStore, ledger: Ledger, hashes: list[str]) -> dict:
    """Copy the finished results ``hashes`` from ``store`` into ``ledger``: {"added", "present",
    "missing"} (lists of hashes; missing = not finished in the store)."""
    out = {"added": [], "present": [], "missing": []}
    for h in dict.fromkeys(hashes):
        if ledger.has(h):
            out["present"].append(h)
            continue
        snap = store._snapshot(h)
        if snap is None or store._verify(h, snap)[0] != "done":
            out["missing"].append(h)
            continue
        ledger.add(h, {name: snap[name] for name in _FILES})
        out["added"].append(h)
    return out


@dataclass
class ImportReport:
    imported: list = field(default_factory=list)
    present: list = field(default_factory=list)
    refused: list = field(default_factory=list)  # (hash, why)

    def line(self) -> str:
        return (f"ledger: {len(self.imported)} runs imported, {len(self.present)} already in the store, "
                f"{len(self.refused)} refused")


def import_runs(ledger: Ledger, store: ResultStore, hashes: list[str] | None = None) -> ImportReport:
    """Install ledger entries into ``store`` (every entry, or ``hashes``): each one's checksums and
    hash are verified first; a damaged entry is refused (one line each in ``refused``) and the rest
    are imported. An entry whose result the store already holds intact is left alone."""
    rep = ImportReport()
    for h in (ledger.hashes() if hashes is None else hashes):
        if store.has(h):
            rep.present.append(h)
            continue
        files, why = ledger._intact(h) if ledger.has(h) else (None, "not in the ledger")
        if files is None:
            rep.refused.append((h, why))
            continue
        done = json.loads(files["DONE"])
        store.write_folder(h, {n: files[n] for n in _FILES if n != "DONE"}, extra_done=done)
        rep.imported.append(h)
    return rep


def current_hash(entry_config: dict) -> str | None:
    """The hash today's code gives the config of a ledger entry's ``config.json`` (with the data
    fingerprint it recorded), or None if today's code refuses that config."""
    from fedlib.experiments.config import RunConfig, _hash_of

    try:
        cfg = RunConfig.from_dict(entry_config["config"]).validated()
    except (FedlibError, KeyError, TypeError, ValueError):
        return None
    return _hash_of(cfg._hashed_fields(), entry_config.get("data_fingerprint"))
