"""Checks of a ledger entry's contents before it is accepted (issue 59): every file parsed, nothing
trusted by its shape alone.

* :func:`loads_bounded` — JSON with its nesting bounded (a ``config.json`` 100,000 lists deep is
  refused in one line, never a ``RecursionError``);
* :func:`done_problem` — the type of every field of a ``DONE`` marker;
* :func:`table_problem` — ``history.csv`` / ``clients.csv`` parsed as the store reads them back.
"""

from __future__ import annotations

import json

__all__ = ["MAX_JSON_DEPTH", "loads_bounded", "done_problem", "table_problem"]

#: the deepest nesting a ledger JSON file may have (a config is 4 deep today)
MAX_JSON_DEPTH = 32


def _depth(text: str) -> int:
    """The deepest ``[`` / ``{`` nesting of JSON ``text`` (brackets inside strings ignored)."""
    depth = deepest = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_bounded(data: bytes | str, name: str):
    """``json.loads`` of ``data``; ValueError (one line naming ``name``) for text that is not JSON
    or nests deeper than :data:`MAX_JSON_DEPTH`."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    if _depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"{name} nests deeper than {MAX_JSON_DEPTH} levels (crafted?)")
    try:
        return json.loads(text)
    except ValueError as err:
        raise ValueError(f"{name} is not JSON ({str(err)[:80]})") from None


_HEX64 = "0123456789abcdef"


def _is_hex(v, n=64) -> bool:
    return isinstance(v, str) and len(v) == n and all(c in _HEX64 for c in v)


def done_problem(done) -> str:
    """Why a parsed ``DONE`` marker is not one ("" when every field has its type): an object with
    ``config_hash`` (64 hex), ``files`` ({name: 64-hex sha256}), optional ``finished`` (text) and
    ``provenance`` ({key: text, number or null})."""
    if not isinstance(done, dict):
        return f"DONE is a JSON {type(done).__name__}, not an object"
    if not _is_hex(done.get("config_hash")):
        return "DONE's config_hash is not 64 hex characters"
    files = done.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and _is_hex(v) for k, v in files.items()):
        return "DONE's files is not an object of file name: sha256 (64 hex characters)"
    if "finished" in done and not isinstance(done["finished"], str):
        return "DONE's finished is not text"
    prov = done.get("provenance", {})
    if not isinstance(prov, dict):
        return f"DONE's provenance is a JSON {type(prov).__name__}, not an object"
    for k, v in prov.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (str, int, float))):
            return f"DONE's provenance field {str(k)[:40]!r} is a JSON {type(v).__name__}, not text or a number"
    return ""


def table_problem(data: bytes, name: str, need: tuple[str, ...] = ()) -> str:
    """Why ``data`` is not a table the store can read back ("" when it is): parsed exactly as
    :func:`fedlib.experiments.results.store.csv_to_frame` parses it, with the columns ``need``."""
    from fedlib.experiments.results.store_files import csv_to_frame

    try:
        frame = csv_to_frame(data)
    except Exception as err:  # noqa: BLE001 — pandas raises many kinds; each is "not CSV"
        return f"{name} is not a CSV table ({type(err).__name__}: {str(err).splitlines()[0][:80] if str(err) else ''})"
    missing = [c for c in need if c not in frame.columns]
    if missing:
        return f"{name} has no {', '.join(missing)} column"
    return ""
