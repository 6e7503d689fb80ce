"""The eleven SAFL baselines of FedQS (spec fedqs.md §6), each a small :class:`Strategy`,
grouped by how the server combines updates.

* model aggregation, :mod:`~fedlib.safl.baselines.model_aggregation`: :class:`FedAvg`,
  :class:`SAFA`, :class:`FedAT`, :class:`MStep` (KAFL);
* gradient aggregation, :mod:`~fedlib.safl.baselines.gradient_aggregation`: :class:`FedSGD`,
  :class:`FedBuff`, :class:`WKAFL`, :class:`FedAC`, :class:`DeFedAvg`, :class:`FADAS`,
  :class:`CA2FL` (registered as ``cfl``);
* shared helpers (parameter keys, float64 vectors, weights, the server step):
  :mod:`~fedlib.safl.baselines.common`.

Every strategy runs in the same simulator with the same local training (spec §2); clients always
start from the newest global model (spec §1). Each docstring states the rule, cites the paper and
lists where it differs from the official FedQS repository (github.com/bkjod/FedQS_,
``utils/afl_*.py``) and why. Notation: K = updates per round, Δ_j = w_j − w_start_j, τ_j = the
update's staleness (``ctx.round − version``; a fresh update has τ = 0 — the official code's file
naming makes its τ one larger for every update not trained from the initial model), e =
``ctx.round``. "Parameters" below means ``ctx.model.named_parameters()``; BN running statistics
and counters are always averaged like the rest of the update (integer buffers rounded, spec §5)
but never enter similarities, norms or adaptive optimiser moments.
"""

from __future__ import annotations

from fedlib.safl.baselines.common import param_keys
from fedlib.safl.baselines.gradient_aggregation import CA2FL, FADAS, WKAFL, DeFedAvg, FedAC, FedBuff, FedSGD
from fedlib.safl.baselines.model_aggregation import SAFA, FedAT, FedAvg, MStep
from fedlib.safl.strategy import Strategy

__all__ = [
    "FedAvg", "FedSGD", "SAFA", "FedAT", "MStep", "FedBuff", "WKAFL", "FedAC", "DeFedAvg",
    "FADAS", "CA2FL", "BASELINES", "param_keys",
]

BASELINES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (FedAvg, FedSGD, SAFA, FedAT, MStep, FedBuff, WKAFL, FedAC, DeFedAvg,
                              FADAS, CA2FL)
}
