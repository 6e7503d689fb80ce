"""SMoFi: step-wise momentum fusion of the server-side surrogate optimizers (spec §2).

Paper: Yang, Zhu, Wang, Yang, *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on
Heterogeneous Data*, AAAI 2026 (arXiv 2511.09828), "Step-wise Momentum Alignment" and
"Staleness Factor".

After every lock-step τ of a round the server replaces the momentum buffer of every *active*
surrogate optimizer by one fused buffer::

    m̄^{τ+1} = ( Σ_{j active} m_{s,j}^{τ+1} + Σ_{h finished} s_α(τ, h) · m_h^{final} ) / |J^n|
    s_α(τ, h) = (τ − |T_h| + 1)^α,   α < 0  (default −0.1)

Step indexing (issue 12). fedlib's engine numbers the lock-steps of a round τ = 0, 1, 2, …;
client j takes the steps τ = 0 … |T_j| − 1 (active iff τ < |T_j|) and is *finished* from
τ = |T_j| on. The paper's formula has two readings of its τ:

* ``stale_index="from1"`` [default, P-reading]: the paper numbers steps from 1 — its recursion
  ``m_{s,j}^{(n,τ+1)} = β m̄_s^{(n,τ)} + ∇L(W_{s,j}^{(n,τ)})`` writes a client's final buffer
  as step |T_j| + 1, i.e. j's gradients are taken at τ_paper = 1 … |T_j|. The first fusion after
  j finished is at τ_paper = |T_j| + 1, where s_α = (|T_j| + 1 − |T_j| + 1)^α = 2^α; the ages are
  2, 3, 4, … and the weights 2^α, 3^α, … (≈ 0.933, 0.896, … at α = −0.1). In fedlib's 0-based τ
  the age is τ − |T_h| + 2. Only this reading lets α → −∞ remove a finished client entirely.
  (The Chinese digest's recursion alone fits both readings; the superscript |T_j| + 1 on the
  final buffer is the paper's, as quoted in issue 12 — the full text is not in ../shared.)
* ``stale_index="from0"`` (fedlib ≤ issue 12): τ_paper = τ, ages 1, 2, 3, …, so the first stale
  weight is exactly 1 for every α.

Staleness mode ``stale``:

* ``"decay"`` [default, P]: the paper's rule — "SMoFi 记录已完成 client 的最终 momentum 并以多项式
  衰减权重 s_α = (τ − |T_j| + 1)^α 加入对齐计算，保证参与对齐的 momentum 数量始终为 |J^n|"
  (finished clients' final momenta are kept with polynomially decaying weights so that the
  number of aligned momenta stays |J^n|).
* ``"drop"`` [D, issue 12]: a finished client's momentum leaves the fused buffer (weight 0). The
  denominator follows the same rule as in ``decay``: |J^n| (the paper's "始终为 |J^n|"), i.e.
  drop ≡ decay with s_α ≡ 0 ≡ the α → −∞ limit of the ``from1`` reading; ``renormalise=True``
  divides by Σ weights, which in drop mode is the number of *active* surrogates (a plain mean of
  the active momenta).

m_h^{final} is the client's *own* momentum after its last step (before that step's fusion
overwrote it) [D] — the signal it contributed while active, not the fused buffer.

The staleness rule has three knobs (issue 18: the mechanism — fusing every step — is one claim,
this rule another; ``notebooks/smofi/ablations`` tables them). Each signal j enters the sum with
weight w_j = s_j · p_j, where s_j = 1 (active), s_α(τ, j) (finished, ``decay``) or 0 (finished,
``drop``), and p_j is its *weighting*:

* ``weighting="uniform"`` [default, paper reading]: p_j = 1. The paper's m̄ is "全局对齐的平均 momentum", a
  plain mean of the |J^n| momenta; its formula carries no data weights.
* ``weighting="samples"`` [D, issue 18]: p_j = C · n_j / Σ_i n_i (C stacked clients, n_j their
  training samples), so Σ p_j = C and, with every client active and the |J^n| normaliser,
  m̄ = Σ_j (n_j/N) m_j — each signal weighted by its data share, as the round-end average
  weights the parameters. Under Dir(0.1) a 16-image client otherwise gets ~15× its data share.
  Equal client sizes give p_j = 1 exactly (the uniform rule).

and its *normaliser* ``renormalise``:

* ``False`` [default, paper reading; spec §2 tags it D]: divide by |J^n| — "保证参与对齐的 momentum 数量始终为 |J^n|", the mean is
  always over |J^n| signals, so decayed stale momenta shrink m̄ (by Σ w_j / |J^n|).
* ``True`` [D]: divide by Σ_j w_j, a weighted mean (m̄ keeps the scale of one momentum).

Why these defaults: the paper's formula read literally (a plain mean divided by |J^n|, no data
weights) — the text fixes decay and "|J^n| momenta always take part" but states neither the
normaliser nor a weighting (issue 18), so the alternatives are named options, tabled in the
ablations, not defaults. With no finished client the fusion of the SGD form ``m_j = β m̄ + g_j`` gives ``m̄^{τ+1} = β m̄^τ + mean_j g_j`` — a global momentum of the
mean server gradient (spec §2, tested).

Which buffers are fused [D, spec §2, issue 12]: SGD ``momentum_buffer`` (heavy-ball and Nesterov
alike); Adam/AdamW ``exp_avg`` **and** ``exp_avg_sq`` with the same weights
(``fuse_second_moment=True``, default). Fusing only ``exp_avg`` (``fuse_second_moment=False``,
the spec's original reading, kept as a named option) pairs a fused first moment with each
surrogate's own second moment: on coordinates where one surrogate's gradient is exactly zero
(dead ReLU units) its ``exp_avg_sq`` decays towards 0 while the fused ``exp_avg`` does not, and
m̂/√v̂ reaches 1e6–1e13 (issue 12: parameters moved 7.7e11 in 9 steps at lr 0.01). With both
moments fused by the same non-negative weights c_j (Σ c_j ≤ 1), weighted Cauchy–Schwarz over the
fusion paths gives |m_t| / √v_t ≤ (1−β1)/√(1−β2) · (1 − β1²/β2)^{-1/2} (≈ 7.27 for the defaults
0.9/0.999; bias correction only lowers it for these β), exactly Adam's own bound: a fused step
can never exceed ≈ 7.3·lr (+ AdamW's decoupled decay). The paper evaluates Adam/AdamW but does
not say which Adam buffers are aligned; its stated idea — replace each surrogate's optimizer
state by "全局对齐的平均 momentum" — is honoured by fusing the whole moment state. Only server-part
buffers are touched: the client-side optimizers are left alone ("client-transparent").
"""

