"""The claim record: one sentence of a paper, its number, and the report rows that test it.

A :class:`Claim` names the paper, the table or figure, the claim in one sentence, the paper's
number(s) where the paper states one, the metric and its window, the expected sign, the
:class:`Cell` s (report rows) that test it and the scale they were run at. FedQS claims carry the
named readings of the method (``fedlib.safl.fedqs.readings``): each reading that has rows in the
reports gets its own verdict, and each reading it names that a profile's reports did not run gets a
"not run" row saying what it would take (:class:`ReadingGap`). A claim no report tests says why in
``not_run``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the verdict words of :func:`fedlib.claims.verdict.claim_verdict`, in scoreboard order
VERDICTS = ("reproduced", "mixed", "partial", "against", "unresolved", "other setting", "not a test", "not run")
#: what each verdict word means (the scoreboard's legend)
VERDICT_MEANING = {
    "reproduced": "every row on the paper's side (95 % interval excludes 0 in the paper's direction)",
    "mixed": "rows on the paper's side and at least one resolved against it",
    "partial": "some rows on the paper's side, the others open (none against)",
    "against": "no row on the paper's side, at least one resolved against it",
    "unresolved": "no row resolved either way",
    "other setting": "rows only on a dataset, split or model the paper did not use for this claim (a stand-in)",
    "not a test": "true by construction of the simulator: the measurement cannot come out otherwise",
    "not run": "no report row tests it (the reason, and where priced, what running it would take)",
}
PAPERS = ("FedQS", "SMoFi")
#: the drift families of benchmarks/results/cross_cpu.json
FAMILIES = ("cnn3-safl-cifar10", "split-cnn-cifar10", "fcn-safl-adult", "lstm-safl-shakespeare")
#: kinds of test a cell makes
KINDS = ("sign", "small", "exact", "differs", "info")


@dataclass(frozen=True)
class Cell:
    """One report row that tests a claim.

    ``report`` is the comparison CSV's path under ``reports/`` without ``.comparison.csv``;
    ``setting`` the row's setting text (a reading tag removed, see :mod:`fedlib.claims.evidence`);
    ``metric`` a prefix of its metric text. ``sign``: the paper's sign of the row's value (+1, −1).
    ``kind``: ``sign`` (a paired interval against the sign), ``small`` (the paper calls the
    difference small: its interval must stay within ``± small`` points), ``exact`` (a deterministic
    quantity, e.g. virtual time: one value decides), ``differs`` (a claim without a direction: an
interval excluding 0 either way is on the paper's side). ``other_setting``: a dataset or split the paper
    does not use (labelled as such, never "reproduced"). ``windows``: the same comparison on other
    metric windows, as (window name, metric prefix) of rows in the same report. ``pair``: config
    selectors of the method and base runs (dotted keys) for recomputing other windows from the
    ledger. ``family``: the drift family (:data:`FAMILIES`). ``reading``: the FedQS
    reading the row stands for whatever its tag (e.g. Table 5's code-main − code-momentum: the momentum
    ablation under the code's rules); empty: the row's own tag decides.
    """

    report: str
    setting: str
    metric: str = ""
    sign: int = 1
    label: str = ""
    window: str = "convergence (last 20)"
    kind: str = "sign"
    small: float = 0.0
    other_setting: str = ""
    windows: tuple = ()
    pair: tuple = ()
    family: str = "cnn3-safl-cifar10"
    runs_per_pair: int = 2
    reading: str = ""
    #: settings pooled per seed (Table 4's pooled rows: 4 system settings × the seeds): pairs ≠ seeds
    settings_per_seed: int = 1


@dataclass(frozen=True)
class ReadingGap:
    """Why a claim has no rows under a reading at a profile, and what running it takes: ``runs`` as
    ``(report, FedQS runs)`` pairs, priced at each report's own mean run minutes (``fedlib.claims.power``)."""

    why: str
    runs: tuple = ()


@dataclass(frozen=True)
class Claim:
    """One claim of one paper (see the module docstring)."""

    id: str
    paper: str
    where: str
    claim: str
    metric: str
    window: str
    sign: int
    scale: str
    cells: tuple = ()
    paper_number: str = ""
    paper_effect: float | None = None
    readings: tuple = ()
    #: {(profile, reading): ReadingGap} for the readings a profile's reports did not run
    reading_gaps: dict = field(default_factory=dict)
    not_run: str = ""
    #: why the claim holds by construction of the simulator (its rows are shown, never judged)
    not_a_test: str = ""
    #: a claim about every column (or a mean over them): a reading reproduces it only where every cell of the
    #: profile ran under it; a cell that did not run counts as open
    all_cells: bool = False
    #: the reading a one-reading claim's rows stand for, shown in the scoreboard (e.g. SMoFi's α sweep: ``text``)
    reading_label: str = ""
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def per_reading(self) -> bool:
        """Judged once per named reading (a FedQS claim with more than one), each reading its own row."""
        return len(self.readings) > 1

    def problems(self) -> list[str]:
        """What is wrong with the record (empty when valid)."""
        out = []
        if self.paper not in PAPERS:
            out.append(f"{self.id}: paper {self.paper!r} not in {PAPERS}")
        for name in ("id", "where", "claim", "metric", "window", "scale"):
            if not str(getattr(self, name)).strip():
                out.append(f"{self.id}: empty {name}")
        if self.sign not in (-1, 0, 1):
            out.append(f"{self.id}: sign {self.sign} not in (-1, 0, 1)")
        if not self.cells and not self.not_run:
            out.append(f"{self.id}: no cell tests it and no not-run reason")
        if self.paper == "FedQS" and not self.readings:
            out.append(f"{self.id}: a FedQS claim names the readings it is judged under")
        for c in self.cells:
            if c.kind not in KINDS:
                out.append(f"{self.id}: cell kind {c.kind!r} not in {KINDS}")
            if c.family not in FAMILIES:
                out.append(f"{self.id}: cell family {c.family!r} not in {FAMILIES}")
            if c.sign not in (-1, 1):
                out.append(f"{self.id}: cell sign {c.sign} not ±1")
            if c.kind == "small" and c.small <= 0:
                out.append(f"{self.id}: a 'small' cell needs its bound")
        return out
