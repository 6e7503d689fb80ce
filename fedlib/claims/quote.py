"""The papers' claims as a notebook's reader sees them, rendered from the claim records.

A notebook's prose says *what* a paper claims; the numbers come from here, so the claims layer stays
the one place for them (``tests/test_paper_numbers_in_prose.py`` fails on a number typed in prose).
"""

from __future__ import annotations

import re

from fedlib.core.errors import FedlibError

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: column labels of a paper table (dataset names as the papers print them)
LABELS = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "tinyimagenet": "Tiny-ImageNet"}


def _claims_by_id() -> dict:
    from fedlib.claims import all_claims

    return {c.id: c for c in all_claims()}


def claim_line(claim) -> str:
    """One markdown bullet: where, the claim, and the paper's number when the sentence does not hold it."""
    said = set(_NUMBER.findall(claim.claim))
    number = claim.paper_number if set(_NUMBER.findall(claim.paper_number)) - said else ""
    return f"- **{claim.where}**: {claim.claim}" + (f" Paper: **{number}**." if number else "")


def claims_markdown(*ids: str) -> str:
    """The claims ``ids`` as a markdown list, in the order given."""
    known = _claims_by_id()
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise FedlibError(f"no claim with id {', '.join(map(repr, unknown))}",
                          fix="use an id of fedlib.claims.all_claims(), e.g. "
                              f"{', '.join(sorted(known)[:3])}; `fedlib scoreboard` lists them all")
    return "\n".join(claim_line(known[i]) for i in ids)


def paper_table_markdown(table: dict, unit: str = "%") -> str:
    """A paper table ``{column: {row: number}}`` (e.g. SMoFi's ``PAPER_ACCURACY``) as a markdown table."""
    columns = list(table)
    rows = list(dict.fromkeys(r for col in table.values() for r in col))
    head = ["| | " + " | ".join(LABELS.get(c, c) for c in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    body = [f"| {r} | " + " | ".join(f"{table[c][r]:.2f}" if r in table[c] else "—" for c in columns) + " |"
            for r in rows]
    return "\n".join(head + body) + (f"\n\n*({unit})*" if unit else "")
