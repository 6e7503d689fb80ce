"""The papers' numbers live in the claims layer (fedlib/claims/*_claims.py). A notebook's prose may quote
them for the reader, so every two-decimal number in a notebook's markdown must be one of the claims
layer's numbers: a typo, or a number with no claim record behind it, fails here."""

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = [ROOT / "fedlib" / "claims" / "fedqs_claims.py", ROOT / "fedlib" / "claims" / "smofi_claims.py"]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.py"))
# a number with exactly two decimals, not part of a longer number or a name, not a signed setting (α = −0.05)
QUOTED = re.compile(r"(?<![\d.\w−=-])\d+\.\d{2}(?!\d)")


def claims_numbers() -> set[float]:
    text = "".join(p.read_text(encoding="utf-8") for p in CLAIMS)
    return {float(x) for x in re.findall(r"(?<![\d.\w])\d+\.\d+", text)}


def unknown_numbers(markdown: str, known: set[float]) -> list[str]:
    return [x for x in QUOTED.findall(markdown) if float(x) not in known]


def test_the_check_sees_a_number_the_claims_layer_does_not_have():
    known = claims_numbers()
    assert 77.16 in known and 11.52 in known  # SMoFi's FedAvg on CIFAR-10, FedQS Table 1's gap
    assert unknown_numbers("FedAvg reaches **77.16%**, SMoFi 81.28 %", known) == ["81.28"]
    assert unknown_numbers("α = −0.05, lr=0.01, v2.14.1", known) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT / "notebooks")) for p in NOTEBOOKS])
def test_every_paper_number_a_notebook_quotes_is_in_the_claims_layer(path):
    known = claims_numbers()
    markdown = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")
    assert unknown_numbers(markdown, known) == [], (
        f"{path.name} quotes a number the claims layer does not hold: a paper number belongs in "
        "fedlib/claims/*_claims.py (and a measured one in a code cell's output, not in prose)")
