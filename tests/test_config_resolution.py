"""A run's config is resolved once (issue 21): the algorithm's options are built into their
dataclass exactly once per ``run()``, and the hash, store and trainer all read that one object."""

from __future__ import annotations

import pytest

from fedlib.experiments import RunConfig, run
from fedlib.experiments.config import ResolvedRun


def count_constructions(monkeypatch, cls) -> list:
    """Record every ``cls(...)`` (``__init__`` call; ``dataclasses.replace`` included, deepcopy not)."""
    calls, init = [], cls.__init__

    def counted(self, *args, **kwargs):
        calls.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counted)
    return calls


def test_a_run_builds_its_options_once(monkeypatch, tmp_path):
    from fedlib.experiments.toy import ToyOptions

    cfg = RunConfig.from_preset("toy-smoke", ["rounds=2", "options.noise=0.2"])
    calls = count_constructions(monkeypatch, ToyOptions)
    res = run(cfg, store=tmp_path, progress=False)
    assert len(calls) == 1
    assert res.config_hash == cfg.config_hash()  # the one resolution hashes as the public method does


def test_fedqs_run_builds_its_options_once(monkeypatch, tmp_path, data_root):
    from fedlib.safl.fedqs import FedQSOptions

    cfg = RunConfig.from_preset("fedqs-avg-adult-gender-smoke", ["rounds=1", "options.fidelity=official"])
    calls = count_constructions(monkeypatch, FedQSOptions)
    run(cfg, store=tmp_path, progress=False)
    assert len(calls) == 1


def test_resolve_is_immutable_and_carries_the_instance():
    from fedlib.experiments.toy import ToyOptions

    cfg = RunConfig.from_preset("toy-smoke", ["options.noise=0.3"])
    r = cfg.resolve()
    assert isinstance(r, ResolvedRun) and isinstance(r.options, ToyOptions) and r.options.noise == 0.3
    assert r.hash == cfg.config_hash() and r.config == cfg and r.config is not cfg
    with pytest.raises(AttributeError):
        r.hash = "x"


def test_options_object_follows_a_changed_options_dict():
    cfg = RunConfig.from_preset("toy-smoke")
    cfg.options["noise"] = 0.7  # changed after validation: the instance is rebuilt, not stale
    assert cfg.options_object().noise == 0.7
