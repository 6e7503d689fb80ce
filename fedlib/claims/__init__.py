"""The claims layer: every claim of both papers as a record, one verdict rule, the scoreboard.

Modules (one job each):

- ``model``: the :class:`Claim` and :class:`Cell` records and their validation;
- ``fedqs_claims``, ``smofi_claims``: the papers' claims and **the papers' numbers** (nowhere else);
- ``rows``: the rows executed reports saved (comparison CSVs), their intervals and readings;
- ``verdict``: the one verdict rule (reproduced / mixed / partial / against / unresolved / other setting / not a test /
  not run) and the fragile mark;
- ``drift``: the per-task cross-CPU drift record (``benchmarks/results/cross_cpu.json``);
- ``windows``: other metric windows recomputed from the ledger's histories;
- ``power``: seeds and core-hours to resolve an unresolved claim;
- ``evaluate``: every claim judged; ``scoreboard``: ``reports/SCOREBOARD.md`` / ``.csv``, the
  README's generated results section and ``fedlib scoreboard``.

Layer: above ``experiments`` (it reads the ledger), below ``reporting`` (which re-exports the
SMoFi numbers and delegates its fragile mark here).
"""

from __future__ import annotations

from fedlib.claims.fedqs_claims import PAPER as FEDQS_PAPER
from fedlib.claims.model import FAMILIES, VERDICTS, Cell, Claim


def all_claims() -> tuple:
    """Every claim of both papers, FedQS first."""
    from fedlib.claims.fedqs_claims import CLAIMS as F
    from fedlib.claims.smofi_claims import CLAIMS as S

    return tuple(F) + tuple(S)


__all__ = ["Cell", "Claim", "FAMILIES", "FEDQS_PAPER", "VERDICTS", "all_claims"]
