"""FedQS (Li et al., NeurIPS 2025, §3; spec fedqs.md §3-§5) as a small package.

* :mod:`~fedlib.safl.fedqs.modules` — Mod① similarity (§3.2), Mod② adaptation (§3.3, eqs. 1-3)
  and Mod③ aggregation weights (§3.4), as pure functions;
* :mod:`~fedlib.safl.fedqs.rules` — the behaviours where the paper and the official code differ,
  as two frozen objects :data:`PAPER_RULES` and :data:`OFFICIAL_RULES`;
* :mod:`~fedlib.safl.fedqs.options` — :class:`FedQSOptions` (``fidelity`` picks the rules object,
  an option set explicitly replaces one of its fields);
* :mod:`~fedlib.safl.fedqs.strategy` — :class:`FedQSState` and the SAFL strategy :class:`FedQS`
  (FedQS-Avg, FedQS-SGD).
"""

from fedlib.safl.fedqs.modules import (SIMILARITY_REGISTRY, Mod2Params, Mod2Result, Similarity, bias_ratio,
                                       code_angle, distance_mean, distance_ratio, mod1_similarity, mod2_adapt,
                                       mod3_weights, momentum_rate, per_label_spread)
from fedlib.safl.fedqs.options import FedQSOptions, FedQSSGDOptions
from fedlib.safl.fedqs.rules import OFFICIAL_RULES, PAPER_RULES, RULES_BY_FIDELITY, FedQSRules
from fedlib.safl.fedqs.strategy import STRATEGIES, FedQS, FedQSAvg, FedQSSGD, FedQSState

__all__ = [
    "SIMILARITY_REGISTRY", "Similarity", "mod1_similarity", "code_angle",
    "bias_ratio", "distance_mean", "distance_ratio", "per_label_spread", "momentum_rate",
    "Mod2Params", "Mod2Result", "mod2_adapt", "mod3_weights",
    "FedQSRules", "PAPER_RULES", "OFFICIAL_RULES", "RULES_BY_FIDELITY",
    "FedQSOptions", "FedQSSGDOptions", "FedQSState", "FedQS", "FedQSAvg", "FedQSSGD", "STRATEGIES",
]
