"""SMoFi: step-wise momentum fusion of the server-side surrogate optimizers (spec §2).

Paper: Yang, Zhu, Wang, Yang, *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on
Heterogeneous Data*, AAAI 2026 (arXiv 2511.09828), "Step-wise Momentum Alignment" and
"Staleness Factor".

After every lock-step τ of a round the server replaces the momentum buffer of every *active*
surrogate optimizer by one fused buffer::

    m̄^{τ+1} = ( Σ_{j active} m_{s,j}^{τ+1} + Σ_{h finished} s_α(τ, h) · m_h^{final} ) / |J^n|
    s_α(τ, h) = (τ − |T_h| + 1)^α,   α < 0  (default −0.1)

Step indexing used throughout fedlib (a fedlib decision, the paper leaves it implicit):

* the lock-steps of a round are numbered τ = 0, 1, 2, …; step τ turns m^{τ} into m^{τ+1};
* client j takes the steps τ = 0 … |T_j| − 1, so it is *active* at step τ iff τ < |T_j|; its
  last step produces m_j^{|T_j|} =: m_j^{final};
* client h is *finished* at step τ iff τ ≥ |T_h|; its age is then τ − |T_h| + 1 ≥ 1, so its
  weight is exactly 1 at the first step after it finished (τ = |T_h|) and decays polynomially
  afterwards: 1, 2^α, 3^α, …  (every weight lies in (0, 1]);
* m_h^{final} is the client's *own* momentum after its last step (before that step's fusion
  overwrote it) [D] — the signal it contributed while active, not the fused buffer.

The mean is over |J^n| signals (all selected clients), not renormalised by the weights [D];
``renormalise=True`` divides by Σ weights instead. With no finished client the fusion of the
SGD form ``m_j = β m̄ + g_j`` gives ``m̄^{τ+1} = β m̄^τ + mean_j g_j`` — a global momentum of the
mean server gradient (spec §2, tested).

Which buffer is fused [D, spec §2]: the first moment — SGD ``momentum_buffer`` (heavy-ball and
Nesterov alike), Adam/AdamW ``exp_avg``; Adam's ``exp_avg_sq`` stays per surrogate unless
``fuse_second_moment``. Only server-part buffers are touched: the client-side optimizers are left
alone ("client-transparent").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import torch
from torch import Tensor

from fedlib.errors import FedlibError, check

__all__ = [
    "SMoFiOptions",
    "SMoFiHook",
    "fuse_momentum",
    "fusion_weights",
    "staleness_weight",
    "validate_alpha",
    "first_moment_kind",
]


def validate_alpha(alpha: float) -> float:
    """SMoFi's staleness exponent must be negative (older momentum weighs less)."""
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise FedlibError(f"SMoFi alpha must be a number, got {alpha!r}",
                          "use a negative number, e.g. alpha=-0.1 (the paper's default)") from None
    if not alpha < 0:  # also rejects NaN
        raise FedlibError(
            f"SMoFi staleness exponent alpha={alpha} must be < 0 "
            "(s_α = (τ − |T_h| + 1)^α has to decrease with the age of a finished client's momentum)",
            "use a negative alpha, e.g. alpha=-0.1 (the paper's default)",
        )
    return alpha


def staleness_weight(tau, finished_steps, alpha: float = -0.1) -> Tensor:
    """s_α(τ, h) = (τ − |T_h| + 1)^α for clients that finished after ``finished_steps`` = |T_h| steps.

    ``tau`` is the 0-based lock-step index (see the module docstring); a client with
    ``finished_steps <= tau`` is finished and has age ``tau - finished_steps + 1 >= 1``. Entries of
    clients that are not finished yet (age < 1) get weight 1 — they are active and contribute
    their current momentum in full. Returns a float tensor shaped like ``finished_steps``.
    """
    alpha = validate_alpha(alpha)
    steps = torch.as_tensor(finished_steps)
    age = (torch.as_tensor(tau, dtype=torch.float64) - steps.to(torch.float64) + 1.0).clamp_min(1.0)
    return age.pow(alpha)


