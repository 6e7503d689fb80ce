"""Judging every claim: its rows read from the reports, one verdict per profile and reading.

:func:`evaluate` returns one :class:`Row` per claim × profile × reading (a claim not run: one row).
Data: the reports' evidence records (``<report>.evidence.json``: the paired intervals as numbers,
:mod:`fedlib.claims.evidence`), their ``runs.json`` and the ``ledger/``
(other windows recomputed from histories, run minutes for the power plan), and
``benchmarks/results/cross_cpu.json`` (the drift). No training, no result store: a fresh clone has
all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fedlib.claims import drift as drift_mod
from fedlib.claims import evidence, power, windows
from fedlib.claims.verdict import Interval, claim_word, combine, fragile, judge

_NO_DRIFT = ("loss", "rounds", "oscillation", "time", "speed-up")


@dataclass
class CellResult:
    cell: object
    iv: Interval | None
    side: str = ""
    fragile: bool = False
    why: str = ""
    windows: dict = field(default_factory=dict)  # window -> side
    window_ivs: dict = field(default_factory=dict)
    fragile_windows: list = field(default_factory=list)
    plan: object = None
    drift: object = None
    note: str = ""


@dataclass
class Row:
    claim: object
    profile: str
    reading: str
    word: str
    would_read: str = ""
    cells: list = field(default_factory=list)
    window_words: dict = field(default_factory=dict)
    reason: str = ""

    @property
    def decided(self) -> list:
        return [r for r in self.cells if r.cell.kind != "info"]

    @property
    def fragile(self) -> list:
        """Rows whose interval (on the claim's window or another) ends within the drift of 0. A row of another
        setting counts only where the claim has no row on the paper's setting (its verdict is then "other
        setting"); beside such rows it is shown, not counted, so it cannot make the verdict fragile."""
        own = any(not r.cell.other_setting for r in self.decided)
        return [r for r in self.cells if (r.fragile or r.fragile_windows) and not (own and r.cell.other_setting)]


def profile_of(report: str) -> str:
    return report.split("/", 1)[0]


def has_drift(cell) -> bool:
    return cell.kind != "exact" and not any(w in (cell.metric + " " + cell.window).lower() for w in _NO_DRIFT)


def _judge_cell(root: Path, cell, reading: str, iv: Interval, claim, entries) -> CellResult:
    d = drift_mod.drift(cell.family, "mean", entries, profile_of(cell.report))
    threshold = d.threshold if has_drift(cell) else float("nan")
    if cell.kind == "info":  # shown, not judged; still marked fragile where it excludes 0 near the drift
        return CellResult(cell, iv, fragile=fragile(iv, threshold), drift=d)
    j = judge(iv, cell.sign, threshold, cell.kind, cell.small)
    res = CellResult(cell, iv, j.side, j.fragile, j.why, drift=d if has_drift(cell) else None)
    for name, metric in cell.windows:
        other = evidence.find(root, cell.report, cell.setting, metric).get(reading)
        if other and other[0] is not None:
            w = judge(other[0], cell.sign, threshold, cell.kind, cell.small)
            res.windows[name] = w.side
            res.window_ivs[name] = other[0]
            if w.fragile:  # an AUC or best-window row near 0 is fragile too
                res.fragile_windows.append(name)
    recomputed, note = windows.other_windows(root, cell, reading, iv)
    res.note = note
    for name, wiv in recomputed.items():
        if name != cell.window:
            res.windows[name] = judge(wiv, cell.sign, threshold, cell.kind, cell.small).side
            res.window_ivs[name] = wiv
    if j.side == "unresolved" and iv.has_interval and cell.kind == "sign":
        effect = abs(claim.paper_effect) if claim.paper_effect is not None and has_drift(cell) else None
        res.plan = power.plan(iv.sd(), iv.n, iv.mean, effect, cell.runs_per_pair,
                              power.report_run_minutes(cell.report, root))
    return res


def _missing(claim, profile: str, reading: str, found: list) -> list:
    """The comparisons an ``all_cells`` claim makes at ``profile`` that have no row under ``reading`` (each counts as
    open): its cells there that stand for any reading or this one, and those of its default reading (the first of
    ``claim.readings``), matched by label — a reading run on fewer columns or bases than the default is partial."""
    if not claim.all_cells:
        return []
    default = claim.readings[0] if claim.readings else ""
    have = {cell.label or cell.setting for cell, _ in found}
    out, seen = [], set()
    for c in claim.cells:
        label = c.label or c.setting
        if (profile_of(c.report) == profile and c.kind != "info" and not c.other_setting
                and c.reading in ("", reading, default) and label not in have and label not in seen):
            seen.add(label)
            out.append(c)
    return out


def _row(root: Path, claim, profile: str, reading: str, found: list, entries) -> Row:
    results = [_judge_cell(root, cell, reading, entry[0], claim, entries) for cell, entry in found]
    decided = [r for r in results if r.cell.kind != "info"]
    missing = _missing(claim, profile, reading, found)
    sides = [r.side for r in decided] + ["unresolved"] * len(missing)
    cw = claim_word(sides, [bool(r.cell.other_setting) for r in decided] + [False] * len(missing))
    word = cw.word
    reason = ""
    if missing:
        reason = (f"a claim about every column or base: {len(missing)} of its {len(missing) + len(decided)} rows did "
                  f"not run under this reading ({', '.join(c.label or c.setting for c in missing[:4])}"
                  f"{', …' if len(missing) > 4 else ''}), each counted as open")
        if (profile, reading) in claim.reading_gaps:
            reason += "; " + gap_reason(root, claim, profile, reading).split(": ", 1)[-1]
    if claim.not_a_test:
        word, reason = "not a test", claim.not_a_test
    elif not decided:
        word = "not run" if claim.not_run else "unresolved"
        reason = claim.not_run or claim.note
    row = Row(claim, profile, reading, word, cw.would_read, results, reason=reason)
    mine = [r for r in decided if not r.cell.other_setting] or decided
    names = sorted({w for r in mine for w in r.windows})
    for w in names:
        if all(w in r.windows for r in mine):
            row.window_words[w] = combine([r.windows[w] for r in mine])
    return row


def evaluate(root: Path | None = None, claims=None) -> list[Row]:
    """Every claim judged (see the module docstring)."""
    from fedlib.claims import all_claims
    from fedlib.core.paths import checkout

    root = Path(root or checkout())
    entries = drift_mod.load(root)
    out = []
    for claim in claims or all_claims():
        by_profile: dict = {}
        for cell in claim.cells:
            for reading, entry in evidence.find(root, cell.report, cell.setting, cell.metric).items():
                reading = cell.reading or reading  # a cell that stands for one reading (Table 5's code pair)
                if claim.per_reading and reading == "paper" and claim.readings[0] != "paper":
                    reading = claim.readings[0]  # an untagged row stands for the claim's default reading
                if entry[0] is not None:
                    by_profile.setdefault(profile_of(cell.report), {}).setdefault(reading, []).append((cell, entry))
        if not by_profile:
            out.append(Row(claim, "—", "—", "not run",
                           reason=claim.not_run or "no report has a row for it at any profile"))
            continue
        for profile in sorted(by_profile, key=lambda p: ("cpu", "long", "paper").index(p) if p in
                              ("cpu", "long", "paper") else 9):
            readings = by_profile[profile]
            order = list(claim.readings) if claim.per_reading else []
            for reading in sorted(readings, key=lambda r: (order.index(r) if r in order else len(order), r != "paper",
                                                           r)):
                out.append(_row(root, claim, profile, reading, readings[reading], entries))
            out += [Row(claim, profile, r, "not run", reason=gap_reason(root, claim, profile, r))
                    for r in claim.readings if r not in readings and claim.per_reading]
    return out


def gap_reason(root: Path, claim, profile: str, reading: str) -> str:
    """Why ``claim`` has no ``reading`` rows at ``profile`` and what they would cost (its :class:`ReadingGap`)."""
    gap = claim.reading_gaps.get((profile, reading))
    head = f"no {profile} report runs this claim's rows under the {reading} reading"
    if gap is None:
        return head
    n = sum(k for _, k in gap.runs)
    minutes = [power.report_run_minutes(r, root) for r, _ in gap.runs]
    cost = ""
    if n:
        cost = f"; {n} runs"
        if all(m is not None for m in minutes):
            total = sum(k * m for (_, k), m in zip(gap.runs, minutes))
            cost += (f" ≈ {total:.0f} core-min" if total < 60 else f" ≈ {total / 60:.1f} core-h") + \
                " at the reports' mean run minutes"
    return f"{head}: {gap.why}{cost}"
