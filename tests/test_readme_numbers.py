"""The README's hand-written prose quotes measured intervals; each must be one an executed report saved
(``reports/<profile>/**/*.csv``), so the prose cannot drift from the reports it summarises: re-executing a
report that changes a quoted interval fails here until the README says the new one. (The section between
the scoreboard markers is generated from the reports and checked by ``fedlib scoreboard --check``.)"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERVAL = re.compile(r"\[([−-]?\d+(?:\.\d+)?), ([−-]?\d+(?:\.\d+)?)\]")


def _ascii(text: str) -> str:
    return text.replace("−", "-")


def hand_written(readme: str) -> str:
    start, end = readme.index("<!-- scoreboard:start -->"), readme.index("<!-- scoreboard:end -->")
    return readme[:start] + readme[end:]


def unreported(prose: str, reported: str) -> list[str]:
    """The intervals ``[lo, hi]`` of ``prose`` that no report's table holds."""
    reported = _ascii(reported)
    return [f"[{lo}, {hi}]" for lo, hi in INTERVAL.findall(prose)
            if f"[{_ascii(lo)}, {_ascii(hi)}]" not in reported]


def reports_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "reports").rglob("*.csv")))


def test_the_check_sees_an_interval_no_report_holds():
    reported = "setting,measured,note\nx,1.34,95% interval [0.95, 1.72] over 3 seeds\n"
    assert unreported("code-main **+1.34 [0.95, 1.72]**, paper −0.68 [−1.45, 0.09]", reported) == ["[−1.45, 0.09]"]


def test_every_interval_the_readme_quotes_is_one_a_report_saved():
    prose = hand_written((ROOT / "README.md").read_text(encoding="utf-8"))
    assert INTERVAL.search(prose), "the README quotes no interval: this check would check nothing"
    missing = unreported(prose, reports_text())
    assert missing == [], (f"README.md quotes intervals no executed report holds: {missing}; re-read the reports "
                           "(reports/<profile>/**/*.comparison.csv) and update the README's prose")
