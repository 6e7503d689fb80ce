"""Weight initialisation shared by the convolutional models (torchvision's conventions)."""

from __future__ import annotations

from torch import nn


def init_conv_bn(model: nn.Module, linear_std: float | None = None) -> None:
    """Kaiming-normal (fan_out, ReLU) convolutions with zero bias, BatchNorm weight 1 / bias 0.

    ``linear_std``: if given, linear layers get N(0, linear_std²) weights and zero bias (VGG);
    otherwise they keep PyTorch's default init. Uses the global torch RNG in module order, so a
    fixed ``torch.manual_seed`` (or ``build_model(..., seed=)``) gives identical weights.
    """
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear) and linear_std is not None:
            nn.init.normal_(m.weight, 0.0, linear_std)
            nn.init.zeros_(m.bias)
