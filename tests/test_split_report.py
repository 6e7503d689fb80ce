"""Speed-up against a named baseline (SMoFi spec §4) and the split presets."""

import argparse
import math

import pandas as pd
import pytest

from fedlib.experiments.config import RunConfig, list_presets
from fedlib.experiments.running.compare import comparison_table, speedup_summary


def hist(accs):
    return pd.DataFrame({"round": range(1, len(accs) + 1), "accuracy": accs})


def test_speedup_uses_the_baselines_best_accuracy_as_default_target():
    base = hist([0.1, 0.2, 0.3, 0.35, 0.4, 0.38])
    fast = hist([0.2, 0.41, 0.45, 0.5, 0.5, 0.5])
    s = speedup_summary(fast, base, "sflv1", targets=[0.3, 0.6])
    assert s["target"] == 0.4 and s["baseline_rounds_to_target"] == 5
    assert s["rounds_to_target"] == 2 and s["speedup"] == pytest.approx(2.5)
    assert s["rounds_to_target_0.3"] == 2 and s["speedup_0.3"] == pytest.approx(1.5)
    assert s["rounds_to_target_0.6"] is None and s["speedup_0.6"] is None
    table = comparison_table({"sflv1": base, "smofi": fast}, "sflv1")
    assert table.set_index("run").loc["sflv1", "speedup"] == 1.0
    assert table.set_index("run").loc["smofi", "speedup"] == pytest.approx(2.5)
    nan = speedup_summary(hist([math.nan]), hist([math.nan]), "b")
    assert "speedup" not in nan


SPLIT_PRESETS = [p for p in list_presets()
                 if p.split("-")[0] in ("smofi", "sflv1", "sflv2", "fedavgm", "slowmo", "fednag",
                                        "fedprox", "fednar")]


@pytest.mark.parametrize("name", SPLIT_PRESETS)
def test_split_presets_validate_with_spec_defaults(name):
    cfg = RunConfig.from_preset(name)
    assert cfg.paradigm == "split"
    assert cfg.data.partition == "dirichlet" and cfg.data.alpha == 0.1
    assert (cfg.local.batch_size, cfg.local.lr, cfg.local.momentum, cfg.local.weight_decay,
            cfg.local.epochs) == (32, 0.01, 0.9, 5e-4, 1)
    if cfg.profile == "paper":
        assert (cfg.model.name, cfg.model.cut, cfg.rounds) == ("resnet18", "layer1", 200)
        assert (cfg.split.clients, cfg.split.per_round) == (20, 10)
    if "smofi" in cfg.algorithm:
        assert cfg.options["alpha"] == -0.1


def test_every_base_and_addon_has_paper_and_cpu_presets():
    names = set(list_presets())
    for base in ("fedavg", "fedprox", "fednar"):
        for addon in ("", "smofi", "fedavgm", "slowmo"):
            stem = {("fedavg", ""): "sflv1", ("fedavg", "smofi"): "smofi",
                    ("fedavg", "fedavgm"): "fedavgm", ("fedavg", "slowmo"): "slowmo"}.get(
                (base, addon), f"{base}-{addon}" if addon else base)
            assert {f"{stem}-cifar10", f"{stem}-cifar10-cpu"} <= names, stem
    assert {"fednag-cifar10", "sflv2-cifar10", "sflv2-cifar10-cpu"} <= names


def test_compare_cli_parses():
    from fedlib.experiments.running.compare import register

    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))
    ns = p.parse_args(["split", "compare", "--preset", "smofi-cifar10-cpu", "--baseline",
                       "sflv1-cifar10-cpu", "--set", "rounds=5", "--targets", "0.3"])
    assert ns.func.__name__ == "cmd_compare" and ns.overrides == ["rounds=5"] and ns.targets == [0.3]


def test_compare_presets_gives_algorithm_options_to_the_method_only(monkeypatch):
    import fedlib.experiments.running.runner as runner
    from fedlib.experiments.running.compare import compare_presets

    seen = []

    class Fake:
        def __init__(self, cfg):
            self.config_hash = cfg.short_hash
            self.history = hist([0.1, 0.3] if cfg.algorithm == "sflv1" else [0.3, 0.4])
            self.summary = {"algorithm": cfg.algorithm}

    def fake_run(cfg, store=None, progress=False):
        seen.append(cfg)
        return Fake(cfg)

    monkeypatch.setattr(runner, "run", fake_run)
    out = compare_presets("smofi-cifar10-cpu", "sflv1-cifar10-cpu",
                          ["seed=3", "options.alpha=-1.0", "rounds=2"])
    base, method = seen
    assert (base.algorithm, base.options, base.seed, base.rounds) == ("sflv1", {}, 3, 2)
    assert (method.options["alpha"], method.seed, method.rounds) == (-1.0, 3, 2)
    assert out["speedup"] == 2.0 and out["baseline"] == "sflv1-cifar10-cpu"


def test_smofi_tables_state_their_settings_once_per_block():
    """A comparison table states each (dataset, setting) block's scale in one row, not in every row."""
    from fedlib.reporting import comparison, settings_row, smofi_scale_note

    S = {"model": "cnn", "rounds": None, "max_test": 5000, "seeds": [0, 1, 2]}
    note = smofi_scale_note("cpu", "cpu", S, "cifar10", "shards")
    row = settings_row("main", note, "cifar10, shards")
    assert row["setting"] == "settings of the cifar10, shards rows below" and row["note"] == note
    assert settings_row("Table 1", "x")["setting"] == "settings of every row below"
    df = comparison([row, {"table": "main", "setting": "cifar10, shards, FedAvg", "metric": "final",
                           "paper": float("nan"), "measured": 30.0, "note": "sd over seeds 1.00"}], "cpu")
    assert list(df["setting"]) == [row["setting"], "cifar10, shards, FedAvg"]
    assert "4000 training images" in note and "shards" in note
