"""The SMoFi ablations and convergence speed-up study modules (fedlib/studies/smofi/): their grids per profile,
the knobs' checks and the profiles ``fedlib reproduce`` sees, without data or training."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedlib.core.errors import FedlibError
from fedlib.studies.smofi import ablations, convergence_speedup
from fedlib.studies.smofi.ablations import FAMILIES, Ablations
from fedlib.studies.smofi.convergence_speedup import PAIRS, ConvergenceSpeedup

BOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "smofi"


@pytest.mark.parametrize("name, module", [("ablations", ablations), ("convergence_speedup", convergence_speedup)])
def test_reproduce_sees_the_profiles_of_the_study_settings(name, module):
    from fedlib.reproduce import notebook_profiles, study_module

    book = BOOKS / f"{name}.ipynb"
    assert study_module(book) == Path(module.__file__).resolve()
    assert notebook_profiles(book) == set(module.SETTINGS) == {"smoke", "cpu", "paper", "long"}


def test_ablations_smoke_runs_every_family_on_one_seed():
    study = Ablations("smoke", {})
    assert {fam for fam, *_ in study.cells} == set(FAMILIES)
    assert {seed for *_, seed, _ in study.cells} == {0}
    assert len(study.configs) <= len(study.cells)
    # the smoke grid carries a reading on FedProx and an α under data-share
    labels = {(label, method) for _, label, method, *_ in study.cells}
    assert ("reading fresh, α=-0.1", "FedProx + SMoFi") in labels and ("reading data-share, α=-1", "SMoFi") in labels


def test_ablations_cpu_grid_is_the_documented_73_distinct_runs():
    study = Ablations("cpu", {})
    assert (len(study.cells), len(study.configs)) == (88, 73)
    seeds = {}
    for _, label, method, seed, _ in study.cells:
        seeds.setdefault((label, method), set()).add(seed)
    # each reading at its rule_seeds, FedAvg on every seed a staleness row runs (each row has its pair)
    assert seeds[("reading fresh, α=-0.1", "SMoFi")] == seeds[("FedAvg (no fusion)", "FedAvg")] == set(range(7))
    assert seeds[("reading data-share, α=-0.1", "SMoFi")] == set(range(5))
    assert study.label == "cpu" and study.arch_skipped == ablations.ALL_ARCHS
    assert Ablations("cpu", {"adam_lr": 0.01}).label == "custom"  # adam_lr is a scale knob here


def test_ablations_long_without_the_new_knobs_leaves_out_their_runs():
    full, bare = Ablations("long", {}), Ablations("long", {"rule_bases": {}, "reading_alphas": {}})
    assert set(bare.configs) < set(full.configs)
    assert not any(m in ("FedProx", "FedNAR") for _, _, m, *_ in bare.cells)


@pytest.mark.parametrize("knobs, fix", [({"rules": ["nope"]}, "use some of"),
                                        ({"rule_bases": {"fresh": ["fedsgd"]}}, "bases")])
def test_ablations_unknown_knob_values_name_the_known_ones(knobs, fix):
    with pytest.raises(FedlibError) as e:
        Ablations("smoke", knobs)
    assert fix in str(e.value) + str(getattr(e.value, "fix", ""))


def test_speedup_reading_pairs_add_tagged_pairs_without_touching_the_module_pairs():
    before = dict(PAIRS)
    study = ConvergenceSpeedup("long", {})
    assert PAIRS == before  # the instance holds its own copy
    assert study.pairs["FedProx + SMoFi · fresh"] == ("FedProx", "FedProx + SMoFi · fresh")
    assert study.extra["+ SMoFi · fresh"]  # the reading's SMoFi options
    assert len(study.configs) == 55 and len(ConvergenceSpeedup("long", {"reading_pairs": {}}).configs) == 40
    assert len(ConvergenceSpeedup("cpu", {}).configs) == 48


def test_speedup_unknown_reading_pair_names_the_smofi_pairs():
    with pytest.raises(FedlibError, match="unknown SMoFi pair"):
        ConvergenceSpeedup("smoke", {"reading_pairs": {"fresh": ["FedAvg + SlowMo"]}})


def test_ablations_long_pairs_each_reading_with_the_momentum_baselines_on_main_accuracys_runs():
    """``rivals``: SMoFi under every other reading − FedAvgM / SlowMo at long, read from main_accuracy's long runs
    (the same configs: nothing new to train), on the seeds both ran."""
    from fedlib.studies.smofi.main_accuracy import MainAccuracy

    study = Ablations("long", {})
    rivals = {c.config_hash() for _, _, m, _, c in study.cells if m in ablations.RIVALS}
    main = {c.config_hash() for c in MainAccuracy("long", {}).configs}
    assert len(rivals) == 2 * 5 and rivals <= main
    assert not any(m in ablations.RIVALS for _, _, m, *_ in Ablations("long", {"rivals": {}}).cells)


def test_ablations_unknown_rival_names_the_baselines():
    with pytest.raises(FedlibError) as e:
        Ablations("smoke", {"rivals": {"fresh": ["+ FedNAG"]}})
    assert "+ FedAvgM" in str(e.value) + str(getattr(e.value, "fix", ""))
