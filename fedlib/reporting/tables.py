"""Paper-vs-measured tables: the comparison every notebook ends with, and its markdown form."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from fedlib.reporting.paths import report_file

# a number with 3+ decimals, as a CSV column that also holds words ("not run") reads it back: shown rounded
_LONG_DECIMAL = re.compile(r"-?\d+\.\d{3,}")

COMPARISON_COLUMNS = ["table", "setting", "metric", "paper", "measured", "profile", "note"]
#: columns a comparison keeps for the library, not for the CSV or the display: a paired row's numbers
#: (``fedlib.claims.evidence.paired``), written to ``<report>.evidence.json``
HIDDEN = ("evidence",)


class Comparison(pd.DataFrame):
    """A DataFrame that displays every column in full (the ``note`` holds the verdict sentence).

    [D] pandas cuts a displayed cell at ``display.max_colwidth`` (50 characters); this class lifts
    the limit for its own HTML and text forms only, leaving the session's option alone."""

    @property
    def _constructor(self):
        return Comparison

    def _shown(self) -> pd.DataFrame:
        """The table a reader sees: the structured ``evidence`` column (its numbers are in ``note``) left out."""
        return pd.DataFrame(self.drop(columns=[c for c in HIDDEN if c in self.columns]))

    def _repr_html_(self):
        with pd.option_context("display.max_colwidth", None):
            return self._shown()._repr_html_()

    def __repr__(self) -> str:
        with pd.option_context("display.max_colwidth", None):
            return repr(self._shown())


def comparison(rows: list[dict], profile: str) -> pd.DataFrame:
    """Paper vs measured, one row per (table, setting, metric); ``paper`` may be missing (NaN).
    Displayed with its notes in full (:class:`Comparison`)."""
    df = pd.DataFrame(rows)
    for col in COMPARISON_COLUMNS:
        if col not in df:
            df[col] = profile if col == "profile" else ("" if col in ("note", "setting") else float("nan"))
    return Comparison(df[COMPARISON_COLUMNS + [c for c in df.columns if c not in COMPARISON_COLUMNS]])


def settings_row(table: str, text: str, scope: str | None = None) -> dict:
    """The one row that states a table's settings (scale, data, regime), so no row repeats them;
    ``scope`` names the block it covers when a table has several (e.g. ``"cifar10, shards"``)."""
    setting = f"settings of the {scope} rows below" if scope else "settings of every row below"
    return {"table": table, "setting": setting, "metric": "", "paper": float("nan"), "measured": "", "note": text}


def show_paper_claims(*ids: str, table: dict | None = None) -> None:
    """Display the paper's claims ``ids`` (and a paper table ``{column: {row: number}}``) as markdown,
    rendered from the claims layer: a notebook's prose never types a paper number (fedlib.claims.quote)."""
    from IPython.display import Markdown, display

    from fedlib.claims.quote import claims_markdown, paper_table_markdown

    parts = ([claims_markdown(*ids)] if ids else []) + ([paper_table_markdown(table)] if table else [])
    display(Markdown("**The paper's claims** (from `fedlib.claims`):\n\n" + "\n\n".join(parts)))


def save_comparison(df: pd.DataFrame, name: str, profile: str, group: str = "") -> Path:
    """Write the notebook's paper-vs-measured table where ``fedlib reproduce`` collects it: the CSV for readers and,
    beside it, ``<name>.evidence.json``, one typed record per row (``fedlib.claims.evidence``) that the scoreboard
    reads."""
    from fedlib.claims.evidence import SUFFIX, write

    path = report_file(profile, group, name, ".comparison.csv")
    tmp = path.with_suffix(".tmp")
    df.drop(columns=[c for c in HIDDEN if c in df.columns]).to_csv(tmp, index=False)
    os.replace(tmp, path)
    ev_path = path.with_name(path.name.removesuffix(".comparison.csv") + SUFFIX)
    rows = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in df.to_dict("records")]
    write(ev_path, rows, report_id(ev_path))
    return path


def report_id(path: Path) -> str:
    """``cpu/fedqs/table2_accuracy.tasks-cifar10-x0.5`` for a file of that report under ``reports/``."""
    parts = Path(path).parts
    rel = "/".join(parts[len(parts) - 1 - parts[::-1].index("reports") + 1:]) if "reports" in parts else Path(path).name
    return rel.split(".comparison.csv")[0].split(".evidence.json")[0]


def markdown_table(df: pd.DataFrame, floatfmt: str | None = None) -> str:
    """A GitHub-flavoured markdown table (no tabulate dependency). Numbers: ``floatfmt``, else two
    decimals or as many as two significant digits need (a loss difference of 0.0028 is not 0.00)."""
    from fedlib.reporting.stats import number_text

    fmt = floatfmt.format if floatfmt else number_text

    def cell(v) -> str:
        if isinstance(v, float):
            return "" if v != v else fmt(v)
        if isinstance(v, str) and _LONG_DECIMAL.fullmatch(v):  # a number read back from a mixed CSV column
            return fmt(float(v))
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def full_table(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` displayed with every cell in full (a verdict or note is never cut at 50 characters);
    the data and the session's pandas options are unchanged."""
    return Comparison(df)
# ------------------------------------------------------------------ rows of the paper that do not run
NOT_RUN_COLUMNS = ["table", "setting", "paper", "reason", "profile"]


def not_run_table(rows: list[dict], profile: str) -> pd.DataFrame:
    """The paper's rows a notebook does not run at ``profile``, each with its reason (a ``NOT_RUN``
    list of ``{"table", "setting", "paper" (optional), "reason"}``): e.g. a dataset not on the
    machine, an architecture a CPU does not finish. Displayed in full like :func:`comparison`."""
    df = pd.DataFrame(rows, columns=[c for c in NOT_RUN_COLUMNS if c != "profile"] if not rows else None)
    for col in NOT_RUN_COLUMNS:
        if col not in df:
            df[col] = profile if col == "profile" else (float("nan") if col == "paper" else "")
    return Comparison(df[NOT_RUN_COLUMNS + [c for c in df.columns if c not in NOT_RUN_COLUMNS]])


def save_not_run(df: pd.DataFrame, name: str, profile: str, group: str = "") -> Path:
    """Write a notebook's not-run rows (:func:`not_run_table`) beside its comparison table,
    ``<name>.not_run.csv``, where ``fedlib reproduce`` adds them to the index as "not run: reason"
    rows. Written even when empty, so an earlier execution's rows never outlive the notebook's."""
    path = report_file(profile, group, name, ".not_run.csv")
    tmp = path.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path
