"""Evidence: what a report measured, as typed records beside it — the scoreboard reads these, never prose.

A report's comparison rows are built in its notebook; a paired row carries its structured difference
(:func:`paired`: mean, 95 % t-interval, pairs and their per-pair values, the pairs' unit) and, where it
stands for a named reading, the reading. :func:`fedlib.reporting.tables.save_comparison` writes
``<report>.comparison.csv`` for people and ``<report>.evidence.json`` for the library: one :class:`Evidence`
per row, with the setting's reading tag taken off (a row's reading is a field, not words in its name).
The interval note a reader sees is rendered from the same numbers (:func:`interval_note`), so the two
cannot disagree.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from fedlib.claims.verdict import Interval

SUFFIX = ".evidence.json"
FORMAT = 1


@dataclass(frozen=True)
class Evidence:
    """One row of a report: its setting (reading tag removed) and metric, the reading it stands for (empty: the
    method's default), and either a paired difference (``n`` pairs, ``diffs`` per pair) or a single ``value``."""

    setting: str
    metric: str = ""
    reading: str = ""
    table: str = ""
    mean: float = float("nan")
    lo: float = float("nan")
    hi: float = float("nan")
    n: int = 0
    diffs: tuple = ()
    unit: str = "seeds"
    value: float = float("nan")
    paper: float = float("nan")
    #: the claims (``fedlib.claims``) whose cells read this row
    claims: tuple = ()
    #: the runs behind a paired row, one ``(seed, arm's config hash, base's config hash)`` per pair, where the
    #: report's run table names them (a ``run`` column): what ``fedlib verify`` and the ledger look up
    runs: tuple = ()
    extra: dict = field(default_factory=dict)

    @property
    def paired(self) -> bool:
        return self.n > 0

    def interval(self) -> Interval | None:
        """The row as the verdict rule's :class:`Interval` (a single value: one with no pairs; None: no number)."""
        if self.paired:
            return Interval(self.mean, self.lo, self.hi, self.n, tuple(self.diffs))
        return None if self.value != self.value else Interval(self.value)


def paired(diff: dict, unit: str = "seeds") -> dict:
    """The structured part of a :func:`fedlib.reporting.stats.paired_difference` result, for a row's ``evidence``."""
    out = {"mean": float(diff["mean"]), "lo": float(diff["lo"]), "hi": float(diff["hi"]), "n": int(diff["n"]),
           "diffs": [float(x) for x in diff.get("diffs", [])], "unit": unit}
    if diff.get("runs"):
        out["runs"] = [[int(s) if str(s).lstrip("-").isdigit() else s, str(a), str(b)] for s, a, b in diff["runs"]]
    return out


def interval_note(ev: dict | Evidence) -> str:
    """``95% interval [lo, hi] over n seeds, per seed [d1, ...]`` — the one text of a paired row's numbers."""
    from fedlib.claims.numbers import interval_text

    e = ev if isinstance(ev, dict) else asdict(ev)
    per = "per seed" if e.get("unit", "seeds") == "seeds" else "per pair"
    diffs = [round(float(x), 3) for x in e.get("diffs", [])]
    return f"95% interval {interval_text(e['lo'], e['hi'])} over {e['n']} {e.get('unit', 'seeds')}, {per} {diffs}"


def split_reading(setting: str) -> tuple[str, str]:
    """(reading, the setting without its tag) of a FedQS row named with :func:`fedlib.safl.fedqs.readings.reading_tag`
    (``"CV x=0.5, FedQS-SGD · code-main − FedSGD"``); ``("", setting)`` when it has none."""
    from fedlib.safl.fedqs.readings import DEFAULT_READING, READINGS, reading_tag

    for name in READINGS:
        if name == DEFAULT_READING:
            continue
        tag = reading_tag(name)
        if tag in setting:
            return name, " ".join(setting.replace(tag, "").split())
    return "", setting


def _num(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return float("nan")
    return v


def record(row: dict) -> Evidence:
    """The :class:`Evidence` of one comparison row (a dict with ``setting``, ``metric``, optional ``reading`` and
    ``evidence``)."""
    setting = str(row.get("setting", ""))
    reading = row.get("reading")
    reading = reading.strip() if isinstance(reading, str) else ""
    tagged, bare = split_reading(setting)
    reading = reading or tagged
    ev = row.get("evidence")
    base = dict(setting=bare, metric=str(row.get("metric", "") or ""), reading=reading, table=str(row.get("table", "")),
                paper=_num(row.get("paper")))
    if isinstance(ev, dict) and ev.get("n") is not None:
        return Evidence(**base, mean=float(ev["mean"]), lo=_num(ev["lo"]), hi=_num(ev["hi"]), n=int(ev["n"]),
                        diffs=tuple(float(x) for x in ev.get("diffs", ())), unit=str(ev.get("unit", "seeds")),
                        runs=tuple(tuple(x) for x in ev.get("runs") or ()))
    return Evidence(**base, value=_num(row.get("measured")))


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    return x


def to_json(records: list[Evidence]) -> str:
    """One record a line (diffs stay readable)."""
    rows = ",\n".join(json.dumps(_json_safe({k: v for k, v in asdict(r).items() if k != "runs" or v}),
                                  ensure_ascii=False) for r in records)
    return f'{{"format": {FORMAT}, "rows": [\n{rows}\n]}}\n'


def report_cells(report: str) -> list:
    """``(claim id, cell)`` for every claim cell that reads ``reports/<report>``."""
    from fedlib.claims import all_claims

    return [(c.id, cell) for c in all_claims() for cell in c.cells if cell.report == report]


def claims_of(cells: list, ev: Evidence) -> tuple:
    """The ids of the claims among ``cells`` (:func:`report_cells`) with a cell that reads row ``ev``."""
    return tuple(dict.fromkeys(cid for cid, cell in cells
                               if cell.setting == ev.setting and ev.metric.startswith(cell.metric)))


def write(path: Path, rows: list[dict], report: str) -> None:
    """``<report>.evidence.json`` at ``path`` from a comparison's rows (each with the claims that read it)."""
    import dataclasses
    import os

    recs = [record(r) for r in rows if str(r.get("setting") or "").strip()]
    cells = report_cells(report)  # once per report, not once per row
    recs = [dataclasses.replace(e, claims=claims_of(cells, e)) for e in recs]
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(to_json(recs), encoding="utf-8")
    os.replace(tmp, path)


def from_json(text: str) -> list[Evidence]:
    data = json.loads(text)
    out = []
    for r in data.get("rows", []):
        r = {k: (float("nan") if v is None and k in ("mean", "lo", "hi", "value", "paper") else v) for k, v in r.items()}
        r["diffs"] = tuple(r.get("diffs") or ())
        r["claims"] = tuple(r.get("claims") or ())
        r["runs"] = tuple(tuple(x) for x in r.get("runs") or ())
        out.append(Evidence(**r))
    return out


@lru_cache(maxsize=None)
def _load(path: str, mtime: float) -> tuple:
    from fedlib.core.errors import FedlibError

    try:
        return tuple(from_json(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise FedlibError(f"evidence record {path} is damaged ({type(err).__name__}: {str(err)[:80]})",
                          "re-execute its report (fedlib reproduce --only NAME --force) or git checkout the file") \
            from None


def path_of(root: Path, report: str) -> Path:
    return Path(root) / "reports" / f"{report}{SUFFIX}"


def load(root: Path, report: str) -> tuple | None:
    """The evidence of ``reports/<report>``, or None when the report wrote none (not executed at that profile)."""
    path = path_of(root, report)
    if not path.is_file():
        return None
    return _load(str(path), path.stat().st_mtime)


def find(root: Path, report: str, setting: str, metric: str = "") -> dict:
    """{reading: (Interval or None, the Evidence)} for the rows of ``report`` whose setting (tag removed) is
    ``setting`` and whose metric starts with ``metric``; an untagged row is the ``paper`` reading (the scoreboard
    maps it to a claim's default)."""
    out = {}
    for ev in load(root, report) or ():
        if ev.setting != setting or not ev.metric.startswith(metric):
            continue
        out.setdefault(ev.reading or "paper", (ev.interval(), ev))
    return out


def unmatched(root: Path, claims=None) -> list[str]:
    """Every claim cell that reads no evidence record: its report was not executed, or no row of it has the cell's
    setting and metric (a renamed method label, a changed metric text). A cell that stands for a reading its claim
    prices as not run at that profile (``Claim.reading_gaps``) is expected to be missing. Empty when every claim
    finds its rows; the scoreboard refuses to build otherwise (a claim never turns "not run" silently)."""
    from fedlib.claims import all_claims

    out = []
    for claim in claims or all_claims():
        for cell in claim.cells:
            profile = cell.report.split("/", 1)[0]
            if cell.reading and (profile, cell.reading) in claim.reading_gaps:
                continue
            records = load(root, cell.report)
            if records is None:
                out.append(f"{claim.id}: reports/{cell.report}{SUFFIX} does not exist (execute the report)")
            elif not any(e.setting == cell.setting and e.metric.startswith(cell.metric) for e in records):
                out.append(f"{claim.id}: no row {cell.setting!r} / {cell.metric!r} in reports/{cell.report}{SUFFIX}")
    return out
