"""Pieces both backends share: which state entries are trained, the client loss, start states,
the local-precision context."""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fedlib.core.errors import FedlibError

__all__ = ["StateLayout", "cross_entropy", "regularised_loss", "resolve_starts", "autocast", "check_precision",
           "AutocastForward", "upcast", "precision_wrap"]


@dataclass(frozen=True)
class StateLayout:
    """``state_dict`` keys split into trainable parameters and everything else (buffers, frozen)."""

    keys: tuple[str, ...]  # state_dict order
    params: tuple[str, ...]  # trainable (requires_grad) parameters, state_dict order
    others: tuple[str, ...]  # buffers and frozen parameters

    @classmethod
    def of(cls, model: nn.Module) -> "StateLayout":
        keys = tuple(model.state_dict().keys())
        trainable = {n for n, p in model.named_parameters() if p.requires_grad}
        params = tuple(k for k in keys if k in trainable)
        others = tuple(k for k in keys if k not in trainable)
        return cls(keys, params, others)


def cross_entropy(out: Tensor, y: Tensor) -> Tensor:
    """Mean cross-entropy; outputs with extra dimensions are flattened to ``(N, classes)``."""
    if out.dim() > 2:
        return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    return F.cross_entropy(out, y)


def regularised_loss(ce: Tensor, params, start, mu, l2) -> Tensor:
    """``ce + mu/2 Σ‖w − w_start‖² + l2/2 Σ‖w‖²`` (FedProx; FedNAR's L2-in-loss).

    ``params``/``start``: sequences of tensors (``start`` may be ``None`` when ``mu`` is unused);
    ``mu``/``l2``: numbers, 0-dim tensors, or ``None`` to leave the term out.
    """
    loss = ce
    if mu is not None:
        loss = loss + (mu / 2) * sum(((p - p0) ** 2).sum() for p, p0 in zip(params, start))
    if l2 is not None:
        loss = loss + (l2 / 2) * sum((p ** 2).sum() for p in params)
    return loss


def resolve_starts(model: nn.Module, starts, layout: StateLayout, device: torch.device) -> list[dict[str, Tensor]]:
    """``starts`` (``None``, one state dict, or a list of them) as a list of complete states on ``device``."""
    if starts is None:
        starts = [model.state_dict()]
    elif isinstance(starts, dict):
        starts = [starts]
    elif not isinstance(starts, (list, tuple)) or not starts:
        raise FedlibError(f"starts must be a state dict or a non-empty list of them, got {type(starts).__name__}",
                          "pass model.state_dict() or [state_0, state_1, ...]")
    ref = model.state_dict()
    out = []
    for j, s in enumerate(starts):
        if not isinstance(s, dict):
            raise FedlibError(f"starts[{j}] is a {type(s).__name__}, not a state dict")
        missing = [k for k in layout.keys if k not in s]
        if missing:
            raise FedlibError(f"starts[{j}] lacks state entries {missing[:5]}{' ...' if len(missing) > 5 else ''}",
                              "pass a full model.state_dict() (parameters and buffers)")
        state = {}
        for k in layout.keys:
            v = torch.as_tensor(s[k])
            if v.shape != ref[k].shape:
                raise FedlibError(f"starts[{j}][{k!r}] has shape {tuple(v.shape)}, the model expects "
                                  f"{tuple(ref[k].shape)}", "start states must come from the same architecture")
            state[k] = v.detach().to(device=device, dtype=ref[k].dtype)
        out.append(state)
    return out


# ----------------------------------------------------------------------------------- precision
def check_precision(precision: str, device) -> None:
    """Reject ``precision="bf16"`` on a device that cannot run bfloat16 autocast, before any work.

    CPU: always accepted (torch has bfloat16 kernels for every CPU) [D], with a warning when the
    CPU has neither AMX-BF16 nor AVX512-BF16 (:func:`cpu_has_native_bf16`): bfloat16 is then
    emulated, correct but slower than fp32 (measured 6.5x slower for cnn3 on an AVX2-only AMD
    EPYC, ``benchmarks/README.md``). CUDA: needs native bfloat16
    (``torch.cuda.is_bf16_supported(including_emulation=False)``, compute capability >= 8.0).
    Any other device type: needs torch's autocast for it.
    """
    if precision == "fp32":
        return
    dev = torch.device(device)
    if dev.type == "cuda":
        ok = torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)
    else:
        ok = dev.type == "cpu" or torch.amp.is_autocast_available(dev.type)
    if not ok:
        raise FedlibError(f"local.precision={precision!r} needs bfloat16 autocast, which device {dev} cannot run",
                          "use local.precision=fp32 on this device (or a GPU of compute capability >= 8.0)")
    if dev.type == "cpu" and not cpu_has_native_bf16():
        warnings.warn("local.precision='bf16' on a CPU without AMX-BF16 or AVX512-BF16: bfloat16 is emulated, "
                      "correct but slower than fp32 (use local.precision=fp32 here)", UserWarning, stacklevel=3)


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AMX-BF16 tiles or AVX512-BF16)."""
    probes = (getattr(torch.cpu, "_is_amx_tile_supported", None), getattr(torch.cpu, "_is_avx512_bf16_supported", None))
    return any(bool(p()) for p in probes if p is not None)


def autocast(precision: str, device):
    """The context the local forward pass and loss run in: nothing for ``"fp32"`` (so fp32 training
    is the exact code path it always was), ``torch.autocast(device.type, torch.bfloat16)`` for
    ``"bf16"``. The backward pass must run outside it (torch autocast docs)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16)


class AutocastForward(nn.Module):
    """``module``'s forward under :func:`autocast`, its output cast back to float32 (so a loss or a
    tensor sent across the split cut's backward sees float32). For the explicit split path,
    whose forward and backward are one call (``fedlib.models.split.split_forward_backward``)."""

    def __init__(self, module: nn.Module, precision: str, device):
        super().__init__()
        self.inner, self.precision, self.device = module, precision, torch.device(device)

    def forward(self, x: Tensor) -> Tensor:
        with autocast(self.precision, self.device):
            out = self.inner(x)
        return upcast(out)


def upcast(out: Tensor) -> Tensor:
    """Half-precision model outputs (autocast) as float32 for the loss; anything else unchanged
    (the very same tensor, so fp32 training is untouched)."""
    return out.float() if out.dtype in (torch.bfloat16, torch.float16) else out


def precision_wrap(module: nn.Module, precision: str, device) -> nn.Module:
    """``module`` itself for ``"fp32"`` (unchanged code path), else an :class:`AutocastForward`."""
    return module if precision == "fp32" else AutocastForward(module, precision, device)
