"""The FedQS study modules of Tables 3, 4, 5 (ablation and code rules), 6 and Figure 5
(``fedlib/studies/fedqs``): their grids at smoke, the profiles ``fedlib reproduce`` sees, and the
errors an unknown knob value gives. Nothing here trains."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedlib.core.errors import FedlibError
from fedlib.reporting import apply_knobs
from fedlib.reproduce import notebook_profiles, study_module
from fedlib.studies.fedqs import (figure5_hyperparameters as f5, table3_runtime as t3, table4_robustness as t4,
                                  table5_ablation as t5, table5_code_rules as t5c, table6_dynamic as t6)

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"table3_runtime": t3, "table4_robustness": t4, "table5_ablation": t5, "table5_code_rules": t5c,
           "table6_dynamic": t6, "figure5_hyperparameters": f5}


@pytest.mark.parametrize("name", MODULES)
def test_reproduce_reads_the_profiles_of_the_study(name):
    book = ROOT / "notebooks" / "fedqs" / f"{name}.ipynb"
    assert study_module(book) == ROOT / "fedlib" / "studies" / "fedqs" / f"{name}.py"
    assert notebook_profiles(book) == set(MODULES[name].SETTINGS)
    assert {"smoke", "cpu", "paper"} <= set(MODULES[name].SETTINGS)


def test_only_the_ablation_has_a_long_profile():
    assert [n for n, m in MODULES.items() if "long" in m.SETTINGS] == ["table5_ablation"]


def smoke(module, **knobs):
    return apply_knobs(module.SETTINGS["smoke"], knobs, module.LISTS)


def test_table4_smoke_grid():
    study = t4.Table4("smoke", smoke(t4))
    # 2 systems × (FedAvg, FedSGD + FedQS-Avg, FedQS-SGD under paper and code-main) × 2 uploads × 2 seeds
    assert len(study.configs) == 2 * 6 * 2 * 2
    assert len({c.config_hash() for c in study.configs}) == len(study.configs)
    assert {(c[0], c[1]) for c in study.cells} == {("N50", 5), ("R100", 10)}  # N scaled by 0.1, at least 4
    assert "SAFL regime" in t4.shown(smoke(t4))


def test_table4_knob_as_string_and_unknown_system():
    study = t4.Table4("smoke", smoke(t4, systems="N50", uploads="overwrite"))
    assert {c[0] for c in study.cells} == {"N50"} and {c[5] for c in study.cells} == {"overwrite"}
    with pytest.raises(FedlibError, match="unknown system setting 'N70'") as err:
        t4.Table4("smoke", smoke(t4, systems=["N70"]))
    assert "choose from" in str(err.value)
    with pytest.raises(FedlibError):
        t4.Table4("smoke", smoke(t4, uploads=["append"]))


def test_table5_ablation_smoke_grid_and_not_run():
    study = t5.Table5Ablation("smoke", smoke(t5))
    assert len(study.configs) == 2 * len(t5.VARIANTS) * 2  # FedQS-Avg/SGD × variants × seeds
    assert study.not_run() == []  # smoke runs every variant of the paper
    few = t5.Table5Ablation("smoke", smoke(t5, variants=["cosine"]))
    assert [r["setting"] for r in few.not_run()] == [f"{v} (FedQS-Avg, FedQS-SGD)" for v in t5.PAPER_VARIANTS[1:]]
    with pytest.raises(FedlibError, match="unknown ablation variant"):
        t5.Table5Ablation("smoke", smoke(t5, variants=["chebyshev"]))


def test_figure5_smoke_grid_follows_the_acting_hyperparameters():
    study = f5.Figure5("smoke", smoke(f5))
    for hp, value, method, seed in study.cells:
        if method.endswith("code-main"):
            assert f5.acts(hp, "code-main")  # under code-main momentum is 0: m0, k unused
    assert {c[0] for c in study.cells} == set(f5.SETTINGS["smoke"]["grids"])
    with pytest.raises(FedlibError, match="unknown hyperparameter"):
        f5.Figure5("smoke", smoke(f5, grids={"lr": [0.1]}))


def test_table3_smoke_grid():
    study = t3.Table3("smoke", smoke(t3))
    # one task: 13 methods, FedQS-Avg / FedQS-SGD also under code-main, and the two synchronous references
    assert len(study.configs) == 13 + 2 + 2
    assert sum(c[3] == "synchronous" for c in study.cells) == 2


def test_table5_code_rules_smoke_grid():
    study = t5c.Table5CodeRules("smoke", smoke(t5c))
    assert {c[0] for c in study.cells} == {"FedQS-SGD"}
    assert len(study.configs) == len({(c[1], c[2]) for c in study.cells}) == len(study.cells)
    with pytest.raises(FedlibError):
        t5c.Table5CodeRules("smoke", smoke(t5c, methods=["fedavg"]))


def test_table6_smoke_grid():
    study = t6.Table6("smoke", smoke(t6))
    assert len(study.configs) == (1 + len(t6.SCENARIOS)) * 6 * 2  # static + scenarios × 6 rows × 2 seeds
    assert study.labels[:3] == ["FedAvg", "FedQS-Avg", "FedQS-Avg · code-main"]
    with pytest.raises(FedlibError, match="unknown scenario"):
        t6.Table6("smoke", smoke(t6, scenarios=["earthquake"]))
