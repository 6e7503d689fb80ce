"""The FL methods SMoFi plugs into, and the competing momentum add-ons (spec §3).

A split-FL *method* is a base method (how each selected client trains locally) times an optional
add-on (what the server does on top):

=========  ====================================================================================
base       local training
=========  ====================================================================================
fedavg     the run's ``local`` settings as they are (SFLV1 = FedAvg on the split model)
fedprox    + μ/2‖W − W^n‖² toward the round's global model (Li et al., MLSys 2020) [D: μ 0.01]
fednar     weight decay written as an L2 term in the loss, the *total* gradient (loss + L2)
           co-clipped to a norm, and the local lr decayed per round (Li et al., NeurIPS 2023;
           official CIFAR-10 script: lr 0.01, L2 0.1, clip 10, decay 0.998 per round)
fednag     local Nesterov momentum; weights **and** momentum buffers averaged at aggregation,
           every client starting the next round from the averaged momentum (Yang et al. 2022)
=========  ====================================================================================

=========  ====================================================================================
add-on     server side
=========  ====================================================================================
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
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError, check
from fedlib.core.server_opt import ServerMomentum
from fedlib.split.smofi import SMoFiOptions

from fedlib.core.state import State  # noqa: E402

BASES = ("fedavg", "fedprox", "fednar", "fednag")
ADDONS = ("smofi", "fedavgm", "slowmo")


# ------------------------------------------------------------------------------------------------
# options
# ------------------------------------------------------------------------------------------------
@dataclass
class FedProxOptions:
    """FedProx: ``mu`` — weight of μ/2‖W − W^n‖² [D: 0.01]."""

    mu: float = 0.01

    def __post_init__(self):
        check(self.mu >= 0, f"FedProx mu must be >= 0, got {self.mu}", "use e.g. mu=0.01")


@dataclass
class FedNAROptions:
    """FedNAR [P: official CIFAR-10 script]: ``l2`` L2-in-loss coefficient (replaces the run's
    weight decay), ``clip`` co-clipping norm of the total gradient, ``lr_decay`` per-round factor
    of the local lr (round n trains with lr · lr_decay^n)."""

    l2: float = 0.1
    clip: float = 10.0
    lr_decay: float = 0.998

    def __post_init__(self):
        check(self.l2 >= 0, f"FedNAR l2 must be >= 0, got {self.l2}")
        check(self.clip > 0, f"FedNAR clip must be > 0, got {self.clip}", "use e.g. clip=10")
        check(0 < self.lr_decay <= 1, f"FedNAR lr_decay must be in (0, 1], got {self.lr_decay}",
              "use e.g. lr_decay=0.998")


@dataclass
class FedNAGOptions:
    """FedNAG: local NAG with ``momentum`` (None = the run's ``local.momentum``)."""

    momentum: float | None = None

    def __post_init__(self):
        if self.momentum is not None:
            check(0 < self.momentum < 1, f"FedNAG momentum must be in (0, 1), got {self.momentum}")


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


BASE_OPTIONS: dict[str, type | None] = {"fedavg": None, "fedprox": FedProxOptions,
                                        "fednar": FedNAROptions, "fednag": FedNAGOptions}
ADDON_OPTIONS: dict[str, type] = {"smofi": SMoFiOptions, "fedavgm": FedAvgMOptions,
                                  "slowmo": SlowMoOptions}

_COMBINED: dict[tuple[str, str | None], type] = {}


def options_class(base: str, addon: str | None) -> type:
    """One flat options dataclass with the fields of the base's and the add-on's options.

    Its ``__post_init__`` runs both parts' validation. Cached, so the same name gives the same
    class (the registry and configs can compare them).
    """
    key = (base, addon)
    if key in _COMBINED:
        return _COMBINED[key]
    parts = [c for c in (BASE_OPTIONS[base], ADDON_OPTIONS.get(addon) if addon else None) if c]
    fields = []
    for cls in parts:
        for f in dataclasses.fields(cls):
            fields.append((f.name, f.type, field(default=f.default)))

    def __post_init__(self):
        for cls in parts:
            cls(**{f.name: getattr(self, f.name) for f in dataclasses.fields(cls)})
        if addon == "smofi":
            self.alpha = float(self.alpha)

    name = "".join(p.capitalize() for p in (base, addon) if p) + "Options"
    cls = dataclasses.make_dataclass(name, fields, namespace={"__post_init__": __post_init__,
                                                              "__module__": __name__})
    cls.__doc__ = "Options of " + " + ".join(p for p in (base, addon) if p) + ": " + (
        "; ".join(f"{f[0]}={f[2].default!r}" for f in fields) or "none") + "."
    _COMBINED[key] = cls
    return cls


def parse_method(name: str) -> tuple[str, str | None]:
    """``"fedprox+smofi"`` -> ``("fedprox", "smofi")``; ``"fedavgm"`` -> ``("fedavg", "fedavgm")``;
    aliases ``sflv1``/``sflv2`` -> FedAvg, ``smofi`` -> FedAvg + SMoFi."""
    key = str(name).lower().strip()
    aliases = {"sflv1": "fedavg", "sflv2": "fedavg", "smofi": "fedavg+smofi",
               "fedavgm": "fedavg+fedavgm", "slowmo": "fedavg+slowmo"}
    key = aliases.get(key, key)
    base, _, addon = key.partition("+")
    if base not in BASES or (addon and addon not in ADDONS) or "+" in addon:
        raise FedlibError(f"unknown split-FL method {name!r}",
                          f"use a base ({', '.join(BASES)}) optionally '+' an add-on "
                          f"({', '.join(ADDONS)}), e.g. fedprox+smofi")
    if base == "fednag" and addon:
        raise FedlibError(f"{name!r}: FedNAG averages its own momentum and takes no add-on",
                          "use fednag alone, or fedavg+" + addon)
    return base, (addon or None)


def option_values(options: Any) -> dict:
    """The options object as a plain dict ({} for None)."""
    if options is None:
        return {}
    if dataclasses.is_dataclass(options):
        return dataclasses.asdict(options)
    return dict(options)


# ------------------------------------------------------------------------------------------------
# base methods: the round's local configuration
# ------------------------------------------------------------------------------------------------
def local_config(base: str, local, options, round_index: int):
    """The LocalConfig a base method trains round ``round_index`` (0-based) with.

    ``local`` is the run's :class:`fedlib.train.LocalConfig`; the result is a modified copy.
    """
    opts = option_values(options)
    if base == "fedavg":
        return local
    if base == "fedprox":
        return dataclasses.replace(local, prox_mu=float(opts["mu"]))
    if base == "fednar":
        return dataclasses.replace(
            local, weight_decay=0.0, l2_in_loss=float(opts["l2"]), clip_norm=float(opts["clip"]),
            lr=float(local.lr) * float(opts["lr_decay"]) ** int(round_index))
    if base == "fednag":
        mom = opts.get("momentum")
        mom = float(local.momentum) if mom is None else float(mom)
        check(0 < mom < 1, f"FedNAG needs a momentum in (0, 1), the run has {mom}",
              "set local.momentum (e.g. 0.9) or the fednag option momentum")
        check(str(local.optimizer).lower() == "sgd", "FedNAG is SGD with Nesterov momentum",
              "set local.optimizer=sgd")
        return dataclasses.replace(local, momentum=mom, nesterov=True)
    raise FedlibError(f"unknown base method {base!r}", f"use one of: {', '.join(BASES)}")


# ------------------------------------------------------------------------------------------------
# add-ons: what the server does with the round's average
# ------------------------------------------------------------------------------------------------
class ServerAddon:
    """Identity server update (FedAvg): the new global model is the data-size-weighted average."""

    name = "none"

    def update(self, global_state: State, averaged: State, trainable: list[str], lr: float) -> State:
        return averaged

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class FedAvgM(ServerAddon):
    """Server momentum on the round pseudo-gradient Δ^n = W^n − avg (Hsu et al. 2019)::

        v^{n+1} = β_g v^n + Δ^n,   W^{n+1} = W^n − η_g v^{n+1}

    With β_g = 0, η_g = 1 this is FedAvg.
    """

    name = "fedavgm"

    def __init__(self, server_momentum: float = 0.9, server_lr: float = 1.0):
        self.lr = float(server_lr)
        self.momentum = ServerMomentum(server_momentum)

    def update(self, global_state, averaged, trainable, lr):
        out = dict(averaged)
        for k in trainable:
            g = global_state[k]
            v = self.momentum.step(k, g.to(torch.float64) - averaged[k].to(torch.float64))
            out[k] = (g.to(torch.float64) - self.lr * v).to(g.dtype)
        return out

    def state_dict(self):
        return {"velocity": self.momentum.state_dict()["buffer"]}

    def load_state_dict(self, state):
        self.momentum.load_state_dict({"buffer": state.get("velocity", {})})


class SlowMo(ServerAddon):
    """Slow momentum (Wang et al., ICLR 2020, Alg. 1) with the round's base lr γ_n::

        u^{n+1} = β u^n + Δ^n / γ_n,   W^{n+1} = W^n − α γ_n u^{n+1}

    With β = 0, α = 1 this is FedAvg. (With a constant γ it coincides with FedAvgM of
    β_g = β, η_g = α; they differ once the lr changes across rounds, e.g. under FedNAR.)
    """

    name = "slowmo"

    def __init__(self, slow_momentum: float = 0.7, slow_lr: float = 1.0):
        self.alpha = float(slow_lr)
        self.momentum = ServerMomentum(slow_momentum)

    def update(self, global_state, averaged, trainable, lr):
        check(lr > 0, f"SlowMo needs a positive base lr, got {lr}")
        out = dict(averaged)
        for k in trainable:
            g = global_state[k]
            u = self.momentum.step(k, (g.to(torch.float64) - averaged[k].to(torch.float64)) / lr)
            out[k] = (g.to(torch.float64) - self.alpha * lr * u).to(g.dtype)
        return out

    def state_dict(self):
        return {"u": self.momentum.state_dict()["buffer"]}

    def load_state_dict(self, state):
        self.momentum.load_state_dict({"buffer": state.get("u", {})})


def make_addon(addon: str | None, options) -> ServerAddon:
    """The server-side update object of an add-on (SMoFi acts inside the round: identity here)."""
    opts = option_values(options)
    if addon == "fedavgm":
        return FedAvgM(opts["server_momentum"], opts["server_lr"])
    if addon == "slowmo":
        return SlowMo(opts["slow_momentum"], opts["slow_lr"])
    return ServerAddon()
