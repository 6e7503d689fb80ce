"""Re-key a result store after a change of the config-hash scheme (``fedlib results rehash``).

Until issue 13 the hash covered every section of the config; now it leaves out the other paradigm's
section (:meth:`RunConfig.hashed_dict`). A stored run is moved to its new hash only when that is
provably the same run: its folder name equals the old-scheme hash of its stored config, and that
config reads back unchanged (no option added since with a default filled in). Everything else is
left where it is and reported. Files that name the hash (config.json, summary.json, DONE) are
rewritten with their checksums; history and clients are not touched.
"""

from __future__ import annotations

import hashlib
import json
import time

import pandas as pd

from fedlib.core.errors import FedlibError
from fedlib.core.utils import atomic_write_bytes
from fedlib.experiments.config import RunConfig
from fedlib.experiments.store import ResultStore

__all__ = ["legacy_config_hash", "rehash_store"]


def legacy_config_hash(config: dict, version: str) -> str:
    """The hash before issue 13: sha256 of ``{"fedlib": version, "config": <every section>}``."""
    payload = {"fedlib": version, "config": config}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump(obj) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()


def _plan(store: ResultStore, h: str) -> tuple[str, str | None]:
    """(what to do, new hash) for one stored run."""
    state, why = store.status(h)
    if state != "done":
        return f"kept: {state}{' (' + why + ')' if why else ''}", None
    d = store.root / h
    stored = json.loads((d / "config.json").read_bytes())
    config, version = stored.get("config", {}), stored.get("fedlib", "")
    try:
        cfg = RunConfig.from_dict(config)
    except FedlibError as err:
        return f"kept: its config no longer validates ({err.problem})", None
    if cfg.to_dict() != config:
        return "kept: its config reads back with new fields (a default filled in)", None
    new = cfg.config_hash()
    if new == h:
        return "current", new
    if legacy_config_hash(config, version) != h:
        return "kept: the folder name is not the hash of its config under either scheme", None
    if (store.root / new).exists():
        return f"kept: {new[:12]} exists already", None
    return "moved", new


def _move(store: ResultStore, old: str, new: str) -> None:
    d = store.root / old
    blobs = {name: (d / name).read_bytes() for name in ("config.json", "summary.json")}
    config = json.loads(blobs["config.json"])
    config["config_hash"] = new
    summary = json.loads(blobs["summary.json"])
    summary["config_hash"] = new
    blobs = {"config.json": _dump(config), "summary.json": _dump(summary)}
    for name, data in blobs.items():
        atomic_write_bytes(d / name, data)
    done = json.loads((d / "DONE").read_bytes())
    done["config_hash"] = new
    done["rehashed"] = {"from": old, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    done["files"].update({name: _sha(data) for name, data in blobs.items()})
    atomic_write_bytes(d / "DONE", _dump(done))
    (d / "checkpoint.pt").unlink(missing_ok=True)
    d.rename(store.root / new)


def rehash_store(store: ResultStore, dry_run: bool = False) -> pd.DataFrame:
    """Move every finished run whose hash changed to its new hash; one row per stored run."""
    rows = []
    for h in store.hashes():
        action, new = _plan(store, h)
        if action == "moved" and not dry_run:
            _move(store, h, new)
        rows.append({"hash": h[:12], "new_hash": (new or "")[:12], "action": action})
    return pd.DataFrame(rows, columns=["hash", "new_hash", "action"])
