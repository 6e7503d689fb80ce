"""The README's results section, generated from the scoreboard between markers.

The section between ``<!-- scoreboard:start -->`` and ``<!-- scoreboard:end -->`` is replaced by
:func:`section`: the counts per verdict, one line per claim row, the planning table (unresolved
claims: seeds and core-hours to resolve them) and the per-task drift table.
"""

from __future__ import annotations

from fedlib.claims.scoreboard import END, START, md_table, counts_line, drift_markdown



def _changes(r: dict) -> str:
    """The other windows on which the verdict differs ("best: unresolved"), else ""."""
    parts = [p for p in r["other_windows"].split("; ") if p and not p.endswith(": same")]
    return "; ".join(parts)


def section(records: list[dict], drift_rows: list[dict]) -> str:
    lines = [START, "", "*Generated from `reports/SCOREBOARD.md` by `fedlib scoreboard`; edit the claims in "
             "`fedlib/claims/`, not this section.*", "", counts_line(records), ""]
    def where(r):  # the profile, and the FedQS reading when it is not the paper's text
        return r["profile"] + ("" if r["reading"] in ("paper", "—") else f" · {r['reading']}")

    body = [[r["claim"], where(r),
             r["paper_number"], r["measured"],
             f"**{r['verdict']}**" + (f" (changes on {_changes(r)})" if _changes(r) else ""),
             r["fragile"] and "fragile", r["why"] if r["verdict"] == "not run" else ""] for r in records]
    lines += md_table(["claim", "profile", "paper", "measured [95 % interval]", "verdict", "fragile",
                        "not run because"], body)
    plan = [r for r in records if r["plan"]]
    lines += ["", "**Planning: what would resolve the open claims** (paired seeds for the 95 % interval's half-width "
              "to reach the paper's or the observed effect; core-hours of the extra runs at the report's own run "
              "minutes from the ledger):", ""]
    lines += md_table(["claim", "profile", "plan"], [[r["claim"], where(r), r["plan"]] for r in plan])
    lines += ["", "**Cross-CPU drift per task** (`benchmarks/results/cross_cpu.json`; a verdict is fragile when an "
              "interval end is closer to 0 than twice its task's largest per-round difference; the Shakespeare LSTM "
              "is unmeasured and takes the largest measured value):", ""]
    lines += drift_markdown(drift_rows)
    return "\n".join(lines + ["", END])


def replace(text: str, new_section: str) -> str:
    """``text`` with its marked section replaced (ValueError when the markers are missing)."""
    if START not in text or END not in text:
        raise ValueError(f"README has no {START} ... {END} section")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + new_section + tail
