"""DenseNet-121, CIFAR form (SMoFi §4: "DenseNet" among the architectures).

Huang et al. 2017 DenseNet-BC-121: growth rate k=32, dense blocks of (6, 12, 24, 16) bottleneck
layers (BN-ReLU-1×1 conv to 4k, BN-ReLU-3×3 conv to k, output concatenated to the input),
transition layers with compression 0.5 (BN-ReLU-1×1 conv, 2×2 average pool), a final BN-ReLU,
global average pooling and a linear classifier.

CIFAR adaptation (as in common CIFAR re-implementations): the 7×7 stride-2 stem convolution and
its max-pool are replaced by one 3×3 stride-1 convolution to 2k = 64 channels, so a 32×32 image
ends as a 4×4 map (64×64 as 8×8). 6,956,298 parameters for 10 classes.

Stages: ``stem, dense1, trans1, dense2, trans2, dense3, trans3, dense4, head`` (head = BN +
ReLU + pool + linear). Default split cut: ``dense1``.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

from fedlib.models._init import init_conv_bn
from fedlib.models.staged import StagedModel

DENSENET121_BLOCKS = (6, 12, 24, 16)


class DenseLayer(nn.Module):
    """Bottleneck layer: ``cat([x, conv3(relu(bn(conv1(relu(bn(x))))))])``."""

    def __init__(self, c_in: int, growth: int, bn_size: int = 4):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(c_in)
        self.conv1 = nn.Conv2d(c_in, bn_size * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(bn_size * growth)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(out)))
        return torch.cat([x, out], dim=1)


def densenet121(num_classes: int, in_channels: int = 3, growth: int = 32) -> StagedModel:
    """CIFAR DenseNet-121 as a :class:`StagedModel` (see the module docstring)."""
    c = 2 * growth
    stages: OrderedDict[str, nn.Module] = OrderedDict(
        stem=nn.Conv2d(in_channels, c, 3, padding=1, bias=False))
    for i, n in enumerate(DENSENET121_BLOCKS, start=1):
        layers = []
        for _ in range(n):
            layers.append(DenseLayer(c, growth))
            c += growth
        stages[f"dense{i}"] = nn.Sequential(*layers)
        if i < len(DENSENET121_BLOCKS):
            c_out = c // 2
            stages[f"trans{i}"] = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(),
                                                nn.Conv2d(c, c_out, 1, bias=False), nn.AvgPool2d(2))
            c = c_out
    stages["head"] = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                   nn.Linear(c, num_classes))
    model = StagedModel(stages, arch="densenet121", default_cut="dense1")
    init_conv_bn(model)
    return model
