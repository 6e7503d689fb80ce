"""Every client's optimizer state at a lock-step, for the between-steps hook (SMoFi §2).

The engine calls ``hook(step, active, buffers)`` after lock-step ``step`` (0-based), where
``active[c]`` says whether client ``c`` (group order) took that step. ``buffers`` is an
:class:`OptimizerBuffers`: read with ``get(kind, name) -> Tensor[C, *shape]`` (all clients, in
group order; a finished client's row holds its final value), write with ``set(kind, name,
tensor[C, *shape], mask=None)`` (only rows where ``mask``, default ``active``, is true).

Kinds, as ``torch.optim`` names them: SGD ``"momentum_buffer"``; Adam/AdamW ``"exp_avg"`` and
``"exp_avg_sq"``. A row is *valid* once that client holds such a state, i.e. after its first step,
and for ``momentum_buffer`` only when its momentum is > 0 (``torch.optim.SGD`` keeps no buffer for
momentum 0). Invalid rows read as zeros and ignore writes — in both backends, so a hook sees and
changes exactly the same numbers whichever backend runs.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

__all__ = ["OptimizerBuffers", "KINDS"]

KINDS = {"sgd": ("momentum_buffer",), "adam": ("exp_avg", "exp_avg_sq"), "adamw": ("exp_avg", "exp_avg_sq")}


class OptimizerBuffers:
    """Client-stacked view of the optimizer state (see the module docstring).

    Attributes: ``param_names`` (trainable parameters, ``state_dict`` names and order),
    ``kinds`` (the state kinds present), ``active`` (``BoolTensor[C]`` of the current step).
    """

    param_names: tuple[str, ...]
    kinds: tuple[str, ...]
    active: Tensor

    def get(self, kind: str, name: str) -> Tensor:  # pragma: no cover - interface
        """``Tensor[C, *shape]`` of ``kind`` for parameter ``name``; treat it as read-only."""
        raise NotImplementedError

    def set(self, kind: str, name: str, value: Tensor, mask: Tensor | None = None) -> None:  # pragma: no cover
        """Write ``value[c]`` into client ``c``'s ``kind`` buffer of ``name`` where ``mask[c]``."""
        raise NotImplementedError

    def _check(self, kind: str, name: str) -> None:
        if kind not in self.kinds:
            raise KeyError(f"optimizer state kind {kind!r} not present; kinds: {self.kinds}")
        if name not in self._name_set:
            raise KeyError(f"{name!r} is not a trainable parameter name")

    def _rows(self, mask) -> Tensor:
        if mask is None:
            return self.active
        mask = torch.as_tensor(mask, dtype=torch.bool).cpu()
        if mask.shape != self.active.shape:
            raise ValueError(f"mask must have shape {tuple(self.active.shape)}, got {tuple(mask.shape)}")
        return mask


class LoopBuffers(OptimizerBuffers):
    """:class:`OptimizerBuffers` over one ``torch.optim`` optimizer per client (loop backend)."""

    def __init__(self, optimizers: Sequence[torch.optim.Optimizer], params: Sequence[dict],
                 param_names: Sequence[str], kinds: Sequence[str], active: Tensor,
                 momentum: Sequence[float] | None = None):
        self._opts = list(optimizers)
        self._momentum = list(momentum) if momentum is not None else None
        self._params = list(params)
        self.param_names = tuple(param_names)
        self._name_set = set(self.param_names)
        self.kinds = tuple(kinds)
        self.active = active

    def _state(self, c: int, kind: str, name: str):
        if kind == "momentum_buffer" and self._momentum is not None and self._momentum[c] == 0:
            return None  # torch.optim.SGD ignores a buffer when momentum is 0
        st = self._opts[c].state.get(self._params[c][name])
        if not st:
            return None
        return st.get(kind)

    def get(self, kind: str, name: str) -> Tensor:
        self._check(kind, name)
        rows = []
        for c in range(len(self._opts)):
            s = self._state(c, kind, name)
            rows.append(s.detach() if s is not None else torch.zeros_like(self._params[c][name].detach()))
        return torch.stack(rows)

    def set(self, kind: str, name: str, value: Tensor, mask: Tensor | None = None) -> None:
        self._check(kind, name)
        rows = self._rows(mask).tolist()
        for c, on in enumerate(rows):
            if on:
                s = self._state(c, kind, name)
                if s is not None:
                    s.copy_(value[c])


class StackedBuffers(OptimizerBuffers):
    """:class:`OptimizerBuffers` over the stacked backend's client-stacked state tensors."""

    def __init__(self, state: dict[str, dict[str, Tensor]], param_names: Sequence[str], valid: dict[str, Tensor],
                 active: Tensor):
        self.state = state  # kind -> name -> Tensor[C, ...]; replaced (not mutated) by set
        self.param_names = tuple(param_names)
        self._name_set = set(self.param_names)
        self.kinds = tuple(state)
        self._valid = valid  # kind -> BoolTensor[C] on the state's device
        self._all_valid = {k: bool(v.all()) for k, v in valid.items()}
        self.active = active

    def get(self, kind: str, name: str) -> Tensor:
        self._check(kind, name)
        t = self.state[kind][name]
        if self._all_valid[kind]:
            return t
        v = self._valid[kind].view(-1, *([1] * (t.dim() - 1)))
        return torch.where(v, t, torch.zeros((), dtype=t.dtype, device=t.device))

    def set(self, kind: str, name: str, value: Tensor, mask: Tensor | None = None) -> None:
        self._check(kind, name)
        t = self.state[kind][name]
        rows = self._rows(mask).to(t.device) & self._valid[kind]
        value = value.to(device=t.device, dtype=t.dtype)
        if value.shape != t.shape:
            value = value.expand_as(t)
        self.state[kind][name] = torch.where(rows.view(-1, *([1] * (t.dim() - 1))), value, t)
