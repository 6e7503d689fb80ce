"""The notebooks' shared run builders (fedlib.reporting.fedqs / .smofi): labels, reductions, shared runs."""

import pytest

from fedlib.core.errors import FedlibError
from fedlib.experiments import RunConfig
from fedlib.reporting import (check_names, run_label, smofi_config, smofi_configs, smofi_label,
                              smofi_participations)
from fedlib.reporting.fedqs import (CPU_CV_SUBSET, METHODS, TASKS, scale, Study, expand_tasks, is_reduced,
                                    scale_summary, target_rounds, task_config, task_scale)


def test_run_label():
    assert run_label("cpu", True) == run_label("paper", True) == "paper"
    assert run_label("cpu", False) == "cpu"
    assert run_label("paper", False) == "custom"


def test_check_names_lists_the_choices():
    assert check_names(("a",), {"a": 1}, "method") == ["a"]
    with pytest.raises(FedlibError, match="unknown method 'x' in reduced_methods"):
        check_names(["x"], {"a": 1}, "method", "reduced_methods")


def test_expand_tasks_groups_in_order_once():
    assert expand_tasks(["adult-gender", "adult", "cifar10-x1"]) == ["adult-gender", "adult-ethnicity", "cifar10-x1"]
    with pytest.raises(FedlibError, match="unknown task"):
        expand_tasks(["mnist"])
    assert set(TASKS) == {t for group in ("adult", "cifar10", "shakespeare") for t in expand_tasks([group])}


def test_task_config_labels_paper_scale_runs_paper():
    cfg = task_config("fedqs-avg", "adult-gender", "cpu")
    assert cfg.profile == "paper" and not is_reduced("adult-gender", "cpu")[0]
    reduced = task_config("fedqs-avg", "cifar10-x0.5", "cpu")
    assert reduced.profile == "cpu" and reduced.model.name == "cnn3" and reduced.rounds == 50
    assert reduced.data.alpha == 0.5
    assert task_config("fedavg", "adult-gender", "paper", rounds=7).profile == "custom"
    assert scale_summary(["adult-gender", "cifar10-x1"], "cpu") == \
        (["cifar10-x1"], "cpu profile: reduced runs (cifar10-x1), not the paper's settings")
    assert task_scale("adult-gender", ["cifar10-x1"], "cpu") == "paper scale"
    assert target_rounds({"rounds_to_98": 3, "rounds_to_95": 2}, "adult-ethnicity") == 3
    # the profile reductions are the preset overlays: the composed cpu preset is Table 2's run
    assert scale("adult-gender", "cpu") == [] and scale("cifar10", "paper") == []
    assert sorted(scale("cifar10", "cpu")) == ["model.name=cnn3", "rounds=50"]
    composed = RunConfig.from_preset("fedqs-avg-cifar10-cpu").with_overrides(["data.alpha=0.1"])
    assert composed.config_hash() == task_config("fedqs-avg", "cifar10-x0.1", "cpu").config_hash()
    assert all(METHODS[m][1] in ("model", "gradient") for m in METHODS)


def test_table1_and_table2_share_the_cpu_cifar10_runs():
    """Table 2's notebook says its x = 0.1 FedAvg run at cpu is Table 1's: one stored result."""
    table1 = Study("cifar10", "cpu", 50).config(
        "fedavg", ["data.partition=dirichlet", "data.alpha=0.1", "safl.mode=semi-async"], seed=0)
    table2 = task_config("fedavg", "cifar10-x0.1", "cpu").replace(seed=0)
    assert table1.config_hash() == table2.config_hash()


def test_study_reductions_and_label():
    adult = Study("adult", "cpu", 400)
    assert adult.paper_scale and adult.label == "paper" and adult.reductions == []
    assert not Study("adult", "cpu", 400, paper_knobs=False).paper_scale
    cv = Study("cifar10", "smoke", 5, ["safl.k=3"], cpu_cv=CPU_CV_SUBSET)
    assert cv.reductions == ["safl.k=3", *CPU_CV_SUBSET] and cv.label == "smoke"
    assert Study("cifar10", "paper", 400).reductions == []
    with pytest.raises(FedlibError, match="unknown task"):
        Study("mnist", "cpu", 5)


