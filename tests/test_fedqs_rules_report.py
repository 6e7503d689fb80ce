"""Table 5's companion (``fedlib.reporting.fedqs_rules``): the arms, the pairs each is read by, and
which rules are named as moving FedQS (only an effect whose interval excludes 0)."""

import pandas as pd
import pytest

from fedlib.core.errors import FedlibError
from fedlib.reporting.fedqs_rules import (CODE_ARM, FOUNDATION_ARM, PAPER_ARM, arm_overrides, check_steps,
                                          moving_rules, rule_arms, rule_diffs, rule_pairs)
from fedlib.safl.fedqs.readings import READINGS, REVERSE_STEPS, RULE_STEPS

STEPS = ["momentum off", "angle similarity"]


def test_arms_are_paper_steps_readings_and_foundation():
    assert rule_arms(STEPS) == [PAPER_ARM, *STEPS, "code-main", "code-momentum", FOUNDATION_ARM]


def test_pairs_read_every_fedqs_arm_against_paper_without_direction_and_against_the_foundation_with():
    pairs = rule_pairs(STEPS)
    assert (PAPER_ARM, PAPER_ARM, 0) not in pairs and (FOUNDATION_ARM, FOUNDATION_ARM, 1) not in pairs
    assert {(a, PAPER_ARM, 0) for a in [*STEPS, "code-main", "code-momentum"]} <= set(pairs)
    assert {(a, FOUNDATION_ARM, 1) for a in [PAPER_ARM, *STEPS, "code-main", "code-momentum"]} <= set(pairs)


def test_arm_overrides_are_the_readings_and_steps():
    assert arm_overrides(PAPER_ARM) == ()
    assert arm_overrides("code-main") == READINGS["code-main"]
    assert arm_overrides("angle similarity") == RULE_STEPS["angle similarity"][1]


def _runs(effect):
    """Three seeds; 'momentum off' moves accuracy by ``effect`` (+ seed noise), 'angle similarity' by noise only."""
    rows = []
    for seed, noise in enumerate((0.1, -0.2, 0.1)):
        base = 40.0 + seed
        for arm, acc in ((PAPER_ARM, base), ("momentum off", base + effect + noise), ("angle similarity", base + 3 * noise),
                         ("code-main", base + 1), ("code-momentum", base + 2), (FOUNDATION_ARM, base - 0.5)):
            rows.append({"method": "FedQS-SGD", "arm": arm, "seed": seed, "accuracy": acc, "final": acc, "best": acc})
    return pd.DataFrame(rows)


def test_moving_rules_names_only_steps_whose_interval_excludes_zero():
    diffs = rule_diffs(_runs(effect=-3.0), STEPS)
    assert set(diffs["arm"]) == {*STEPS, "code-main", "code-momentum", PAPER_ARM}
    moved = moving_rules(diffs, STEPS)["FedQS-SGD"]
    assert [m[0] for m in moved] == ["momentum off"]
    assert moved[0][1] == pytest.approx(-3.0) and moved[0][3] < 0


def test_no_rule_moves_when_effects_are_noise():
    assert moving_rules(rule_diffs(_runs(effect=0.0), STEPS), STEPS) == {"FedQS-SGD": []}


def test_unknown_step_refused():
    with pytest.raises(FedlibError, match="rule step"):
        check_steps(["momentum off", "no such rule"])


BACK = ["back: cosine, its test and G"]


def test_reverse_arms_follow_code_main_and_are_read_against_it():
    assert rule_arms(STEPS, BACK) == [PAPER_ARM, *STEPS, CODE_ARM, *BACK, "code-momentum", FOUNDATION_ARM]
    pairs = rule_pairs(STEPS, BACK)
    assert (BACK[0], CODE_ARM, 0) in pairs and (BACK[0], PAPER_ARM, 0) not in pairs
    assert (BACK[0], FOUNDATION_ARM, 1) in pairs
    assert arm_overrides(BACK[0]) == READINGS["code-main"] + REVERSE_STEPS[BACK[0]][1]


def test_a_reverse_step_moves_fedqs_when_its_effect_against_code_main_excludes_zero():
    runs = _runs(effect=0.0)
    extra = runs[runs["arm"] == "code-main"].assign(arm=BACK[0]).reset_index(drop=True)
    for col in ("accuracy", "final", "best"):  # 2.0, 2.1, 2.2 points below code-main
        extra[col] = extra[col] - [2.0 + 0.1 * s for s in range(len(extra))]
    diffs = rule_diffs(pd.concat([runs, extra]), STEPS, reverse=BACK)
    moved = moving_rules(diffs, [*STEPS, *BACK])["FedQS-SGD"]
    assert [m[0] for m in moved] == BACK and moved[0][1] == pytest.approx(-2.1)


def test_unknown_reverse_step_refused():
    with pytest.raises(FedlibError, match="reverse step"):
        check_steps(["angle similarity"], reverse=True)
