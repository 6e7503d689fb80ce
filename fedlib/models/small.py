"""Small models: the UCI Adult FCN (FedQS §7 RWD task) and a cheap CNN for CPU-scale image runs.

``fcn`` — FedQS §7 [C]: ``Linear(11, 500) → ReLU → Dropout(0.3) → Linear(500, 2)`` on the 11
integer-encoded Adult features. 7,002 parameters. Stages: ``fc1`` (linear + ReLU + dropout),
``head``. Default split cut: ``fc1``.

``cnn`` — a fedlib model (not from either paper) for CPU-sized CIFAR-style runs: conv 3×3 32 →
ReLU → max-pool 2 → conv 3×3 64 → ReLU → max-pool 2 → adaptive average pool to 8×8 (the identity
at 32×32 input; averages 2×2 at 64×64) → flatten → linear 4096→128 → ReLU → linear 128→classes.
No normalisation layers, so it has no buffers and is cheap and stateless under ``torch.func.vmap``.
545,098 parameters for 10 classes. Stages: ``conv1, conv2, fc1, head``. Default cut: ``conv1``.
"""

from __future__ import annotations

from collections import OrderedDict

from torch import nn

from fedlib.models.staged import StagedModel


def fcn(num_classes: int, in_features: int = 11, hidden: int = 500, dropout: float = 0.3
        ) -> StagedModel:
    """The FedQS Adult FCN as a :class:`StagedModel` (see the module docstring)."""
    stages = OrderedDict(
        fc1=nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Dropout(dropout)),
        head=nn.Linear(hidden, num_classes),
    )
    return StagedModel(stages, arch="fcn", default_cut="fc1")


def cnn(num_classes: int, in_channels: int = 3, width: int = 32, hidden: int = 128) -> StagedModel:
    """The small CPU-scale CNN as a :class:`StagedModel` (see the module docstring)."""
    stages = OrderedDict(
        conv1=nn.Sequential(nn.Conv2d(in_channels, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
        conv2=nn.Sequential(nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
        fc1=nn.Sequential(nn.AdaptiveAvgPool2d(8), nn.Flatten(), nn.Linear(2 * width * 64, hidden),
                          nn.ReLU()),
        head=nn.Linear(hidden, num_classes),
    )
    return StagedModel(stages, arch="cnn", default_cut="conv1")
