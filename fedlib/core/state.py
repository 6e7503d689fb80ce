"""Model states (``name -> tensor`` dicts) and the arithmetic every paradigm shares.

A state is what ``nn.Module.state_dict()`` returns. Float entries are accumulated in float64 and
cast back; integer buffers (BatchNorm's ``num_batches_tracked``) are averaged and rounded.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError

__all__ = ["State", "float_keys", "clone_state", "zeros_like_state", "state_sub", "weighted_model_average",
           "apply_delta", "flatten", "unflatten"]

State = dict[str, Tensor]


def float_keys(state: State) -> list[str]:
    """Keys of the floating-point entries (parameters, BN running stats), in state order."""
    return [k for k, v in state.items() if torch.is_floating_point(v)]


def clone_state(state: State) -> State:
    return {k: v.detach().clone() for k, v in state.items()}


def zeros_like_state(state: State) -> State:
    return {k: torch.zeros_like(v) for k, v in state.items()}


def state_sub(a: State, b: State) -> State:
    """a − b entry-wise (integer entries stay integer)."""
    return {k: a[k] - b[k] for k in a}


def _weights(weights, n: int) -> Tensor:
    w = torch.as_tensor(weights, dtype=torch.float64).flatten()
    if w.numel() != n:
        raise FedlibError(f"{n} states but {w.numel()} weights")
    return w


def weighted_model_average(states: Sequence[State], weights=None) -> State:
    """Σ_i p_i · state_i with p = weights / Σ weights (uniform when ``weights`` is None).

    Weights are normalised here (idempotent for weights that already sum to 1). Float entries
    keep their dtype (accumulated in float64); integer buffers are averaged and rounded.
    """
    if not states:
        raise FedlibError("weighted_model_average needs at least one state")
    w = _weights(torch.ones(len(states)) if weights is None else weights, len(states))
    total = w.sum()
    if not torch.isfinite(total) or total <= 0:
        raise FedlibError(f"aggregation weights must have a positive finite sum, got {w.tolist()}")
    w = w / total
    out = {}
    for key, ref in states[0].items():
        stacked = torch.stack([s[key].to(torch.float64) for s in states])
        avg = torch.tensordot(w.to(stacked.device), stacked, dims=1)
        out[key] = avg.to(ref.dtype) if torch.is_floating_point(ref) else avg.round().to(ref.dtype)
    return out


def apply_delta(global_state: State, deltas: Sequence[State], weights=None, lr: float = 1.0) -> State:
    """w + lr · Σ_i weights_i · Δ_i  (weights used as given — NOT normalised; uniform 1/n if None).

    Integer buffers: w + round(lr · Σ weights_i Δ_i).
    """
    if not deltas:
        return clone_state(global_state)
    w = _weights(torch.full((len(deltas),), 1.0 / len(deltas)) if weights is None else weights, len(deltas))
    out = {}
    for key, g in global_state.items():
        stacked = torch.stack([d[key].to(torch.float64) for d in deltas])
        step = lr * torch.tensordot(w.to(stacked.device), stacked, dims=1)
        if torch.is_floating_point(g):
            out[key] = (g.to(torch.float64) + step).to(g.dtype)
        else:
            out[key] = g + step.round().to(g.dtype)
    return out


def flatten(state: State, keys: Sequence[str] | None = None) -> Tensor:
    """One float vector of the entries ``keys`` (default: all floating-point entries, in order)."""
    keys = float_keys(state) if keys is None else keys
    if not keys:
        return torch.zeros(0)
    return torch.cat([state[k].reshape(-1).to(torch.float32) for k in keys])


def unflatten(vector: Tensor, like: State, keys: Sequence[str] | None = None) -> State:
    """Inverse of :func:`flatten`: entries ``keys`` of ``like`` filled from ``vector``; the other
    entries are copied from ``like``."""
    keys = float_keys(like) if keys is None else keys
    out = clone_state(like)
    i = 0
    for k in keys:
        n = like[k].numel()
        out[k] = vector[i : i + n].reshape(like[k].shape).to(like[k].dtype)
        i += n
    if i != vector.numel():
        raise FedlibError(f"vector has {vector.numel()} entries, state needs {i}")
    return out
