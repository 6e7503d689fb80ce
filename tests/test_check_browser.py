"""`make check-browser`'s content checks (tools/check_browser.py): a notebook that runs without an error yet
did nothing useful fails (issue 60)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_browser", ROOT / "tools" / "check_browser.py")
cb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cb)


def test_a_missing_dataset_fails_when_nothing_ran_and_is_fine_beside_runs():
    missing = "availability: {'cifar100': 'needs download: fedlib data fetch cifar100'}"
    got = cb.content_problems([missing], 1)
    assert got and "missing" in got[0]
    ran = "[fedlib] 4 run(s): 4 read from the result store, 0 trained"
    assert cb.content_problems([missing, ran], 1) == []


def test_zero_runs_read_or_trained_fails():
    assert cb.content_problems(["[fedlib] 0 run(s): 0 read from the result store, 0 trained"], 0) == [
        "it read and trained 0 runs"]


def test_training_without_a_rendered_widget_fails_and_a_clean_notebook_passes():
    line = "[fedlib] 4 run(s): 1 read from the result store, 3 trained"
    assert cb.content_problems([line], 0) == ["runs trained but no progress widget was rendered"]
    assert cb.content_problems([line], 2) == []
    assert cb.content_problems(["[fedlib] 4 run(s): 4 read from the result store, 0 trained"], 0) == []


def test_output_texts_reads_streams_and_rich_outputs():
    state = {"cells": [{"outputs": [{"text": "a"}, {"data": {"text/html": "<b>b</b>", "text/plain": "c"}}]}]}
    assert {"a", "<b>b</b>", "c"} <= set(cb.output_texts(state))