def fusion_weights(active_mask: Tensor, finished_steps, tau, alpha: float = -0.1,
                   n_selected: int | None = None, renormalise: bool = False) -> Tensor:
    """The per-client coefficients c_j of m̄ = Σ_j c_j · m_j (spec §2), shape [C], float64.

    c_j = 1/|J^n| for an active client, s_α(τ, j)/|J^n| for a finished one (``renormalise``:
    divide by Σ weights instead of |J^n|).
    """
    active_mask = torch.as_tensor(active_mask, dtype=torch.bool)
    c = active_mask.numel()
    n = c if n_selected is None else int(n_selected)
    check(n >= c, f"n_selected={n} is smaller than the {c} clients given to the fusion",
          "pass the number of selected clients |J^n| (at least the stacked clients)")
    w = torch.where(active_mask, torch.ones((), dtype=torch.float64),
                    staleness_weight(tau, finished_steps, alpha))
    denom = w.sum() if renormalise else torch.tensor(float(n), dtype=torch.float64)
    return w / denom


def fuse_momentum(active_buffers: Tensor, active_mask: Tensor, final_buffers: Tensor,
                  finished_steps, tau, alpha: float = -0.1, n_selected: int | None = None,
                  renormalise: bool = False) -> Tensor:
    """The fused server momentum m̄^{τ+1} of spec §2, from stacked per-client buffers.

    Parameters
    ----------
    active_buffers:
        ``[C, ...]`` the clients' momentum after step ``tau`` (rows of finished clients ignored).
    active_mask:
        ``[C]`` bool, True for clients that took step ``tau`` (τ < |T_j|).
    final_buffers:
        ``[C, ...]`` finished clients' final momentum m_h^{final} (rows of active clients ignored).
    finished_steps:
        ``[C]`` |T_h|, the number of steps each finished client took (ignored for active ones).
    tau:
        0-based index of the lock-step just taken.
    alpha:
        staleness exponent, < 0.
    n_selected:
        |J^n|, the denominator (default C).
    renormalise:
        divide by Σ weights instead of |J^n| [D: off, as the paper's plain mean].

    Returns ``Tensor[...]``: m̄^{τ+1} = (Σ_active m_j + Σ_finished s_α(τ,h) m_h^{final}) / |J^n|.
    """
    check(active_buffers.shape == final_buffers.shape,
          f"active buffers {tuple(active_buffers.shape)} and final buffers "
          f"{tuple(final_buffers.shape)} differ in shape")
    mask = torch.as_tensor(active_mask, dtype=torch.bool, device=active_buffers.device)
    coef = fusion_weights(mask, finished_steps, tau, alpha, n_selected, renormalise)
    stack = torch.where(mask.view(-1, *([1] * (active_buffers.dim() - 1))), active_buffers,
                        final_buffers)
    return torch.tensordot(coef.to(stack.device, stack.dtype), stack, dims=1)


def first_moment_kind(optimizer: str) -> str:
    """The optimizer-state kind SMoFi fuses: ``exp_avg`` for Adam/AdamW, else ``momentum_buffer``."""
    return "exp_avg" if str(optimizer).lower() in ("adam", "adamw") else "momentum_buffer"


@dataclass
class SMoFiOptions:
    """Options of the SMoFi add-on (spec §2).

    alpha: staleness exponent of s_α = (τ − |T_h| + 1)^α, must be < 0 [P: default −0.1].
    renormalise: divide the fused sum by Σ weights instead of |J^n| [D: False].
    carry_momentum: keep the fused momentum from one round's end as the next round's start
        instead of resetting it to zero [D: False, reset each round].
    fuse_second_moment: Adam/AdamW — also fuse ``exp_avg_sq`` with the same weights [D: False].
    """

    alpha: float = -0.1
    renormalise: bool = False
    carry_momentum: bool = False
    fuse_second_moment: bool = False

    def __post_init__(self):
        self.alpha = validate_alpha(self.alpha)
        for name in ("renormalise", "carry_momentum", "fuse_second_moment"):
            value = getattr(self, name)
            check(isinstance(value, bool), f"SMoFi option {name} must be true or false, got {value!r}")


