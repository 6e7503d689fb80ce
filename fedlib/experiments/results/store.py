"""Content-addressed, crash-safe result store (issue 4, GUIDE §3 "Results are data").

Layout, one folder per config hash (:meth:`RunConfig.config_hash`)::

    <root>/<hash>/config.json      the full config (+ hash, fedlib version)   written at start
                  checkpoint.pt    trainer state + history so far + RNG states (while running)
                  progress.json    {"round": r, "total": T} of the last checkpoint
                  history.csv      one row per global round
                  clients.csv      per-client rows (may be empty)
                  summary.json     metrics + sha256 of history.csv / clients.csv
                  DONE             written last: sha256 of every file above
                  error.json       why the last attempt failed (until it succeeds)

``root`` is the ``FEDLIB_RESULTS`` environment variable, else ``./results``. A result counts as
finished only when DONE exists and every checksum it lists matches: a truncated or edited file is
reported (:class:`CorruptResultWarning`) and the run is recomputed, never read as finished.

Atomicity (issues 19, 33): a finished result is written whole into a hidden folder of the store root
(``.<hash12>.<token>.tmp``) and then swapped with ``<hash>`` in one step (Linux ``renameat2``
``RENAME_EXCHANGE``; the old folder, now under the temporary name, is deleted afterwards), so a
reader always finds ``<hash>``: the old complete result or the new one, never no folder. Where the
exchange is not available, the old folder is renamed aside first and a reader that finds no folder
while such a write is under way waits for it (:meth:`ResultStore.snapshot`).

Damaged entries (issue 33): ``<hash>`` that is a symbolic link (fedlib never follows one out of
the store), a file, or a folder whose result files are not regular readable files, is reported in
one line (:class:`CorruptResultWarning`) and moved aside to ``.<hash12>.<token>.damaged`` (kept,
never deleted) by :meth:`ResultStore.repair` before a run uses the hash; ``results list`` / ``show``
report it as ``damaged`` instead of failing. A reader opens
``<hash>`` once and reads every file through that one directory handle; if the folder was replaced
meanwhile (its inode changed) it reads again. Checkpoint and progress files of a running run are
written with :func:`fedlib.core.utils.atomic_write_bytes` (temporary file + rename).

The files' byte formats, checksums and atomic renames are :mod:`fedlib.experiments.results.store_files`;
``list`` / ``show`` / ``rm`` are :mod:`fedlib.experiments.results.store_admin`.

Checkpoints carry the sha256 of their payload and are read with ``torch.load(weights_only=True)``
only, so a results folder from someone else cannot run code, and an edited one is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fedlib.core.paths import results_root
from fedlib.core.errors import FedlibError, check
from fedlib.core.utils import atomic_write_bytes, check_writable_dir
from fedlib.experiments.results.store_safe import lock_dir, refuse_system_root, sweep_temporaries, write_file
from fedlib.experiments.results.store_admin import MIN_RM_PREFIX, StoreAdmin  # noqa: F401
from fedlib.experiments.results.store_files import (CHECKPOINT_FORMAT, NOFOLLOW, DamagedEntry,  # noqa: F401
                                                    check_path_length, checkpoint_bytes, csv_to_frame, exchange,
                                                    frame_to_csv, json_bytes, read_checkpoint,
                                                    rename_onto_free, sha256_hex)

__all__ = ["ResultStore", "RunResult", "CorruptResultWarning", "default_root"]

_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
_RESULT_FILES = ("config.json", "history.csv", "clients.csv", "summary.json")
_WRITABLE = (*_RESULT_FILES, "checkpoint.pt", "progress.json", "error.json")


class CorruptResultWarning(UserWarning):
    """A stored result or checkpoint failed its integrity check and will be recomputed."""


@dataclass
class RunResult:
    """What :func:`fedlib.experiments.run` returns (and the store loads)."""

    history: pd.DataFrame
    clients: pd.DataFrame
    summary: dict
    config_hash: str
    config: dict = field(default_factory=dict)
    path: Path | None = None
    cached: bool = False  # loaded from the store rather than computed now
    data_fingerprint: dict | None = None  # the dataset files it ran on (fedlib.data.fingerprint)
    code: dict | None = None  # a user-registered algorithm's code fingerprint and class (issue 61)

    def __repr__(self) -> str:
        s = self.summary
        return (f"RunResult({self.config_hash[:12]}, profile={s.get('profile')}, "
                f"rounds={len(self.history)}, final_accuracy={s.get('final_accuracy')}, "
                f"cached={self.cached})")


def default_root() -> Path:
    return results_root()  # $FEDLIB_RESULTS, else ./results (fedlib.core.paths)


class ResultStore:
    """A folder of finished runs and checkpoints, addressed by config hash."""

    def __init__(self, root: str | os.PathLike | None = None):
        if root is not None and not isinstance(root, (str, os.PathLike)):
            raise FedlibError(f"a result store root must be a folder path, got {type(root).__name__} "
                              f"{root!r:.60}", "pass e.g. ResultStore('results') (or None: $FEDLIB_RESULTS)")
        self.root = Path(root) if root is not None else default_root()
        check_path_length(self.root)
        refuse_system_root(self.root, "result store", "set FEDLIB_RESULTS (or --results / store=) to a "
                           "folder of its own, e.g. ./results")

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    # ------------------------------------------------------------------ addressing
    @staticmethod
    def _hash(cfg_or_hash) -> str:
        """The full config hash of a RunConfig or a hash string; FedlibError for anything else (a
        prefix, ``None``, ``'../escape'``: a name that is not a hash never becomes a path)."""
        if isinstance(cfg_or_hash, str):
            if not _HASH_RE.match(cfg_or_hash):
                raise FedlibError(f"{cfg_or_hash[:80]!r} is not a result hash (64 hex characters)",
                                  "pass a RunConfig or a full config hash (store.resolve(prefix) finds one)")
            return cfg_or_hash
        if not callable(getattr(cfg_or_hash, "config_hash", None)):
            raise FedlibError(f"a result is named by a RunConfig or its config hash, got "
                              f"{type(cfg_or_hash).__name__} {cfg_or_hash!r:.60}",
                              "pass a RunConfig or a full config hash (store.resolve(prefix) finds one)")
        return cfg_or_hash.config_hash()

    def path(self, cfg_or_hash) -> Path:
        return self.root / self._hash(cfg_or_hash)

    def hashes(self) -> list[str]:
        """Every entry named like a hash (damaged ones included: ``status`` says ``damaged``)."""
        if self.root.exists() and not self.root.is_dir():
            raise FedlibError(f"the result store {str(self.root)!r} is a file, not a folder",
                              "set FEDLIB_RESULTS (or --results / store=) to a folder")
        try:
            with os.scandir(self.root) as it:
                return sorted(e.name for e in it if _HASH_RE.match(e.name))
        except FileNotFoundError:
            return []
        except OSError as err:
            raise FedlibError(f"cannot read the result store {str(self.root)!r}: {err.strerror}",
                              "give yourself read permission on it, or set FEDLIB_RESULTS "
                              "(or --results / store=) to another folder") from None

    def resolve(self, prefix: str) -> str:
        """The full hash starting with ``prefix`` (FedlibError if none or ambiguous)."""
        if not isinstance(prefix, str):
            raise FedlibError(f"a result hash (prefix) must be a string, got {type(prefix).__name__}",
                              "see `fedlib results list` for the stored hashes")
        prefix = prefix.strip().lower()
        matches = [h for h in self.hashes() if h.startswith(prefix)] if prefix else []
        for _ in range(200):  # without RENAME_EXCHANGE: a replacement under way has its old folder aside
            if matches or not re.fullmatch(r"[0-9a-f]{1,64}", prefix) \
                    or not self._write_under_way(prefix[:12] + "*"):
                break
            time.sleep(0.005)
            matches = [h for h in self.hashes() if h.startswith(prefix)]
        if not matches:
            raise FedlibError(f"no result {prefix!r} in {str(self.root)!r}",
                              "see `fedlib results list` for the stored hashes")
        if len(matches) > 1:
            raise FedlibError(f"hash prefix {prefix!r} is ambiguous ({len(matches)} results)",
                              "give more characters")
        return matches[0]

    # ------------------------------------------------------------------ inspection (store_admin)
    def list(self) -> pd.DataFrame:
        """One row per stored run: hash, status, what it is, and its headline metrics."""
        return StoreAdmin(self).list()

    def show(self, hash_prefix: str) -> dict:
        """Config, status, summary and sizes of one stored run."""
        return StoreAdmin(self).show(hash_prefix)

    def rm(self, hash_prefix: str | None = None, all: bool = False, yes: bool = False) -> list[str]:
        """Delete one run (by hash prefix, at least :data:`MIN_RM_PREFIX` characters unless ``yes``)
        or every run with ``all=True``; returns the hashes (:meth:`StoreAdmin.rm`)."""
        return StoreAdmin(self).rm(hash_prefix, all=all, yes=yes)

    # ------------------------------------------------------------------ integrity
    def snapshot(self, h: str) -> dict[str, bytes] | None:
        """The files of ``<root>/<h>`` read through one open directory handle (None: no folder);
        :class:`~fedlib.experiments.results.store_files.DamagedEntry` when it is not a readable
        result folder (:meth:`entry_problem`). :meth:`verify` judges what it returns.

        If the folder is swapped for another write while it is read (its inode changes), it is read
        again, so the bytes returned always come from one directory: never a mix of two writes.
        """
        d = self.root / h
        out: dict = {}
        for attempt in range(200):
            problem = self.entry_problem(h)
            if problem == "missing":
                if attempt < 199 and self._write_under_way(h):
                    time.sleep(0.005)  # a replacement without RENAME_EXCHANGE: wait for it
                    continue
                if attempt < 199 and self.entry_problem(h) != "missing":
                    continue  # it was put back between the two looks: read it
                return None
            if problem is not None:
                raise DamagedEntry(problem)
            try:
                fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW)
            except FileNotFoundError:
                continue
            except OSError as err:
                raise DamagedEntry(f"the folder cannot be opened ({err.strerror})") from None
            try:
                out = {}
                for name in ("DONE", *_RESULT_FILES, "error.json", "progress.json"):
                    try:
                        f = os.open(name, os.O_RDONLY | NOFOLLOW, dir_fd=fd)
                    except FileNotFoundError:
                        continue
                    except OSError as err:
                        raise DamagedEntry(f"{name} cannot be read ({err.strerror})") from None
                    with os.fdopen(f, "rb") as fh:
                        try:
                            out[name] = fh.read()
                        except OSError as err:
                            raise DamagedEntry(f"{name} cannot be read ({err.strerror})") from None
                try:
                    os.stat("checkpoint.pt", dir_fd=fd, follow_symlinks=False)
                    out["checkpoint.pt"] = b""
                except FileNotFoundError:
                    pass
                ino = os.fstat(fd).st_ino
            finally:
                os.close(fd)
            try:
                if os.stat(d, follow_symlinks=False).st_ino == ino:
                    return out
            except FileNotFoundError:
                pass  # replaced right now: read the new one
            time.sleep(0.001 * min(attempt, 10))  # a writer keeps replacing it: give it time to finish
        return out

    def _write_under_way(self, h: str) -> bool:
        """True while another process's write of ``h`` has its old folder aside (``.old``)."""
        try:
            return any(self.root.glob(f".{h[:12]}.*.old"))
        except OSError:
            return False

    def entry_problem(self, h: str) -> str | None:
        """Why ``<root>/<h>`` is damaged (one line), ``"missing"`` if there is none, else None.

        Damaged: a symbolic link (never followed out of the store), not a folder, or a folder whose
        result / checkpoint files are not regular files it can read (issue 33)."""
        d = self.root / h
        try:
            st = os.lstat(d)
        except (FileNotFoundError, NotADirectoryError):
            return "missing"  # (the store root itself missing or not a folder: said elsewhere)
        except OSError as err:
            return f"it cannot be inspected ({err.strerror})"
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(d)
            except OSError:
                target = "?"
            return f"it is a symbolic link (to {target!r}); fedlib never follows a link out of the store"
        if not stat.S_ISDIR(st.st_mode):
            return "it is a file, not a result folder"
        if not os.access(d, os.R_OK | os.X_OK):
            return "the folder is not readable (permission denied)"
        for name in ("DONE", *_RESULT_FILES, "error.json", "progress.json", "checkpoint.pt"):
            try:
                fst = os.lstat(d / name)
            except FileNotFoundError:
                continue
            except OSError as err:
                return f"{name} cannot be inspected ({err.strerror})"
            if not stat.S_ISREG(fst.st_mode):
                kind = ("a folder" if stat.S_ISDIR(fst.st_mode) else "a symbolic link"
                        if stat.S_ISLNK(fst.st_mode) else "not a regular file")
                return f"{name} is {kind}"
            if not os.access(d / name, os.R_OK):
                return f"{name} is not readable (permission denied)"
        return None

    def repair(self, cfg_or_hash) -> bool:
        """Move a damaged ``<root>/<h>`` aside (kept as ``.<h12>.<token>.damaged``) with a one-line
        warning, so the run proceeds; True if it did. FedlibError if it cannot be moved."""
        h = self._hash(cfg_or_hash)
        problem = self.entry_problem(h)
        if problem in (None, "missing"):
            return False
        aside = self.root / f".{h[:12]}.{uuid.uuid4().hex[:12]}.damaged"
        try:
            os.rename(self.root / h, aside)
        except FileNotFoundError:
            return False
        except OSError as err:
            raise FedlibError(f"result {h[:12]} in {str(self.root)!r} is damaged ({problem}) and cannot "
                              f"be moved aside: {err.strerror}",
                              f"remove or repair {str(self.root / h)!r} by hand, or use another store") \
                from None
        warnings.warn(f"result {h[:12]} in {self.root} is damaged ({problem}); moved aside to "
                      f"{aside.name} (kept) and computed anew", CorruptResultWarning, stacklevel=2)
        return True

    @staticmethod
    def verify(h: str, snap: dict[str, bytes]) -> tuple[str, str]:
        """("done"|"partial"|"failed"|"corrupt", detail) of one folder's files (a :meth:`snapshot`, or
        the files of a ledger entry): DONE, its checksums and those summary.json lists."""
        if "DONE" not in snap:
            if "error.json" in snap:
                try:
                    err = json.loads(snap["error.json"])
                    return "failed", f"at round {err.get('round')}: {err.get('error')}"
                except Exception:  # noqa: BLE001
                    return "failed", "unreadable error.json"
            if "checkpoint.pt" in snap:
                try:
                    r = json.loads(snap.get("progress.json", b"{}")).get("round", "?")
                except Exception:  # noqa: BLE001
                    r = "?"
                return "partial", f"checkpoint at round {r}"
            return "partial", "no checkpoint yet"
        try:
            marker = json.loads(snap["DONE"])
            files = marker["files"]
        except Exception as err:  # noqa: BLE001
            return "corrupt", f"unreadable DONE marker ({err})"
        if marker.get("config_hash") != h:
            return "corrupt", "DONE marker belongs to another config hash"
        for name in _RESULT_FILES:
            if name not in snap:
                return "corrupt", f"{name} is missing"
            if sha256_hex(snap[name]) != files.get(name):
                return "corrupt", f"{name} does not match its checksum (truncated or modified)"
        try:
            summary = json.loads(snap["summary.json"])
            for name, digest in summary.get("files", {}).items():
                if sha256_hex(snap[name]) != digest:
                    return "corrupt", f"{name} does not match summary.json"
        except Exception as err:  # noqa: BLE001
            return "corrupt", f"unreadable summary.json ({err})"
        return "done", ""

    def status(self, cfg_or_hash) -> tuple[str, str]:
        """("done"|"partial"|"failed"|"corrupt"|"missing", detail) of one result folder.

        ``failed``: the last attempt raised (see error.json); running it again retries, resuming
        from the last checkpoint.
        """
        h = self._hash(cfg_or_hash)
        try:
            snap = self.snapshot(h)
        except DamagedEntry as err:
            return "damaged", str(err)
        return ("missing", "") if snap is None else self.verify(h, snap)

    def has(self, cfg_or_hash) -> bool:
        """True only for a finished result whose every checksum matches."""
        return self.status(cfg_or_hash)[0] == "done"

    def get(self, cfg_or_hash, warn: bool = True) -> RunResult | None:
        """The finished result, or None (missing, unfinished, or corrupt — corrupt is warned).

        Every file comes from one read of one folder (:meth:`snapshot`), checked against DONE.
        """
        h = self._hash(cfg_or_hash)
        try:
            snap = self.snapshot(h)
        except DamagedEntry as err:
            snap, state, why = None, "damaged", str(err)
        else:
            state, why = ("missing", "") if snap is None else self.verify(h, snap)
        if state in ("corrupt", "damaged") and warn:
            warnings.warn(f"result {h[:12]} in {self.root} is corrupt ({why}); it will be recomputed",
                          CorruptResultWarning, stacklevel=2)
        if state != "done":
            return None
        stored = json.loads(snap["config.json"])
        return RunResult(
            history=csv_to_frame(snap["history.csv"]),
            clients=csv_to_frame(snap["clients.csv"]),
            summary=json.loads(snap["summary.json"]),
            config_hash=h,
            config=stored.get("config", {}), code=stored.get("code"),
            path=self.root / h,
            cached=True,
            data_fingerprint=stored.get("data_fingerprint"),
        )

    # ------------------------------------------------------------------ writing
    def check_writable(self) -> None:
        """FedlibError unless the store root is (or can be made) a writable folder."""
        check_writable_dir(self.root, "result store", "FEDLIB_RESULTS (or --results / store=)")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise FedlibError(f"cannot create the result store {str(self.root)!r}: {err.strerror}",
                              "set FEDLIB_RESULTS (or pass store=) to a folder you can write to") \
                from None

    @staticmethod
    def config_blob(cfg, h: str, data_fingerprint) -> bytes:
        from fedlib import __version__

        blob = {"config_hash": h, "fedlib": __version__, "config": cfg.to_dict(),
                "data_fingerprint": data_fingerprint}
        from fedlib.experiments.config.registry import code_record

        code = code_record(cfg)
        if code is not None:  # issue 61: which code made a run of a user-registered algorithm
            blob["code"] = code
        return json_bytes(blob)

    def write_config(self, cfg, data_fingerprint="current", config_hash: str | None = None) -> Path:
        """Record the config of a run that is starting (lets `results list` show partial runs).
        ``config_hash``: the hash already computed for ``cfg`` and this fingerprint (a resolved run)."""
        fp = cfg.data_fingerprint() if data_fingerprint == "current" else data_fingerprint
        h = config_hash or cfg.config_hash(fp)
        d = self.root / h
        atomic_write_bytes(d / "config.json", self.config_blob(cfg, h, fp))
        return d

    def write_result(self, cfg, history: pd.DataFrame, clients: pd.DataFrame,
                     summary: dict, data_fingerprint="current", config_hash: str | None = None) -> RunResult:
        """Write a finished run as one folder renamed into place (DONE inside it). Returns the
        result as it reads back from disk (``config_hash`` as in :meth:`write_config`)."""
        fp = cfg.data_fingerprint() if data_fingerprint == "current" else data_fingerprint
        h = config_hash or cfg.config_hash(fp)
        blobs = {
            "config.json": self.config_blob(cfg, h, fp),
            "history.csv": frame_to_csv(history),
            "clients.csv": frame_to_csv(clients),
        }
        summary = dict(summary)
        summary["files"] = {n: sha256_hex(blobs[n]) for n in ("history.csv", "clients.csv")}
        blobs["summary.json"] = json_bytes(summary)
        from fedlib.experiments.results.provenance import provenance  # noqa: PLC0415

        self.write_folder(h, blobs, extra_done={"provenance": provenance()})
        return RunResult(history=csv_to_frame(blobs["history.csv"]),
                         clients=csv_to_frame(blobs["clients.csv"]),
                         summary=json.loads(blobs["summary.json"]), config_hash=h,
                         config=cfg.to_dict(), path=self.root / h, cached=False,
                         data_fingerprint=fp, code=json.loads(blobs["config.json"]).get("code"))

    def write_folder(self, h: str, blobs: dict[str, bytes], extra_done: dict | None = None) -> None:
        """Write ``blobs`` + a DONE marker listing their sha256 as the folder ``<root>/<h>``, whole."""
        h = self._hash(h)
        for name in blobs:
            check(isinstance(name, str) and name in _WRITABLE, f"{name!r} is not a file of a stored result",
                  f"write only {', '.join(_WRITABLE)}")
        done = {"config_hash": h, "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "files": {n: sha256_hex(b) for n, b in blobs.items()}, **(extra_done or {})}
        self.root.mkdir(parents=True, exist_ok=True)
        self._sweep_stale(h)
        token = f".{h[:12]}.{uuid.uuid4().hex[:12]}.tmp"
        tmp = self.root / token
        root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        tmp_fd = None
        try:
            os.mkdir(token, 0o755, dir_fd=root_fd)  # a fresh name: never an existing link
            tmp_fd = os.open(token, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW, dir_fd=root_fd)
            lock_dir(tmp_fd)  # a killed writer's folder is swept by the next import (sweep_temporaries)
            for name, data in {**blobs, "DONE": json_bytes(done)}.items():
                write_file(tmp_fd, name, data)
            self._install(tmp, h)
        finally:
            if tmp_fd is not None:
                os.close(tmp_fd)
            os.close(root_fd)
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def sweep_temporaries(self) -> list[str]:
        """Remove the temporary folders of killed writes (``.<hash12>.<token>.tmp`` no live writer
        holds: see :func:`~fedlib.experiments.results.store_safe.sweep_temporaries`); the names removed."""
        return sweep_temporaries(self.root) if self.root.is_dir() else []

    def _install(self, tmp: Path, h: str) -> None:
        """Put ``tmp`` at ``<root>/<h>``: swapped with a folder already there in one step (a reader
        sees the old result or the new one), else renamed into place (a damaged entry is moved
        aside first, see :meth:`repair`)."""
        final = self.root / h
        for _ in range(100):
            self.repair(h)
            if final.is_dir() and not final.is_symlink() and exchange(tmp, final):
                shutil.rmtree(tmp, ignore_errors=True)  # the old folder, now under tmp's name
                return
            if rename_onto_free(tmp, final):
                return
            # no exchange here: the old folder goes aside (a reader waits while it is there), the new
            # one is renamed in, and only then is the old one deleted
            aside = self.take_aside(h)
            if aside is None:
                continue
            try:
                if rename_onto_free(tmp, final):
                    return
            finally:
                shutil.rmtree(aside, ignore_errors=True)
        # another writer keeps winning the race: its result is as complete as ours
        if self.status(h)[0] != "done":
            raise FedlibError(f"could not write result {h[:12]} into {self.root}: the folder "
                              "keeps being replaced by another process")

    def take_aside(self, h: str) -> Path | None:
        """Rename ``<root>/<h>`` to ``.<h[:12]>.<random>.old`` in one step (a reader sees the result
        whole or not at all; :meth:`_sweep_stale` clears such names): the new path, None when there was
        nothing to move. Any other ``OSError`` propagates."""
        aside = self.root / f".{h[:12]}.{uuid.uuid4().hex[:12]}.old"
        try:
            os.rename(self.root / h, aside)
        except FileNotFoundError:
            return None
        return aside

    def discard(self, h: str) -> None:
        """Move ``<root>/<h>`` aside (one rename: a reader sees it whole or not at all), delete it."""
        aside = self.take_aside(h)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)

    def _sweep_stale(self, h: str, age: float = 3600.0) -> None:
        """Remove folders an interrupted write of ``h`` left behind (``.old`` any age, ``.tmp``
        after ``age`` seconds: a live writer's is younger)."""
        now = time.time()
        for p in self.root.glob(f".{h[:12]}.*"):
            try:
                if p.suffix == ".old" or (p.suffix == ".tmp" and now - p.stat().st_mtime > age):
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_path(self, cfg_or_hash) -> Path:
        return self.path(cfg_or_hash) / "checkpoint.pt"

    def save_checkpoint(self, cfg_or_hash, state: dict, round: int, total: int) -> None:
        """Write ``state`` (weights_only-loadable data) with the sha256 of its bytes, atomically."""
        d = self.path(cfg_or_hash)
        atomic_write_bytes(d / "checkpoint.pt", checkpoint_bytes(state))
        atomic_write_bytes(d / "progress.json", json_bytes(
            {"round": int(round), "total": int(total), "updated": time.time()}))

    def load_checkpoint(self, cfg_or_hash) -> dict | None:
        """The last checkpoint's state, or None. A checkpoint that is unreadable, fails its
        checksum, comes from an older format or another config is discarded with a warning (the
        run then starts from round 0). Loaded with ``weights_only=True``: it never runs code."""
        h = self._hash(cfg_or_hash)
        p = self.root / h / "checkpoint.pt"
        if not p.exists():
            return None
        state, problem = read_checkpoint(p, h)
        if problem is not None:
            self.discard_checkpoint(h, problem)
            return None
        return state

    def discard_checkpoint(self, cfg_or_hash, why: str) -> None:
        """Warn that the checkpoint of a run cannot be used (``why``) and delete it: the run starts
        from round 0 instead of failing on every rerun (issue 19)."""
        h = self._hash(cfg_or_hash)
        warnings.warn(f"the checkpoint of run {h[:12]} is discarded: {why}; the run starts again "
                      "from round 0 (nothing else is lost)", CorruptResultWarning, stacklevel=3)
        self.clear_checkpoint(h)

    def clear_checkpoint(self, cfg_or_hash) -> None:
        d = self.path(cfg_or_hash)
        (d / "checkpoint.pt").unlink(missing_ok=True)
        (d / "progress.json").unlink(missing_ok=True)
        for stale in d.glob(".*.tmp") if d.is_dir() else ():  # a write killed half-way
            stale.unlink(missing_ok=True)

    def write_error(self, cfg_or_hash, round: int, err: BaseException) -> None:
        """Record why the last attempt of a run failed (cleared when it next finishes)."""
        import traceback

        atomic_write_bytes(self.path(cfg_or_hash) / "error.json", json_bytes({
            "round": int(round), "error": f"{type(err).__name__}: {err}",
            "traceback": "".join(traceback.format_exception(err, limit=12)),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S")}))

    def clear(self, cfg_or_hash) -> None:
        """Remove everything of one run (before a forced recompute): its folder is renamed aside
        in one step, so a reader sees the old result whole or nothing."""
        self.discard(self._hash(cfg_or_hash))
