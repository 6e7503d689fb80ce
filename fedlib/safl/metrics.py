"""SAFL convergence metrics (FedQS spec §7 "Metrics"): the shared implementations of
:mod:`fedlib.experiments.metrics`, re-exported under the name docs/CONTRACTS.md uses.

convergence accuracy = mean of the last 20 rounds; rounds to 95% (CV, NLP) / 98% (RWD) of it;
oscillations = rounds whose accuracy drops > 15 points; virtual / wall time to round T.
"""

from fedlib.experiments.metrics import (  # noqa: F401
    accuracy_scale,
    convergence_accuracy,
    oscillations,
    rounds_to_fraction,
    rounds_to_target,
    summarize,
    time_to_round,
)

__all__ = ["accuracy_scale", "convergence_accuracy", "oscillations", "rounds_to_fraction",
           "rounds_to_target", "summarize", "time_to_round"]
