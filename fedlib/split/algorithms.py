"""Every split-FL algorithm (``paradigm: split``) as an :class:`~fedlib.core.protocols.AlgorithmSpec`
(``CATALOG``, registered by ``fedlib.experiments.registry``; spec §3).

Names: a base method, optionally ``+`` an add-on — ``fedavg``, ``fedprox``, ``fednar`` each alone
or with ``+smofi``, ``+fedavgm``, ``+slowmo`` — plus ``fednag``, and the aliases ``sflv1``
(= fedavg on SFLV1), ``sflv2`` (= fedavg on SFLV2, whatever ``split.framework`` says),
``smofi`` (= fedavg+smofi), ``fedavgm`` / ``slowmo`` (= fedavg+…). Each name's options dataclass
holds the base's and the add-on's options (:func:`fedlib.split.methods.options_class`).
"""

from __future__ import annotations

from fedlib.core.protocols import AlgorithmSpec
from fedlib.split.methods import ADDONS, options_class, parse_method
from fedlib.split.sfl import SplitTrainer

__all__ = ["CATALOG", "NAMES"]

_DESCRIPTIONS = {
    "fedavg": "FedAvg on split FL (SFLV1 by default: per-client server surrogates)",
    "fedprox": "FedProx (mu/2 ||W - W^n||^2) on split FL",
    "fednar": "FedNAR (L2 in the loss, co-clipping, per-round lr decay) on split FL",
    "fednag": "FedNAG: local Nesterov, weights and momentum averaged (SFLV1)",
    "smofi": "step-wise momentum fusion of the server surrogates (SMoFi, AAAI 2026)",
    "fedavgm": "server momentum on the round pseudo-gradient (FedAvgM)",
    "slowmo": "slow momentum (SlowMo)",
    "sflv1": "SFLV1 = FedAvg with per-client server surrogates",
    "sflv2": "SFLV2: one server part trained sequentially over the clients",
}

NAMES: list[str] = []
for _base in ("fedavg", "fedprox", "fednar"):
    NAMES.append(_base)
    NAMES.extend(f"{_base}+{_addon}" for _addon in ADDONS)
NAMES += ["fednag", "sflv1", "sflv2", "smofi", "fedavgm", "slowmo"]



def _description(name: str) -> str:
    base, addon = parse_method(name)
    return _DESCRIPTIONS.get(name) or " + ".join(
        _DESCRIPTIONS[p].split(" (")[0] if p == base else _DESCRIPTIONS[p] for p in (base, addon) if p)


CATALOG = [AlgorithmSpec(name, SplitTrainer, options_class(*parse_method(name)), _description(name)) for name in NAMES]