from __future__ import annotations

import statistics
import warnings
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError, check, check_choice

__all__ = [
    "SMoFiOptions",
    "SMoFiHook",
    "fuse_momentum",
    "fusion_weights",
    "staleness_weight",
    "validate_alpha",
    "StalenessRule",
    "first_moment_kind",
    "step_count_spread",
    "STALE_MODES",
    "STALE_INDEXES",
    "WEIGHTINGS",
    "FirstMomentOnlyWarning",
]

STALE_MODES = ("decay", "drop")
STALE_INDEXES = ("from1", "from0")
WEIGHTINGS = ("uniform", "samples")


class FirstMomentOnlyWarning(UserWarning):
    """Adam/AdamW SMoFi fusing ``exp_avg`` alone (``fuse_second_moment=False``) can blow up."""


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


def staleness_weight(tau, finished_steps, alpha: float = -0.1,
                     stale_index: str = "from1") -> Tensor:
    """s_α(τ, h) = (τ_paper − |T_h| + 1)^α for clients that finished after ``finished_steps`` = |T_h|.

    ``tau`` is fedlib's 0-based lock-step index (see the module docstring); a client with
    ``finished_steps <= tau`` is finished. Its age is ``tau − finished_steps + 2`` (≥ 2) under
    ``stale_index="from1"`` (the default: paper steps counted from 1, first stale weight 2^α) and
    ``tau − finished_steps + 1`` (≥ 1) under ``"from0"`` (first stale weight 1). Entries of clients
    that are not finished yet get weight 1 — they are active and contribute their current
    momentum in full. Returns a float64 tensor shaped like ``finished_steps``.
    (The public entry: validates ``alpha`` and ``stale_index`` by building a :class:`StalenessRule`;
    the hook calls its rule's :meth:`StalenessRule.staleness`, checked once.)
    """
    return StalenessRule(alpha=alpha, stale_index=stale_index).staleness(tau, finished_steps)


