"""FedQS's named readings (spec "Readings"): each is a set of config overrides that resolves to the
rules it names; the rule steps switch exactly the rules they name, and together cover every rule
where the paper and the code differ at N = 100, K = 10."""

import dataclasses

import pytest

from fedlib.core.errors import FedlibError
from fedlib.experiments import RunConfig
from fedlib.safl.fedqs import OFFICIAL_RULES, PAPER_RULES, FedQSOptions
from fedlib.safl.fedqs.readings import (READING_LABELS, READINGS, REVERSE_STEPS, RULE_STEPS, reading_overrides,
                                       reading_tag, step_overrides)

PRESET = "fedqs-sgd-adult-gender-smoke"


def _options(overrides) -> FedQSOptions:
    return FedQSOptions(**RunConfig.from_preset(PRESET).with_overrides(list(overrides)).options)


@pytest.mark.parametrize("reading, rules, momentum", [("paper", PAPER_RULES, True),
                                                      ("code-main", OFFICIAL_RULES, False),
                                                      ("code-momentum", OFFICIAL_RULES, True)])
def test_each_reading_resolves_to_its_rules_and_momentum(reading, rules, momentum):
    opts = _options(reading_overrides(reading))
    assert opts.fidelity_rules() == rules
    assert opts.momentum is momentum


def test_readings_are_distinct_runs_and_each_has_a_label():
    hashes = {RunConfig.from_preset(PRESET).with_overrides(list(o)).config_hash() for o in READINGS.values()}
    assert len(hashes) == len(READINGS)
    assert set(READING_LABELS) == set(READINGS)


def test_paper_reading_is_the_preset_itself():
    assert reading_overrides("paper") == ()


def _changed(opts: FedQSOptions, start=()) -> set:
    """The rules (and momentum) ``opts`` sets otherwise than the preset with overrides ``start``."""
    base = _options(start)
    rules = {f.name for f in dataclasses.fields(PAPER_RULES)
             if getattr(opts.fidelity_rules(), f.name) != getattr(base.fidelity_rules(), f.name)}
    return rules | ({"momentum"} if opts.momentum != base.momentum else set())


@pytest.mark.parametrize("step", list(RULE_STEPS))
def test_each_step_changes_only_the_rules_it_names(step):
    named = {o.split("=")[0].removeprefix("options.") for o in step_overrides(step)}
    assert _changed(_options(step_overrides(step))) == named


def test_the_steps_cover_every_rule_where_paper_and_code_differ_except_those_equal_at_n100_k10():
    differing = {f.name for f in dataclasses.fields(PAPER_RULES)
                 if getattr(PAPER_RULES, f.name) != getattr(OFFICIAL_RULES, f.name)}
    covered = {o.split("=")[0].removeprefix("options.") for s in RULE_STEPS for o in step_overrides(s)}
    # phi: K/N = 10/100 = the code's 0.1; validation: "auto" is the code's first <= 20 per class without a holdout
    assert differing - covered == {"phi", "validation"}
    assert "momentum" in covered


@pytest.mark.parametrize("step", list(REVERSE_STEPS))
def test_each_reverse_step_starts_from_code_main_and_switches_back_only_what_it_names(step):
    overrides = step_overrides(step)
    assert overrides[:len(READINGS["code-main"])] == READINGS["code-main"]
    named = {o.split("=")[0].removeprefix("options.") for o in REVERSE_STEPS[step][1]}
    opts = _options(overrides)
    assert _changed(opts, start=reading_overrides("code-main")) == named
    # every rule it switches lands on the paper's text
    for name in named - {"momentum"}:
        assert getattr(opts.fidelity_rules(), name) == getattr(PAPER_RULES, name)


def test_the_reverse_steps_cover_the_same_rules_as_the_forward_ones():
    forward = {o.split("=")[0].removeprefix("options.") for s in RULE_STEPS for o in RULE_STEPS[s][1]}
    back = {o.split("=")[0].removeprefix("options.") for s in REVERSE_STEPS for o in REVERSE_STEPS[s][1]}
    assert forward == back


def test_an_unknown_rule_step_is_refused_naming_both_directions():
    with pytest.raises(FedlibError, match="back: cosine"):
        step_overrides("no such step")


