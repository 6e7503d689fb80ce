"""Which claims hold, in one screen per paper: the scoreboard's first part and the README's results section.

Per paper (:func:`paper_summary`): counts **by claim** (each claim once, by its headline row: the profile closest
to the paper, the default reading — FedQS ``paper``, SMoFi ``text``), then one line per claim: its verdict per
profile and reading as short tags, the key measured effect with its interval beside the paper's number, and the
setting (the paper's task, or the stand-in it ran on). Claims no report tests fold into one line.
:func:`to_decide` lists the readings and rows not run, with what running them would take.
"""

from __future__ import annotations

from fedlib.claims.model import VERDICTS

#: one letter per verdict word (the summary's tags)
TAG = {"reproduced": "R", "mixed": "M", "partial": "P", "against": "A", "unresolved": "U", "other setting": "O",
       "not a test": "T", "not run": "·"}
PROFILE_ORDER = ("cpu", "long", "paper")
#: the task each drift family stands for in a line's setting
TASK = {"cnn3-safl-cifar10": "CIFAR-10", "split-cnn-cifar10": "CIFAR-10", "fcn-safl-adult": "UCI Adult",
        "lstm-safl-shakespeare": "Shakespeare"}
WIDTH = 160


def default_reading(claim) -> str:
    return claim.readings[0] if claim.readings else "paper"


def _rank(row) -> tuple:
    """Headline order: a judged row first, then the profile closest to the paper, then the default reading."""
    judged = row.word != "not run"
    prof = PROFILE_ORDER.index(row.profile) if row.profile in PROFILE_ORDER else -1
    return (judged, prof, row.reading == default_reading(row.claim) or not row.claim.per_reading)


def headline(rows: list):
    """The row that stands for its claim in the counts."""
    return max(rows, key=_rank)


def _fmt(x: float) -> str:
    if x != x:
        return "nan"
    d = 2 if abs(x) >= 0.1 or x == 0 else 3
    return f"{x:+.{d}f}".replace("-", "−")


def _iv(iv) -> str:
    if iv is None:
        return ""
    if not iv.has_interval:
        return _fmt(iv.mean)
    return f"{_fmt(iv.mean)} [{_fmt(iv.lo)}, {_fmt(iv.hi)}]"


def _label(row, r) -> str:
    label = r.cell.label or r.cell.setting
    return label.removeprefix(f"{row.profile}: ")


def key_effect(row) -> str:
    """The headline row's key measurement: its one row, else its count on the paper's side and one row against
    (or the first row); rows shown but not judged, and rows true by construction, say so."""
    if not row.decided:
        return "; ".join(f"{_label(row, r)}: {_iv(r.iv)}" for r in row.cells[:1]) + " (shown, not judged)" \
            if row.cells else ""
    d = row.decided
    if row.word == "not a test":
        return f"by construction — {_label(row, d[0])}: {_iv(d[0].iv)}"
    if len(d) == 1:
        return f"{_label(row, d[0])}: {_iv(d[0].iv)}"
    on = sum(r.side == "paper" for r in d)
    show = next((r for r in d if r.side == "opposite"), d[0])
    return f"{on}/{len(d)} rows on the paper's side; {_label(row, show)}: {_iv(show.iv)}"


def setting(row) -> str:
    """The task the headline row ran on, marked where it stands in for the paper's."""
    cells = [r.cell for r in (row.decided or row.cells)]
    if not cells:
        return ""
    tasks = sorted({TASK.get(c.family, c.family) for c in cells})
    stand_in = all(c.other_setting for c in cells)
    return "/".join(tasks) + (" (stand-in)" if stand_in else "")


def tags(claim, rows: list) -> str:
    """``cpu PUA long A·U``: per profile, one verdict letter per reading in the claim's reading order."""
    out = []
    for prof in PROFILE_ORDER:
        mine = [r for r in rows if r.profile == prof]
        if not mine:
            continue
        order = list(claim.readings) if claim.per_reading else [mine[0].reading]
        by = {r.reading: r.word for r in mine}
        out.append(f"{prof} " + "".join(TAG[by.get(x, "not run")] for x in order))
    return " ".join(out) or "·"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def paper_summary(paper: str, rows: list) -> list[str]:
    """The one-screen summary of ``paper`` (markdown lines, each ≤ :data:`WIDTH` characters)."""
    by_claim: dict = {}
    for r in rows:
        if r.claim.paper == paper:
            by_claim.setdefault(r.claim.id, []).append(r)
    heads = {cid: headline(rs) for cid, rs in by_claim.items()}
    counts = {v: sum(h.word == v for h in heads.values()) for v in VERDICTS}
    readings = next((rs[0].claim.readings for rs in by_claim.values() if rs[0].claim.per_reading), ())
    lines = [f"### {paper}: {len(heads)} claims — " + ", ".join(f"{v} {n}" for v, n in counts.items() if n), ""]
    if readings:
        lines += [_clip(f"Tags per profile, one letter per reading in the order {', '.join(readings)} "
                        f"(a one-reading claim: one letter).", WIDTH), ""]
    lines += ["| claim | verdicts | key effect, headline row [95 % interval] | paper | setting |", "|---|---|---|---|---|"]
    idle = []
    for cid, rs in by_claim.items():
        h = heads[cid]
        if h.word == "not run":
            idle.append(cid)
            continue
        c = h.claim
        head = f"{h.profile}{'' if not c.per_reading else ' · ' + h.reading}"
        fixed = f"| {cid} | {tags(c, rs)} | "
        tail = f" | {c.paper_number.replace('|', '/')} | {setting(h)} |"
        effect = f"{head}: {key_effect(h)}".replace("|", "/")
        lines.append(fixed + _clip(effect, WIDTH - len(fixed) - len(tail)) + tail)
    if idle:
        text, out = "Not run (reasons in the detail table): ", []
        for cid in idle:
            if len(text) + len(cid) + 2 > WIDTH:
                out.append(text.rstrip(", "))
                text = ""
            text += cid + ", "
        out.append(text.rstrip(", "))
        lines += [""] + out
    return lines


def legend() -> str:
    return ("Verdicts (one letter in the tags): " + "; ".join(f"{TAG[v]} {v}" for v in VERDICTS) + ".")


def to_decide(paper: str, records: list[dict]) -> list[dict]:
    """The readings not run at a profile where the claim has rows, with their reason and price (scoreboard records)."""
    return [r for r in records if r["paper"] == paper and r["verdict"] == "not run" and r["profile"] != "—"]