@dataclass(frozen=True)
class StalenessRule:
    """SMoFi's staleness rule (module docstring), validated once when it is built (issue 45).

    ``alpha`` < 0, ``stale`` in :data:`STALE_MODES`, ``stale_index`` in :data:`STALE_INDEXES`,
    ``weighting`` in :data:`WEIGHTINGS`, ``renormalise`` the normaliser. :class:`SMoFiHook` takes
    its options' rule (:meth:`SMoFiOptions.staleness_rule`) at construction, as
    :class:`~fedlib.safl.fedqs.rules.FedQSRules` is chosen once for FedQS; its :meth:`staleness` and
    :meth:`weights` then run at every lock-step and check nothing.
    """

    alpha: float = -0.1
    stale: str = "decay"
    stale_index: str = "from1"
    weighting: str = "uniform"
    renormalise: bool = False

    def __post_init__(self):
        object.__setattr__(self, "alpha", validate_alpha(self.alpha))
        check_choice("SMoFi option stale", self.stale, STALE_MODES)
        check_choice("SMoFi option stale_index", self.stale_index, STALE_INDEXES)
        check_choice("SMoFi option weighting", self.weighting, WEIGHTINGS)

    @property
    def offset(self) -> float:
        """Extra age of the ``from1`` reading (paper τ = fedlib τ + 1)."""
        return 1.0 if self.stale_index == "from1" else 0.0

    def staleness(self, tau, finished_steps) -> Tensor:
        """s_α(τ, h) of :func:`staleness_weight`, for this rule's α and index reading."""
        steps = torch.as_tensor(finished_steps).to(torch.float64)
        tau = torch.as_tensor(tau, dtype=torch.float64)
        age = tau - steps + 1.0 + self.offset
        return torch.where(steps <= tau, age, torch.ones_like(age)).pow(self.alpha)

    def weights(self, active_mask: Tensor, finished_steps, tau, n: int, shares: Tensor | None) -> Tensor:
        """The coefficients c_j of :func:`fusion_weights` for a round already checked
        (:meth:`round_shares`): ``n`` = |J^n| ≥ C, ``shares`` = p_j (None for uniform weighting)."""
        active_mask = torch.as_tensor(active_mask, dtype=torch.bool)
        c = active_mask.numel()
        if self.stale == "drop":
            stale_w = torch.zeros(c, dtype=torch.float64)
        else:
            stale_w = self.staleness(tau, finished_steps).expand(c)
        w = torch.where(active_mask, torch.ones((), dtype=torch.float64), stale_w)
        if shares is not None:
            w = w * shares
        denom = w.sum() if self.renormalise else torch.tensor(float(n), dtype=torch.float64)
        if denom.item() == 0.0:
            return torch.zeros_like(w)
        return w / denom

    def round_shares(self, c: int, n_selected: int | None, sizes) -> tuple[int, Tensor | None]:
        """Check one round's inputs once: |J^n| (default C, at least C) and, for
        ``weighting="samples"``, the data shares of the C clients' ``sizes``."""
        n = c if n_selected is None else int(n_selected)
        check(n >= c, f"n_selected={n} is smaller than the {c} clients given to the fusion",
              "pass the number of selected clients |J^n| (at least the stacked clients)")
        return n, (data_shares(sizes, c) if self.weighting == "samples" else None)


def data_shares(sizes, c: int) -> Tensor:
    """p_j = C · n_j / Σ n_i of ``weighting="samples"`` (module docstring), float64 [C]."""
    check(sizes is not None, "SMoFi weighting='samples' needs the clients' sample counts",
          "pass sizes= (SplitTrainer passes them through start_round)")
    n = torch.as_tensor(sizes).to(torch.float64).flatten()
    check(n.numel() == c, f"got {n.numel()} sample counts for {c} clients")
    check(bool((n >= 0).all()) and float(n.sum()) > 0,
          f"sample counts must be >= 0 with a positive total, got {n.tolist()}")
    return n * c / n.sum()


def fusion_weights(active_mask: Tensor, finished_steps, tau, alpha: float = -0.1,
                   n_selected: int | None = None, renormalise: bool = False,
                   stale: str = "decay", stale_index: str = "from1",
                   weighting: str = "uniform", sizes=None,
                   rule: "StalenessRule | None" = None) -> Tensor:
    """The per-client coefficients c_j of m̄ = Σ_j c_j · m_j (spec §2), shape [C], float64.

    c_j = w_j / |J^n| with w_j = s_j · p_j (module docstring): s_j = 1 for an active client,
    s_α(τ, j) (``stale="decay"``) or 0 (``stale="drop"``) for a finished one; p_j = 1
    (``weighting="uniform"``) or C · n_j / Σ n_i (``"samples"``, ``sizes`` = the n_j).
    ``renormalise``: divide by Σ w_j instead of |J^n| — in drop mode with uniform weighting that
    is the number of active clients. If no weight is left (drop, renormalise, nobody active) all
    coefficients are 0. ``rule``: a :class:`StalenessRule` built (and checked) before; it replaces
    ``alpha``, ``stale``, ``stale_index``, ``weighting`` and ``renormalise``.
    """
    if rule is None:
        rule = StalenessRule(alpha, stale, stale_index, weighting, renormalise)
    active_mask = torch.as_tensor(active_mask, dtype=torch.bool)
    n, shares = rule.round_shares(active_mask.numel(), n_selected, sizes)
    return rule.weights(active_mask, finished_steps, tau, n, shares)


