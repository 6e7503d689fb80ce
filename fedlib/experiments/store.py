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

``root`` is the ``FEDLIB_RESULTS`` environment variable, else ``./results``. Every file is written
with :func:`fedlib.core.utils.atomic_write_bytes` (temporary file + rename), and a result counts as
finished only when DONE exists and every checksum it lists matches: a truncated or edited file is
reported (:class:`CorruptResultWarning`) and the run is recomputed, never read as finished.
Checkpoints are read with ``torch.load(weights_only=True)`` only, so a results folder from someone
else cannot run code.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fedlib.core.dataclass_io import json_clean
from fedlib.core.errors import FedlibError
from fedlib.core.utils import atomic_torch_save, atomic_write_bytes, safe_torch_load

__all__ = ["ResultStore", "RunResult", "CorruptResultWarning", "default_root"]

_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
_RESULT_FILES = ("config.json", "history.csv", "clients.csv", "summary.json")


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

    def __repr__(self) -> str:
        s = self.summary
        return (f"RunResult({self.config_hash[:12]}, profile={s.get('profile')}, "
                f"rounds={len(self.history)}, final_accuracy={s.get('final_accuracy')}, "
                f"cached={self.cached})")


def default_root() -> Path:
    return Path(os.environ.get("FEDLIB_RESULTS") or "results")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_bytes(obj) -> bytes:
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


