"""Add-ons of split FL as objects: what the server does on top of a base method (spec §3).

An add-on owns its hooks; :class:`fedlib.split.sfl.SplitTrainer` calls them every round:

* :meth:`ServerAddon.check_framework`, :meth:`ServerAddon.prepare` (once: the server part's
  parameter names and the run's LocalConfig);
* :meth:`ServerAddon.start_round`, :attr:`ServerAddon.engine_hook` (the lock-step hook handed to
  the training engine), :meth:`ServerAddon.initial_opt_state`;
* :meth:`ServerAddon.update` — the server update of the round's average;
* :meth:`ServerAddon.after_round`; ``state_dict`` / ``load_state_dict`` under
  :attr:`ServerAddon.state_key` of the trainer's checkpoint.

=========  ====================================================================================
none       identity: the new global model is the data-size-weighted average
smofi      step-wise fusion of the server surrogates' momentum (:mod:`fedlib.split.smofi`)
fedavgm    server momentum on the round pseudo-gradient Δ^n = W^n − avg_j W_j:
           v ← β_g v + Δ^n, W^{n+1} = W^n − η_g v  (Hsu et al. 2019; β_g 0.9, η_g 1)
slowmo     slow momentum (Wang et al., ICLR 2020): u ← β u + Δ^n / γ_n,
           W^{n+1} = W^n − α γ_n u, γ_n the round's local lr (β 0.7, α 1)
=========  ====================================================================================

Server momentum acts on the trainable parameters; BatchNorm running statistics and counters are
taken from the plain average [D].
"""

from __future__ import annotations

import dataclasses
import inspect

from dataclasses import dataclass

import torch
from torch import Tensor

from fedlib.core.errors import check
from fedlib.core.server_opt import ServerMomentum
from fedlib.core.state import State
from fedlib.split.smofi import SMoFiHook, SMoFiOptions

__all__ = ["ServerAddon", "MomentumAddon", "FedAvgM", "SlowMo", "SMoFi", "FedAvgMOptions", "SlowMoOptions"]


# ------------------------------------------------------------------------------------------- options
@dataclass
class FedAvgMOptions:
    """FedAvgM: ``server_momentum`` β_g and ``server_lr`` η_g [P: typical 0.9 and 1]."""

    server_momentum: float = 0.9
    server_lr: float = 1.0

    def __post_init__(self):
        check(0 <= self.server_momentum < 1,
              f"FedAvgM server_momentum must be in [0, 1), got {self.server_momentum}")
        check(self.server_lr > 0, f"FedAvgM server_lr must be > 0, got {self.server_lr}")


@dataclass
class SlowMoOptions:
    """SlowMo: ``slow_momentum`` β and ``slow_lr`` α [P: typical 0.7 and 1]."""

    slow_momentum: float = 0.7
    slow_lr: float = 1.0

    def __post_init__(self):
        check(0 <= self.slow_momentum < 1,
              f"SlowMo slow_momentum must be in [0, 1), got {self.slow_momentum}")
        check(self.slow_lr > 0, f"SlowMo slow_lr must be > 0, got {self.slow_lr}")


# ------------------------------------------------------------------------------------------- add-ons
class ServerAddon:
    """No add-on (FedAvg's server): every hook is a no-op and :meth:`update` the identity."""

    name = "none"
    state_key: str | None = "addon"  # its entry in SplitTrainer.state_dict()
    options = None
    Options: type | None = None  # your add-on's options dataclass (issue 61: as a Strategy's)
    description: str = ""  # one line for `fedlib presets` / docs

    def __init__(self, options=None):
        """``options``: an instance of :attr:`Options` (its defaults when None), kept as ``self.options``."""
        if options is None and self.Options is not None:
            options = self.Options()
        self.options = options

    @classmethod
    def from_options(cls, options) -> "ServerAddon":
        """The add-on built from its options dataclass instance: ``cls(options)`` when the constructor
        takes ``options`` (the one convention, issue 61), else its fields as keywords (older add-ons)."""
        if "options" in inspect.signature(cls.__init__).parameters:
            return cls(options)
        return cls(**dataclasses.asdict(options))

    def check_framework(self, framework: str) -> None:
        """Raise a FedlibError if the add-on is not defined on ``framework`` (sflv1/sflv2)."""

    def prepare(self, server_names: list[str], local) -> None:
        """Called once by the trainer with the server part's trainable names and its LocalConfig."""

    @property
    def engine_hook(self):
        """The lock-step hook ``hook(step, active, buffers)`` for the training engine, or None."""
        return None

    def start_round(self, n_selected: int, sizes=None) -> None:
        """Called before the round's local training of ``n_selected`` clients holding ``sizes``
        samples (one entry per selected client, in the training order; may be None)."""

    def initial_opt_state(self) -> dict | None:
        """``{kind: {name: tensor}}`` every selected client starts its optimizers from, or None."""
        return None

    def update(self, global_state: State, averaged: State, trainable: list[str], lr: float) -> State:
        """The new global model from the old one and the round's average (``lr``: the round's)."""
        return averaged

    def after_round(self) -> None:
        """Called once the round's new global model is set."""

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class MomentumAddon(ServerAddon):
    """Heavy-ball momentum on the round pseudo-gradient Δ^n = W^n − avg (FedAvgM, SlowMo): the buffer
    sees Δ^n / ``delta_scale``, the model moves by ``step`` · buffer (:meth:`scales` for round lr γ_n).
    The buffer is :class:`fedlib.core.server_opt.ServerMomentum`, checkpointed under :attr:`buffer_key`."""

    buffer_key = "velocity"

    def __init__(self, beta: float):
        self.momentum = ServerMomentum(beta)

    def scales(self, lr: float) -> tuple[float, float]:
        """(delta_scale, step) of a round whose local lr is ``lr``."""
        raise NotImplementedError

    def update(self, global_state, averaged, trainable, lr):
        delta_scale, step = self.scales(lr)
        out = dict(averaged)
        for k in trainable:
            g = global_state[k]
            v = self.momentum.step(k, (g.to(torch.float64) - averaged[k].to(torch.float64)) / delta_scale)
            out[k] = (g.to(torch.float64) - step * v).to(g.dtype)
        return out

    def state_dict(self):
        return {self.buffer_key: self.momentum.state_dict()["buffer"]}

    def load_state_dict(self, state):
        self.momentum.load_state_dict({"buffer": state.get(self.buffer_key, {})})


