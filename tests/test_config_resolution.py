"""A run's config is resolved once (issues 21, 45): the algorithm's options are built into their
dataclass exactly once per run — when the config is built and validated; ``run()`` of a validated
config validates and builds nothing again — and the hash, store and trainer all read that object."""

from __future__ import annotations

import pytest

from fedlib.experiments import RunConfig, run
from fedlib.experiments.config import ResolvedRun, load_preset_dict


def count_constructions(monkeypatch, cls) -> list:
    """Record every ``cls(...)`` (``__init__`` call; ``dataclasses.replace`` included, deepcopy not)."""
    calls, init = [], cls.__init__

    def counted(self, *args, **kwargs):
        calls.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counted)
    return calls


def test_a_run_builds_its_options_once(monkeypatch, tmp_path):
    from fedlib.experiments.running.toy import ToyOptions

    calls = count_constructions(monkeypatch, ToyOptions)
    cfg = RunConfig.from_dict(load_preset_dict("toy-smoke"), rounds=2, options={"noise": 0.2})
    res = run(cfg, store=tmp_path, progress=False)
    assert len(calls) == 1
    run(cfg, store=tmp_path / "again", progress=False)  # a validated config: run() builds nothing
    assert len(calls) == 1
    bare = RunConfig(paradigm="toy", algorithm="fedavg", rounds=2, options={"noise": 0.2})
    run(bare, store=tmp_path / "bare", progress=False)  # a bare config is validated once, by run()
    assert len(calls) == 2
    assert res.config_hash == cfg.config_hash()  # the one resolution hashes as the public method does


def test_fedqs_run_builds_its_options_once(monkeypatch, tmp_path, data_root):
    from fedlib.safl.fedqs import FedQSOptions

    calls = count_constructions(monkeypatch, FedQSOptions)
    cfg = RunConfig.from_dict(load_preset_dict("fedqs-avg-adult-gender-smoke"), rounds=1,
                              options={"fidelity": "official"})
    run(cfg, store=tmp_path, progress=False)
    assert len(calls) == 1


def test_resolve_is_immutable_and_carries_the_instance():
    from fedlib.experiments.running.toy import ToyOptions

    cfg = RunConfig.from_preset("toy-smoke", ["options.noise=0.3"])
    r = cfg.resolve()
    assert isinstance(r, ResolvedRun) and isinstance(r.options, ToyOptions) and r.options.noise == 0.3
    assert r.hash == cfg.config_hash() and r.config == cfg and r.config is not cfg
    with pytest.raises(AttributeError):
        r.hash = "x"


def test_every_paradigm_builds_its_options_once_and_hands_that_instance_to_the_trainer(monkeypatch, tmp_path, data_root):
    """SAFL baseline, FedQS and split: one construction per run(), and the trainer holds that object."""
    from fedlib.experiments.config.registry import get_algorithm

    for preset, over in (("fedbuff-adult-gender-smoke", []), ("fedqs-sgd-adult-gender-smoke", []),
                         ("smofi-cifar10-smoke", ["options.stale=drop"])):
        cfg = RunConfig.from_preset(preset, ["rounds=1", "checkpoint_every=0", *over])
        entry = get_algorithm(cfg.paradigm, cfg.algorithm)
        calls, seen = count_constructions(monkeypatch, entry.options), []
        cfg = RunConfig.from_dict(cfg.to_dict())  # built (and validated) once, while counting

        def factory(c, options, entry=entry):
            seen.append(options)
            return entry.trainer(c, options)

        run(cfg, store=tmp_path / preset, progress=False, trainer=factory)
        assert len(calls) == 1, preset
        assert isinstance(seen[0], entry.options) and seen[0] == entry.build_options(cfg.options), preset


def test_fedqs_takes_the_built_options_and_derives_its_rules_once(monkeypatch):
    from fedlib.safl.fedqs import FedQS, FedQSOptions, OFFICIAL_RULES

    opts = FedQSOptions(fidelity="official")
    calls = count_constructions(monkeypatch, FedQSOptions)
    st = FedQS(opts)
    assert st.options is opts and calls == [] and st.rules == OFFICIAL_RULES


def test_validated_leaves_the_config_untouched_and_there_is_no_options_cache():
    cfg = RunConfig(paradigm="toy", algorithm="fedavg", options={"noise": 1})  # bare: not normalised
    before = cfg.to_dict()
    out = cfg.validated()
    assert cfg.to_dict() == before and out is not cfg and out.options["noise"] == 1.0
    assert len(out.options) > 1  # completed with the defaults on the copy only
    assert not hasattr(cfg, "options_object") and not hasattr(out, "_options_object")
