"""Re-key a result store after a change of the config-hash scheme (``fedlib results rehash``).

Schemes, oldest first (each is sha256 of canonical JSON, :meth:`RunConfig.canonical_json`):

* ``v0`` (before issue 13): ``{"fedlib", "config": <every section>}``;
* ``v1`` (issue 13): the other paradigm's section left out;
* ``v2`` (issue 19, current): also the labels ``profile`` / ``checkpoint_every`` left out, and
  ``"data": <fingerprint of the dataset's files>`` added (:mod:`fedlib.data.fingerprint`).

A stored run is moved to its current hash only when that is the same run: its folder name is the
hash of its stored config under one of the schemes, and that config reads back unchanged — except
for fields listed in :data:`NEUTRAL_FIELDS`, added since with a value that reproduces the old
behaviour bit for bit: a stored config that lacks exactly such fields, and reads back with them at
their neutral value, is the same run. A run stored before fingerprints (``v0``/``v1``) gets the
fingerprint of the *current* data root: the user asserts it is the same data (the command says so).
Everything else is left where it is and reported. The moved result is written whole under its new
hash (:meth:`ResultStore.write_folder`) and the old folder removed; history and clients are copied
byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import time

import pandas as pd

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import LABEL_FIELDS, UNREAD_SECTIONS, RunConfig, omit_hash_defaults
from fedlib.experiments.results.store import ResultStore

__all__ = ["NEUTRAL_FIELDS", "legacy_config_hash", "scheme_hashes", "rehash_store"]

# field path -> the value that reproduces the behaviour from before the field existed. A stored
# config missing exactly these fields (and reading back with them at these values) is unchanged.
# Extend it when a field is added to RunConfig or an algorithm's options (e.g. "local.precision").
# A field counts only where the current config has it (``options.weighting`` is SMoFi's alone).
NEUTRAL_FIELDS: dict[str, object] = {
    "local.precision": "fp32",        # issue 17: fp32 is the training path of before, bit for bit
    "options.weighting": "uniform",   # issue 18: SMoFi's staleness weighting
    "split.sflv2_momentum": "carry",  # issue 31: SFLV2's server momentum (hash-neutral at this value)
    "eval_last": 0,                   # issue 34: the evaluation cadence's tail (hash-neutral at 0)
}


def _sha_json(payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


def legacy_config_hash(config: dict, version: str) -> str:
    """The hash before issue 13 (scheme v0): sha256 of ``{"fedlib": version, "config": <every section>}``."""
    return _sha_json({"fedlib": version, "config": config})


def scheme_hashes(config: dict, version: str, data_fingerprint="absent") -> dict[str, str]:
    """{scheme: hash} of a stored config dict under every scheme it may have been written with
    (``v2`` only when the stored run recorded a data fingerprint, which may be None)."""
    own = {k: v for k, v in config.items() if k not in UNREAD_SECTIONS.get(config.get("paradigm"), ())}
    out = {"v0": legacy_config_hash(config, version), "v1": _sha_json({"fedlib": version, "config": own})}
    if data_fingerprint != "absent":
        v2 = omit_hash_defaults(json.loads(json.dumps({k: v for k, v in own.items() if k not in LABEL_FIELDS})))
        out["v2"] = _sha_json({"fedlib": version, "config": v2, "data": data_fingerprint})
    return out


def _has_path(d: dict, parts: list) -> bool:
    for part in parts:
        if not isinstance(d, dict) or part not in d:
            return False
        d = d[part]
    return True


def with_neutral_fields(config: dict, table: dict | None = None, reference: dict | None = None) -> dict:
    """``config`` with every field of ``table`` (default :data:`NEUTRAL_FIELDS`) that it lacks added
    at its neutral value (a field whose section is absent is added with its section); with
    ``reference`` (the config as it reads back today), only the fields ``reference`` has."""
    out = json.loads(json.dumps(config))
    for path, value in (NEUTRAL_FIELDS if table is None else table).items():
        node, parts = out, path.split(".")
        if reference is not None and not _has_path(reference, parts):
            continue
        for part in parts[:-1]:
            node = node.setdefault(part, {}) if isinstance(node, dict) else None
            if node is None:
                break
        if isinstance(node, dict) and parts[-1] not in node:
            node[parts[-1]] = value
    return out


def _plan(store: ResultStore, h: str) -> tuple[str, str | None, dict | None, bool]:
    """(what to do, new hash, fingerprint to record, whether that fingerprint is assumed)."""
    state, why = store.status(h)
    if state != "done":
        return f"kept: {state}{' (' + why + ')' if why else ''}", None, None, False
    stored = json.loads((store.root / h / "config.json").read_bytes())
    config, version = stored.get("config", {}), stored.get("fedlib", "")
    try:
        cfg = RunConfig.from_dict(config)
    except FedlibError as err:
        return f"kept: its config no longer validates ({err.problem})", None, None, False
    if cfg.to_dict() != with_neutral_fields(config, reference=cfg.to_dict()):
        return "kept: its config reads back with new fields (a default filled in)", None, None, False
    recorded = "data_fingerprint" in stored
    fp = stored["data_fingerprint"] if recorded else cfg.data_fingerprint()
    new = cfg.config_hash(fp)
    if new == h:
        return "current", new, fp, False
    if h not in scheme_hashes(config, version, stored["data_fingerprint"] if recorded else "absent").values():
        return "kept: the folder name is not the hash of its config under any scheme", None, None, False
    if (store.root / new).exists():
        return f"kept: {new[:12]} exists already", None, None, False
    return "moved", new, fp, (not recorded and fp is not None)


def _move(store: ResultStore, old: str, new: str, fingerprint, config: dict) -> None:
    """Write the result ``old`` whole under ``new`` (hash-naming files rewritten), then remove ``old``."""
    d = store.root / old
    blobs = {n: (d / n).read_bytes() for n in ("config.json", "history.csv", "clients.csv", "summary.json")}
    stored = json.loads(blobs["config.json"])
    stored.update(config_hash=new, config=config, data_fingerprint=fingerprint)
    summary = json.loads(blobs["summary.json"])
    summary["config_hash"] = new
    blobs["config.json"] = _dump(stored)
    blobs["summary.json"] = _dump(summary)
    store.write_folder(new, blobs, {"rehashed": {"from": old, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}})
    store.discard(old)


def _dump(obj) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()


def rehash_store(store: ResultStore, dry_run: bool = False) -> pd.DataFrame:
    """Move every finished run whose hash changed to its current hash; one row per stored run.

    Column ``data``: ``assumed current`` where a run stored without a data fingerprint was given
    the fingerprint of the dataset now under the data root (``$FEDLIB_DATA``).
    """
    rows = []
    for h in store.hashes():
        action, new, fp, assumed = _plan(store, h)
        if action == "moved" and not dry_run:
            config = json.loads((store.root / h / "config.json").read_bytes())["config"]
            _move(store, h, new, fp, RunConfig.from_dict(config).to_dict())
        rows.append({"hash": h[:12], "new_hash": (new or "")[:12], "action": action,
                     "data": "assumed current" if assumed else ""})
    return pd.DataFrame(rows, columns=["hash", "new_hash", "action", "data"])
