"""Each rule is checked once per run (issue 45), re-tracing the issue's three walks with counters:
SMoFi's α (``validate_alpha``: once, when the options are built — never per lock-step), SAFL's
K ≤ N (``check_k``: once by the config's validation, once by the clock a run builds) and FedQS's
options (one ``FedQSOptions``, one ``FedQSRules`` per run). A config's validation is remembered:
hashing, resolving and running a validated config validate it no more."""

from __future__ import annotations

import functools

import pytest

import fedlib.split.smofi as smofi
from fedlib.core.errors import FedlibError
from fedlib.experiments import RunConfig, run
from fedlib.experiments.config import load_preset_dict


def counter(monkeypatch, owner, name) -> list:
    calls, f = [], getattr(owner, name)

    @functools.wraps(f)
    def counted(*args, **kwargs):
        calls.append(1)
        return f(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("rounds", [1, 2])
def test_smofi_checks_alpha_once_per_run_not_per_step(monkeypatch, tmp_path, data_root, rounds):
    alpha = counter(monkeypatch, smofi, "validate_alpha")
    rule = counter(monkeypatch, smofi.StalenessRule, "__post_init__")
    choices = counter(monkeypatch, smofi, "check_choice")
    steps = counter(monkeypatch, smofi.StalenessRule, "weights")
    cfg = RunConfig.from_dict(load_preset_dict("smofi-cifar10-smoke"), rounds=rounds,
                              checkpoint_every=0, options={"alpha": -0.5})
    cfg.config_hash(), cfg.validated(), cfg.resolve()  # what a notebook does before run()
    run(cfg, store=tmp_path, progress=False)
    assert len(steps) > 2 * rounds  # the hook fused at every lock-step ...
    assert (len(alpha), len(rule), len(choices)) == (1, 1, 3)  # ... and checked α and the rule once


def test_k_is_checked_once_by_the_config_and_once_by_the_run(monkeypatch, tmp_path, data_root):
    import fedlib.experiments.config.run_config as config
    import fedlib.safl.schedule as schedule

    by_config = counter(monkeypatch, config, "check_k")
    by_clock = counter(monkeypatch, schedule, "check_k")
    cfg = RunConfig.from_dict(load_preset_dict("fedqs-avg-adult-gender-smoke"), rounds=1,
                              checkpoint_every=0, options={"a": 0.005})
    assert (len(by_config), len(by_clock)) == (1, 0)
    cfg.config_hash(), cfg.resolve()
    run(cfg, store=tmp_path, progress=False)
    assert (len(by_config), len(by_clock)) == (1, 1)  # the run's clock; the simulator checks nothing


def test_k_above_n_has_one_wording_everywhere():
    from fedlib.safl.schedule import Clock

    msg = "safl.k=5 updates per aggregation exceeds safl.clients=3"
    with pytest.raises(FedlibError, match=msg):
        RunConfig.from_dict(load_preset_dict("fedavg-adult-gender-smoke"),
                            safl={"k": 5, "clients": 3})
    with pytest.raises(FedlibError, match=msg):
        Clock([1, 2, 3], 5)


def test_fedqs_builds_its_options_and_rules_once_per_run(monkeypatch, tmp_path, data_root):
    from fedlib.experiments.config import RunConfig as Cfg
    from fedlib.safl.fedqs.options import FedQSOptions
    from fedlib.safl.fedqs.rules import FedQSRules

    options = counter(monkeypatch, FedQSOptions, "__post_init__")
    rules = counter(monkeypatch, FedQSRules, "replaced")
    validations = counter(monkeypatch, Cfg, "_normalise")
    cfg = RunConfig.from_dict(load_preset_dict("fedqs-avg-adult-gender-smoke"), rounds=1,
                              checkpoint_every=0, options={"a": 0.005})
    h = cfg.config_hash()
    res = run(cfg, store=tmp_path, progress=False)
    assert res.config_hash == h
    assert (len(validations), len(options), len(rules)) == (1, 1, 1)


def test_a_changed_field_is_validated_again():
    cfg = RunConfig.from_dict(load_preset_dict("toy-smoke"))
    h = cfg.config_hash()
    cfg.rounds = 3.0  # a float: normalised to 3 by the new validation, so the hash is 3's
    assert cfg.validated().rounds == 3 and isinstance(cfg.validated().rounds, int)
    assert cfg.config_hash() == RunConfig.from_dict(load_preset_dict("toy-smoke"), rounds=3).config_hash()
    assert cfg.config_hash() != h
    safl = RunConfig.from_dict(load_preset_dict("fedavg-adult-gender-smoke"))
    safl.safl.k = 10**5
    with pytest.raises(FedlibError, match="exceeds safl.clients"):
        safl.validated()
