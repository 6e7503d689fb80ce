"""RunConfig: building, overrides, hashing, and one clear FedlibError per validation problem."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap

import pytest

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import presets as presets_mod
from fedlib.experiments.config import RunConfig, list_presets, load_preset_dict
from fedlib.experiments.config.registry import algorithms, get_algorithm, paradigms, register_algorithm


def toy(**over):
    return RunConfig.from_preset("toy-smoke").with_overrides(over) if over else \
        RunConfig.from_preset("toy-smoke")


# ------------------------------------------------------------------------ building
def test_preset_yaml_dict_and_overrides_build_the_same_config(tmp_path):
    a = RunConfig.from_preset("toy-smoke").with_overrides(["safl.k=3", "options.dim=7",
                                                            "rounds=12"])
    f = tmp_path / "c.yaml"
    f.write_text("extends: toy-smoke\nrounds: 12\nsafl: {k: 3}\noptions: {dim: 7}\n")
    b = RunConfig.from_yaml(f)
    c = RunConfig.from_dict(load_preset_dict("toy-smoke"), rounds=12, safl={"k": 3},
                            options={"dim": 7})
    d = toy().replace(rounds=12, safl={"k": 3}, options={"dim": 7})
    assert a == b == c == d
    assert a.safl.clients == 10  # extends keeps the parent's other keys
    assert a.config_hash() == b.config_hash() == c.config_hash() == d.config_hash()
    assert RunConfig.from_dict(a.to_dict()) == a  # round trip


def test_override_values_are_yaml_parsed_and_coerced():
    cfg = toy().with_overrides(["local.lr=1", "options.heterogeneity=2", "data.roles=null",
                                "model.cut=null", "options.global_rng=true"])
    assert isinstance(cfg.local.lr, float) and cfg.local.lr == 1.0
    assert cfg.options["heterogeneity"] == 2.0 and cfg.options["global_rng"] is True
    assert cfg.data.roles is None
    # options are completed with the defaults of the registered options dataclass
    assert set(cfg.options) == {f.name for f in dataclasses.fields(get_algorithm("toy", "fedavg").options)}


def test_options_defaults_do_not_change_the_hash():
    explicit = toy().with_overrides(["options.noise=0.5"])  # 0.5 is the default
    assert explicit.config_hash() == toy().config_hash()
    assert toy().with_overrides(["options.noise=0.6"]).config_hash() != toy().config_hash()
    assert toy().with_overrides(["seed=1"]).config_hash() != toy().config_hash()


def test_switching_algorithm_drops_the_old_defaults_only():
    register_algorithm("toy", "_other", lambda cfg, options: None)  # takes no options
    try:
        other = toy().with_overrides(["algorithm=_other"])
        assert other.options == {}
        assert toy().replace(algorithm="_other").options == {}
        with pytest.raises(FedlibError, match="(?s)takes no options, got dim"):
            toy().with_overrides(["options.dim=7"]).with_overrides(["algorithm=_other"])
        back = other.with_overrides(["algorithm=fedavg"])
        assert back == toy()
    finally:
        from fedlib.experiments.config import registry

        registry._REGISTRY.pop(("toy", "_other"), None)


def test_hash_is_stable_across_processes():
    cfg = toy().with_overrides(["safl.k=3", "local.lr=0.05", "options.dim=4"])
    code = textwrap.dedent("""
        import json, sys
        from fedlib.experiments.config import RunConfig
        cfg = RunConfig.from_preset("toy-smoke").with_overrides(
            ["options.dim=4", "local.lr=0.05", "safl.k=3"])
        print(json.dumps([cfg.config_hash(), cfg.canonical_json()]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin",
                              "OMP_NUM_THREADS": "1"})
    h, canon = json.loads(out.stdout)
    assert h == cfg.config_hash()
    assert canon == cfg.canonical_json()
    assert '"fedlib":' in canon  # the version is part of what is hashed


