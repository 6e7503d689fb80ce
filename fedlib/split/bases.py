"""Base methods of split FL as objects: how each selected client trains locally (spec §3).

A base method owns its hooks; :class:`fedlib.split.sfl.SplitTrainer` calls them every round and
never tests a method's name:

* :meth:`BaseMethod.check_framework` — reject a framework the method is not defined on;
* :meth:`BaseMethod.local_config` — the round's :class:`fedlib.train.LocalConfig` (a modified
  copy of the run's);
* :meth:`BaseMethod.initial_opt_state` — the optimizer state every client starts from (or None);
* :meth:`BaseMethod.after_aggregation` — what the method keeps from the round's results;
* ``state_dict`` / ``load_state_dict`` — that kept state, stored in the trainer's checkpoint
  under :attr:`BaseMethod.state_key`.

=========  ====================================================================================
fedavg     the run's ``local`` settings as they are (SFLV1 = FedAvg on the split model)
fedprox    + μ/2‖W − W^n‖² toward the round's global model (Li et al., MLSys 2020) [D: μ 0.01]
fednar     weight decay written as an L2 term in the loss, the *total* gradient (loss + L2)
           co-clipped to a norm, and the local lr decayed per round (Li et al., NeurIPS 2023;
           official CIFAR-10 script: lr 0.01, L2 0.1, clip 10, decay 0.998 per round)
fednag     local Nesterov momentum; weights **and** momentum buffers averaged at aggregation,
           every client starting the next round from the averaged momentum (Yang et al. 2022)
=========  ====================================================================================
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import Tensor

from fedlib.core.errors import check

__all__ = ["BaseMethod", "FedAvg", "FedProx", "FedNAR", "FedNAG",
           "FedProxOptions", "FedNAROptions", "FedNAGOptions"]


# ------------------------------------------------------------------------------------------- options
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


# ------------------------------------------------------------------------------------------- methods
class BaseMethod:
    """FedAvg: the run's local settings unchanged; nothing kept across rounds.

    The other base methods override the hooks they need. ``options`` is the method's options
    dataclass (None for FedAvg); its values become the run summary's ``option_*`` columns.
    """

    name = "fedavg"
    state_key: str | None = None  # its entry in SplitTrainer.state_dict() (None: nothing kept)

    def __init__(self, options=None):
        self.options = options

    def check_framework(self, framework: str) -> None:
        """Raise a FedlibError if the method is not defined on ``framework`` (sflv1/sflv2)."""

    def local_config(self, local, round_index: int):
        """The LocalConfig round ``round_index`` (0-based) trains with (``local``: the run's)."""
        return local

    def initial_opt_state(self) -> dict | None:
        """``{kind: {name: tensor}}`` every selected client starts its optimizers from, or None."""
        return None

    def after_aggregation(self, results, weights: Tensor, global_state: dict,
                          trainable: list[str]) -> None:
        """Called once the round's new ``global_state`` is set; ``results`` are the clients'
        (``state``, ``loss``, ``steps``, ``opt_state``), ``weights`` their data sizes."""

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"


class FedAvg(BaseMethod):
    """FedAvg (the SFLV1/SFLV2 baseline)."""


class FedProx(BaseMethod):
    """FedProx (Li et al., MLSys 2020): the loss gets μ/2‖W − W^n‖²."""

    name = "fedprox"

    def __init__(self, options: FedProxOptions | None = None):
        super().__init__(options or FedProxOptions())

    def local_config(self, local, round_index):
        return dataclasses.replace(local, prox_mu=float(self.options.mu))


class FedNAR(BaseMethod):
    """FedNAR (Li et al., NeurIPS 2023): L2 in the loss instead of weight decay, the total
    gradient co-clipped to ``clip``, and round n's lr = lr · lr_decay^n."""

    name = "fednar"

    def __init__(self, options: FedNAROptions | None = None):
        super().__init__(options or FedNAROptions())

    def local_config(self, local, round_index):
        o = self.options
        return dataclasses.replace(
            local, weight_decay=0.0, l2_in_loss=float(o.l2), clip_norm=float(o.clip),
            lr=float(local.lr) * float(o.lr_decay) ** int(round_index))


class FedNAG(BaseMethod):
    """FedNAG (Yang et al. 2022): local Nesterov SGD; the momentum buffers are averaged with the
    weights' data-size weights and every client of the next round starts from that average."""

    name = "fednag"
    state_key = "nag"

    def __init__(self, options: FedNAGOptions | None = None):
        super().__init__(options or FedNAGOptions())
        self.momentum: dict[str, dict[str, Tensor]] = {}  # {"momentum_buffer": {name: tensor}}

    def check_framework(self, framework):
        check(framework == "sflv1", "FedNAG averages per-client momentum; it is defined on SFLV1",
              "use split.framework=sflv1 with fednag")

    def local_config(self, local, round_index):
        mom = self.options.momentum
        mom = float(local.momentum) if mom is None else float(mom)
        check(0 < mom < 1, f"FedNAG needs a momentum in (0, 1), the run has {mom}",
              "set local.momentum (e.g. 0.9) or the fednag option momentum")
        check(str(local.optimizer).lower() == "sgd", "FedNAG is SGD with Nesterov momentum",
              "set local.optimizer=sgd")
        return dataclasses.replace(local, momentum=mom, nesterov=True)

    def initial_opt_state(self):
        return self.momentum or None

    def after_aggregation(self, results, weights, global_state, trainable):
        states = [(getattr(r, "opt_state", None) or {}).get("momentum_buffer", {})
                  for r in results]
        w = weights / weights.sum()
        out: dict[str, Tensor] = {}
        for name in trainable:
            rows = [(wi, s[name]) for wi, s in zip(w.tolist(), states) if name in s]
            if rows:
                tot = sum(wi for wi, _ in rows)
                out[name] = sum(wi * t.to(torch.float64) for wi, t in rows).div(tot).to(
                    global_state[name].dtype)
        self.momentum = {"momentum_buffer": out} if out else {}

    def state_dict(self):
        return {k: {n: t.clone() for n, t in d.items()} for k, d in self.momentum.items()}

    def load_state_dict(self, state):
        self.momentum = {k: dict(d) for k, d in state.items()}
