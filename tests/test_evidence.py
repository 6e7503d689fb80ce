"""Evidence records (fedlib.claims.evidence): what a report measured, typed; the scoreboard reads nothing else."""

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from fedlib.claims.evidence import (Evidence, find, from_json, interval_note, paired, record, split_reading, to_json,
                                    unmatched)
from fedlib.reporting.stats import paired_difference, paired_evidence

ROOT = Path(__file__).resolve().parents[1]


def _diff():
    runs = pd.DataFrame({"method": ["A"] * 3 + ["B"] * 3, "seed": [0, 1, 2] * 2,
                         "final": [12.0, 13.5, 14.0, 10.0, 10.5, 11.5]})
    return paired_difference(runs, "final", "A", "B")


def test_a_paired_row_keeps_its_numbers_and_its_note_is_rendered_from_them():
    d = _diff()
    ev = paired_evidence(d)
    assert ev["n"] == 3 and ev["diffs"] == d["diffs"] and ev["lo"] == pytest.approx(d["lo"])
    note = interval_note(ev)
    assert note.startswith("95% interval [") and note.endswith(f"over 3 seeds, per seed {d['diffs']}")
    rec = record({"table": "T", "setting": "CV x=0.5, FedQS-SGD · code-main − FedSGD", "metric": "paired difference",
                  "measured": d["mean"], "note": note, "evidence": ev})
    assert (rec.reading, rec.setting) == ("code-main", "CV x=0.5, FedQS-SGD − FedSGD")
    iv = rec.interval()
    assert (iv.mean, iv.lo, iv.hi, iv.n) == pytest.approx((d["mean"], d["lo"], d["hi"], 3))


def test_records_survive_json_including_nan_and_a_plain_value():
    plain = record({"setting": "FedQS-Avg vs synchronous FedAvg", "metric": "runtime reduction", "measured": 97.6})
    none = record({"setting": "a verdict row", "metric": "verdict", "measured": "partial"})
    paired_row = record({"setting": "x", "metric": "m", "reading": "fresh", "evidence": paired(_diff())})
    back = from_json(to_json([plain, none, paired_row]))
    assert back[0].value == 97.6 and back[0].interval().n == 0
    assert math.isnan(back[1].value) and back[1].interval() is None
    assert (back[2].mean, back[2].lo, back[2].hi, back[2].n, back[2].diffs, back[2].reading) == \
        (paired_row.mean, paired_row.lo, paired_row.hi, paired_row.n, paired_row.diffs, "fresh")
    json.loads(to_json([plain]))  # valid JSON, no NaN literal


def test_only_the_tag_the_reports_write_is_a_reading():
    assert split_reading("N50: FedQS-SGD · code-momentum − FedSGD") == ("code-momentum", "N50: FedQS-SGD − FedSGD")
    assert split_reading("SMoFi, paper reading") == ("", "SMoFi, paper reading")


def test_every_claim_cell_reads_a_row_of_an_executed_report():
    """A claim finds every row it names in the committed evidence; one that does not fails here, loudly."""
    assert unmatched(ROOT) == []


def test_a_renamed_method_label_fails_loudly_instead_of_turning_not_run():
    from fedlib.claims import all_claims
    from fedlib.claims.cli import build
    from fedlib.core.errors import FedlibError

    claim = next(c for c in all_claims() if c.id == "fedqs-t2-highest")
    cell = claim.cells[0]
    renamed = dataclasses.replace(claim, cells=(dataclasses.replace(
        cell, setting=cell.setting.replace("FedQS-Avg", "FedQS-Avg (renamed)")),))
    missing = unmatched(ROOT, [renamed])
    assert len(missing) == 1 and "FedQS-Avg (renamed)" in missing[0]
    import fedlib.claims as claims_mod

    original = claims_mod.all_claims
    try:
        claims_mod.all_claims = lambda: [renamed]
        with pytest.raises(FedlibError, match="read no report row"):
            build(ROOT)
    finally:
        claims_mod.all_claims = original


def test_find_returns_the_rows_by_reading(tmp_path):
    (tmp_path / "reports" / "cpu").mkdir(parents=True)
    rows = [record({"setting": "s, A · code-main − B", "metric": "paired difference, accuracy",
                    "evidence": paired(_diff())}),
            record({"setting": "s, A − B", "metric": "paired difference, accuracy", "evidence": paired(_diff())})]
    (tmp_path / "reports" / "cpu" / "t.evidence.json").write_text(to_json(rows))
    got = find(tmp_path, "cpu/t", "s, A − B", "paired difference")
    assert set(got) == {"code-main", "paper"} and got["paper"][0].n == 3
    assert find(tmp_path, "cpu/none", "s, A − B") == {}


def test_a_damaged_or_merge_conflicted_record_is_one_line_naming_the_file(tmp_path):
    from fedlib.claims import drift
    from fedlib.core.errors import FedlibError

    (tmp_path / "reports" / "cpu").mkdir(parents=True)
    bad = tmp_path / "reports" / "cpu" / "t.evidence.json"
    bad.write_text('{"format": 1, "rows": [\n<<<<<<< HEAD\n{"setting": "x"}\n=======\n]}\n')
    with pytest.raises(FedlibError, match="t.evidence.json is damaged"):
        find(tmp_path, "cpu/t", "x")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "cross_cpu.json").write_text("[\n<<<<<<< HEAD\n]\n")
    with pytest.raises(FedlibError, match="cross_cpu.json"):
        drift.load(tmp_path)


def test_a_paired_row_carries_its_run_hashes_per_seed_when_the_run_table_names_them():
    """Issue 56: evidence names the runs behind each pair (seed, arm's hash, base's hash); a run table
    without a ``run`` column gives the record it gave before (no ``runs`` key written)."""
    import pandas as pd

    from fedlib.claims.evidence import from_json
    from fedlib.reporting.fedqs import paired_rows
    from fedlib.reporting.stats import paired_difference, paired_evidence

    runs = pd.DataFrame({"method": ["A", "A", "B", "B"], "seed": [0, 1, 0, 1], "final": [3.0, 4.0, 1.0, 1.5],
                         "run": ["a0", "a1", "b0", "b1"]})
    d = paired_difference(runs, "final", "A", "B")
    assert d["runs"] == [(0, "a0", "b0"), (1, "a1", "b1")]
    rec = record({"setting": "s, A − B", "metric": "paired difference", "evidence": paired_evidence(d)})
    assert rec.runs == ((0, "a0", "b0"), (1, "a1", "b1"))
    assert from_json(to_json([rec]))[0].runs == rec.runs
    row = paired_rows(runs, [("A", "B", 1)], metrics=("final",)).iloc[0]
    assert paired_evidence(row)["runs"] == [[0, "a0", "b0"], [1, "a1", "b1"]]
    bare = paired_difference(runs.drop(columns="run"), "final", "A", "B")
    assert "runs" not in bare and '"runs"' not in to_json([record({"setting": "s", "evidence": paired_evidence(bare)})])