def test_every_shipped_preset_validates():
    assert "toy-smoke" in list_presets()
    unavailable = []
    for name in list_presets():
        paradigm = load_preset_dict(name).get("paradigm", "safl")
        if not algorithms(paradigm):  # that paradigm's package is not built yet
            unavailable.append(name)
            continue
        cfg = RunConfig.from_preset(name)
        assert cfg.config_hash() == RunConfig.from_dict(cfg.to_dict()).config_hash(), name
    assert len(unavailable) < len(list_presets())


def test_extends_cycle_and_unknown_preset(tmp_path, monkeypatch):
    (tmp_path / "a.yaml").write_text("extends: b\n")
    (tmp_path / "b.yaml").write_text("extends: a\n")
    monkeypatch.setattr(presets_mod, "PRESET_DIR", tmp_path)
    with pytest.raises(FedlibError, match="cycle"):
        RunConfig.from_preset("a")
    with pytest.raises(FedlibError, match=r"(?s)unknown preset 'aa'.*did you mean a\?"):
        RunConfig.from_preset("aa")


# ------------------------------------------------------------------------ validation errors
@pytest.mark.parametrize("override, message", [
    # unknown keys, with the close match suggested
    ("safl.kk=3", r"unknown config key 'safl.kk'.*did you mean safl.k\?"),
    ("roundz=3", r"unknown config key 'roundz'.*did you mean rounds\?"),
    ("dat.alpha=1", r"unknown config key 'dat'.*did you mean data\?"),
    ("local.lrr=0.1", r"unknown config key 'local.lrr'.*did you mean local.lr\?"),
    # unknown choices, listing the valid ones
    ("paradigm=sfl", r"unknown paradigm 'sfl'.*safl, split, toy"),
    ("data.partition=diri", r"unknown partition 'diri'.*dirichlet"),
    ("safl.mode=async", r"unknown safl.mode 'async'.*semi-async, sync"),
    ("safl.delays=fast", r"unknown safl.delays 'fast'.*official-100"),
    ("safl.upload=copy", r"unknown safl.upload 'copy'.*overwrite, snapshot"),
    ("safl.scenario=storm", r"unknown safl.scenario 'storm'.*dropout"),
    ("split.framework=sflv3", r"unknown split.framework 'sflv3'.*sflv1, sflv2"),
    ("profile=huge", r"unknown profile 'huge'.*cpu, custom, paper, smoke"),
    ("data.validation=some", r"unknown validation split 'some'"),
    ("data.normalize=zscore", r"unknown normalisation 'zscore'"),
    ("device=tpu", r"unknown device 'tpu'"),
    ("algorithm=fedavgg", r"unknown toy algorithm 'fedavgg'.*did you mean fedavg\?"),
    # out of range
    ("rounds=0", r"rounds must be >= 1, got 0"),
    ("eval_every=0", r"eval_every must be >= 1"),
    ("checkpoint_every=-1", r"checkpoint_every must be >= 0"),
    ("seed=-1", r"seed must be >= 0"),
    ("safl.k=0", r"safl.k must be >= 1, got 0"),
    ("safl.clients=0", r"safl.clients must be >= 1"),
    ("safl.ratio=0", r"safl.ratio must be >= 1"),
    ("split.per_round=0", r"split.per_round must be >= 1"),
    ("data.alpha=0", r"data.alpha .* must be > 0, got 0"),
    ("data.alpha=-1", r"data.alpha .* must be > 0"),
    ("data.val_frac=1.5", r"data.val_frac must be in \(0, 1\)"),
    ("data.max_train=0", r"data.max_train must be >= 1"),
    ("local.lr=-0.1", r"local: .*-0.1"),
    ("local.batch_size=0", r"local: batch_size must be an integer >= 1"),
    # wrong types
    ("rounds=many", r"rounds must be an integer, got 'many'"),
    ("data.alpha=abc", r"data.alpha must be a number, got 'abc'"),
    ("options.global_rng=3", r"options.global_rng must be true or false"),
    # algorithm options, validated by the registered options dataclass
    ("options.dimm=3", r"unknown option\(s\) for toy/fedavg: dimm.*did you mean options.dim \(for dimm\)\?.*valid options: dim"),
    ("options.dim=0", r"options.dim must be >= 1"),
])
def test_each_validation_error(override, message):
    with pytest.raises(FedlibError, match="(?s)" + message):
        toy().with_overrides([override])


