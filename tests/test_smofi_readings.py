"""SMoFi's named readings of the open fusion rule (fedlib.split.readings): each reading is the rule it names.

The identities of spec §6 under every reading are in ``test_split_identities.py`` (parametrised over the readings).
"""

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.split.readings import (DEFAULT_SMOFI_READING, SMOFI_READINGS, reading_of_options, reading_options,
                                   smofi_reading)
from fedlib.split.smofi import SMoFiOptions

# one round of |J^n| = 4 clients, data sizes 1:1:2:4; clients 0 and 1 active, 2 and 3 finished at steps 2 and 5, τ = 5
ACTIVE = torch.tensor([True, True, False, False])
STEPS = torch.tensor([9, 9, 2, 5])
TAU, N, SIZES = 5, 4, torch.tensor([10.0, 10.0, 20.0, 40.0])


def _weights(reading):
    rule = SMoFiOptions(**dict(SMOFI_READINGS[reading].options)).staleness_rule()
    n, shares = rule.round_shares(4, N, SIZES)
    return rule.weights(ACTIVE, STEPS, TAU, n, shares), rule


def test_every_reading_gives_the_coefficients_it_names():
    s = [float((TAU - h + 1 + 1) ** -0.1) for h in (2, 5)]  # s_α(τ, h), index from 1 (paper τ = fedlib τ + 1)
    expect = {
        "text": [1 / 4, 1 / 4, s[0] / 4, s[1] / 4],
        "text-weighted": [x / (2 + s[0] + s[1]) for x in (1, 1, *s)],
        "data-share": [p / 4 for p in (0.5, 0.5, 1 * s[0], 2 * s[1])],  # p_j = C n_j / Σ n = 0.5, 0.5, 1, 2
        "fresh": [1 / 2, 1 / 2, 0.0, 0.0],
        "drop-J": [1 / 4, 1 / 4, 0.0, 0.0],
    }
    assert set(expect) == set(SMOFI_READINGS)
    for reading, want in expect.items():
        w, _ = _weights(reading)
        assert torch.allclose(w, torch.tensor(want, dtype=torch.float64), atol=1e-12), reading


def test_the_default_reading_is_the_options_defaults_and_sets_nothing():
    assert DEFAULT_SMOFI_READING == "text" and reading_options("text") == {}
    assert SMoFiOptions().staleness_rule() == _weights("text")[1]


@pytest.mark.parametrize("reading", list(SMOFI_READINGS))
def test_a_runs_options_name_their_reading(reading):
    opts = SMoFiOptions(alpha=-0.5, **dict(SMOFI_READINGS[reading].options))
    assert reading_of_options(vars(opts)) == reading
    assert reading_of_options({**vars(opts), "stale_index": "from0"}) is None  # a step-index variant is no reading


def test_every_reading_says_what_it_honours_and_which_depart_from_kept_momenta():
    for r in SMOFI_READINGS.values():
        assert r.honours and r.label
    assert {n for n, r in SMOFI_READINGS.items() if "dropped" in r.departs} == {"fresh", "drop-J"}


def test_readings_are_ordinary_hashed_runs_and_fresh_is_the_ablations_drop_sum_rule():
    from fedlib.reporting.smofi import smofi_config

    def cfg(**extra):
        return smofi_config("long", "cifar10", "fedavg+smofi", 0, "partial", label="custom", model="cnn3",
                            cut="conv1", max_test=None, **extra)

    hashes = {r: cfg(**reading_options(r)).config_hash() for r in SMOFI_READINGS}
    assert len(set(hashes.values())) == len(hashes)
    assert hashes["text"] == cfg().config_hash()
    # the ablations notebook's "drop, ÷Σ weights" rule at α = −0.1: the runs the ledger already has
    assert hashes["fresh"] == cfg(**{"options.alpha": -0.1, "options.stale": "drop",
                                     "options.renormalise": True}).config_hash()


def test_an_unknown_reading_names_the_known_ones():
    with pytest.raises(FedlibError, match="unknown SMoFi reading 'dropped'") as e:
        smofi_reading("dropped")
    assert "fresh" in str(e.value.fix if hasattr(e.value, "fix") else e.value)
