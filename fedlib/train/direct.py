"""Client-stacked forward without ``vmap`` for plain feed-forward models (the Adult FCN).

``torch.func.vmap``'s batching of ``F.linear`` with a batched weight costs ~3x a plain
``torch.baddbmm`` on CPU for the FCN's shapes, and that overhead is most of an FCN step. For a
model made only of ``nn.Sequential``, ``nn.Linear``, elementwise activations, ``nn.Identity``,
``nn.Flatten`` and the engine's :class:`~fedlib.train.stream.MaskDropout`, the stacked backend
therefore evaluates every client at once with batched matmuls written out here: the same
operations a per-client forward performs, on ``[C, ...]`` tensors. Any other model goes through
``vmap(functional_call)``. Equality with the loop backend is what the engine tests check.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fedlib.train.common import upcast
from fedlib.train.stream import MaskDropout

__all__ = ["supports_direct", "direct_losses"]

_ELEMENTWISE = (nn.ReLU, nn.LeakyReLU, nn.ELU, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid, nn.Softplus, nn.Hardtanh)


class _StackedLinear(torch.autograd.Function):
    """``y[c] = x[c] @ w[c]ᵀ + b[c]`` for every client c, with a backward that picks the fast
    matmul layout: MKL's batched GEMM is ~6x slower when the output's last dimension is tiny
    (the FCN's 500x11 and 500x2 weight gradients), so the weight gradient is computed in the
    orientation whose last dimension is the larger one (then transposed)."""

    @staticmethod
    def forward(ctx, x, w, b):
        dev = x.device.type
        if torch.is_autocast_enabled(dev):  # local.precision=bf16: cast here so the backward
            dt = torch.get_autocast_dtype(dev)  # (run outside autocast) sees the same dtypes
            x, w, b = x.to(dt), w.to(dt), (None if b is None else b.to(dt))
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        wt = w.transpose(1, 2)
        return torch.bmm(x, wt) if b is None else torch.baddbmm(b.unsqueeze(1), x, wt)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = torch.bmm(g, w) if ctx.needs_input_grad[0] else None
        if w.shape[1] >= w.shape[2]:  # out >= in: compute [C, in, out], hand back its transpose
            gw = torch.bmm(x.transpose(1, 2), g).transpose(1, 2)
        else:
            gw = torch.bmm(g.transpose(1, 2), x)
        gb = g.sum(1) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return gx, gw, gb


def supports_direct(model: nn.Module) -> bool:
    """Whether every module of ``model`` has a client-stacked rule here (and it has no buffers)."""
    if any(True for _ in model.buffers()):
        return False
    for m in model.modules():
        if isinstance(m, nn.Sequential) and type(m).forward is nn.Sequential.forward:
            continue
        if type(m) is nn.Linear or type(m) is nn.Identity or isinstance(m, MaskDropout):
            continue
        if type(m) in _ELEMENTWISE:
            continue
        if type(m) is nn.Flatten and m.start_dim == 1 and m.end_dim == -1:
            continue
        return False
    return True


def _forward(module: nn.Module, prefix: str, params: dict[str, Tensor], x: Tensor, masks: list, pos: list) -> Tensor:
    if isinstance(module, nn.Sequential):
        for name, child in module.named_children():
            x = _forward(child, f"{prefix}{name}.", params, x, masks, pos)
        return x
    if isinstance(module, nn.Linear):
        w = params[f"{prefix}weight"]  # [C, out, in]
        c, n_in = x.shape[0], x.shape[-1]
        lead = x.shape[1:-1]
        out = _StackedLinear.apply(x.reshape(c, -1, n_in), w, params.get(f"{prefix}bias"))
        return out.reshape(c, *lead, w.shape[1])
    if isinstance(module, MaskDropout):
        if not module.training or module.p == 0.0:
            return x
        m = masks[pos[0]]
        pos[0] += 1
        return x * m
    if isinstance(module, nn.Flatten):
        return x.flatten(2)
    return module(x)  # identity and elementwise activations act on any shape


def direct_losses(template: nn.Module, pnames, params: dict[str, Tensor], x: Tensor, y: Tensor, masks: list,
                  p0: dict | None, mu: Tensor | None, l2: Tensor | None) -> tuple[Tensor, Tensor]:
    """Per-client (regularised loss, cross-entropy), ``[C]`` each, for batches ``x [C, B, ...]``."""
    out = upcast(_forward(template, "", params, x, masks, [0]))
    c, k = out.shape[0], out.shape[-1]
    ce = F.cross_entropy(out.reshape(-1, k), y.reshape(-1), reduction="none").view(c, -1).mean(1)
    loss = ce
    if mu is not None:
        loss = loss + (mu / 2) * sum(((params[n] - p0[n]) ** 2).reshape(c, -1).sum(1) for n in pnames)
    if l2 is not None:
        loss = loss + (l2 / 2) * sum((params[n] ** 2).reshape(c, -1).sum(1) for n in pnames)
    return loss, ce
