"""Preset names: every name that shipped still resolves to the same validated config (issue 13).

``tests/data/preset_snapshot.json`` holds, for each of the 87 preset files fedlib shipped before
presets were composed (``<algorithm>-<task>[-<profile>]``, fedlib/presets/README.md), the validated
``RunConfig.to_dict()`` and ``config_hash()``. It was written once, before the change, by::

    cfgs = {n: RunConfig.from_preset(n) for n in list_presets()}
    {"fedlib": __version__, "presets": {n: {"config": c.to_dict(), "hash": c.config_hash()}}}

The dicts must never change. The hashes are the ones of that time: every section hashed. Since
issue 13 a safl/split run's hash leaves out the other paradigm's section, so those hashes changed on
purpose; the test checks that each old hash is the legacy hash of its config (so ``fedlib results
rehash`` moves its stored run) and that the new hash is the one of the same config. Since issue 19
the hash also leaves out the labels (``profile``, ``checkpoint_every``) and covers the fingerprint
of the dataset's files (``RunConfig.data_fingerprint``, not a config field: ``to_dict`` is unchanged);
the test recomputes the current (v2) hash from the snapshot's config and that fingerprint.

Issue 17 changed the FedQS task bases on purpose (``safl.upload: overwrite``, ``safl.delays:
official-100``: the official code's regime): the 56 SAFL names built on them were regenerated from
the new presets (config and its legacy hash under ``fedlib`` 0.1.0); nothing else differs from the
old snapshot, and every other entry is untouched. Issue 29 changed them once more on purpose
(``data.validation: none``: every method trains on all of its client's partition, as in the official
code; FedQS's situation test reads ≤ 20 per class of that training data): in the same 56 entries
only ``data.validation`` and the legacy hash were rewritten. Issue 33 changed the Shakespeare
``smoke`` and ``cpu`` overlays on purpose (no ``data.max_train`` subsample, ``local.steps: 5``: the
old subsample left every client without one batch of 50, so those runs trained nothing); none of
the 87 snapshot names is such a preset, so no entry was rewritten.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from fedlib.core.dataclass_io import deep_merge
from fedlib.core.errors import FedlibError
from fedlib.experiments.config import (PRESET_DIR, TASKS, RunConfig, list_presets, load_preset_dict,
                                       preset_description)
from fedlib.experiments.config.registry import algorithms
from fedlib import __version__
from fedlib.data.paths import data_root
from fedlib.experiments.config import DATA_PARADIGMS
from fedlib.experiments.results.rehash import legacy_config_hash, scheme_hashes, with_neutral_fields

SNAPSHOT = json.loads((Path(__file__).parent / "data" / "preset_snapshot.json").read_text())
OLD = SNAPSHOT["presets"]
def _completed(old: dict, cfg) -> dict:
    """The snapshot's config with the fields added since at their neutral values (the table
    ``fedlib results rehash`` uses; e.g. issue 17's ``local.precision``, issue 18's SMoFi ``options.weighting``)."""
    return with_neutral_fields(old, reference=cfg.to_dict())


def test_snapshot_holds_every_old_preset():
    assert len(OLD) == 87 and "toy-smoke" in OLD and "fedqs-avg-cifar10" in OLD


@pytest.mark.parametrize("name", sorted(OLD))
def test_old_name_resolves_to_the_same_config(name):
    cfg = RunConfig.from_preset(name)
    old = _completed(OLD[name]["config"], cfg)
    assert cfg.to_dict() == old
    assert legacy_config_hash(OLD[name]["config"], SNAPSHOT["fedlib"]) == OLD[name]["hash"]
    assert cfg.config_hash() == RunConfig.from_dict(old).config_hash()
    fp = cfg.data_fingerprint()
    assert (fp is None) == (cfg.paradigm not in DATA_PARADIGMS) or not (data_root() / cfg.data.dataset).exists()
    assert cfg.config_hash() == scheme_hashes(old, __version__, fp)["v2"]


def test_every_old_name_is_still_listed():
    assert set(OLD) <= set(list_presets())


def test_fedlib_presets_prints_one_described_line_per_name(capsys):
    from fedlib.cli import main

    assert main(["presets", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert list(listed) == list_presets() and set(OLD) <= set(listed)
    assert all(listed.values())


# ------------------------------------------------------------------------ composition
def test_every_algorithm_of_a_paradigm_runs_on_each_of_its_tasks():
    names = set(list_presets())
    for paradigm, tasks in TASKS.items():
        for entry in algorithms(paradigm):
            if (paradigm, entry.name) == ("split", "fedavg"):
                continue  # fedavg-cifar10 is SAFL FedAvg (tried first)
            for task in tasks:
                name = f"{entry.name.replace('+', '-')}-{task}"
                assert name in names
                cfg = RunConfig.from_preset(name)
                assert (cfg.paradigm, cfg.algorithm) == (paradigm, entry.name) or \
                    Path(PRESET_DIR / f"{name}.yaml").is_file(), name


def test_composed_is_the_task_base_with_the_algorithm_then_the_profile_overlay():
    base = load_preset_dict("sflv1-cifar10")
    cpu = yaml.safe_load((PRESET_DIR / "profiles" / "split-cifar10-cpu.yaml").read_text())
    cpu.pop("description")
    expected = RunConfig.from_dict(deep_merge(base, {"algorithm": "fedprox+smofi", **cpu}))
    assert RunConfig.from_preset("fedprox-smofi-cifar10-cpu") == expected
    # an <algorithm>-<task> file is what its profiles start from: FedNAG keeps its Nesterov
    assert RunConfig.from_preset("fednag-cifar10-smoke").local.nesterov is True
    # the same run under its alias file and its explicit composed name
    assert RunConfig.from_preset("fedavg-fedavgm-cifar10") == \
        RunConfig.from_preset("fedavgm-cifar10")


def test_an_overlays_algorithms_entry_applies_to_that_algorithm_only():
    # issue 30: the Shakespeare cpu overlay raises local.lr to 0.8 and FedQS's η bounds with it
    fedqs, fedavg = RunConfig.from_preset("fedqs-sgd-shakespeare-cpu"), RunConfig.from_preset("fedavg-shakespeare-cpu")
    assert fedqs.local.lr == fedavg.local.lr == 0.8
    assert (fedqs.options["lr_min"], fedqs.options["lr_max"]) == (0.008, 1.6)
    assert "lr_max" not in fedavg.options
    # the notebooks build the same run through the same overlay (one stored result)
    from fedlib.reporting.fedqs import task_config
    for method in ("fedqs-avg", "fedqs-sgd", "fedavg"):
        assert task_config(method, "shakespeare", "cpu").config_hash() == \
            RunConfig.from_preset(f"{method}-shakespeare-cpu").config_hash()


@pytest.mark.parametrize("entry, message", [
    ({"fedqs-avgg": {"options": {"lr_max": 1.6}}}, "unknown safl algorithm(s) ['fedqs-avgg']"),
    ({"fedqs-avg": 1.6}, "must map algorithm names to the keys they change"),
])
def test_a_bad_algorithms_entry_is_named(tmp_path, entry, message):
    from fedlib.experiments.config.presets import _overlay_for

    path = tmp_path / "safl-shakespeare-cpu.yaml"
    path.write_text(yaml.safe_dump({"rounds": 5, "algorithms": entry}))
    with pytest.raises(FedlibError, match=re.escape(message)):
        _overlay_for(path, "safl", "fedqs-avg", ())


def test_a_name_both_paradigms_make_belongs_to_the_first():
    assert RunConfig.from_preset("fedavg-cifar10").paradigm == "safl"
    cpu = RunConfig.from_preset("fedavg-cifar10-cpu")  # SAFL's cpu overlay, not split's
    assert (cpu.paradigm, cpu.model.name, cpu.rounds) == ("safl", "cnn3", 50)
    # UCI Adult runs at the paper's scale on a CPU: no cpu overlay, and the error lists the overlays
    with pytest.raises(FedlibError, match=r"(?s)'fedavg-adult-gender' has no 'cpu' profile.*"
                                          r"safl-cifar10-cpu.*split-cifar10-smoke"):
        RunConfig.from_preset("fedavg-adult-gender-cpu")


@pytest.mark.parametrize("name, close", [
    ("fedprox+slowmo-cifar10", "fedprox-slowmo-cifar10"),
    ("fedqs-avg-cifar100", "fedqs-avg-cifar10"),
    ("wkafl-adult-gendre", "wkafl-adult-gender"),
])
def test_unknown_names_suggest_the_closest(name, close):
    with pytest.raises(FedlibError,
                       match=rf"(?s)unknown preset '{re.escape(name)}'.*did you mean {close}\?"):
        RunConfig.from_preset(name)


def test_user_yaml_extends_a_composed_name(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("extends: fedbuff-shakespeare\nrounds: 7\nsafl:\n  k: 5\n")
    cfg = RunConfig.from_yaml(path)
    assert (cfg.algorithm, cfg.data.dataset, cfg.rounds, cfg.safl.k) == \
        ("fedbuff", "shakespeare", 7, 5)
    path.write_text("extends: fedbuf-shakespeare\n")
    with pytest.raises(FedlibError, match=r"(?s)unknown preset 'fedbuf-shakespeare'.*"
                                          r"did you mean fedbuff-shakespeare\?"):
        RunConfig.from_yaml(path)


def test_composed_descriptions_say_algorithm_task_and_profile():
    assert preset_description("cfl-cifar10") == \
        "CA²FL on CIFAR-10, Dirichlet x=0.5 over 100 clients, ResNet-18"
    assert preset_description("fedprox-cifar10-cpu").startswith("FedProx on split CIFAR-10")
    assert "; CPU scale: small CNN" in preset_description("fedprox-cifar10-cpu")
    # described by the algorithm it runs (the file smofi-cifar10 sets fedavg+smofi)
    assert preset_description("smofi-cifar10-cpu").startswith("FedAvg + step-wise momentum fusion")


def test_the_presets_folder_stays_small():
    entries = [p for p in PRESET_DIR.rglob("*")
               if p.name != "README.md" and "__pycache__" not in p.parts]
    assert len(entries) <= 20, sorted(p.name for p in entries)
