"""Your own split-FL add-on through the public API (issue 45, tutorial your_own_strategy):
``fedlib.split.algorithms.addon_factory`` + ``fedlib.experiments.register_algorithm``."""

from dataclasses import dataclass

import pytest
import torch

from fedlib.core.errors import FedlibError, check
from fedlib.experiments import RunConfig, get_algorithm, register_algorithm
from fedlib.split.addons import ServerAddon
from fedlib.split.algorithms import addon_factory

torch.set_num_threads(1)


@dataclass
class MixOptions:
    mix: float = 0.5

    def __post_init__(self):
        check(0 <= self.mix <= 1, f"options.mix must be in [0, 1], got {self.mix}")


class MomentumMixing(ServerAddon):
    """After every lock-step, m_j <- (1 - mix) m_j + mix * mean over the active surrogates."""

    name = "mix"

    def __init__(self, mix: float = 0.5):
        self.options = MixOptions(mix)
        self.names: list[str] = []

    def check_framework(self, framework):
        check(framework == "sflv1", "momentum mixing needs SFLV1's surrogates", "use split.framework=sflv1")

    def prepare(self, server_names, local):
        self.names = list(server_names)

    @property
    def engine_hook(self):
        return self.mix_momentum

    def mix_momentum(self, step, active, buffers):
        for n in self.names:
            m = buffers.get("momentum_buffer", n)
            on = torch.as_tensor(active, dtype=torch.bool, device=m.device)
            mean = m[on].mean(0, keepdim=True)
            buffers.set("momentum_buffer", n, (1 - self.options.mix) * m + self.options.mix * mean, mask=on)


register_algorithm("split", "test-plain", addon_factory(ServerAddon))
register_algorithm("split", "test-mix", addon_factory(MomentumMixing), options=MixOptions)


def _one_round(make, algorithm, *options):
    """The global state after one round of ``algorithm`` on the tiny SMoFi fixture's data (three
    local epochs: several lock-steps, so that a step hook changes the next steps)."""
    trainer = make([f"algorithm={algorithm}", "local.epochs=3", *options])
    trainer.run_round()
    return trainer.state_dict()["global"]


def _same(a, b, exact=True):
    assert a.keys() == b.keys()
    for k in a:
        if exact:
            assert torch.equal(a[k], b[k]), k
        else:
            assert torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-6), (k, float((a[k] - b[k]).abs().max()))


def test_addon_factory_with_the_plain_addon_is_sflv1(tiny_smofi_trainer):
    """The factory assembles exactly the trainer build_trainer does: no add-on = SFLV1, bit for bit."""
    _same(_one_round(tiny_smofi_trainer, "test-plain"), _one_round(tiny_smofi_trainer, "sflv1"))


def test_own_addon_hook_runs_and_full_mixing_is_smofi_without_stale_terms(tiny_smofi_trainer):
    """mix=1 writes the plain mean of the active surrogates' momentum into each of them: SMoFi
    with finished clients dropped and the mean over the active ones (stale=drop, renormalise)."""
    mixed = _one_round(tiny_smofi_trainer, "test-mix", "options.mix=1.0")
    smofi = _one_round(tiny_smofi_trainer, "fedavg+smofi", "options.stale=drop", "options.renormalise=true")
    _same(mixed, smofi, exact=False)
    plain = _one_round(tiny_smofi_trainer, "sflv1")
    assert any(not torch.equal(mixed[k], plain[k]) for k in plain)  # the hook changed the training
    _same(_one_round(tiny_smofi_trainer, "test-mix", "options.mix=0.0"), plain)


def test_own_addon_options_are_validated_by_the_config_and_reach_the_addon(tiny_smofi_trainer):
    assert get_algorithm("split", "test-mix").options is MixOptions
    assert tiny_smofi_trainer(["algorithm=test-mix", "options.mix=0.25"]).addon.options.mix == 0.25
    with pytest.raises(FedlibError, match="options.mix"):
        RunConfig.from_preset("sflv1-cifar10-smoke").with_overrides(["algorithm=test-mix", "options.mix=2"])
    with pytest.raises(FedlibError, match="SFLV1"):
        tiny_smofi_trainer(["algorithm=test-mix", "split.framework=sflv2"])


def test_addon_factory_refuses_what_is_not_an_addon():
    with pytest.raises(FedlibError, match="ServerAddon"):
        addon_factory(object)
    with pytest.raises(FedlibError, match="ServerAddon"):
        addon_factory(ServerAddon())
