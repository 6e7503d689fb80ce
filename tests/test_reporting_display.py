"""The comparison table shows its notes in full (issue 20), without changing the session's options."""

import pandas as pd

from fedlib.reporting import comparison

VERDICT = ("cpu profile: cnn on 10% of CIFAR-10, not the paper's ResNet-18; verdict: the difference "
           "is within the paired 95% interval, so this run neither confirms nor refutes the claim")


def test_notes_are_displayed_in_full():
    df = comparison([{"table": "T1", "metric": "acc", "paper": 1.0, "measured": 2.0, "note": VERDICT}], "cpu")
    assert len(VERDICT) > pd.get_option("display.max_colwidth")
    assert VERDICT in df._repr_html_()
    assert VERDICT in repr(df)
    assert VERDICT in df.round(2)._repr_html_()  # still a Comparison after an operation
    assert VERDICT not in pd.DataFrame(df)._repr_html_()  # the option itself is untouched
    assert pd.get_option("display.max_colwidth") == 50


def test_a_comparison_is_still_a_plain_table_to_save():
    df = comparison([{"table": "T1", "metric": "acc", "paper": 1.0, "measured": 2.0}], "cpu")
    assert isinstance(df, pd.DataFrame)
    assert df.to_csv(index=False).splitlines() == [
        "table,setting,metric,paper,measured,profile,note", "T1,,acc,1.0,2.0,cpu,"]
