"""MobileNetV2, CIFAR form (SMoFi §4: "MobileNet" among the architectures).

Sandler et al. 2018: a 3×3 conv stem (32 channels), seven stages of inverted-residual blocks
(expansion t, width c, repeats n, stride s) = (1,16,1,1) (6,24,2,s2) (6,32,3,2) (6,64,4,2)
(6,96,3,1) (6,160,3,2) (6,320,1,1), a 1×1 conv to 1280 channels, global average pooling and a
linear classifier; BN after every convolution, ReLU6 activations, linear bottlenecks, identity
residual connection only when stride is 1 and widths match (no projection shortcuts); a t=1 block
has no expansion convolution.

CIFAR adaptation (as in common CIFAR re-implementations): the stem has stride 1 instead of 2 and
the second stage stride ``s2`` is 1 instead of 2, so a 32×32 image ends as a 4×4 map (total
stride 8; 64×64 ends as 8×8). The classifier dropout of the ImageNet model is omitted. Width
multiplier 1. 2,236,682 parameters for 10 classes (same as torchvision's ``mobilenet_v2`` with
10 classes: strides do not change the parameter count).

Stages: ``stem, stage1 … stage7, head`` (head = 1×1 conv 1280 + BN + ReLU6 + pool + linear).
Default split cut: ``stage2`` (the first stage with a residual connection).
"""

from __future__ import annotations

from collections import OrderedDict

from torch import nn

from fedlib.models._init import init_conv_bn
from fedlib.models.staged import StagedModel

# (expansion t, output channels c, repeats n, stride s) — the CIFAR strides.
MOBILENETV2_CFG = ((1, 16, 1, 1), (6, 24, 2, 1), (6, 32, 3, 2), (6, 64, 4, 2),
                   (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def _conv_bn(c_in: int, c_out: int, k: int, stride: int = 1, groups: int = 1, act: bool = True):
    layers: list[nn.Module] = [nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2,
                                         groups=groups, bias=False), nn.BatchNorm2d(c_out)]
    if act:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """1×1 expand (skipped when t=1) → 3×3 depthwise (stride) → 1×1 linear projection (+ x)."""

    def __init__(self, c_in: int, c_out: int, stride: int, expansion: int):
        super().__init__()
        hidden = c_in * expansion
        layers: list[nn.Module] = []
        if expansion != 1:
            layers.append(_conv_bn(c_in, hidden, 1))
        layers.append(_conv_bn(hidden, hidden, 3, stride=stride, groups=hidden))
        layers.append(_conv_bn(hidden, c_out, 1, act=False))
        self.conv = nn.Sequential(*layers)
        self.use_residual = stride == 1 and c_in == c_out

    def forward(self, x):
        out = self.conv(x)
        return x + out if self.use_residual else out


def mobilenetv2(num_classes: int, in_channels: int = 3) -> StagedModel:
    """CIFAR MobileNetV2 as a :class:`StagedModel` (see the module docstring)."""
    stages: OrderedDict[str, nn.Module] = OrderedDict(stem=_conv_bn(in_channels, 32, 3, stride=1))
    c_in = 32
    for i, (t, c, n, s) in enumerate(MOBILENETV2_CFG, start=1):
        blocks = []
        for j in range(n):
            blocks.append(InvertedResidual(c_in, c, s if j == 0 else 1, t))
            c_in = c
        stages[f"stage{i}"] = nn.Sequential(*blocks)
    stages["head"] = nn.Sequential(_conv_bn(c_in, 1280, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                   nn.Linear(1280, num_classes))
    model = StagedModel(stages, arch="mobilenetv2", default_cut="stage2")
    init_conv_bn(model, linear_std=0.01)
    return model
