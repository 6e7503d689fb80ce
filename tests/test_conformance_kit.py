"""``fedlib.testing``: the conformance kit (issue 61) — every built-in algorithm passes it, and it
catches a strategy that breaks its own identity case or its determinism."""

import pytest
import torch

from fedlib.experiments import algorithms
from fedlib.plugins import Strategy, register, weighted_model_average
from fedlib.testing import Identity, check_addon, check_algorithm, check_strategy

torch.set_num_threads(1)

# the identity cases of the built-in add-ons: with no momentum they are FedAvg
IDENTITIES = {
    "fedavg+fedavgm": Identity("server_momentum = 0 equals FedAvg", {"server_momentum": 0.0}, "fedavg"),
    "fedavg+slowmo": Identity("slow_momentum = 0 equals FedAvg", {"slow_momentum": 0.0}, "fedavg", tolerance=1e-6),
    "fedprox": Identity("mu = 0 equals FedAvg", {"mu": 0.0}, "fedavg"),
}
BUILTIN = [(e.paradigm, e.name) for e in algorithms() if e.code is None]


@pytest.mark.parametrize("paradigm, name", BUILTIN, ids=[f"{p}/{n}" for p, n in BUILTIN])
def test_every_builtin_algorithm_passes_the_kit(paradigm, name):
    report = check_algorithm(paradigm, name, identity=IDENTITIES.get(name), backends=paradigm != "toy")
    assert report.ok and len(report.checks) >= 2


class Jittery(Strategy):
    """Breaks determinism: draws from an unseeded generator."""

    name = "test-jittery"

    def aggregate(self, global_state, updates, ctx):
        w = torch.rand(len(updates), generator=torch.Generator().manual_seed(torch.seed()), dtype=torch.float64)
        return weighted_model_average([u.state for u in updates], w / w.sum())


class Halved(Strategy):
    """Claims "equals FedAvg" but weights the first update twice."""

    name = "test-halved"

    def aggregate(self, global_state, updates, ctx):
        w = torch.ones(len(updates), dtype=torch.float64)
        w[0] = 2.0
        return weighted_model_average([u.state for u in updates], w / w.sum())


REGISTERED_HALVED = Halved


def test_the_kit_catches_nondeterminism_and_a_broken_identity():
    register(Jittery)
    register(Halved)
    jittery = check_strategy(Jittery, backends=False, raise_on_fail=False)
    assert not jittery.ok and [c.name for c in jittery.checks if not c.passed] == ["determinism"]
    with pytest.raises(AssertionError, match=r"FAIL\] identity \(equals FedAvg\)"):
        check_strategy(Halved, identity=Identity("equals FedAvg", {}, "fedavg"), backends=False)


def test_the_kit_refuses_a_class_that_is_not_the_registered_one():
    class Halved(Strategy):  # another class of the same name: the user forgot to register the edit
        name = "test-halved"

    register(REGISTERED_HALVED)
    with pytest.raises(Exception, match="register this class first"):
        check_strategy(Halved)
    with pytest.raises(Exception, match="unknown split algorithm"):
        check_addon("fedavg+nothing-such")
