"""The papers' numbers live in the claims layer (fedlib/claims/*_claims.py) and nowhere else. A notebook
shows them with ``show_paper_claims`` (rendered from the claim records, fedlib.claims.quote); its prose
types none: a paper number typed in markdown fails here, and so does any other two-decimal number the
claims layer does not hold (a typo, or a measured number that belongs in a code cell's output)."""

import re
from pathlib import Path

import jupytext
import pytest

from fedlib.claims import all_claims
from fedlib.claims.fedqs_claims import PAPER
from fedlib.claims.quote import claims_markdown, paper_table_markdown
from fedlib.claims.smofi_claims import PAPER_ACCURACY
from fedlib.core.errors import FedlibError

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = [ROOT / "fedlib" / "claims" / "fedqs_claims.py", ROOT / "fedlib" / "claims" / "smofi_claims.py"]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.py"))
# a number with exactly two decimals, not part of a longer number or a name, not a signed setting (α = −0.05)
QUOTED = re.compile(r"(?<![\d.\w−=-])\d+\.\d{2}(?!\d)")


def claims_numbers() -> set[float]:
    """Every number written in the claims modules (the papers' numbers and the settings they name)."""
    text = "".join(p.read_text(encoding="utf-8") for p in CLAIMS)
    return {float(x) for x in re.findall(r"(?<![\d.\w])\d+\.\d+", text)}


def paper_numbers() -> set[float]:
    """The papers' own numbers: the claim sentences, their paper numbers and the paper tables."""
    text = " ".join(f"{c.claim} {c.paper_number}" for c in all_claims())
    found = {float(x) for x in QUOTED.findall(text)}
    found |= {abs(v) for v in PAPER.values()} | {v for col in PAPER_ACCURACY.values() for v in col.values()}
    return found


def typed_numbers(markdown: str) -> list[str]:
    """The two-decimal numbers of ``markdown`` that are a paper's number or that no claim record holds."""
    known, paper = claims_numbers(), paper_numbers()
    return [x for x in QUOTED.findall(markdown) if float(x) in paper or float(x) not in known]


def test_the_check_sees_paper_numbers_and_unknown_numbers_but_not_settings():
    assert {77.16, 11.52, 68.88, 7.81} <= paper_numbers()  # SMoFi's FedAvg, FedQS Table 1, 2 and 5
    assert typed_numbers("FedAvg reaches **77.16%**, SMoFi 81.28 %") == ["77.16", "81.28"]
    assert typed_numbers("α = −0.05, lr=0.01, grid η0 ∈ {0.01, 0.1, 0.2}, v2.14.1") == []


def test_claims_render_with_their_paper_numbers_and_an_unknown_id_is_named():
    text = claims_markdown("fedqs-t1-gap", "smofi-main-smofi")
    assert "11.52" in text and "81.82" in text and text.count("\n- ") == 1
    assert "| + SMoFi | 81.82 | 53.83 | 39.73 |" in paper_table_markdown(PAPER_ACCURACY)
    with pytest.raises(FedlibError, match="no claim with id 'fedqs-t9'"):
        claims_markdown("fedqs-t9")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "notebooks")) for p in NOTEBOOKS])
def test_no_notebook_types_a_paper_number_in_its_prose(path):
    markdown = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")
    assert typed_numbers(markdown) == [], (
        f"{path.name} types a number in its prose: show a paper's number with show_paper_claims(claim ids) "
        "(fedlib/claims/*_claims.py holds it), and a measured one in a code cell's output")
