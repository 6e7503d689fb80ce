"""``torch.optim`` SGD / Adam / AdamW, written on client-stacked tensors with per-client settings.

Each function updates a ``[c, *shape]`` parameter from its ``[c, *shape]`` gradient, with every
hyper-parameter a ``[c]`` tensor broadcast over the client dimension, following the single-tensor
code of ``torch.optim`` operation by operation (so the stacked backend equals the loop backend to
float rounding):

* SGD (dampening 0): ``d = g + wd·w``; ``buf = μ·buf + d`` (a zero-initialised buffer makes the
  first step ``buf = d``, as ``torch.optim`` does); ``d = d + μ·buf`` (Nesterov) or ``d = buf``;
  ``w = w − lr·d``. Momentum-0 clients in a group with momentum: ``buf = d``, update ``d`` —
  exactly plain SGD.
* Adam: ``t += 1``; ``d = g + wd·w`` (AdamW instead ``w = w·(1 − lr·wd)``); ``m = lerp(m, d, 1−β1)``;
  ``v = β2·v + (1−β2)·d²``; ``w = w − lr/(1−β1^t) · m / (√v / √(1−β2^t) + eps)`` with the bias
  corrections computed in float64 as ``torch.optim`` does in Python.

The stacked backend drives these through one :class:`StackedOptimizer` per group, chosen once from
``LocalConfig.optimizer`` (:func:`stacked_optimizer`): it knows which state kinds its
``torch.optim`` counterpart keeps (buffers.py ``KINDS``), how that state starts and which rows of it
are valid, and applies the step to every parameter of a group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor

__all__ = ["Hyper", "clip_by_total_norm", "sgd_step", "adam_step", "StackedOptimizer", "StackedSGD",
           "StackedAdam", "StackedAdamW", "stacked_optimizer"]


def _b(t: Tensor, ndim: int) -> Tensor:
    """``[c]`` → ``[c, 1, ..., 1]`` to broadcast against a ``[c, *shape]`` tensor of ``ndim`` dims."""
    return t.view(-1, *([1] * (ndim - 1)))


@dataclass
class Hyper:
    """Per-client hyper-parameters as ``[c]`` tensors, plus which optional terms any client uses."""

    lr: Tensor
    momentum: Tensor
    nesterov: Tensor
    weight_decay: Tensor
    clip: Tensor  # +inf where a client does not clip
    prox_mu: Tensor
    l2: Tensor
    beta1: Tensor  # float64
    beta2: Tensor  # float64
    eps: Tensor
    lr64: Tensor  # float64
    wd64: Tensor  # float64
    any_momentum: bool
    any_nesterov: bool
    any_wd: bool
    any_clip: bool
    any_prox: bool
    any_l2: bool

    @classmethod
    def of(cls, configs, dtype: torch.dtype, device) -> "Hyper":
        def t(values, dt=dtype):
            return torch.tensor(values, dtype=dt, device=device)

        return cls(
            lr=t([c.lr for c in configs]),
            momentum=t([c.momentum for c in configs]),
            nesterov=t([c.nesterov for c in configs], torch.bool),
            weight_decay=t([c.weight_decay for c in configs]),
            clip=t([float("inf") if c.clip_norm is None else c.clip_norm for c in configs]),
            prox_mu=t([c.prox_mu for c in configs]),
            l2=t([c.l2_in_loss for c in configs]),
            beta1=t([c.betas[0] for c in configs], torch.float64),
            beta2=t([c.betas[1] for c in configs], torch.float64),
            eps=t([c.eps for c in configs]),
            lr64=t([c.lr for c in configs], torch.float64),
            wd64=t([c.weight_decay for c in configs], torch.float64),
            any_momentum=any(c.momentum != 0 for c in configs),
            any_nesterov=any(c.nesterov for c in configs),
            any_wd=any(c.weight_decay != 0 for c in configs),
            any_clip=any(c.clip_norm is not None for c in configs),
            any_prox=any(c.prox_mu != 0 for c in configs),
            any_l2=any(c.l2_in_loss != 0 for c in configs),
        )

    def take(self, idx: Tensor | None) -> "Hyper":
        """The rows ``idx`` (all when ``None``); the ``any_*`` flags stay those of the whole group."""
        if idx is None:
            return self
        kw = {k: (v.index_select(0, idx) if isinstance(v, Tensor) else v) for k, v in self.__dict__.items()}
        return Hyper(**kw)


def clip_by_total_norm(grads: list[Tensor], max_norm: Tensor) -> list[Tensor]:
    """Per-client ``clip_grad_norm_``: scale client ``c``'s gradients by min(1, max_norm/(‖g_c‖ + 1e-6))."""
    c = grads[0].shape[0]
    norms = torch.stack([torch.linalg.vector_norm(g.reshape(c, -1), 2, dim=1) for g in grads], dim=1)
    total = torch.linalg.vector_norm(norms, 2, dim=1)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    return [g * _b(coef, g.dim()) for g in grads]


def sgd_step(p: Tensor, g: Tensor, buf: Tensor | None, h: Hyper) -> tuple[Tensor, Tensor | None]:
    """One ``torch.optim.SGD`` step on stacked tensors; returns ``(new_p, new_buf)``."""
    n = p.dim()
    d = g + _b(h.weight_decay, n) * p if h.any_wd else g
    if buf is not None:
        mom = _b(h.momentum, n)
        buf = mom * buf + d
        if h.any_nesterov:
            d = torch.where(_b(h.nesterov, n), d + mom * buf, buf)
        else:
            d = buf
    return p - _b(h.lr, n) * d, buf


