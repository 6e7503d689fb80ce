"""Inspecting and pruning a result store: ``results list`` / ``show`` / ``rm`` (the store's
:meth:`~fedlib.experiments.results.store.ResultStore.list`, ``show`` and ``rm`` hand their work to a
:class:`StoreAdmin` of that store). It reads the store through its public methods only (``hashes``,
``resolve``, ``snapshot``, ``verify``, ``take_aside``). Damaged entries are listed as such, never raise
(issue 33); removal takes an entry out of the store in one rename and says so only when it is gone."""

from __future__ import annotations

import os
import re
import shutil

import pandas as pd

from fedlib.core.errors import FedlibError
from fedlib.experiments.results.store_files import DamagedEntry, json_field, mtime_text

MIN_RM_PREFIX = 8  # `results rm` by a shorter prefix needs --yes (issue 33)


class StoreAdmin:
    """``list``, ``show`` and ``rm`` of one :class:`~fedlib.experiments.results.store.ResultStore`."""

    def __init__(self, store):
        self.store = store
        self.root = store.root

    # ------------------------------------------------------------------ inspection
    def list(self) -> pd.DataFrame:
        """One row per stored run: hash, status, what it is, and its headline metrics."""
        rows = []
        for h in self.store.hashes():
            d = self.root / h
            snap, state, why = self._read_entry(h)
            if state == "missing":
                continue  # removed since it was listed
            cfg = json_field(snap.get("config.json"), "config")
            summary = json_field(snap.get("summary.json")) if state == "done" else {}
            data, model = cfg.get("data", {}), cfg.get("model", {})
            data, model = data if isinstance(data, dict) else {}, model if isinstance(model, dict) else {}
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
                else json_field(snap.get("progress.json")).get("round", 0),
                "final_accuracy": summary.get("final_accuracy"),
                "convergence_accuracy": summary.get("convergence_accuracy"),
                "modified": mtime_text(d),
                "detail": why,
            })
        cols = ["hash", "status", "paradigm", "algorithm", "dataset", "model", "profile", "seed",
                "rounds", "done_rounds", "final_accuracy", "convergence_accuracy", "modified",
                "detail"]
        return pd.DataFrame(rows, columns=cols)

    def show(self, hash_prefix: str) -> dict:
        """Config, status, summary and sizes of one stored run."""
        h = self.store.resolve(hash_prefix)
        d = self.root / h
        snap, state, why = self._read_entry(h)
        if state == "missing":
            raise FedlibError(f"no result {h[:12]!r} in {str(self.root)!r} (removed meanwhile)",
                              "see `fedlib results list` for the stored hashes")
        out = {"hash": h, "path": str(d), "status": state, "detail": why}
        out["config"] = json_field(snap.get("config.json"), "config") or None
        if state == "done":
            out["summary"] = json_field(snap.get("summary.json"))
        else:
            out["progress"] = json_field(snap.get("progress.json"))
        out["files"] = {}
        if state != "damaged":
            try:
                with os.scandir(d) as it:
                    out["files"] = {e.name: e.stat(follow_symlinks=False).st_size for e in
                                    sorted(it, key=lambda e: e.name) if e.is_file(follow_symlinks=False)}
            except OSError:
                pass
        return out

    def _read_entry(self, h: str) -> tuple[dict, str, str]:
        """(files, state, detail) of one entry, from one snapshot; damaged entries never raise."""
        try:
            snap = self.store.snapshot(h)
        except DamagedEntry as err:
            return {}, "damaged", str(err)
        if snap is None:
            return {}, "missing", ""
        state, why = self.store.verify(h, snap)
        return snap, state, why

    def rm(self, hash_prefix: str | None = None, all: bool = False, yes: bool = False) -> list[str]:
        """Delete one run (by hash prefix), or every run with ``all=True``; returns the hashes.

        A prefix shorter than :data:`MIN_RM_PREFIX` hex characters is refused unless ``yes``
        (issue 33: one character used to delete without asking). A result that cannot be removed
        (read-only store) raises FedlibError: nothing is reported removed that was not."""
        if all:
            targets = self.store.hashes()
        else:
            if hash_prefix in (None, "--all"):
                if hash_prefix == "--all":
                    return self.rm(all=True)
                raise FedlibError("rm needs a hash prefix or all=True")
            check_prefix = str(hash_prefix).strip().lower()
            if not re.fullmatch(r"[0-9a-f]+", check_prefix):
                raise FedlibError(f"{str(hash_prefix)[:70]!r} is not a result hash (hex digits)",
                                  "see `fedlib results list` for the stored hashes")
            h = self.store.resolve(hash_prefix)
            if len(check_prefix) < MIN_RM_PREFIX and not yes:
                raise FedlibError(f"hash prefix {check_prefix!r} is too short to remove by: it names "
                                  f"{h[:12]} now, but a short prefix is easily mistyped",
                                  f"give at least {MIN_RM_PREFIX} hex characters ({h[:MIN_RM_PREFIX]}), "
                                  "or confirm with --yes (API: yes=True)")
            targets = [h]
        for h in targets:
            self._remove(h)
        return targets

    def _remove(self, h: str) -> None:
        """Rename ``<root>/<h>`` aside in one step, then delete it; FedlibError if it cannot."""
        try:
            aside = self.store.take_aside(h)
        except OSError as err:
            raise FedlibError(f"could not remove result {h[:12]} from {str(self.root)!r}: {err.strerror}",
                              "nothing was removed; make the store writable (or remove it by hand)") \
                from None
        if aside is None:
            return
        try:
            shutil.rmtree(aside) if aside.is_dir() and not aside.is_symlink() else os.unlink(aside)
        except OSError as err:
            raise FedlibError(f"result {h[:12]} was taken out of {str(self.root)!r}, but deleting its "
                              f"files failed: {err.strerror}", f"delete {str(aside)!r} by hand") from None
