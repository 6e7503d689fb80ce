"""fedlib.reporting.display: a report's tables shown whole (issue 60: pandas cut 262 rows to 10)."""

import pandas as pd

from fedlib.reporting.display import WholeTable, table_html, table_text


def _long(n=262):
    return pd.DataFrame({"setting": [f"s{i}" for i in range(n)], "measured": range(n),
                         "note": ["a verdict sentence longer than fifty characters, kept whole " * 2] * n})


def test_a_long_table_is_shown_whole_and_collapsed_in_html():
    df = _long()
    assert "s130" not in repr(df)  # what pandas itself shows: 10 rows
    text = table_text(df, "paper vs measured")
    assert text.startswith("paper vs measured\n")
    assert all(f"s{i} " in text for i in (0, 9, 10, 130, 261)) and "..." not in text
    assert df["note"][0].strip() in text
    page = table_html(df, "paper vs measured")
    assert page.startswith("<details><summary><b>paper vs measured</b>: 262 rows")
    assert page.count("<tr") == 263  # the heading row and every row
    assert pd.get_option("display.max_rows") == 60  # the session's options are untouched


def test_a_short_table_is_open_and_a_dict_is_a_key_value_table():
    short = table_html(_long(5), "verdicts")
    assert "<details>" not in short and short.startswith("<p><b>verdicts</b></p>")
    settings = {"rounds": 50, "seeds": [0, 1, 2], "tasks": {"adult": 0.5}}
    text = repr(WholeTable(settings))
    assert text.split("\n")[0].split() == ["key", "value"]
    assert [line.split(None, 1) for line in text.split("\n")[1:]] == [
        ["rounds", "50"], ["seeds", "0, 1, 2"], ["tasks", "adult=0.5"]]
    assert "{" not in text and "[" not in text  # no raw dict print
    assert "adult=0.5" in WholeTable(settings)._repr_html_()
