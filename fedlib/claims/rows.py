"""Reading the rows the executed reports saved (``reports/<profile>/**/<name>.comparison.csv``).

Each paired row's note holds ``95% interval [lo, hi] over n seeds`` and, for most, ``per seed
[d1, d2, ...]``; :func:`parse_interval` turns it into an :class:`~fedlib.claims.verdict.Interval`
(the row's ``measured`` is the mean).

**Readings.** A FedQS row may stand for a named reading of the method
(``fedlib.safl.fedqs.readings.READINGS``). A report names it in a ``reading`` column of its
comparison CSV, or in the row's setting as a tag such as ``"CV x=0.5, FedQS-SGD − FedSGD
[code-main]"`` (also ``(code-main)``, ``· code-main``, ``reading code-main``); a row without one is
the ``paper`` reading. :func:`find` returns one interval per reading, so a report that adds
``code-main`` / ``code-momentum`` rows adds verdict rows to the scoreboard without a change here.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

from fedlib.claims.verdict import Interval

_NUM = r"[-−+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan"
_INTERVAL = re.compile(rf"interval \[({_NUM}), ({_NUM})\] over (\d+)", re.I)
_PER_SEED = re.compile(r"per seed \[([^\]]*)\]")


def _readings() -> tuple[str, ...]:
    from fedlib.safl.fedqs.readings import READINGS

    return tuple(READINGS)


def _tag_re(name: str) -> re.Pattern:
    return re.compile(rf"\s*(?:[\[(]\s*(?:reading[:\s]+)?{re.escape(name)}\s*[\])]|[·,]\s*(?:reading[:\s]+)?"
                      rf"{re.escape(name)}\b|\breading[:\s]+{re.escape(name)}\b)")


def reading_of(setting: str, column: str | None = None) -> tuple[str, str]:
    """(reading, the setting without its reading tag)."""
    if column and isinstance(column, str) and column.strip() and column == column:
        return column.strip(), setting
    for name in _readings():
        if name == "paper":  # the default: a row without a tag (and "paper reading" in SMoFi rows is not a tag)
            continue
        pat = _tag_re(name)
        if pat.search(setting):
            return name, re.sub(r"\s+", " ", pat.sub("", setting)).strip()
    return "paper", setting


def _f(text: str) -> float:
    return float(text.replace("−", "-"))


def parse_interval(measured, note: str) -> Interval | None:
    """The interval a row's note states (None when it states none)."""
    m = _INTERVAL.search(str(note))
    if not m:
        return None
    diffs = ()
    p = _PER_SEED.search(str(note))
    if p and p.group(1).strip():
        try:
            diffs = tuple(_f(x) for x in p.group(1).split(","))
        except ValueError:
            diffs = ()
    try:
        mean = float(measured)
    except (TypeError, ValueError):
        mean = (_f(m.group(1)) + _f(m.group(2))) / 2
    return Interval(mean, _f(m.group(1)), _f(m.group(2)), int(m.group(3)), diffs)


@lru_cache(maxsize=None)
def _table(path: str, mtime: float):
    import pandas as pd

    return pd.read_csv(path)


def table(root: Path, report: str):
    """The comparison table of ``reports/<report>``, or None when the report has none."""
    path = Path(root) / "reports" / f"{report}.comparison.csv"
    if not path.is_file():
        return None
    return _table(str(path), path.stat().st_mtime)


def find(root: Path, report: str, setting: str, metric: str = "") -> dict:
    """{reading: (Interval or None, the row as a dict)} for the rows of ``report`` whose setting
    (its reading tag removed) is ``setting`` and whose metric starts with ``metric``."""
    df = table(root, report)
    out = {}
    if df is None:
        return out
    has_col = "reading" in df.columns
    for row in df.to_dict("records"):
        reading, bare = reading_of(str(row["setting"]), row.get("reading") if has_col else None)
        if bare != setting or not str(row.get("metric", "")).startswith(metric):
            continue
        iv = parse_interval(row.get("measured"), row.get("note", ""))
        if iv is None:
            try:
                iv = Interval(float(row.get("measured")))
            except (TypeError, ValueError):
                iv = None
            if iv is not None and math.isnan(iv.mean):
                iv = None
        out.setdefault(reading, (iv, row))
    return out