@pytest.mark.parametrize("bad", ["official", "", "Paper"])
def test_an_unknown_reading_is_refused_with_the_choices(bad):
    with pytest.raises(FedlibError, match="code-main"):
        reading_overrides(bad)


def test_a_reading_tag_names_the_reading_and_claims_read_it_back():
    from fedlib.claims.evidence import split_reading as reading_of

    assert reading_tag("paper") == ""
    for reading in ("code-main", "code-momentum"):
        setting = f"N50: FedQS-SGD{reading_tag(reading)} − FedSGD"
        assert reading_of(setting) == (reading, "N50: FedQS-SGD − FedSGD")


def test_a_report_runs_only_fedqs_under_the_other_readings_and_names_each_row_by_its_reading():
    from fedlib.claims.evidence import split_reading as reading_of
    from fedlib.reporting.fedqs import METHODS, readings_of, row_name

    read_on = ["code-main", "code-momentum"]
    assert readings_of("fedqs-sgd", read_on) == ["paper", *read_on]
    assert readings_of("fedqs-avg", []) == ["paper"]
    for baseline in (m for m in METHODS if not m.startswith("fedqs")):
        assert readings_of(baseline, read_on) == ["paper"]  # a baseline has no FedQS rule to read
    assert row_name("fedqs-avg", "paper") == "FedQS-Avg"
    assert reading_of(f"N50: {row_name('fedqs-sgd', 'code-main')} − FedSGD") == ("code-main", "N50: FedQS-SGD − FedSGD")


def test_readings_by_task_takes_a_list_or_a_per_reading_dict():
    from fedlib.reporting.fedqs import readings_by_task

    tasks = ["cifar10-x0.1", "cifar10-x0.5", "adult-gender"]
    assert readings_by_task(["code-main"], ["cifar10"], tasks) == {
        "cifar10-x0.1": ["code-main"], "cifar10-x0.5": ["code-main"], "adult-gender": []}
    by = readings_by_task(["code-main", "code-momentum"],
                          {"code-main": ["cifar10", "adult"], "code-momentum": ["cifar10-x0.5"]}, tasks)
    assert by == {"cifar10-x0.1": ["code-main"], "cifar10-x0.5": ["code-main", "code-momentum"],
                  "adult-gender": ["code-main"]}
    assert readings_by_task(None, None, tasks) == {t: [] for t in tasks}
    assert readings_by_task(["code-main"], "adult-gender", tasks)["adult-gender"] == ["code-main"]


@pytest.mark.parametrize("readings, where, words", [
    (["paper"], [], "already runs"),
    (["code-mian"], [], "unknown FedQS reading"),
    (["code-main"], {"code-momentum": ["adult"]}, "not in `readings`"),
    (["code-main"], ["cifar11"], "unknown task"),
])
def test_bad_reading_knobs_get_one_clear_message(readings, where, words):
    from fedlib.reporting.fedqs import readings_by_task

    with pytest.raises(FedlibError, match=words.replace("`", ".")):
        readings_by_task(readings, where, ["adult-gender"])


@pytest.mark.parametrize("reading", list(READINGS))
def test_the_hyperparameters_said_to_act_under_a_reading_are_the_ones_that_change_mod2(reading):
    """Figure 5 sweeps under a reading only the Mod② hyperparameters that act there: changing one that
    does not (m0, k with momentum 0; k under the code's momentum rule) leaves every Mod② decision as is."""
    from fedlib.safl.fedqs.modules import mod2_adapt
    from fedlib.safl.fedqs.readings import ACTING_HYPERPARAMETERS

    def decisions(**change):
        opts = _options(reading_overrides(reading) + tuple(f"options.{k}={v}" for k, v in change.items()))
        params = opts.mod2_params(opts.fidelity_rules())
        cases = [(0.1, s, 0.5, f, 1.0) for s in (0.2, 0.8) for f in (0.5, 2.0)]  # all four client types
        return [dataclasses.astuple(mod2_adapt(*c, params, G=0.5, momentum_G=0.5, per_class_accuracy=None))
                for c in cases]

    base = decisions()
    for hp, value in (("a", 0.02), ("m0", 0.4), ("k", 0.5)):
        moved = decisions(**{hp: value}) != base
        assert moved == (hp in ACTING_HYPERPARAMETERS[reading]), (reading, hp)
    assert "eta0" in ACTING_HYPERPARAMETERS[reading]  # the initial learning rate: every reading
