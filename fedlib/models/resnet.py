"""ResNet-18, CIFAR form (FedQS §7 CV task; SMoFi §4 default architecture).

He et al. 2016 BasicBlock ResNet-18 adapted to 32×32 inputs the usual way: a 3×3 stride-1 stem
convolution with 64 channels, BatchNorm, ReLU and **no** max-pool, then four stages of two
BasicBlocks (64, 128, 256, 512 channels; stride 2 at the first block of stages 2–4, 1×1
convolution + BN projection shortcuts where the shape changes), global average pooling and a
linear classifier. 11,173,962 parameters for 10 classes. Global *adaptive* average pooling makes
it work unchanged on 64×64 Tiny-ImageNet images (8×8 final feature map).

Stages (cut after any but the last): ``stem, layer1, layer2, layer3, layer4, head``.
Default split cut: ``layer1`` (SMoFi §4 [D]: after the first residual stage).
"""

from __future__ import annotations

from collections import OrderedDict

import torch.nn.functional as F
from torch import nn

from fedlib.models._init import init_conv_bn
from fedlib.models.staged import StagedModel


class BasicBlock(nn.Module):
    """Two 3×3 conv-BN layers plus a shortcut; ReLU after the sum. No in-place operations."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


def _stage(in_planes: int, planes: int, blocks: int, stride: int) -> nn.Sequential:
    layers = [BasicBlock(in_planes, planes, stride)]
    layers += [BasicBlock(planes, planes, 1) for _ in range(blocks - 1)]
    return nn.Sequential(*layers)


def resnet18(num_classes: int, in_channels: int = 3) -> StagedModel:
    """CIFAR ResNet-18 as a :class:`StagedModel` (see the module docstring)."""
    stages = OrderedDict(
        stem=nn.Sequential(nn.Conv2d(in_channels, 64, 3, stride=1, padding=1, bias=False),
                           nn.BatchNorm2d(64), nn.ReLU()),
        layer1=_stage(64, 64, 2, 1),
        layer2=_stage(64, 128, 2, 2),
        layer3=_stage(128, 256, 2, 2),
        layer4=_stage(256, 512, 2, 2),
        head=nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)),
    )
    model = StagedModel(stages, arch="resnet18", default_cut="layer1")
    init_conv_bn(model)
    return model
