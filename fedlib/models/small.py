"""Small models: the UCI Adult FCN (FedQS §7 RWD task) and a cheap CNN for CPU-scale image runs.

``fcn`` — FedQS §7 [C]: ``Linear(11, 500) → ReLU → Dropout(0.3) → Linear(500, 2)`` on the 11
integer-encoded Adult features. 7,002 parameters. Stages: ``fc1`` (linear + ReLU + dropout),
``head``. Default split cut: ``fc1``.

``cnn`` — a fedlib model (not from either paper) for CPU-sized CIFAR-style runs: conv 3×3 32 →
ReLU → max-pool 2 → conv 3×3 64 → ReLU → max-pool 2 → adaptive average pool to 8×8 (the identity
at 32×32 input; averages 2×2 at 64×64) → flatten → linear 4096→128 → ReLU → linear 128→classes.
No normalisation layers, so it has no buffers and is cheap and stateless under ``torch.func.vmap``.
545,098 parameters for 10 classes. Stages: ``conv1, conv2, fc1, head``. Default cut: ``conv1``.

``cnn3`` — FedQS authors' SAFL-gap study [C] (their public code's small CIFAR CNN): three blocks
conv 3×3 (3→16, 16→32, 32→64, padding 1) → ReLU → max-pool 2, flatten (64·4·4 = 1,024 at 32×32),
dropout 0.3 → linear 1,024→500 → ReLU → dropout 0.3 → linear 500→classes. 541,094 parameters
for 10 classes. No normalisation layers (no buffers). The CV model of fedlib's ``cpu`` profiles.
Stages: ``conv1, conv2, conv3, fc1, head``. Default cut: ``conv1``. (The flatten follows the
third pool, so it needs 32×32 inputs; fedlib decision [D]: an adaptive max-pool to 4×4 in front
of the flatten keeps 64×64 inputs (Tiny-ImageNet) working and is the identity at 32×32.)
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


def cnn3(num_classes: int, in_channels: int = 3, hidden: int = 500, dropout: float = 0.3) -> StagedModel:
    """The FedQS SAFL-gap study's three-block CNN as a :class:`StagedModel` (module docstring)."""
    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))

    stages = OrderedDict(
        conv1=block(in_channels, 16),
        conv2=block(16, 32),
        conv3=block(32, 64),
        fc1=nn.Sequential(nn.AdaptiveMaxPool2d(4), nn.Flatten(), nn.Dropout(dropout), nn.Linear(64 * 16, hidden),
                          nn.ReLU()),
        head=nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, num_classes)),
    )
    return StagedModel(stages, arch="cnn3", default_cut="conv1")
