"""VGG-16 with BatchNorm, CIFAR form (SMoFi §4: "VGG" among the architectures).

Simonyan & Zisserman 2015 configuration D (13 3×3 convolutions: 64,64 | 128,128 | 256×3 |
512×3 | 512×3, each conv + BN + ReLU, 2×2 max-pool after every block). CIFAR adaptation (as in
the widely used CIFAR re-implementations): the three 4096-wide fully connected layers are replaced
by a single ``Linear(512, num_classes)`` after global average pooling. At 32×32 input the last
feature map is already 1×1 (the pooling is then the identity); at 64×64 it is 2×2 and is averaged.
14,728,266 parameters for 10 classes.

Stages: ``block1 … block5, head``. Default split cut: ``block1``.
"""

from __future__ import annotations

from collections import OrderedDict

from torch import nn

from fedlib.models._init import init_conv_bn
from fedlib.models.staged import StagedModel

VGG16_BLOCKS = ((64, 64), (128, 128), (256, 256, 256), (512, 512, 512), (512, 512, 512))


def vgg16(num_classes: int, in_channels: int = 3) -> StagedModel:
    """CIFAR VGG-16-BN as a :class:`StagedModel` (see the module docstring)."""
    stages: OrderedDict[str, nn.Module] = OrderedDict()
    c_in = in_channels
    for b, widths in enumerate(VGG16_BLOCKS, start=1):
        layers: list[nn.Module] = []
        for c_out in widths:
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]
            c_in = c_out
        layers.append(nn.MaxPool2d(2, 2))
        stages[f"block{b}"] = nn.Sequential(*layers)
    stages["head"] = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes))
    model = StagedModel(stages, arch="vgg16", default_cut="block1")
    init_conv_bn(model, linear_std=0.01)
    return model
