"""Tables in a report shown whole (issue 60): no pandas 10-row cut, cells in full, a long table in a
collapsed section so the report still reads as its answer first; a dict as a key / value table
instead of a raw ``print``.

    show_table(df, "Paper vs measured")          # every row; > COLLAPSE_OVER rows: a <details> section
    show_table({"rounds": 50, "seeds": [0, 1]})  # a dict as a two-column table
"""

from __future__ import annotations

import html

import pandas as pd

__all__ = ["COLLAPSE_OVER", "WholeTable", "as_frame", "show_table", "table_html", "table_text"]

#: a table longer than this is shown in a collapsed section in a notebook (its text form stays whole)
COLLAPSE_OVER = 30

_WHOLE = {"display.max_rows": None, "display.max_columns": None, "display.max_colwidth": None,
          "display.width": 250}


def as_frame(data) -> pd.DataFrame:
    """``data`` as a DataFrame: a DataFrame as it is, a Series as one column, a dict as ``key`` /
    ``value`` rows (a list or a dict value printed as text, not spread over rows)."""
    if isinstance(data, pd.DataFrame):  # a comparison's structured evidence column is for the library, not shown
        return pd.DataFrame(data.drop(columns=[c for c in ("evidence",) if c in data.columns]))
    if isinstance(data, pd.Series):
        return data.to_frame()
    if isinstance(data, dict):
        return pd.DataFrame({"key": [str(k) for k in data], "value": [_cell(v) for v in data.values()]})
    raise TypeError(f"show_table takes a DataFrame, a Series or a dict, got {type(data).__name__}")


def _cell(value) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def table_text(data, title: str | None = None) -> str:
    """Every row and column of ``data`` as text, cells in full, under ``title``."""
    df = as_frame(data)
    with pd.option_context(*(x for kv in _WHOLE.items() for x in kv)):
        body = df.to_string(index=not isinstance(data, dict) and not _plain_index(df))
    return f"{title}\n{body}" if title else body


def table_html(data, title: str | None = None, collapse_over: int = COLLAPSE_OVER) -> str:
    """Every row of ``data`` as an HTML table, cells in full; over ``collapse_over`` rows it sits in a
    collapsed ``<details>`` section whose summary names it and its row count."""
    df = as_frame(data)
    with pd.option_context(*(x for kv in _WHOLE.items() for x in kv)):
        table = df.to_html(index=not isinstance(data, dict) and not _plain_index(df), border=0)
    name = html.escape(title) if title else "table"
    if len(df) > collapse_over:
        return (f"<details><summary><b>{name}</b>: {len(df)} rows (click to show them all)</summary>"
                f"{table}</details>")
    return f"<p><b>{name}</b></p>{table}" if title else table


def _plain_index(df: pd.DataFrame) -> bool:
    """A 0..n-1 index says nothing: left out of the display."""
    return isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1


class WholeTable:
    """What :func:`show_table` displays: HTML in a notebook, the whole text elsewhere."""

    def __init__(self, data, title: str | None = None, collapse_over: int = COLLAPSE_OVER):
        self.data, self.title, self.collapse_over = data, title, collapse_over

    def _repr_html_(self) -> str:
        return table_html(self.data, self.title, self.collapse_over)

    def __repr__(self) -> str:
        return table_text(self.data, self.title)


def show_table(data, title: str | None = None, collapse_over: int = COLLAPSE_OVER) -> None:
    """Display ``data`` (a DataFrame, a Series or a dict) whole: :class:`WholeTable`."""
    try:
        from IPython.display import display
    except ImportError:  # no IPython: plain text
        print(table_text(data, title))
        return
    display(WholeTable(data, title, collapse_over))