def fuse_momentum(active_buffers: Tensor, active_mask: Tensor, final_buffers: Tensor,
                  finished_steps, tau, alpha: float = -0.1, n_selected: int | None = None,
                  renormalise: bool = False, stale: str = "decay",
                  stale_index: str = "from1", weighting: str = "uniform", sizes=None,
                  rule: "StalenessRule | None" = None) -> Tensor:
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
    stale:
        ``"decay"`` (finished clients weighted s_α) or ``"drop"`` (weight 0).
    stale_index:
        ``"from1"`` (paper steps from 1: ages 2, 3, …) or ``"from0"`` (ages 1, 2, …).
    weighting, sizes:
        ``"uniform"`` (every signal weight 1) or ``"samples"`` (data share, ``sizes`` = n_j).
    rule:
        a :class:`StalenessRule` built before, in place of the five rule arguments.

    Returns ``Tensor[...]``: m̄^{τ+1} = (Σ_active m_j + Σ_finished s_α(τ,h) m_h^{final}) / |J^n|.
    """
    check(active_buffers.shape == final_buffers.shape,
          f"active buffers {tuple(active_buffers.shape)} and final buffers "
          f"{tuple(final_buffers.shape)} differ in shape")
    mask = torch.as_tensor(active_mask, dtype=torch.bool, device=active_buffers.device)
    coef = fusion_weights(mask.cpu(), finished_steps, tau, alpha, n_selected, renormalise,
                          stale, stale_index, weighting, sizes, rule)
    stack = torch.where(mask.view(-1, *([1] * (active_buffers.dim() - 1))), active_buffers,
                        final_buffers)
    return torch.tensordot(coef.to(stack.device, stack.dtype), stack, dims=1)


def first_moment_kind(optimizer: str) -> str:
    """The optimizer-state kind SMoFi fuses: ``exp_avg`` for Adam/AdamW, else ``momentum_buffer``."""
    return "exp_avg" if str(optimizer).lower() in ("adam", "adamw") else "momentum_buffer"


def step_count_spread(steps) -> dict:
    """The spread of the clients' local step counts |T_j|: ``{"n", "min", "median", "max"}``.

    α only matters when the |T_j| differ (issue 12: Dir(0.1) puts 1-step clients next to
    15–23-step ones), so reports print this next to every SMoFi result. ``steps``: any sequence
    or tensor of non-negative integers (e.g. :attr:`SMoFiHook.step_counts`).
    """
    values = [int(v) for v in torch.as_tensor(steps).flatten().tolist()]
    check(len(values) > 0, "step_count_spread needs at least one client's step count")
    check(min(values) >= 0, f"step counts must be >= 0, got {min(values)}")
    return {"n": len(values), "min": min(values), "median": float(statistics.median(values)),
            "max": max(values)}


@dataclass
class SMoFiOptions:
    """Options of the SMoFi add-on (spec §2, issue 12).

    alpha: staleness exponent of s_α = (τ − |T_h| + 1)^α, must be < 0 [P: default −0.1].
    stale: ``"decay"`` — finished clients' final momenta stay in the fused buffer with weight s_α,
        "保证参与对齐的 momentum 数量始终为 |J^n|" [P, default]; ``"drop"`` — they leave it (weight 0),
        denominator unchanged (|J^n|, or the active count with ``renormalise``) [D].
    stale_index: ``"from1"`` — the paper's τ counts steps from 1 (a client's final buffer is step
        |T_j| + 1), so the first stale weight is 2^α [P-reading, default]; ``"from0"`` — first
        stale weight 1 (fedlib's reading before issue 12).
    renormalise: the normaliser — ``False``: divide the fused sum by |J^n| ("始终为 |J^n|")
        [default, paper reading]; ``True``: by Σ weights (a weighted mean) [D].
    weighting: ``"uniform"`` — every signal weight 1, the paper's plain mean [default, paper reading];
        ``"samples"`` — each signal weighted by its client's data share C·n_j/Σn [D, issue 18].
    carry_momentum: keep the fused momentum from one round's end as the next round's start
        instead of resetting it to zero [D: False, reset each round].
    fuse_second_moment: Adam/AdamW — fuse ``exp_avg_sq`` with the same weights as ``exp_avg``
        [D: True — cannot blow up, see the module docstring]. ``False`` = first-moment-only
        fusion, kept as a named option; it warns (:class:`FirstMomentOnlyWarning`). No effect
        for SGD.
    """

    alpha: float = -0.1
    stale: str = "decay"
    stale_index: str = "from1"
    renormalise: bool = False
    weighting: str = "uniform"
    carry_momentum: bool = False
    fuse_second_moment: bool = True

    def __post_init__(self):
        # the staleness rule states (and checks) its four knobs; kept beside the fields, not one
        self.__dict__["_rule"] = rule = StalenessRule(self.alpha, self.stale, self.stale_index,
                                                      self.weighting, self.renormalise)
        self.alpha = rule.alpha
        for name in ("renormalise", "carry_momentum", "fuse_second_moment"):
            value = getattr(self, name)
            check(isinstance(value, bool), f"SMoFi option {name} must be true or false, got {value!r}")

    def staleness_rule(self) -> StalenessRule:
        """The :class:`StalenessRule` of these options: the one checked at construction (a new,
        checked one if a field was reassigned since)."""
        rule = self.__dict__.get("_rule")
        fields = (self.alpha, self.stale, self.stale_index, self.weighting, self.renormalise)
        if rule is None or (rule.alpha, rule.stale, rule.stale_index, rule.weighting,
                            rule.renormalise) != fields:
            rule = self.__dict__["_rule"] = StalenessRule(*fields)
        return rule


_FIRST_ONLY_MSG = (
    "SMoFi with Adam/AdamW and fuse_second_moment=False fuses exp_avg but keeps each surrogate's "
    "own exp_avg_sq: where a surrogate's gradient is exactly zero (e.g. dead ReLU units) its "
    "second moment decays to 0 while the fused first moment does not, and steps m̂/√v̂ can reach "
    "1e6–1e13·lr. Use fuse_second_moment=True (the default) unless you are "
    "reproducing that rule on purpose.")


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
        self.rule = self.options.staleness_rule()  # checked once, here; nothing is checked per step
        self.names = list(server_names)
        check(len(self.names) > 0, "SMoFi needs at least one server-part parameter to fuse",
              "cut the model earlier so the server part has parameters")
        self.optimizer = str(optimizer).lower()
        kinds = [first_moment_kind(self.optimizer)]
        if kinds[0] == "exp_avg":
            if self.options.fuse_second_moment:
                kinds.append("exp_avg_sq")
            else:  # shown once per process by Python's default warning filter
                warnings.warn(_FIRST_ONLY_MSG, FirstMomentOnlyWarning, stacklevel=2)
        self.kinds = tuple(kinds)
        # plain SGD (β = 0) keeps no momentum buffer: SMoFi is then exactly SFLV1 (spec §6.2)
        self.enabled = not (self.optimizer == "sgd" and momentum is not None and float(momentum) == 0.0)
        self.tau = 0
        self.n_selected: int | None = None
        self.sizes: Tensor | None = None
        self._final: dict[tuple[str, str], Tensor] = {}
        self._steps: Tensor | None = None
        self._round: tuple[int, Tensor | None] | None = None  # (|J^n|, shares), checked once a round
        self.last_fused: dict[tuple[str, str], Tensor] = {}

    # ---- round bookkeeping -------------------------------------------------------------------
    def start_round(self, n_selected: int | None = None, sizes=None) -> None:
        """Reset the step counter and the finished-client records at the start of a round;
        ``sizes``: the clients' sample counts (rows in training order), for ``weighting="samples"``."""
        self.tau = 0
        self.n_selected = n_selected
        self.sizes = None if sizes is None else torch.as_tensor(sizes).clone()
        self._final = {}
        self._steps = None
        self._round = None
        self.last_fused = {}

    @property
    def step_counts(self) -> Tensor | None:
        """The clients' local step counts |T_j| seen so far this round (after the round: final);
        feed to :func:`step_count_spread`."""
        return None if self._steps is None else self._steps.clone()

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
        if self._round is None:  # the round's |J^n| and data shares, checked at its first step
            self._round = self.rule.round_shares(c, self.n_selected, self.sizes)
        coef = self.rule.weights(active, self._steps, self.tau, *self._round)
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

