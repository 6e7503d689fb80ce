"""``reports/SCOREBOARD.md`` / ``.csv`` and the README's generated results section.

One row per claim × profile × reading (:func:`fedlib.claims.evaluate.evaluate`): the paper's
number, the measured rows with their intervals, seeds, scale, the verdict on the claim's window
and whether it holds on the other windows, the fragile mark (per-task cross-CPU drift), the
report, and for an unresolved claim its power plan. Counts per verdict at the top.

``fedlib scoreboard`` writes both files and the README section; ``--check`` exits 1 when any of
them is out of date. ``fedlib reproduce`` calls :func:`write` at its end.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from fedlib.claims.model import VERDICTS

START, END = "<!-- scoreboard:start -->", "<!-- scoreboard:end -->"
COLUMNS = ("claim", "paper", "where", "statement", "profile", "reading", "paper_number", "measured", "seeds",
           "scale", "window", "other_windows", "fragile", "verdict", "why", "report", "plan")


def _fmt(x: float, sign: bool = True) -> str:
    if x != x:
        return "nan"
    a = abs(x)
    d = 2 if a >= 0.1 or a == 0 else (3 if a >= 0.01 else 4)
    return f"{x:{'+' if sign else ''}.{d}f}".replace("-", "−")


def _iv_text(iv) -> str:
    if iv is None:
        return ""
    if not iv.has_interval:
        return f"{_fmt(iv.mean)}" + (f" (n = {iv.n})" if iv.n else "")
    return f"{_fmt(iv.mean)} [{_fmt(iv.lo, False)}, {_fmt(iv.hi, False)}]"


def _cell_text(r) -> str:
    c = r.cell
    tag = " (other setting)" if c.other_setting else ""
    frag = " fragile" if r.fragile else ""
    if r.fragile_windows:
        frag += f" (fragile on {', '.join(r.fragile_windows)})"
    return f"{c.label or c.setting}: {_iv_text(r.iv)}{tag}{frag}"


def measured_text(row, limit: int = 4) -> str:
    cells = row.cells
    if len(cells) <= limit or not row.decided:
        return "; ".join(_cell_text(r) for r in cells)
    d = row.decided
    by = {s: [r for r in d if r.side == s] for s in ("paper", "opposite", "unresolved")}
    parts = [f"{len(by['paper'])}/{len(d)} rows on the paper's side"]
    if by["opposite"]:
        parts.append("against: " + ", ".join(_cell_text(r) for r in by["opposite"]))
    if by["unresolved"]:
        parts.append("unresolved: " + ", ".join(r.cell.label for r in by["unresolved"]))
    return "; ".join(parts)


def _pairs_text(r) -> str:
    k = r.cell.settings_per_seed
    return str(r.iv.n) if k == 1 else f"{r.iv.n // k} × {k} settings"


def _seeds(row) -> str:
    """Paired seeds per row (a pooled row: seeds × settings, never settings × seeds counted as seeds)."""
    return "/".join(sorted({_pairs_text(r) for r in row.decided if r.iv is not None and r.iv.n}))


def _windows_text(row) -> str:
    if not row.window_words:
        return ""
    out = []
    for w, word in row.window_words.items():
        same = word == row.word or (row.word == "other setting" and word == row.would_read)
        out.append(f"{w}: {'same' if same else word}")
    return "; ".join(out)


def _fragile_text(row) -> str:
    f = row.fragile
    if not f:
        return ""
    d = f[0].drift
    return (f"{len(f)} row(s) within {d.threshold:.2f} of 0 ({d.family}{'' if d.measured else ', unmeasured'}"
            f"{'; ' + d.scope if d.scope else ''})")


def _plan(row):
    plans = [r.plan for r in row.decided if r.plan is not None]
    if not plans or row.word not in ("unresolved", "mixed", "partial", "against", "other setting"):
        return None
    def mx(attr):
        vals = [getattr(p, attr) for p in plans]
        return None if any(v is None for v in vals) else max(vals)
    def total(attr):
        vals = [getattr(p, attr) for p in plans]
        return None if any(v is None for v in vals) else sum(vals)
    return {"paper_seeds": mx("paper_seeds"), "paper_hours": total("paper_hours"),
            "observed_seeds": mx("observed_seeds"), "observed_hours": total("observed_hours"),
            "rows": len(plans), "have": min(p.have for p in plans)}


#: past this many paired seeds a plan says "beyond reach" instead of a number (an effect near 0)
REACH_SEEDS = 50


def plan_text(p) -> str:
    if p is None:
        return ""
    def part(name, n, h):
        if n is None:
            return f"{name}: n/a"
        if n > REACH_SEEDS:
            return f"{name}: > {REACH_SEEDS} seeds (effect near 0 against its noise: beyond reach at this scale)"
        return f"{name}: ≈ {n} seeds" + ("" if h is None else f", ≈ {h:.1f} core-h")
    return (f"{p['rows']} unresolved row(s), {p['have']} seeds now; " + part("paper's effect", p["paper_seeds"],
            p["paper_hours"]) + "; " + part("observed", p["observed_seeds"], p["observed_hours"]))


def _why(row) -> str:
    if row.word == "not run":
        return row.reason
    bits = []
    if row.word == "other setting":
        bits.append(f"only on settings the paper did not use ({row.cells[0].cell.other_setting}); would read "
                    f"'{row.would_read}'")
    others = [r for r in row.decided if r.cell.other_setting and row.word != "other setting"]
    if others:
        bits.append(f"{len(others)} other-setting row(s) shown, not counted")
    if row.reason:
        bits.append(row.reason)
    if row.claim.note:
        bits.append(row.claim.note)
    return "; ".join(bits)


def _report(row) -> str:
    reps = []
    for r in row.cells:
        if r.cell.report not in reps:
            reps.append(r.cell.report)
    return " ".join(f"{x}.ipynb" for x in reps)


def _window(row) -> str:
    """The claim's window, with the number of last rounds its row's cells read where they all read another
    (a long row's "final (last 10)" where the claim's cpu rows read "final (last 5)")."""
    import re

    last = re.compile(r"^(.*)\(last \d+\)$")
    windows = {r.cell.window for r in row.decided}
    own, *rest = row.claim.window.split(";", 1)
    if len(windows) != 1:
        return row.claim.window
    w = windows.pop()
    a, b = last.match(own.strip()), last.match(w)
    if not (a and b and a.group(1) == b.group(1)):
        return row.claim.window
    return "; ".join([w, *(x.strip() for x in rest)])


def table(rows) -> list[dict]:
    """The scoreboard as dicts (:data:`COLUMNS`)."""
    out = []
    for row in rows:
        c = row.claim
        reading = row.reading if c.per_reading else (c.reading_label or "—")  # one row: the readings do not apply
        out.append({"claim": c.id, "paper": c.paper, "where": c.where, "statement": c.claim, "profile": row.profile,
                    "reading": reading, "paper_number": c.paper_number, "measured": measured_text(row),
                    "seeds": _seeds(row), "scale": c.scale, "window": _window(row),
                    "other_windows": _windows_text(row), "fragile": _fragile_text(row), "verdict": row.word,
                    "why": _why(row), "report": _report(row), "plan": plan_text(_plan(row))})
    return out


def counts(records: list[dict]) -> dict:
    return {v: sum(r["verdict"] == v for r in records) for v in VERDICTS}


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(header: list[str], body: list[list]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_md_escape(x) for x in r) + " |" for r in body]
    return out


def counts_line(records: list[dict]) -> str:
    n = counts(records)
    claims = len({r["claim"] for r in records})
    gaps = sum(r["verdict"] == "not run" and r["reading"] not in ("—", "") and r["profile"] != "—" for r in records)
    return (f"{len(records)} verdict rows for {claims} claims (rows, not claims: one per claim × profile × reading): "
            + ", ".join(f"**{v}** {n[v]}" for v in VERDICTS)
            + (f" (of them {gaps} a reading not run at a profile where the claim has rows: the to-decide tables)"
               if gaps else ""))


def _reading_line() -> str:
    """What a FedQS row's *reading* means, and which one the paper's numbers most plausibly came from."""
    from fedlib.claims.fedqs_claims import LIKELY_READING
    from fedlib.safl.fedqs.readings import READING_LABELS

    named = "; ".join(f"`{r}`: {w}" for r, w in READING_LABELS.items())
    from fedlib.split.readings import SMOFI_READINGS

    smofi = "; ".join(f"`{r.name}`: {r.label}" for r in SMOFI_READINGS.values())
    return (f"*Reading*: which rules a row's runs follow. FedQS — {named} (spec \"Readings\"); the paper's numbers "
            f"most plausibly came from `{LIKELY_READING[0]}`: {LIKELY_READING[1]}. SMoFi's open fusion rule — {smofi} "
            "(spec §2 \"Readings\"); a verdict under `text` is a verdict on fedlib's reading of the digest, not on "
            "the paper. A claim judged per reading has a row per reading at each profile it ran at; a reading no "
            "report ran there is in the to-decide table with what its runs would cost; `—`: a claim on the "
            "baselines alone or not judged.")


def summary_markdown(rows) -> list[str]:
    """The per-paper summaries (:mod:`fedlib.claims.summary`), each fitting one screen."""
    from fedlib.claims.summary import legend, paper_summary

    lines = [legend(), ""]
    for paper in ("FedQS", "SMoFi"):
        lines += paper_summary(paper, rows) + [""]
    return lines


def markdown(records: list[dict], drift_rows: list[dict], rows=None) -> str:
    from fedlib.claims.model import VERDICT_MEANING
    from fedlib.claims.summary import to_decide

    lines = ["# Scoreboard: every claim of FedQS and SMoFi against the executed reports", "",
             "Generated by `fedlib scoreboard` from the reports' evidence records, the runs they read (`ledger/`) and",
             "the cross-CPU drift record; the claims and the papers' numbers are `fedlib/claims/`. Do not edit by hand.",
             "", "## Which claims hold", ""]
    if rows is not None:
        lines += summary_markdown(rows)
    lines += ["## Detail: one row per claim × profile × reading", "",
              "; ".join(f"**{w}**: {m}" for w, m in VERDICT_MEANING.items()) + ". *Other windows*: the same verdict "
              "recomputed on the other metric windows (`same` = unchanged). *Fragile*: a resolved row whose interval "
              "ends closer to 0 than twice the cross-CPU drift of its task. *Plan*: paired seeds for the interval's "
              "half-width to reach the paper's / the observed effect at 95 %, and the core-hours of the extra runs at "
              "the report's own run minutes.", "", _reading_line(), "", counts_line(records), ""]
    gaps = [r for r in records if r["verdict"] == "not run" and r["profile"] != "—"]
    shown = [r for r in records if r not in gaps]
    body = [[r["claim"], r["where"], r["statement"], r["profile"], r["reading"], r["paper_number"], r["measured"],
             r["seeds"], r["window"], r["other_windows"], r["fragile"], f"**{r['verdict']}**", r["why"],
             " ".join(f"[{x.split('/')[-1]}]({x})" for x in r["report"].split()), r["plan"]] for r in shown]
    lines += md_table(["claim", "where", "statement", "profile", "reading", "paper", "measured [95 % interval]",
                        "seeds", "window", "other windows", "fragile", "verdict", "why", "report", "plan"], body)
    for paper in ("FedQS", "SMoFi"):
        todo = to_decide(paper, records)
        if todo:
            lines += ["", f"## To decide ({paper}): readings and rows not run where the claim has rows", ""]
            lines += md_table(["claim", "profile", "reading", "what it would take"],
                              [[r["claim"], r["profile"], r["reading"], r["why"]] for r in todo])
    lines += ["", "## Cross-CPU drift per task", ""] + drift_markdown(drift_rows)
    return "\n".join(lines) + "\n"


def drift_markdown(drift_rows: list[dict]) -> list[str]:
    header = list(drift_rows[0]) if drift_rows else []
    return md_table(header, [[str(v) for v in r.values()] for r in drift_rows])


def to_csv(records: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    w.writerows(records)
    return buf.getvalue()