def adam_step(p: Tensor, g: Tensor, m: Tensor, v: Tensor, step: Tensor, h: Hyper, decoupled: bool
              ) -> tuple[Tensor, Tensor, Tensor]:
    """One ``torch.optim.Adam``/``AdamW`` step on stacked tensors (``step``: the new step count, ``[c]``
    float64); returns ``(new_p, new_exp_avg, new_exp_avg_sq)``."""
    n = p.dtype
    nd = p.dim()
    d = g
    if h.any_wd:
        if decoupled:
            p = p * _b((1 - h.lr64 * h.wd64).to(n), nd)
        else:
            d = g + _b(h.weight_decay, nd) * p
    m = torch.lerp(m, d, _b((1 - h.beta1).to(n), nd))
    v = _b(h.beta2.to(n), nd) * v + _b((1 - h.beta2).to(n), nd) * (d * d)
    bc1 = 1 - h.beta1 ** step
    bc2_sqrt = (1 - h.beta2 ** step).sqrt()
    step_size = (h.lr64 / bc1).to(n)
    denom = v.sqrt() / _b(bc2_sqrt.to(n), nd) + _b(h.eps, nd)
    return p - _b(step_size, nd) * (m / denom), m, v


# ---------------------------------------------------------------------------- optimizer objects
State = dict[str, dict[str, Tensor]]  # kind -> parameter name -> Tensor[c, *shape]


class StackedOptimizer:
    """One ``torch.optim`` optimizer kind over a client-stacked group (stateless: the state is the
    ``{kind: {name: Tensor[C, ...]}}`` dict that :meth:`init` makes and :meth:`step` returns)."""

    kinds: tuple[str, ...] = ()
    counts_steps = False  # whether the result's opt_state records "step" (Adam's t)

    def init(self, params: dict[str, Tensor], h: Hyper, hook) -> State:
        """Zero state for the stacked ``params`` (``hook``: a between-steps hook will look at it)."""
        return {kind: {k: torch.zeros_like(v) for k, v in params.items()} for kind in self.kinds}

    def start_steps(self, tasks) -> list[float]:
        """Each client's step count before its first step."""
        return [0.0] * len(tasks)

    def step(self, params: dict[str, Tensor], grads, names, state: State, sel: Callable[[Tensor], Tensor],
             step_count: Tensor, h: Hyper) -> tuple[dict[str, Tensor], State]:
        """One step of the rows ``sel`` picks: ``(new params, new state)``; ``params``/``grads`` are
        already those rows, ``state``/``step_count`` are full and read through ``sel``."""
        raise NotImplementedError

    def valid_rows(self, held: Tensor, momentum_positive: Tensor) -> Tensor:
        """Rows whose state exists in ``torch.optim`` (``held``: stepped or carried in)."""
        return held

    def keeps_row(self, steps: int, momentum_positive: bool) -> bool:
        """Whether a client's final state is part of its result."""
        return bool(steps)


class StackedSGD(StackedOptimizer):
    """``torch.optim.SGD`` (momentum / Nesterov / weight decay as :func:`sgd_step`)."""

    kinds = ("momentum_buffer",)

    def init(self, params, h, hook):
        """Buffers only where ``torch.optim`` would keep them (or a hook may look)."""
        return super().init(params, h, hook) if (h.any_momentum or hook is not None) else {}

    def step(self, params, grads, names, state, sel, step_count, h):
        new_p, new_state = {}, {kind: {} for kind in state}
        for k, g in zip(names, grads):
            buf = sel(state["momentum_buffer"][k]) if state else None
            new_p[k], buf = sgd_step(params[k], g, buf, h)
            if state:
                new_state["momentum_buffer"][k] = buf
        return new_p, new_state

    def valid_rows(self, held, momentum_positive):
        """``torch.optim.SGD`` keeps no buffer for momentum 0."""
        return held & momentum_positive

    def keeps_row(self, steps, momentum_positive):
        return bool(steps) and momentum_positive


class StackedAdam(StackedOptimizer):
    """``torch.optim.Adam`` (:func:`adam_step`, L2 weight decay)."""

    kinds = ("exp_avg", "exp_avg_sq")
    counts_steps = True
    decoupled = False

    def start_steps(self, tasks):
        return [float((t.init_opt_state or {}).get("step", 0)) for t in tasks]

    def step(self, params, grads, names, state, sel, step_count, h):
        new_p, new_state = {}, {kind: {} for kind in state}
        step = sel(step_count) + 1
        for k, g in zip(names, grads):
            new_p[k], m, v = adam_step(params[k], g, sel(state["exp_avg"][k]), sel(state["exp_avg_sq"][k]),
                                       step, h, self.decoupled)
            new_state["exp_avg"][k], new_state["exp_avg_sq"][k] = m, v
        return new_p, new_state


class StackedAdamW(StackedAdam):
    """``torch.optim.AdamW``: Adam with decoupled weight decay."""

    decoupled = True


_OPTIMIZERS = {"sgd": StackedSGD(), "adam": StackedAdam(), "adamw": StackedAdamW()}


def stacked_optimizer(name: str) -> StackedOptimizer:
    """The optimizer object of ``LocalConfig.optimizer`` (one of ``config.OPTIMIZERS``)."""
    return _OPTIMIZERS[name]