def test_inconsistent_combinations():
    safl = RunConfig(paradigm="safl")
    register_algorithm("safl", "_test-algo", lambda cfg, options: None, description="test only")
    try:
        base = dataclasses.replace(safl, algorithm="_test-algo")
        base.validate()
        with pytest.raises(FedlibError, match=r"(?s)safl.k=101 .* exceeds safl.clients=100"):
            base.with_overrides(["safl.k=101"])
        with pytest.raises(FedlibError, match=r"(?s)official-100 .* safl.clients=50"):
            base.with_overrides(["safl.delays=official-100", "safl.clients=50", "safl.k=5"])
        with pytest.raises(FedlibError, match=r"(?s)partition 'role' only exists for dataset 'shakespeare'"):
            base.with_overrides(["data.partition=role"])
        with pytest.raises(FedlibError, match=r"(?s)partition 'sex' only exists for dataset 'adult'"):
            base.with_overrides(["data.dataset=cifar10", "data.partition=sex"])
        # paradigm/algorithm mismatch names the right paradigm
        register_algorithm("split", "_only-split", lambda cfg, options: None)
        with pytest.raises(FedlibError, match=r"(?s)'_only-split' belongs to paradigm 'split', "
                                              r"not 'safl'.*paradigm=split"):
            base.with_overrides(["algorithm=_only-split"])
        # an algorithm without options rejects any
        with pytest.raises(FedlibError, match=r"(?s)takes no options"):
            base.with_overrides(["options.x=1"])
    finally:
        from fedlib.experiments.config import registry

        registry._REGISTRY.pop(("safl", "_test-algo"), None)
        registry._REGISTRY.pop(("split", "_only-split"), None)


def test_split_combinations():
    register_algorithm("split", "_test-split", lambda cfg, options: None)
    try:
        base = RunConfig(paradigm="split", algorithm="_test-split", model={"name": "cnn"},
                         data={"dataset": "cifar10", "partition": "dirichlet"})
        base.validate()
        with pytest.raises(FedlibError, match=r"(?s)split.per_round=30 exceeds split.clients=20"):
            base.with_overrides(["split.per_round=30"])
        pytest.importorskip("fedlib.models")
        with pytest.raises(FedlibError, match=r"(?s)model 'cnn' has no cut point 'layer9'.*use one of: conv1"):
            base.with_overrides(["model.cut=layer9"])
        good = base.with_overrides(["model.cut=conv1"])
        assert good.model.cut == "conv1"
        # the safl section's K > N does not concern a split run
        base.with_overrides(["safl.k=500"])
    finally:
        from fedlib.experiments.config import registry

        registry._REGISTRY.pop(("split", "_test-split"), None)


def test_unknown_model_lists_models():
    pytest.importorskip("fedlib.models")
    with pytest.raises(FedlibError, match=r"(?s)unknown model 'resnet19'.*resnet18"):
        toy().with_overrides(["model.name=resnet19"])


def test_bad_override_syntax():
    with pytest.raises(FedlibError, match="not of the form key=value"):
        toy().with_overrides(["rounds"])
    with pytest.raises(FedlibError, match="is a value, not a section"):
        toy().with_overrides(["rounds.x=1"])


def test_registry_lists_and_tolerates_missing_paradigms():
    assert {"safl", "split", "toy"} <= set(paradigms())
    names = [(e.paradigm, e.name) for e in algorithms("toy")]
    assert ("toy", "fedavg") in names
    with pytest.raises(FedlibError, match=r"(?s)unknown toy algorithm 'fedav'.*did you mean fedavg\?"):
        get_algorithm("toy", "fedav")
