"""Server optimizers on a pseudo-gradient ``d`` (one per parameter entry), shared by both paradigms.

- :class:`ServerMomentum` — heavy-ball buffer ``v ← β v + d`` (FedAvgM, Hsu et al. 2019; SlowMo,
  Wang et al. 2020, Alg. 1), the first step ``v = d``;
- :class:`ServerAdam` — Adam / AMSGrad moments and the normalised step ``m / (√v̂ + ε)`` (FADAS,
  FedAC; optionally with the look-ahead numerator ``β₁ m + (1 − β₁) d``).

Both keep their buffers in the dtype of ``d`` (callers pass float64) and round-trip through
``state_dict`` for crash-resume.
"""

from __future__ import annotations

import torch

from fedlib.core.state import State

__all__ = ["ServerMomentum", "ServerAdam"]


def _copy(state: State) -> State:
    return {k: v.clone() for k, v in state.items()}


class ServerMomentum:
    """Heavy-ball momentum buffer over the pseudo-gradient: ``v ← β v + d`` (``v = d`` at first)."""

    def __init__(self, beta: float):
        self.beta = float(beta)
        self.buffer: State = {}

    def step(self, key: str, d: torch.Tensor) -> torch.Tensor:
        """The new buffer of entry ``key`` after seeing ``d``."""
        v = d if key not in self.buffer else self.beta * self.buffer[key] + d
        self.buffer[key] = v
        return v

    def state_dict(self) -> dict:
        return {"buffer": _copy(self.buffer)}

    def load_state_dict(self, state: dict) -> None:
        self.buffer = _copy(state.get("buffer", {}))


class ServerAdam:
    """Adam/AMSGrad moments ``m, v, v_max`` over the parameters and the normalised step."""

    def __init__(self):
        self.m: State | None = None
        self.v: State | None = None
        self.vmax: State | None = None

    def step(self, mean: State, keys, beta1, beta2, amsgrad=False, nesterov=False, eps=1e-8) -> State:
        """``m/(√v̂ + ε)`` for ``keys`` (v̂ = v_max under AMSGrad; numerator β₁m + (1−β₁)d if nesterov)."""
        if self.m is None:
            self.m = {k: torch.zeros_like(mean[k]) for k in keys}
            self.v = {k: torch.zeros_like(mean[k]) for k in keys}
            self.vmax = {k: torch.zeros_like(mean[k]) for k in keys}
        out = {}
        for k in keys:
            d = mean[k]
            self.m[k] = beta1 * self.m[k] + (1 - beta1) * d
            self.v[k] = beta2 * self.v[k] + (1 - beta2) * d * d
            self.vmax[k] = torch.maximum(self.vmax[k], self.v[k])
            denom = (self.vmax[k] if amsgrad else self.v[k]).sqrt() + eps
            num = beta1 * self.m[k] + (1 - beta1) * d if nesterov else self.m[k]
            out[k] = num / denom
        return out

    def scaled_step(self, mean: State, keys, lr: float, beta1, beta2, **kw) -> State:
        """``mean`` with the entries ``keys`` replaced by ``lr · step(...)`` (the other entries, e.g.
        BatchNorm buffers, keep the plain mean)."""
        adam = self.step(mean, keys, beta1, beta2, **kw)
        return {**mean, **{k: lr * adam[k] for k in keys}}

    def state_dict(self) -> dict:
        if self.m is None:
            return {}
        return {"m": _copy(self.m), "v": _copy(self.v), "vmax": _copy(self.vmax)}

    def load_state_dict(self, state: dict) -> None:
        if state:
            self.m, self.v, self.vmax = (_copy(state[x]) for x in ("m", "v", "vmax"))