class FedAvgM(MomentumAddon):
    """Server momentum on the round pseudo-gradient Δ^n = W^n − avg (Hsu et al. 2019)::

        v^{n+1} = β_g v^n + Δ^n,   W^{n+1} = W^n − η_g v^{n+1}

    With β_g = 0, η_g = 1 this is FedAvg.
    """

    name = "fedavgm"

    def __init__(self, server_momentum: float = 0.9, server_lr: float = 1.0):
        self.options = FedAvgMOptions(server_momentum, server_lr)
        self.lr = float(server_lr)
        super().__init__(server_momentum)

    def scales(self, lr):
        return 1.0, self.lr


class SlowMo(MomentumAddon):
    """Slow momentum (Wang et al., ICLR 2020, Alg. 1) with the round's base lr γ_n::

        u^{n+1} = β u^n + Δ^n / γ_n,   W^{n+1} = W^n − α γ_n u^{n+1}

    With β = 0, α = 1 this is FedAvg. (With a constant γ it coincides with FedAvgM of
    β_g = β, η_g = α; they differ once the lr changes across rounds, e.g. under FedNAR.)
    """

    name = "slowmo"
    buffer_key = "u"

    def __init__(self, slow_momentum: float = 0.7, slow_lr: float = 1.0):
        self.options = SlowMoOptions(slow_momentum, slow_lr)
        self.alpha = float(slow_lr)
        super().__init__(slow_momentum)

    def scales(self, lr):
        check(lr > 0, f"SlowMo needs a positive base lr, got {lr}")
        return lr, self.alpha * lr


class SMoFi(ServerAddon):
    """SMoFi (spec §2): inside the round, :class:`~fedlib.split.smofi.SMoFiHook` fuses the server
    surrogates' optimizer buffers after every lock-step; the server update is the identity.

    With ``carry_momentum`` the last fused buffers (:attr:`carry`) start the next round's clients
    and are kept in the trainer's checkpoint under ``"carry"``.
    """

    name = "smofi"
    state_key = "carry"

    def __init__(self, options: SMoFiOptions | None = None):
        self.options = options or SMoFiOptions()
        self.hook: SMoFiHook | None = None
        self.carry: dict[str, dict[str, Tensor]] = {}  # {kind: {name: fused buffer}}

    @classmethod
    def from_options(cls, options: SMoFiOptions) -> "SMoFi":
        return cls(options)

    def check_framework(self, framework):
        check(framework == "sflv1",
              "SMoFi fuses the momentum of SFLV1's per-client server surrogates; SFLV2 has a "
              "single server part", "use split.framework=sflv1 with SMoFi")

    def prepare(self, server_names, local):
        self.hook = SMoFiHook(server_names, local.optimizer, self.options,
                              momentum=local.momentum if local.optimizer == "sgd" else None)

    @property
    def engine_hook(self):
        return self.hook

    def start_round(self, n_selected, sizes=None):
        check(self.hook is not None, "SMoFi.start_round before prepare()",
              "call prepare(server_names, local) first (SplitTrainer does)")
        self.hook.start_round(n_selected, sizes)

    def initial_opt_state(self):
        return self.carry if self.options.carry_momentum and self.carry else None

    def after_round(self):
        if not self.options.carry_momentum:
            return
        self.carry = {}
        for key, t in self.hook.fused_state().items():
            kind, name = key.split("/", 1)
            self.carry.setdefault(kind, {})[name] = t

    def state_dict(self):
        return {k: {n: t.clone() for n, t in d.items()} for k, d in self.carry.items()}

    def load_state_dict(self, state):
        self.carry = {k: dict(d) for k, d in state.items()}

