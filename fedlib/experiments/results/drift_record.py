"""Reading ``benchmarks/results/cross_cpu.json`` (the cross-CPU drift record) without a traceback.

The record is a JSON list of ``fedlib verify`` comparisons across CPU types (see
:mod:`fedlib.claims.drift` for its fields). It is edited by hand and merged between branches, so it
may hold git conflict markers, be cut short, or hold something other than a list of objects:
:func:`parse_drift_record` turns every such case into one :class:`FedlibError` line naming the file.

:func:`drift_bounds` gives, per model family, the largest drift measured — what ``fedlib verify
--changed-since`` accepts as "expected" on another CPU type (issue 59).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from fedlib.core.errors import FedlibError

__all__ = ["parse_drift_record", "load_drift_record", "drift_bounds", "MAX_RECORD_BYTES"]

#: a drift record larger than this is not one (today's is 3 KB)
MAX_RECORD_BYTES = 8 * 2**20
_CONFLICT = ("<<<<<<< ", "=======", ">>>>>>> ")


def _refuse(name: str, why: str) -> FedlibError:
    return FedlibError(f"the drift record {name} {why}",
                       f"restore it from git (git checkout -- {name}) or resolve the merge by hand")


def parse_drift_record(text: str | bytes, name: str) -> list[dict]:
    """The entries of a drift record's ``text`` (``name``: the file, for the message); FedlibError
    for merge-conflict markers, text that is not JSON, or JSON that is not a list of objects."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse(name, "is not UTF-8 text") from None
    if any(line.startswith(_CONFLICT) for line in text.splitlines()):
        raise _refuse(name, "holds git merge-conflict markers (<<<<<<< / >>>>>>>)")
    try:
        entries = json.loads(text)
    except RecursionError:
        raise _refuse(name, "is nested too deeply to be a drift record") from None
    except ValueError as err:
        raise _refuse(name, f"is not valid JSON ({str(err)[:80]})") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise _refuse(name, "is not a JSON list of objects")
    return entries


def load_drift_record(path: str | Path, missing_ok: bool = True) -> list[dict]:
    """:func:`parse_drift_record` of the file at ``path`` ([] when it does not exist and
    ``missing_ok``); FedlibError for a folder, a device, a file too large or unreadable."""
    path = Path(path)
    try:
        if not path.exists() and missing_ok:
            return []
        if not path.is_file():
            raise _refuse(str(path), "is not a regular file")
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise _refuse(str(path), f"is larger than {MAX_RECORD_BYTES:,} bytes")
        data = path.read_bytes()
    except OSError as err:
        raise FedlibError(f"cannot read the drift record {str(path)!r} ({err.strerror or err})",
                          "check that path's permissions") from None
    return parse_drift_record(data, str(path))


def _points(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return abs(float(value))


def drift_bounds(entries: list[dict]) -> dict[str, dict[str, float]]:
    """{family: {"round": largest per-round difference, "final": largest |final difference|}} in
    points, over the entries that name a family and give finite numbers (others are left out)."""
    out: dict[str, dict[str, float]] = {}
    for e in entries:
        fam = e.get("family")
        if not isinstance(fam, str):
            continue
        rnd, fin = _points(e.get("largest_round_diff")), _points(e.get("final_diff"))
        if rnd is None:
            continue
        b = out.setdefault(fam, {"round": 0.0, "final": 0.0})
        b["round"] = max(b["round"], rnd)
        b["final"] = max(b["final"], rnd if fin is None else fin)
    return out
