"""The fragile mark reads the cross-CPU drift of the runs' own task family: a notebook's runs set it
(run_all -> use_family_of), a per-task difference names its own, mixed runs fall back to the largest."""

import pytest

from fedlib.experiments import RunConfig
from fedlib.reporting import stats


@pytest.fixture(autouse=True)
def _reset():
    yield
    stats.use_family_of([])
    __import__("fedlib.claims.words", fromlist=["use_profile"]).use_profile(None)


def test_family_of_split_safl_and_dataset():
    assert stats.family_of(RunConfig.from_preset("fedavg-fedavgm-cifar10-smoke")) == "split-cnn-cifar10"
    assert stats.family_of(RunConfig.from_preset("fedqs-sgd-adult-gender-smoke")) == "fcn-safl-adult"
    assert stats.family_of(RunConfig.from_preset("fedavg-cifar10-smoke")) == "cnn3-safl-cifar10"


def test_one_family_becomes_the_default_mixed_leaves_none():
    adult = RunConfig.from_preset("fedqs-sgd-adult-gender-smoke")
    assert stats.use_family_of([adult, adult.replace(seed=1)]) == "fcn-safl-adult"
    assert stats.use_family_of([adult, RunConfig.from_preset("fedavg-cifar10-smoke")]) is None


def test_fragile_uses_the_default_family_then_the_differences_own():
    small, large = stats.drift_threshold("fcn-safl-adult"), stats.drift_threshold()
    assert small < large
    lo = (small + large) / 2  # outside the Adult threshold, inside the largest
    diff = {"mean": lo + 1, "lo": lo, "hi": lo + 2, "n": 3, "value": "accuracy"}
    stats.use_family_of([])
    __import__("fedlib.claims.words", fromlist=["use_profile"]).use_profile(None)
    assert stats.fragile(diff)  # no family: the largest measured drift
    stats.use_family_of([RunConfig.from_preset("fedqs-sgd-adult-gender-smoke")])
    assert not stats.fragile(diff)
    assert stats.fragile({**diff, "family": "split-cnn-cifar10"}) == (lo < stats.drift_threshold("split-cnn-cifar10"))
