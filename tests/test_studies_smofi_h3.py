"""The SMoFi study modules ``fedlib/studies/smofi/main_accuracy.py`` and ``frameworks.py`` (issue 56): their
grids, knobs and profiles, checked without data or training."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedlib.core.errors import FedlibError

ROOT = Path(__file__).resolve().parents[1]


def test_main_accuracy_smoke_grid_is_every_method_in_both_settings_on_each_dataset_here():
    from fedlib.studies.smofi.main_accuracy import METHODS, MainAccuracy

    study = MainAccuracy("smoke", {})
    here = [d for d, missing in study.availability.items() if missing is None]
    assert study.S["participations"] == ["shards", "full"] and study.S["seeds"] == [0] and study.label == "smoke"
    assert len(study.configs) == len(here) * 2 * len(METHODS)
    assert {name for _, _, name, _ in study.plan} == (set(METHODS) if here else set())


def test_main_accuracy_configs_are_the_shared_smofi_runs():
    """Every run is ``smofi_config`` with the notebook's scale knobs: the runs other SMoFi notebooks share."""
    from fedlib.reporting.smofi import smofi_config
    from fedlib.studies.smofi.main_accuracy import METHODS, MainAccuracy

    study = MainAccuracy("cpu", {"methods": ["FedAvg", "+ SMoFi"], "datasets": "cifar10"})
    assert study.S["datasets"] == ["cifar10"]  # a scalar for a list knob becomes a one-element list
    cfg = study.config("cifar10", METHODS["+ SMoFi"], 1, "full")
    same = smofi_config("cpu", "cifar10", "fedavg+smofi", 1, "full", label="cpu", model="cnn", cut="conv1",
                        max_test=5000)
    assert cfg.config_hash(None) == same.config_hash(None)
    assert MainAccuracy("cpu", {"rounds": 3}).label == "custom"  # a scale knob changed: the runs are not cpu's


def test_main_accuracy_unknown_knob_values_name_the_fix():
    from fedlib.studies.smofi.main_accuracy import MainAccuracy

    with pytest.raises(FedlibError, match="choose from"):
        MainAccuracy("cpu", {"methods": ["FedAvg", "+ Nope"]})
    with pytest.raises(FedlibError, match="use one of"):
        MainAccuracy("cpu", {"participations": ["partial", "nowhere"]})


def test_main_accuracy_method_seeds_give_a_method_its_own_seeds_in_one_setting():
    """cpu's ``full`` setting runs each pair at the seeds its power plan asked for; ``shards`` keeps ``seeds``;
    in every pair one method's seeds contain the other's (the pair reads the shared ones)."""
    from fedlib.studies.smofi.main_accuracy import AGAINST_MOMENTUM, BASE_OF, METHODS, MainAccuracy

    study = MainAccuracy("cpu", {"datasets": "cifar10"})
    assert all(study.seeds_of("shards", m) == [0, 1, 2] for m in METHODS)
    assert study.seeds_of("full", "FedAvg") == list(range(10)) and study.seeds_of("full", "FedNAG") == [0, 1, 2, 3]
    for name, base in [*BASE_OF.items(), *AGAINST_MOMENTUM]:
        a, b = set(study.seeds_of("full", name)), set(study.seeds_of("full", base))
        assert a <= b or b <= a, (name, base)
    if study.availability["cifar10"] is None:  # the plan holds the runs of the data on this machine
        assert len(study.configs) == 27 + 78 and "seeds per method" in study.seeds_line()
        assert sorted(s for _, part, name, s in study.plan if (part, name) == ("full", "+ FedAvgM")) == list(range(8))
        assert len(MainAccuracy("cpu", {"datasets": "cifar10", "method_seeds": {}}).configs) == 2 * 9 * 3


def test_main_accuracy_method_seeds_naming_an_unknown_setting_or_method_names_the_fix():
    from fedlib.studies.smofi.main_accuracy import MainAccuracy

    with pytest.raises(FedlibError, match="participation setting 'everyone' in method_seeds"):
        MainAccuracy("cpu", {"method_seeds": {"everyone": {"FedAvg": [0]}}})
    with pytest.raises(FedlibError, match="method '\\+ Nope' in method_seeds"):
        MainAccuracy("cpu", {"method_seeds": {"full": {"+ Nope": [0]}}})


def test_the_profiles_reproduce_sees_are_the_study_settings():
    from fedlib.reproduce import notebook_profiles, study_module
    from fedlib.studies.smofi import main_accuracy

    book = ROOT / "notebooks" / "smofi" / "main_accuracy.ipynb"
    assert study_module(book) == ROOT / "fedlib" / "studies" / "smofi" / "main_accuracy.py"
    assert notebook_profiles(book) == set(main_accuracy.SETTINGS) == {"smoke", "cpu", "paper", "long"}


def test_frameworks_smoke_grid_runs_the_iid_check_with_its_own_frameworks():
    from fedlib.studies.smofi.frameworks import FRAMEWORKS, Frameworks

    study = Frameworks("smoke", {})
    here = [d for d, missing in study.availability.items() if missing is None]
    assert study.S["participations"] == ["full", "iid"] and study.frameworks_of("iid") == ["SFLV1", "SFLV2"]
    assert len(study.configs) == len(here) * (len(FRAMEWORKS) + 2)
    assert study.config("cifar10", "SFLV2 (reset)", 0, "full").split.sflv2_momentum == "reset"
    assert study.config("cifar10", "SFLV2", 0, "full").split.framework == "sflv2"


def test_frameworks_sflv1_and_smofi_are_main_accuracys_runs():
    """SFLV1 = FedAvg and SMoFi = FedAvg + SMoFi at the same scale knobs: one stored result for both tables."""
    from fedlib.studies.smofi.frameworks import Frameworks
    from fedlib.studies.smofi.main_accuracy import MainAccuracy

    fw, main = Frameworks("cpu", {}), MainAccuracy("cpu", {})
    for framework, method in (("SFLV1", "fedavg"), ("SMoFi", "fedavg+smofi")):
        assert fw.config("cifar10", framework, 2, "full").config_hash(None) == \
            main.config("cifar10", method, 2, "full").config_hash(None)


def test_frameworks_unknown_framework_names_the_fix_and_reproduce_sees_its_profiles():
    from fedlib.reproduce import notebook_profiles
    from fedlib.studies.smofi import frameworks
    from fedlib.studies.smofi.frameworks import Frameworks

    with pytest.raises(FedlibError, match="choose from"):
        Frameworks("cpu", {"frameworks": "SFLV3"})
    book = ROOT / "notebooks" / "smofi" / "frameworks.ipynb"
    assert notebook_profiles(book) == set(frameworks.SETTINGS) == {"smoke", "cpu", "paper", "long"}
