"""One way to plug in (issue 61): ``fedlib.plugins.register`` / ``@plugin`` for strategies and split
add-ons on any base method, options passed as ``cls(options)`` everywhere, safe defaults."""

from dataclasses import dataclass

import pytest
import torch

from fedlib.core.errors import FedlibError, check
from fedlib.experiments import RunConfig, get_algorithm
from fedlib.plugins import ServerAddon, Strategy, plugin, register, weighted_model_average
from fedlib.split.bases import FedProx

torch.set_num_threads(1)


class Mixer(ServerAddon):
    """Pull each active server surrogate's momentum towards their mean by ``mix``."""

    name = "test-mixer"

    @dataclass
    class Options:
        mix: float = 0.5

        def __post_init__(self):
            check(0 <= self.mix <= 1, f"options.mix must be in [0, 1], got {self.mix}")

    def prepare(self, server_names, local):
        self.names = list(server_names)

    @property
    def engine_hook(self):
        return self.mix_momentum

    def mix_momentum(self, step, active, buffers):
        for n in self.names:
            m = buffers.get("momentum_buffer", n)
            on = torch.as_tensor(active, dtype=torch.bool, device=m.device)
            lam = self.options.mix
            buffers.set("momentum_buffer", n, (1 - lam) * m + lam * m[on].mean(0, keepdim=True), mask=on)


@plugin
class Median(Strategy):
    """Coordinate-wise mean of the buffered models (a first strategy: no aggregation label, no
    reads_unaggregated declared)."""

    name = "test-plain-mean"

    def aggregate(self, global_state, updates, ctx):
        w = torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64)
        return weighted_model_average([u.state for u in updates], w)


register(Mixer, base=("fedavg", "fedprox"))


def _round(make, algorithm, *options):
    trainer = make([f"algorithm={algorithm}", "local.epochs=2", *options])
    trainer.run_round()
    return trainer, trainer.state_dict()["global"]


def test_an_addon_registers_on_any_base_with_its_options_beside_the_bases(tiny_smofi_trainer):
    entry = get_algorithm("split", "fedprox+test-mixer")
    assert {"mu", "mix"} <= set(entry.option_defaults())
    assert entry.description.startswith("Pull each active server surrogate")
    trainer, state = _round(tiny_smofi_trainer, "fedprox+test-mixer", "options.mix=0.0", "options.mu=0.05")
    assert isinstance(trainer.addon.options, Mixer.Options) and trainer.addon.options.mix == 0.0
    assert isinstance(trainer.method, FedProx) and trainer.method.options.mu == 0.05
    _, prox = _round(tiny_smofi_trainer, "fedprox", "options.mu=0.05")
    assert all(torch.equal(state[k], prox[k]) for k in prox)  # mix = 0 on FedProx is FedProx, bit for bit
    _, mixed = _round(tiny_smofi_trainer, "fedprox+test-mixer", "options.mix=1.0", "options.mu=0.05")
    assert any(not torch.equal(mixed[k], prox[k]) for k in prox)  # and the hook does act
    with pytest.raises(FedlibError, match="options.mix"):
        RunConfig.from_preset("sflv1-cifar10-smoke").with_overrides(["algorithm=fedavg+test-mixer", "options.mix=3"])


def test_a_strategy_needs_only_name_and_aggregate():
    entry = get_algorithm("safl", "test-plain-mean")
    assert entry.options is None and entry.description.startswith("Coordinate-wise mean")
    assert Median.reads_unaggregated is True  # the safe value unless declared
    assert Median.aggregation is None  # a catalogue label only: optional


def test_registration_mistakes_are_one_clear_error():
    class Nameless(Strategy):
        def aggregate(self, g, u, c):
            return g

    with pytest.raises(FedlibError, match="no name of its own"):
        register(Nameless)
    with pytest.raises(FedlibError, match="neither a Strategy nor a ServerAddon"):
        register(dict)

    class Clash(ServerAddon):
        name = "test-clash"

        @dataclass
        class Options:
            mu: float = 1.0

    with pytest.raises(FedlibError, match="both have the option"):
        register(Clash, base="fedprox")
    with pytest.raises(FedlibError, match="FedNAG takes no add-on"):
        register(Clash, base="fednag")
