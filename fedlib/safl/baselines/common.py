"""Helpers shared by the SAFL baselines (spec fedqs.md §6): parameter selection, float64
vectors and cosines, per-update weights, and the float64 server step w + lr·step (integer
buffers get the rounded step, spec §5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from fedlib.core.errors import check
from fedlib.safl.strategy import SimContext, State, Update, float_keys

__all__ = ["ServerLrOptions", "WEIGHTINGS", "param_keys", "as_vector", "cosine", "update_weights", "mean_delta", "add_step"]


@dataclass
class ServerLrOptions:
    """The options of a plain delta-averaging server: ``server_lr`` η_g in w ← w + η_g · Σ p_j Δ_j (1 in
    the papers); FedBuff, DeFedAvg."""

    server_lr: float = 1.0

    def __post_init__(self):
        check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

WEIGHTINGS = ("uniform", "samples")


def param_keys(state: State, ctx: SimContext | None) -> list[str]:
    """Floating-point entries of ``state`` that are trainable parameters of ``ctx.model``
    (all floating-point entries when the context has no model)."""
    keys = float_keys(state)
    model = getattr(ctx, "model", None) if ctx is not None else None
    if model is None:
        return keys
    names = {n for n, _ in model.named_parameters()}
    return [k for k in keys if k in names]


def as_vector(state: State, keys: Sequence[str]) -> torch.Tensor:
    """The entries ``keys`` of ``state`` flattened into one float64 vector."""
    if not keys:
        return torch.zeros(0, dtype=torch.float64)
    return torch.cat([state[k].reshape(-1).to(torch.float64) for k in keys])


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """cos(a, b); NaN when either vector is zero."""
    na, nb = float(a.norm()), float(b.norm())
    if na == 0.0 or nb == 0.0:
        return float("nan")
    return float(torch.dot(a, b) / (na * nb))


def update_weights(updates: list[Update], how: str) -> torch.Tensor:
    """p_j = 1/K (``"uniform"``) or n_j / Σ n (``"samples"``; uniform if every n_j is 0)."""
    if how == "samples":
        w = torch.tensor([float(u.num_samples) for u in updates], dtype=torch.float64)
        if float(w.sum()) > 0:
            return w / w.sum()
    return torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64)


def mean_delta(updates: list[Update], weights=None) -> State:
    """Σ_j w_j Δ_j in float64 for every entry (uniform 1/K when ``weights`` is None)."""
    w = torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64) if weights is None \
        else torch.as_tensor(weights, dtype=torch.float64)
    out = {}
    for key in updates[0].delta:
        stacked = torch.stack([u.delta[key].to(torch.float64) for u in updates])
        out[key] = torch.tensordot(w.to(stacked.device), stacked, dims=1)
    return out


def add_step(global_state: State, step: State, lr: float = 1.0) -> State:
    """w + lr·step (float64 step; integer entries get the rounded step)."""
    out = {}
    for key, g in global_state.items():
        s = lr * step[key]
        out[key] = (g.to(torch.float64) + s).to(g.dtype) if torch.is_floating_point(g) \
            else g + s.round().to(g.dtype)
    return out