def test_smofi_label_participations_and_configs():
    defaults = dict(rounds=None, model="cnn", cut="conv1", max_test=100)
    assert smofi_label(dict(defaults), defaults, "smoke") == "smoke"
    assert smofi_label({**defaults, "rounds": 3}, defaults, "smoke") == "custom"
    assert list(smofi_participations("cpu", ["partial"])) == ["partial"]
    with pytest.raises(FedlibError, match="unknown participation"):
        smofi_participations("paper", ["full"])
    settings = {**defaults, "seeds": [0]}
    built = smofi_configs("smoke", "smoke", settings)("cifar10", "fedavg+smofi", 0, "full", **{"options.alpha": -1.0})
    direct = smofi_config("smoke", "cifar10", "fedavg+smofi", 0, "full", label="smoke", model="cnn", cut="conv1",
                          max_test=100, rounds=None, **{"options.alpha": -1.0})
    assert built.config_hash() == direct.config_hash()


def test_paper_expected_sign_reads_the_papers_table_per_dataset():
    """Issue 31: a verdict takes the paper's sign per claim — SlowMo is *below* FedAvg on CIFAR-10
    (76.54 < 77.16) and above it on CIFAR-100; FedNAG below FedAvg; SFLV2 above SFLV1."""
    from fedlib.reporting import paper_expected_sign

    assert paper_expected_sign("+ SlowMo", "FedAvg", "cifar10")[0] == -1
    assert "76.54" in paper_expected_sign("+ SlowMo", "FedAvg", "cifar10")[1]
    assert paper_expected_sign("+ SlowMo", "FedAvg", "cifar100")[0] == 1
    assert paper_expected_sign("+ FedAvgM", "FedAvg", "cifar10")[0] == 1
    assert paper_expected_sign("+ SMoFi", "FedAvg", "tinyimagenet")[0] == 1
    assert paper_expected_sign("SMoFi", "SFLV1", "cifar10")[0] == 1  # frameworks names map to the main table's
    assert paper_expected_sign("FedNAG", "FedAvg", "cifar10")[0] == -1
    assert paper_expected_sign("SFLV2", "SFLV1", "cifar10")[0] == 1
    assert paper_expected_sign("FedProx + SMoFi", "FedProx")[0] == paper_expected_sign("FedNAR + SMoFi", "FedNAR")[0] == 1
    assert paper_expected_sign("SMoFi", "FedAvg", "cifar10")[0] == 1
    assert paper_expected_sign("drop, ÷|J^n|", "SMoFi, paper reading")[0] == 0


def test_new_smofi_settings_keep_the_stored_runs_hashes():
    """Issue 31 adds settings (iid, smoke partial) and FedNAG's Nesterov: the FedAvg-family runs of
    the shards and full settings are built exactly as before (their stored results are reused)."""
    shards = smofi_config("cpu", "cifar10", "fedavg", 0, "shards", label="cpu", model="cnn", cut="conv1",
                          max_test=5000)
    assert (shards.data.partition, shards.data.shards_per_client) == ("shards", 2)
    full = smofi_config("cpu", "cifar10", "fedavg", 0, "full", label="cpu", model="cnn", cut="conv1", max_test=5000)
    assert full.data.partition == "dirichlet" and full.local.nesterov is False
    iid = smofi_config("cpu", "cifar10", "fedavg", 0, "iid", label="cpu", model="cnn", cut="conv1", max_test=5000)
    assert iid.data.partition == "iid" and iid.split.clients == 10 and iid.rounds == 15
    nag = smofi_config("cpu", "cifar10", "fednag", 0, "full", label="cpu", model="cnn", cut="conv1", max_test=5000)
    assert nag.local.nesterov is True


def test_rounds_knob_replaces_the_profiles_rounds_once():
    """The settings row lists each override once: a rounds knob replaces the profile's own rounds."""
    reduced, over = is_reduced("cifar10-x0.5", "cpu", 50)
    assert reduced and [o for o in over if o.startswith("rounds=")] == ["rounds=50"]
    assert [o for o in is_reduced("cifar10-x0.5", "cpu", 30)[1] if o.startswith("rounds=")] == ["rounds=30"]