class ResultStore:
    """A folder of finished runs and checkpoints, addressed by config hash."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    # ------------------------------------------------------------------ addressing
    @staticmethod
    def _hash(cfg_or_hash) -> str:
        if isinstance(cfg_or_hash, str):
            return cfg_or_hash
        return cfg_or_hash.config_hash()

    def path(self, cfg_or_hash) -> Path:
        return self.root / self._hash(cfg_or_hash)

    def hashes(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _HASH_RE.match(p.name))

    def resolve(self, prefix: str) -> str:
        """The full hash starting with ``prefix`` (FedlibError if none or ambiguous)."""
        prefix = prefix.strip().lower()
        matches = [h for h in self.hashes() if h.startswith(prefix)] if prefix else []
        if not matches:
            raise FedlibError(f"no result {prefix!r} in {str(self.root)!r}",
                              "see `fedlib results list` for the stored hashes")
        if len(matches) > 1:
            raise FedlibError(f"hash prefix {prefix!r} is ambiguous ({len(matches)} results)",
                              "give more characters")
        return matches[0]

    # ------------------------------------------------------------------ integrity
    def status(self, cfg_or_hash) -> tuple[str, str]:
        """("done"|"partial"|"failed"|"corrupt"|"missing", detail) of one result folder.

        ``failed``: the last attempt raised (see error.json); running it again retries, resuming
        from the last checkpoint.
        """
        h = self._hash(cfg_or_hash)
        d = self.root / h
        if not d.is_dir():
            return "missing", ""
        done = d / "DONE"
        if not done.exists():
            if (d / "error.json").exists():
                try:
                    err = json.loads((d / "error.json").read_bytes())
                    return "failed", f"at round {err.get('round')}: {err.get('error')}"
                except Exception:  # noqa: BLE001
                    return "failed", "unreadable error.json"
            if (d / "checkpoint.pt").exists():
                return "partial", f"checkpoint at round {self._progress(d).get('round', '?')}"
            return "partial", "no checkpoint yet"
        try:
            marker = json.loads(done.read_bytes())
            files = marker["files"]
        except Exception as err:  # noqa: BLE001
            return "corrupt", f"unreadable DONE marker ({err})"
        if marker.get("config_hash") != h:
            return "corrupt", "DONE marker belongs to another config hash"
        for name in _RESULT_FILES:
            p = d / name
            if not p.is_file():
                return "corrupt", f"{name} is missing"
            if _sha256(p.read_bytes()) != files.get(name):
                return "corrupt", f"{name} does not match its checksum (truncated or modified)"
        try:
            summary = json.loads((d / "summary.json").read_bytes())
            for name, digest in summary.get("files", {}).items():
                if _sha256((d / name).read_bytes()) != digest:
                    return "corrupt", f"{name} does not match summary.json"
        except Exception as err:  # noqa: BLE001
            return "corrupt", f"unreadable summary.json ({err})"
        return "done", ""

    def has(self, cfg_or_hash) -> bool:
        """True only for a finished result whose every checksum matches."""
        return self.status(cfg_or_hash)[0] == "done"

    def get(self, cfg_or_hash, warn: bool = True) -> RunResult | None:
        """The finished result, or None (missing, unfinished, or corrupt — corrupt is warned)."""
        h = self._hash(cfg_or_hash)
        state, why = self.status(h)
        if state == "corrupt" and warn:
            warnings.warn(f"result {h[:12]} in {self.root} is corrupt ({why}); it will be recomputed",
                          CorruptResultWarning, stacklevel=2)
        if state != "done":
            return None
        d = self.root / h
        return RunResult(
            history=csv_to_frame((d / "history.csv").read_bytes()),
            clients=csv_to_frame((d / "clients.csv").read_bytes()),
            summary=json.loads((d / "summary.json").read_bytes()),
            config_hash=h,
            config=json.loads((d / "config.json").read_bytes()).get("config", {}),
            path=d,
            cached=True,
        )

    # ------------------------------------------------------------------ writing
    def write_config(self, cfg) -> Path:
        """Record the config of a run that is starting (lets `results list` show partial runs)."""
        from fedlib import __version__

        h = cfg.config_hash()
        d = self.root / h
        atomic_write_bytes(d / "config.json", _json_bytes(
            {"config_hash": h, "fedlib": __version__, "config": cfg.to_dict()}))
        return d

    def write_result(self, cfg, history: pd.DataFrame, clients: pd.DataFrame,
                     summary: dict) -> RunResult:
        """Write a finished run; DONE last. Returns the result as it reads back from disk."""
        from fedlib import __version__

        h = cfg.config_hash()
        d = self.root / h
        d.mkdir(parents=True, exist_ok=True)
        (d / "DONE").unlink(missing_ok=True)  # a rewrite is unfinished until its new DONE
        blobs = {
            "config.json": _json_bytes({"config_hash": h, "fedlib": __version__,
                                        "config": cfg.to_dict()}),
            "history.csv": frame_to_csv(history),
            "clients.csv": frame_to_csv(clients),
        }
        summary = dict(summary)
        summary["files"] = {n: _sha256(blobs[n]) for n in ("history.csv", "clients.csv")}
        blobs["summary.json"] = _json_bytes(summary)
        for name, data in blobs.items():
            atomic_write_bytes(d / name, data)
        atomic_write_bytes(d / "DONE", _json_bytes({
            "config_hash": h, "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "files": {n: _sha256(b) for n, b in blobs.items()}}))
        return RunResult(history=csv_to_frame(blobs["history.csv"]),
                         clients=csv_to_frame(blobs["clients.csv"]),
                         summary=json.loads(blobs["summary.json"]), config_hash=h,
                         config=cfg.to_dict(), path=d, cached=False)

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_path(self, cfg_or_hash) -> Path:
        return self.path(cfg_or_hash) / "checkpoint.pt"

    def save_checkpoint(self, cfg_or_hash, state: dict, round: int, total: int) -> None:
        d = self.path(cfg_or_hash)
        atomic_torch_save(state, d / "checkpoint.pt")
        atomic_write_bytes(d / "progress.json", _json_bytes(
            {"round": int(round), "total": int(total), "updated": time.time()}))

    def load_checkpoint(self, cfg_or_hash) -> dict | None:
        """The last checkpoint (weights_only load), or None; an unreadable one is warned about."""
        h = self._hash(cfg_or_hash)
        p = self.root / h / "checkpoint.pt"
        if not p.exists():
            return None
        try:
            state = safe_torch_load(p)
        except Exception as err:  # noqa: BLE001 - corrupt or unsafe: never executed, start over
            warnings.warn(f"checkpoint of {h[:12]} is unreadable ({type(err).__name__}: "
                          f"{str(err)[:200]}); starting that run from round 0",
                          CorruptResultWarning, stacklevel=2)
            return None
        if not isinstance(state, dict) or state.get("config_hash") != h:
            warnings.warn(f"checkpoint of {h[:12]} belongs to another config; ignoring it",
                          CorruptResultWarning, stacklevel=2)
            return None
        return state

    def clear_checkpoint(self, cfg_or_hash) -> None:
        d = self.path(cfg_or_hash)
        (d / "checkpoint.pt").unlink(missing_ok=True)
        (d / "progress.json").unlink(missing_ok=True)

    def write_error(self, cfg_or_hash, round: int, err: BaseException) -> None:
        """Record why the last attempt of a run failed (cleared when it next finishes)."""
        import traceback

        atomic_write_bytes(self.path(cfg_or_hash) / "error.json", _json_bytes({
            "round": int(round), "error": f"{type(err).__name__}: {err}",
            "traceback": "".join(traceback.format_exception(err, limit=12)),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S")}))

    def clear_error(self, cfg_or_hash) -> None:
        (self.path(cfg_or_hash) / "error.json").unlink(missing_ok=True)

    def clear(self, cfg_or_hash) -> None:
        """Remove everything of one run except its folder (before a forced recompute)."""
        d = self.path(cfg_or_hash)
        if d.is_dir():
            for p in d.iterdir():
                if p.is_file():
                    p.unlink()

    @staticmethod
    def _progress(d: Path) -> dict:
        try:
            return json.loads((d / "progress.json").read_bytes())
        except Exception:  # noqa: BLE001
            return {}

    # ------------------------------------------------------------------ inspection
    def list(self) -> pd.DataFrame:
        """One row per stored run: hash, status, what it is, and its headline metrics."""
        rows = []
        for h in self.hashes():
            d = self.root / h
            state, why = self.status(h)
            try:
                cfg = json.loads((d / "config.json").read_bytes()).get("config", {})
            except Exception:  # noqa: BLE001
                cfg = {}
            summary = {}
            if state == "done":
                try:
                    summary = json.loads((d / "summary.json").read_bytes())
                except Exception:  # noqa: BLE001
                    summary = {}
            data, model = cfg.get("data", {}), cfg.get("model", {})
            rows.append({
                "hash": h[:12],
                "status": state,
                "paradigm": cfg.get("paradigm"),
                "algorithm": cfg.get("algorithm"),
                "dataset": data.get("dataset"),
                "model": model.get("name"),
                "profile": cfg.get("profile"),
                "seed": cfg.get("seed"),
                "rounds": cfg.get("rounds"),
                "done_rounds": summary.get("rounds") if state == "done"
                else self._progress(d).get("round", 0),
                "final_accuracy": summary.get("final_accuracy"),
                "convergence_accuracy": summary.get("convergence_accuracy"),
                "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(d.stat().st_mtime)),
                "detail": why,
            })
        cols = ["hash", "status", "paradigm", "algorithm", "dataset", "model", "profile", "seed",
                "rounds", "done_rounds", "final_accuracy", "convergence_accuracy", "modified",
                "detail"]
        return pd.DataFrame(rows, columns=cols)

    def show(self, hash_prefix: str) -> dict:
        """Config, status, summary and sizes of one stored run."""
        h = self.resolve(hash_prefix)
        d = self.root / h
        state, why = self.status(h)
        out = {"hash": h, "path": str(d), "status": state, "detail": why}
        try:
            out["config"] = json.loads((d / "config.json").read_bytes()).get("config", {})
        except Exception:  # noqa: BLE001
            out["config"] = None
        if state == "done":
            out["summary"] = json.loads((d / "summary.json").read_bytes())
        else:
            out["progress"] = self._progress(d)
        out["files"] = {p.name: p.stat().st_size for p in sorted(d.iterdir()) if p.is_file()}
        return out

    def rm(self, hash_prefix: str | None = None, all: bool = False) -> list[str]:
        """Delete one run (by hash prefix), or every run with ``all=True``; returns the hashes."""
        if all:
            targets = self.hashes()
        else:
            if hash_prefix in (None, "--all"):
                if hash_prefix == "--all":
                    return self.rm(all=True)
                raise FedlibError("rm needs a hash prefix or all=True")
            targets = [self.resolve(hash_prefix)]
        for h in targets:
            shutil.rmtree(self.root / h, ignore_errors=True)
        return targets