class SMoFiHook:
    """Plugs SMoFi into the client-training engine's lock-step hook ``hook(step, active, buffers)``.

    After every lock-step it fuses, for every *server-part* parameter name, the stacked optimizer
    buffers of the kinds in :attr:`kinds` (:func:`fuse_momentum`) and writes the fused buffer into
    every client that took the step (``buffers.set(kind, name, fused, mask=active)``). Client-part
    buffers are never read or written.

    The hook keeps its own step counter τ (reset by :meth:`start_round`, so it does not depend on
    whether the engine counts from 0 or 1), records each client's own buffers while it is active
    (its m^{final} once it stops) and infers |T_j| as the number of steps the client was active.

    ``buffers`` is any object with ``get(kind, name) -> Tensor[C, ...]`` and
    ``set(kind, name, tensor[C, ...], mask[C])`` — the engine's ``OptimizerBuffers`` or
    :class:`fedlib.train.buffers.LoopBuffers` over plain ``torch.optim`` optimizers
    (the explicit split path).
    """

    def __init__(self, server_names: Sequence[str], optimizer: str = "sgd",
                 options: SMoFiOptions | None = None, momentum: float | None = None):
        self.options = options or SMoFiOptions()
        self.names = list(server_names)
        check(len(self.names) > 0, "SMoFi needs at least one server-part parameter to fuse",
              "cut the model earlier so the server part has parameters")
        self.optimizer = str(optimizer).lower()
        kinds = [first_moment_kind(self.optimizer)]
        if self.options.fuse_second_moment and kinds[0] == "exp_avg":
            kinds.append("exp_avg_sq")
        self.kinds = tuple(kinds)
        # plain SGD (β = 0) keeps no momentum buffer: SMoFi is then exactly SFLV1 (spec §6.2)
        self.enabled = not (self.optimizer == "sgd" and momentum is not None and float(momentum) == 0.0)
        self.tau = 0
        self.n_selected: int | None = None
        self._final: dict[tuple[str, str], Tensor] = {}
        self._steps: Tensor | None = None
        self.last_fused: dict[tuple[str, str], Tensor] = {}

    # ---- round bookkeeping -------------------------------------------------------------------
    def start_round(self, n_selected: int | None = None) -> None:
        """Reset the step counter and the finished-client records at the start of a round."""
        self.tau = 0
        self.n_selected = n_selected
        self._final = {}
        self._steps = None
        self.last_fused = {}

    def fused_state(self) -> dict[str, Tensor]:
        """The last fused buffers, keyed ``"kind/name"`` (what ``carry_momentum`` carries)."""
        return {f"{k}/{n}": v.clone() for (k, n), v in self.last_fused.items()}

    # ---- the hook ----------------------------------------------------------------------------
    def __call__(self, step, active, buffers) -> None:
        active = torch.as_tensor(active, dtype=torch.bool)
        c = active.numel()
        if self._steps is None:
            self._steps = torch.zeros(c, dtype=torch.long)
        self._steps += active.to(torch.long)  # |T_j| once j stops
        if not self.enabled:
            self.tau += 1
            return
        n = self.n_selected if self.n_selected is not None else c
        coef = fusion_weights(active, self._steps, self.tau, self.options.alpha, n,
                              self.options.renormalise)
        present = getattr(buffers, "kinds", None)
        for kind in self.kinds:
            if present is not None and kind not in present:  # e.g. SGD without momentum
                continue
            for name in self.names:
                own = buffers.get(kind, name)
                final = self._final.get((kind, name))
                # record active clients' own momentum: it becomes m^{final} when they stop
                if final is None or bool(active.all()):
                    final = own.clone()
                else:
                    rows = active.nonzero().flatten().to(own.device)
                    final.index_copy_(0, rows, own.index_select(0, rows))
                self._final[(kind, name)] = final
                fused = torch.tensordot(coef.to(own.device, own.dtype), final, dims=1)
                self.last_fused[(kind, name)] = fused
                buffers.set(kind, name, fused.unsqueeze(0).expand_as(own), active)
        self.tau += 1

    def __repr__(self) -> str:
        return f"SMoFiHook({self.options}, kinds={self.kinds}, {len(self.names)} server tensors)"


def server_param_names(names: Iterable[str], server_prefixes: Sequence[str]) -> list[str]:
    """The names among ``names`` that belong to the server part (stage prefix ``stage.``)."""
    prefixes = tuple(f"{p}." for p in server_prefixes)
    return [n for n in names if n.startswith(prefixes)]
