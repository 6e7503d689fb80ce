"""FedQS (Li et al., NeurIPS 2025, §3; spec fedqs.md §3-§5): the three modules and the Strategy.

* **Mod①** global aggregation estimation (§3.2) — :func:`mod1_similarity`: how well a client's
  latest local update agrees with the pseudo-global gradient L_g = w_g^t − w_g^{t−1}.
* **Mod②** local training adaptation (§3.3, eqs. 1-3) — :func:`mod2_adapt`: the client's type
  (FSBC / FWBC / SWBC / SSBC) from update speed f and similarity s, and its learning rate,
  momentum and feedback flag (constants in :class:`Mod2Params`).
* **Mod③** global model aggregation (§3.4) — :func:`mod3_weights`: aggregation weights
  p_i = n_i/n, boosted for feedback clients by exp(φ−F)/2^(φ−F) · Q(G), then normalised.
* :class:`FedQS` — the SAFL :class:`~fedlib.safl.strategy.Strategy` wiring the three together,
  as FedQS-Avg (model aggregation, w ← Σ p_i w_i) or FedQS-SGD (gradient aggregation,
  w ← w + Σ p_i Δ_i).

Similarity convention (all metrics): **larger = more similar**, and every value except the
cosine is positive, so that the ratio G = s̄/s_i of Mod② (momentum) and Mod③ (Q) is meaningful:

=============  =====================================================================
``cosine``     cos(L_g, Δ_i) ∈ [−1, 1] (the paper's default, §5.1), unchanged.
``euclidean``  1 / (1 + ‖L_g − Δ_i‖₂)  ∈ (0, 1]
``manhattan``  1 / (1 + ‖L_g − Δ_i‖₁)  ∈ (0, 1]
``angle``      1 / (1 + θ), θ = the official code's mean per-layer angle in degrees between
               min-max-then-sum-normalised vectors, skipping layers with an exact zero entry
=============  =====================================================================

The metrics live in one registry (:data:`SIMILARITY_REGISTRY`, name → :class:`Similarity`).
The three distance-like metrics share one monotone transform d ↦ 1/(1+d): bounded, positive,
defined at d = 0, and for d ≫ 1 (angles are tens of degrees) G = s̄/s_i ≈ d_i/d̄, the ratio the
official code computes from its angles (``theta_i / mean theta``). Because the cosine can be
≤ 0, G is guarded (:func:`bias_ratio`): s_i ≤ 0 < s̄ gives G = +∞ (maximally biased, capped by
``g_cap`` in Q), s̄ ≤ 0 gives the neutral G = 1.

Vectors compared: the model *parameters* (``ctx.model.named_parameters()``); BN running
statistics are not gradients and are left out of the similarity (they are still aggregated).
For ``angle`` the code's own filter (state keys containing "weight" or "bias") is applied on top.

Decisions where paper and code leave room (spec §3-§5 [D]; each is an option or documented):

* *Latest local update* (Mod① input): refreshed when the update is uploaded (``on_upload``; the
  client knows its own update then, as in the code, which saves it at the end of training) —
  option ``local_update="aggregated"`` waits for the server. It is used once, at the client's
  next start, then dropped (memory: only updates not yet compared are kept). No new update or an
  undefined similarity keeps the client's previous s_i.
* *Dividers*: s̄ and f̄ are computed at the training start from the current tables (s̄ includes
  the value just computed); f_i = n(i)/mean_j n(j) with the mean over all N clients (eq. 1),
  f̄ over clients aggregated at least once, s̄ over clients with a similarity (spec §4).
* *Warm-up*: no adaptation until f_i, f̄, s_i and s̄ all exist; warm-up momentum is the run's
  ``local.momentum`` (0 when ``momentum=False``).
* *Momentum bounds*: the increase k(1/G − 1) is clamped to [0, 0.4] for every momentum client
  (:func:`momentum_rate`); so SSBC situation 1 trains with m0 (as the code).
* *Mod③*: F_i counts this round's updates too (the code increments before weighing); φ = K/N
  with K = number of updates aggregated; G capped at ``g_cap`` = 2 in both Q forms.
* *Situation test*: the received global model (newest version at the start) on the client's
  validation samples; ``evaluate_per_class`` fractions are converted to percent.

Fidelity (issue 11; issue 21: rule objects): ``fidelity="paper"`` (default) or ``"official"``
picks one :class:`FedQSRules` object, :data:`PAPER_RULES` or :data:`OFFICIAL_RULES` — the
official code's wiring around its angles, each rule also a named option (an option set
explicitly overrides just that rule): ``similarity=angle``, ``mod1_vector=prev_global``,
``feedback_reset=global`` and (a) ``threshold_on=distance`` θ_i > mean θ over θ > 0,
(b) ``bias_ratio=distance`` G = θ_i/θ̄, (c) ``phi=0.1``, (d) ``momentum_rule=code``
m = m0 + clamp(2(θ̄/θ_i − 1), [0, 0.4]), (e) ``threshold_refresh=aggregation``,
(f) ``first_comparison=skip_initial``, (g) ``validation=first_per_class``. Each rule's name
selects its behaviour from a table (name → function / value) once, when the rules object is
built; the Strategy keeps that object. The simulator's ``safl.upload=overwrite`` (the code's
file-path buffer) is separate: it is not a FedQS option.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.safl.strategy import (
    SimContext,
    State,
    Strategy,
    Update,
    apply_delta,
    float_keys,
    weighted_model_average,
)

__all__ = [
    "VECTORS",
    "SIMILARITIES",
    "SIMILARITY_REGISTRY",
    "Similarity",
    "TYPES",
    "mod1_similarity",
    "code_angle",
    "bias_ratio",
    "per_label_spread",
    "Mod2Params",
    "Mod2Result",
    "mod2_adapt",
    "mod3_weights",
    "FedQSRules",
    "PAPER_RULES",
    "OFFICIAL_RULES",
    "RULES_BY_FIDELITY",
    "FedQSOptions",
    "FIDELITY_RULES",
    "FedQS",
    "FedQSAvg",
    "FedQSSGD",
    "FedQSSGDOptions",
    "momentum_rate",
    "STRATEGIES",
]

TYPES = ("FSBC", "FWBC", "SWBC", "SSBC", "warmup")
PHI_K_OVER_N = "k/n"
#: the official code's momentum rule: increase = 20·(0.1·θ̄/θ_i − 0.1) = CODE_K·(θ̄/θ_i − 1)
CODE_K = 2.0
#: the official code's φ (hard-coded; equals K/N only at N = 100, K = 10)
CODE_PHI = 0.1


def _pick(kind: str, value, table: Mapping):
    """``table[value]`` for a name (checked against the table's names), else ``value`` itself
    (already one of the table's entries)."""
    if isinstance(value, str):
        check_choice(kind, value, table)
        return table[value]
    return value


# ============================================================================================
# Mod① — global aggregation estimation (paper §3.2)
# ============================================================================================
def _as_state(x) -> State:
    return x if isinstance(x, Mapping) else {"": torch.as_tensor(x)}


def _d1_normalise(v: Tensor) -> Tensor:
    """The official code's ``d1_normalization``: min-max scale, then divide by the sum
    (a constant vector is only divided by its sum)."""
    lo, hi = v.min(), v.max()
    if hi != lo:
        v = (v - lo) / (hi - lo)
    return v / v.sum()


def code_angle(a: State, b: State, keys: Sequence[str] | None = None) -> float:
    """The official code's "similarity" (spec §3 [C]): mean over layers of the angle in degrees
    between the two layers' min-max-then-sum-normalised vectors.

    Layers where either vector has an exact zero entry are skipped (the code's
    ``v.all() == 0`` test); the cosine is clamped to [−1, 1] before ``arccos`` (the code can
    return NaN from rounding). Returns NaN when no layer qualifies ("no value"; the code stores
    0 there, which its means then skip). Larger = *less* similar.
    """
    a, b = _as_state(a), _as_state(b)
    if keys is None:
        keys = [k for k in float_keys(a) if ("weight" in k or "bias" in k)] or float_keys(a)
    thetas = []
    for key in keys:
        va = a[key].detach().reshape(-1).float()
        vb = b[key].detach().reshape(-1).to(va.device, torch.float32)
        if va.numel() == 0 or bool((va == 0).any()) or bool((vb == 0).any()):
            continue
        na, nb = _d1_normalise(va), _d1_normalise(vb)
        cos = torch.dot(na, nb) / (na.norm() * nb.norm())  # float32, as the code
        thetas.append(math.degrees(math.acos(max(-1.0, min(1.0, float(cos))))))
    return float(sum(thetas) / len(thetas)) if thetas else float("nan")


def _lg_delta(new: Tensor, prev: Tensor) -> Tensor:
    """[P] §3.2: the pseudo-global gradient L_g = w^t − w^{t−1} of one entry (float32)."""
    return new.detach().float() - prev.detach().float()


def _lg_prev_global(new: Tensor, prev: Tensor) -> Tensor:
    """[C] spec §3 (a): the code's no-op assignment leaves L_g = w^{t−1} itself."""
    return prev.detach().float()


#: Mod① vector (spec §3): name → L_g of one state entry from (w^t, w^{t−1})
PSEUDO_GRADIENTS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "delta": _lg_delta,
    "prev_global": _lg_prev_global,
}
VECTORS = tuple(PSEUDO_GRADIENTS)


class _Mod1Inputs:
    """The per-entry inputs of one Mod① comparison: L_g and ‖L_g‖² (from ``cache`` when given:
    the same tensors for every client while the two globals stay the same objects) and Δ_i."""

    def __init__(self, g_new: State, g_prev: State, local: State, lg_fn: Callable, cache: dict | None):
        self.g_new, self.g_prev, self.local_state, self.lg_fn, self.cache = g_new, g_prev, local, lg_fn, cache

    def lg(self, k: str) -> Tensor:
        """L_g of one entry (float32, on its device)."""
        cache = self.cache
        if cache is not None and k in cache["lg"]:
            return cache["lg"][k]
        v = self.lg_fn(self.g_new[k], self.g_prev[k])
        if cache is not None:
            cache["lg"][k] = v
        return v

    def aa(self, k: str, a: Tensor) -> Tensor:
        """‖L_g‖² of one entry (float32)."""
        if self.cache is None:
            return torch.dot(a, a)
        if k not in self.cache["aa"]:
            self.cache["aa"][k] = torch.dot(a, a)
        return self.cache["aa"][k]

    def local(self, k: str) -> Tensor:
        """Δ_i of one entry, flat float32 on L_g's device."""
        return self.local_state[k].detach().reshape(-1).to(self.g_new[k].device, torch.float32)

    def entrywise(self, keys: Sequence[str], parts: Callable[[str, Tensor, Tensor], Tensor]) -> Tensor:
        """``parts(k, L_g, Δ_i)`` (float32 reductions) entry by entry, summed in float64 (no
        concatenated copy of the model); three zeros when there is no entry."""
        sums = [parts(k, self.lg(k).reshape(-1), self.local(k)).double() for k in keys]
        return torch.stack(sums).sum(0).cpu() if sums else torch.zeros(3, dtype=torch.float64)


def _cosine(x: _Mod1Inputs, keys: Sequence[str]) -> float:
    """[P] §5.1: cos(L_g, Δ_i) ∈ [−1, 1]; NaN when either vector is zero."""
    acc = x.entrywise(keys, lambda k, a, b: torch.stack([torch.dot(a, b), x.aa(k, a), torch.dot(b, b)]))
    if acc[1] == 0 or acc[2] == 0:
        return float("nan")
    return max(-1.0, min(1.0, float(acc[0] / (acc[1].sqrt() * acc[2].sqrt()))))


def _euclidean(x: _Mod1Inputs, keys: Sequence[str]) -> float:
    """[D] Table 5: 1 / (1 + ‖L_g − Δ_i‖₂)."""
    acc = x.entrywise(keys, lambda k, a, b: torch.stack([(a - b).square().sum()]))
    return 1.0 / (1.0 + float(acc[0].sqrt()))


def _manhattan(x: _Mod1Inputs, keys: Sequence[str]) -> float:
    """[D] Table 5: 1 / (1 + ‖L_g − Δ_i‖₁)."""
    acc = x.entrywise(keys, lambda k, a, b: torch.stack([(a - b).abs().sum()]))
    return 1.0 / (1.0 + float(acc[0]))


def _angle(x: _Mod1Inputs, keys: Sequence[str]) -> float:
    """[C] spec §3 (b): 1 / (1 + θ), θ = :func:`code_angle` on the "weight"/"bias" entries;
    NaN when no layer qualifies."""
    angle_keys = [k for k in keys if ("weight" in k or "bias" in k)] or list(keys)
    theta = code_angle({k: x.lg(k) for k in angle_keys}, x.local_state, angle_keys)
    return theta if math.isnan(theta) else 1.0 / (1.0 + theta)


@dataclass(frozen=True)
class Similarity:
    """One Mod① metric (spec §3 [D]): ``measure(inputs, keys)`` → s, larger = more similar (NaN =
    undefined); ``distance``: s = 1/(1+d) with a distance d ≥ 0 (the official rules (a), (b), (d)
    work on d)."""

    name: str
    measure: Callable[[_Mod1Inputs, Sequence[str]], float]
    distance: bool


#: the Mod① similarity registry (spec §3 [D]; Table 5 ablation): name → :class:`Similarity`
SIMILARITY_REGISTRY: dict[str, Similarity] = {
    s.name: s
    for s in (
        Similarity("cosine", _cosine, distance=False),  # [P]
        Similarity("angle", _angle, distance=True),  # [C]
        Similarity("euclidean", _euclidean, distance=True),
        Similarity("manhattan", _manhattan, distance=True),
    )
}
SIMILARITIES = tuple(SIMILARITY_REGISTRY)
#: the similarities of the form s = 1/(1+d) with a distance d ≥ 0 (d = 1/s − 1; θ for ``angle``)
DISTANCE_SIMILARITIES = tuple(name for name, s in SIMILARITY_REGISTRY.items() if s.distance)


def mod1_similarity(
    global_new: State,
    global_prev: State,
    local_update: State,
    *,
    vector: str | Callable = "delta",
    similarity: str | Similarity = "cosine",
    keys: Sequence[str] | None = None,
    cache: dict | None = None,
) -> float:
    """Mod① (paper §3.2): local-global gradient update similarity s_i of one client.

    The pseudo-global gradient is L_g(w_g^t) = w_g^t − w_g^{t−1} (§3.2, the one displayed
    equation; ``vector="delta"``, default). ``vector="prev_global"`` reproduces the official
    code, whose no-op assignment leaves L_g = w_g^{t−1} itself (spec §3 [C]). ``local_update``
    is the client's latest local update Δ_i = w_after − w_before.

    ``similarity`` (spec §3 [D]; Table 5 ablation): ``cosine`` (default), ``euclidean``,
    ``manhattan`` or ``angle`` (the code's :func:`code_angle`); the returned value is always
    *larger = more similar* (see the module docstring for the transforms). ``vector`` and
    ``similarity`` may also be the registry entries themselves (:data:`PSEUDO_GRADIENTS`,
    :data:`SIMILARITY_REGISTRY`), as :class:`FedQS` passes them. ``keys`` selects the state
    entries compared (default: every floating-point entry; :class:`FedQS` passes the model
    parameters). Returns NaN when the similarity is undefined (a zero vector for the cosine, no
    qualifying layer for the angle) — callers treat NaN as "no new value".

    Inputs may be states (``dict[str, Tensor]``) or plain tensors.

    ``cache`` (speed only): a dict the caller keeps while ``global_new``/``global_prev`` stay the
    same objects; the pseudo-global gradient and its squared norm per entry are computed once
    there and reused for every client (the same tensors, so the same numbers).
    """
    lg_fn = _pick("Mod① vector", vector, PSEUDO_GRADIENTS)
    metric = _pick("similarity", similarity, SIMILARITY_REGISTRY)
    g_new, g_prev, local = _as_state(global_new), _as_state(global_prev), _as_state(local_update)
    if keys is None:
        keys = float_keys(g_new)
    if cache is not None and not (cache.get("new") is global_new and cache.get("prev") is global_prev
                                  and cache.get("vector") is lg_fn):
        cache.clear()
        cache.update(new=global_new, prev=global_prev, vector=lg_fn, lg={}, aa={})
    return metric.measure(_Mod1Inputs(g_new, g_prev, local, lg_fn, cache), keys)


# ============================================================================================
# Mod② — local training adaptation (paper §3.3, eqs. 1-3)
# ============================================================================================
def bias_ratio(s_i: float, s_bar: float) -> float:
    """G = s̄ / s_i (paper §3.3), > 1 for strongly biased clients (s_i < s̄).

    Guarded for signed similarities (the cosine): s̄ ≤ 0 → 1 (no meaningful ratio: neutral);
    s_i ≤ 0 < s̄ → +∞ (more biased than any positive s_i; Q caps it via ``g_cap``, momentum
    gets 1/G = 0). NaN in → NaN out.
    """
    if math.isnan(s_i) or math.isnan(s_bar):
        return float("nan")
    if s_bar <= 0:
        return 1.0
    if s_i <= 0:
        return float("inf")
    return s_bar / s_i


def distance_of(s):
    """d = 1/s − 1: the distance behind a similarity s = 1/(1+d) (θ in degrees for ``angle``);
    works on floats and tensors (NaN stays NaN)."""
    return 1.0 / s - 1.0


def distance_mean(similarities) -> float:
    """d̄ of the official code [C] (issue 11 (a)/(b)): the mean distance d = 1/s − 1 over the
    clients with d > 0 — NaN ("no value", the code's 0) and an exact zero are left out. NaN when
    no client qualifies (the code's threshold 0: no adaptation)."""
    sim = torch.as_tensor(similarities, dtype=torch.float64).flatten()
    d = distance_of(sim[sim > 0])  # NaN compares False; a cosine ≤ 0 has no distance
    d = d[d > 0]
    return float(d.mean()) if d.numel() else float("nan")


def distance_ratio(s_i: float, d_bar: float) -> float:
    """G = d_i / d̄ (official code [C], issue 11 (b)/(d): ``theta_i / mean theta``), > 1 for
    strongly biased clients (d_i > d̄). NaN when s_i or d̄ is NaN, s_i ≤ 0 or d̄ ≤ 0."""
    if math.isnan(s_i) or math.isnan(d_bar) or s_i <= 0 or d_bar <= 0:
        return float("nan")
    return distance_of(s_i) / d_bar


def per_label_spread(acc: Tensor, counts: Tensor | None = None, small_class: int = 10) -> float:
    """SSBC situation test statistic (paper §3.3; spec §4): max − min per-label accuracy.

    ``acc``: per-class accuracy in percent (NaN = class absent, ignored). With ``counts``
    (validation samples per class) the official code's rule applies: a class with fewer than
    ``small_class`` samples has its accuracy halved. No class with a value → 0.
    """
    acc = torch.as_tensor(acc, dtype=torch.float64).clone().flatten()
    if counts is not None:
        counts = torch.as_tensor(counts).flatten().to(acc.device)
        acc = torch.where(counts < small_class, acc / 2, acc)
    acc = acc[~torch.isnan(acc)]
    if acc.numel() == 0:
        return 0.0
    return float(acc.max() - acc.min())


@dataclass
class Mod2Result:
    """What Mod② decides for one training start."""

    type: str  # FSBC | FWBC | SWBC | SSBC | warmup
    lr: float  # η_i^t (persisted per client: the next start begins from it)
    momentum: float  # m_i^t (0 = plain SGD)
    feedback: bool  # the update asks Mod③ for a feedback weight
    F: float  # f̄ / f_i, capped (NaN in warm-up)
    G: float  # s̄ / s_i, guarded (NaN in warm-up)
    situation: int | None = None  # SSBC only: 1 (straggling) or 2 (dispersed data); None if not tested
    spread: float | None = None  # SSBC only: max − min per-label accuracy (percentage points)


def momentum_rate(G: float, m0: float = 0.1, k: float = 0.2, increase_bounds=(0.0, 0.4)) -> float:
    """m_i = m0 + k·(1/G − 1) (paper §3.3, after eq. 3), with the increase k·(1/G − 1) clamped to
    ``increase_bounds`` = (low, high) (either may be None = unbounded).

    The code caps the increase at 0.4 (m ≤ m0 + 0.4 = 0.5) and, for SSBC situation 1 where
    1/G < 1, floors it at 0 (``max(0, ...)``); for FWBC/SWBC (s_i ≥ s̄ ⇒ 1/G ≥ 1) the floor never
    binds. fedlib applies both bounds to every momentum client, and finally keeps m in [0, 0.99].
    (The code's scripts compute the increase as 20·(0.1·θ̄/θ_i − 0.1), i.e. an effective k = 2
    with G = θ_i/θ̄ — ``momentum_rule="code"`` [C] (d); fedlib uses the paper's k = 0.2 and
    G = s̄/s_i by default [P].) G = 0 (θ_i = 0) gives 1/G = ∞: the increase's upper bound.
    """
    if math.isnan(G):  # no ratio (e.g. no positive distance): neutral, m = m0
        inv_g = 1.0
    else:
        inv_g = 0.0 if math.isinf(G) else (math.inf if G == 0 else 1.0 / G)
    inc = k * (inv_g - 1.0)
    lo, hi = increase_bounds if increase_bounds is not None else (None, None)
    if lo is not None:
        inc = max(inc, lo)
    if hi is not None:
        inc = min(inc, hi)
    return min(max(m0 + inc, 0.0), 0.99)


@dataclass(frozen=True)
class Mod2Params:
    """Mod②'s constants for one run (paper §3.3 and §5.4; spec §4), built once by :class:`FedQS`
    from its options and rules.

    a, m0, k: change rate of η, initial momentum, momentum change speed (k = 2 for the code's
    momentum rule [C] (d)). lr_bounds: η clipped to [0.001, 0.2] [C]. f_cap: cap of F = f̄/f_i
    (9 [C]; None = none). adapt_lr / momentum / feedback: the three switches (off: η stays, every
    momentum 0 — the official main scripts —, no feedback flag). momentum_increase_bounds: the
    clamp of k(1/G − 1) ([0, 0.4] [C]; either bound None = unbounded). situation_threshold:
    per-label accuracy spread (percentage points) for SSBC situation 2 (30 [C]).
    warmup_momentum: the momentum before adaptation starts (the run's ``local.momentum``).
    """

    a: float = 0.002
    m0: float = 0.1
    k: float = 0.2
    lr_bounds: tuple[float, float] = (0.001, 0.2)
    f_cap: float | None = 9.0
    adapt_lr: bool = True
    momentum: bool = True
    feedback: bool = True
    momentum_increase_bounds: tuple[float | None, float | None] = (0.0, 0.4)
    situation_threshold: float = 30.0
    warmup_momentum: float = 0.0


def _ssbc_situation(per_class_accuracy, threshold: float) -> tuple[int, float]:
    """SSBC situation (paper §3.3; spec §4): spread = max − min per-label accuracy of the received
    global model ≥ ``threshold`` → 2 (dispersed data), else 1 (straggling); no accuracies → spread
    0. ``per_class_accuracy``: a tensor, a zero-argument callable giving one, or None."""
    acc = per_class_accuracy() if callable(per_class_accuracy) else per_class_accuracy
    spread = per_label_spread(acc) if acc is not None else 0.0
    return (2 if spread >= threshold else 1), spread


def mod2_adapt(
    lr_prev: float,
    s_i: float | None,
    s_bar: float | None,
    f_i: float | None,
    f_bar: float | None,
    params: Mod2Params = Mod2Params(),
    *,
    per_class_accuracy: Tensor | Callable[[], Tensor] | None = None,
    G: float | None = None,
    momentum_G: float | None = None,
) -> Mod2Result:
    """Mod② (paper §3.3, eqs. 1-2 and the type table of spec §4) for one training start.

    Indicators: update speed f_i = n(i)/mean_j n(j) (eq. 1) and similarity s_i (Mod①); the
    dividers f̄, s̄ are means over the clients that have a value (eq. 2). Until all four are
    defined the client is in **warm-up** (no adaptation: lr unchanged, ``warmup_momentum``, no
    feedback) [C]. Constants and switches: ``params`` (:class:`Mod2Params`).

    ========  ======================  ==============  ====================  ==============
    type      condition               learning rate   momentum              feedback
    ========  ======================  ==============  ====================  ==============
    FSBC      f_i > f̄, s_i < s̄        unchanged       0                     on
    FWBC      f_i > f̄, s_i ≥ s̄        η − a·F         m_i                   off
    SWBC      f_i ≤ f̄, s_i ≥ s̄        η + a·F         m_i                   off
    SSBC      f_i ≤ f̄, s_i < s̄        η + a·F         sit. 1: m_i, 2: 0     sit. 2: on
    ========  ======================  ==============  ====================  ==============

    F = f̄/f_i capped at ``f_cap``; η clipped to ``lr_bounds``; m_i from :func:`momentum_rate`
    with G = s̄/s_i (:func:`bias_ratio`).

    ``s_bar`` is the divider of the type test (s_i < s_bar = strongly biased). The official code's
    test θ_i > θ̄ [C] (issue 11 (a)) is this one with s_bar = 1/(1+θ̄) (d ↦ 1/(1+d) is
    decreasing). ``G`` overrides the reported ratio (Mod③ uses it; default s̄/s_i), and
    ``momentum_G`` the ratio in m_i (default s̄/s_i) — :class:`FedQS` passes the code's d_i/d̄ for
    ``bias_ratio`` / ``momentum_rule`` [C].

    SSBC situation (:func:`_ssbc_situation`; ``per_class_accuracy`` is evaluated only for SSBC):
    situation 2 → momentum 0, feedback on; situation 1 → momentum m_i. The test is skipped
    (situation None, treated as 1) when neither momentum nor feedback is on — it could change
    nothing.
    """
    p = params
    defined = all(v is not None and not math.isnan(v) for v in (s_i, s_bar, f_i, f_bar))
    if not defined or f_i <= 0:
        m = p.warmup_momentum if p.momentum else 0.0
        return Mod2Result("warmup", float(lr_prev), float(m), False, float("nan"), float("nan"))

    F = f_bar / f_i
    if p.f_cap is not None:
        F = min(F, p.f_cap)
    paper_G = bias_ratio(s_i, s_bar)
    G = paper_G if G is None else G
    fast = f_i > f_bar
    biased = s_i < s_bar
    mG = paper_G if momentum_G is None else momentum_G
    m_i = momentum_rate(mG, p.m0, p.k, p.momentum_increase_bounds) if p.momentum else 0.0

    situation = spread = None
    if fast and biased:
        kind, lr, m, fb = "FSBC", lr_prev, 0.0, True
    elif fast:
        kind, lr, m, fb = "FWBC", lr_prev - p.a * F, m_i, False
    elif not biased:
        kind, lr, m, fb = "SWBC", lr_prev + p.a * F, m_i, False
    else:
        kind, lr = "SSBC", lr_prev + p.a * F
        if p.momentum or p.feedback:
            situation, spread = _ssbc_situation(per_class_accuracy, p.situation_threshold)
        m, fb = (0.0, True) if situation == 2 else (m_i, False)
    lr = min(max(lr_prev if not p.adapt_lr else lr, p.lr_bounds[0]), p.lr_bounds[1])
    return Mod2Result(kind, float(lr), float(m), bool(fb and p.feedback), float(F), float(G), situation, spread)


# ============================================================================================
# Mod③ — global model aggregation weights (paper §3.4)
# ============================================================================================
#: Mod③'s quadratic term (§3.4; spec §5): name → Q(G) of the (capped) ratios G
Q_FUNCTIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "code": lambda g: 1 + g**2,  # [C] 1 + min(G, 2)²
    "paper": lambda g: (1 + g) ** 2,  # [P] the "quadratic term" (1 + G)² (rendering ambiguous)
}
Q_FORMS = tuple(Q_FUNCTIONS)


def mod3_weights(
    num_samples,
    feedback_flags,
    F_shares,
    G_values,
    K: int,
    N: int,
    *,
    q: str = "code",
    g_cap: float | None = 2.0,
    phi: float | None = None,
) -> Tensor:
    """Mod③ (paper §3.4): normalised aggregation weights of the K buffered updates (float64).

    p_i = n_i / Σ n (data-size weights); for every update with a feedback flag (FSBC, SSBC
    situation 2): p_i ← p_i · exp(φ − F_i) / 2^(φ − F_i) · Q(G_i), φ = K/N, F_i = the client's
    share of all aggregated updates so far [C], G_i = s̄/s_i; then p ← p / Σ p.

    Q: ``q="code"`` (default) 1 + min(G, 2)² as the official code; ``q="paper"`` (1 + G)², the
    paper's "quadratic term" (its rendering "(1+G)2K" is ambiguous, spec §5). ``g_cap`` (default
    2, the code's) caps G in both forms; ``None`` leaves it uncapped (an infinite Q then takes the
    whole weight, shared equally among the infinite ones).

    ``phi``: None = K/N [P]; a number replaces it (the code's 0.1 [C], issue 11 (c)).
    """
    q_of = _pick("Mod③ Q form", q, Q_FUNCTIONS)
    n = torch.as_tensor(num_samples, dtype=torch.float64).flatten()
    flags = torch.as_tensor(feedback_flags, dtype=torch.bool).flatten()
    F = torch.as_tensor(F_shares, dtype=torch.float64).flatten()
    G = torch.as_tensor(G_values, dtype=torch.float64).flatten()
    check(
        n.numel() == flags.numel() == F.numel() == G.numel(),
        f"mod3_weights: lengths differ (samples {n.numel()}, flags {flags.numel()}, "
        f"F {F.numel()}, G {G.numel()})",
    )
    check(N > 0 and K > 0, f"mod3_weights needs K, N > 0 (got K={K}, N={N})")
    total = n.sum()
    p = n / total if total > 0 else torch.full_like(n, 1.0 / max(n.numel(), 1))
    if flags.any():
        phi = K / N if phi is None else float(phi)
        g = torch.nan_to_num(G, nan=1.0)
        if g_cap is not None:
            g = g.clamp(max=g_cap)
        Q = q_of(g)
        boost = (math.e / 2) ** (phi - F) * Q  # exp(φ−F)/2^(φ−F) = (e/2)^(φ−F)
        p = torch.where(flags, p * boost, p)
        if torch.isinf(p).any():
            p = torch.isinf(p).to(torch.float64)
    s = p.sum()
    return p / s if s > 0 else torch.full_like(p, 1.0 / max(p.numel(), 1))


# ============================================================================================
# the rules where paper and official code differ (spec §3-§5; issues 11 and 21)
# ============================================================================================
def _holdout_indices(c: int, ctx: SimContext) -> Tensor:
    """[P] the client's validation part (``ctx.val_parts``, spec 8:2)."""
    return torch.as_tensor(ctx.val_parts[c], dtype=torch.long).cpu()


def _first_per_class_indices(c: int, ctx: SimContext) -> Tensor:
    """[C] (g): the first ≤ 20 samples per class, in the order of the client's training indices."""
    part = torch.as_tensor(ctx.train_parts[c], dtype=torch.long).cpu()
    y = ctx.dataset.train_y.detach().cpu()[part]
    keep = torch.zeros(part.numel(), dtype=torch.bool)
    for cls in torch.unique(y).tolist():
        keep[torch.nonzero(y == cls).flatten()[:20]] = True
    return part[keep]


def _random_per_class_indices(c: int, ctx: SimContext) -> Tensor:
    """[D] ≤ 20 random samples per class from the client's own training data (seeded)."""
    from fedlib.core.utils import generator  # noqa: PLC0415

    part = torch.as_tensor(ctx.train_parts[c], dtype=torch.long).cpu()
    y = ctx.dataset.train_y.detach().cpu()[part]
    order = torch.randperm(part.numel(), generator=generator(ctx.seed, "fedqs-val", c))
    picked = [part[order[y[order] == cls][:20]] for cls in torch.unique(y).tolist()]
    return torch.cat(picked) if picked else part[:0]


@dataclass(frozen=True)
class ValidationRule:
    """One SSBC situation-test data rule (spec §4): ``indices(c, ctx)`` picks client c's
    validation samples; ``per_class``: ≤ 20 per class of the training data, and a class with < 10
    samples has its accuracy halved [C] (else the holdout part [P])."""

    name: str
    indices: Callable[[int, SimContext], Tensor]
    per_class: bool

    def for_context(self, ctx: SimContext) -> "ValidationRule":
        """The rule that applies to ``ctx``: itself, except ``auto`` (the default, spec §4
        revised), which is ``holdout`` when the run has a validation part per client
        (``data.validation=holdout``, the paper's 8:2 variant) and ``first_per_class`` otherwise
        (the official code: ≤ 20 per class of the training data, kept in training)."""
        if self.name != "auto":
            return self
        return VALIDATION_RULES["holdout" if ctx.val_parts is not None else "first_per_class"]

    def check_context(self, ctx: SimContext) -> None:
        """Raise unless ``ctx`` carries the data this rule reads."""
        if self.per_class:
            check(
                ctx.train_parts is not None and getattr(ctx.dataset, "train_y", None) is not None,
                f"FedQS validation={self.name!r} needs ctx.train_parts and ctx.dataset.train_y",
                "run FedQS through the SAFL simulator",
            )
        else:
            check(
                ctx.val_parts is not None,
                f"FedQS validation={self.name!r} needs a validation part per client (SSBC situation test)",
                "set data.validation='holdout' (8:2 split) or options validation='per_class'",
            )


#: SSBC situation-test data (spec §4): name → :class:`ValidationRule`
VALIDATION_RULES: dict[str, ValidationRule] = {
    v.name: v
    for v in (
        ValidationRule("holdout", _holdout_indices, per_class=False),  # [P]
        ValidationRule("per_class", _random_per_class_indices, per_class=True),  # [D]
        ValidationRule("first_per_class", _first_per_class_indices, per_class=True),  # [C] (g)
        # [D] default (spec §4 revised): first_per_class, or holdout where data.validation sets one
        ValidationRule("auto", _first_per_class_indices, per_class=True),
    )
}
VALIDATIONS = tuple(VALIDATION_RULES)
PER_CLASS_VALIDATIONS = tuple(name for name, v in VALIDATION_RULES.items() if v.per_class)

# The two-way rules: name → what it selects (looked up once, by FedQSRules' properties).
#: feedback_reset (spec §5): does the flag (and G) travel with its update [D]? (else the code's
#: per-client table, read at aggregation and cleared after each one [C])
FEEDBACK_WITH_UPDATE = {"update": True, "global": False}
#: threshold_on (§3.3 eq. 2; issue 11 (a)): is "strongly biased" d_i > d̄ on distances [C]?
DISTANCE_THRESHOLD = {"similarity": False, "distance": True}
#: bias_ratio (§3.4; issue 11 (b)): is Mod③'s G = d_i/d̄ [C]? (else s̄/s_i [P])
DISTANCE_BIAS_RATIO = {"similarity": False, "distance": True}
#: momentum_rule (§3.3; issue 11 (d)): is m_i the code's m0 + 2·(d̄/d_i − 1) [C]?
CODE_MOMENTUM = {"paper": False, "code": True}
#: threshold_refresh (issue 11 (e)): are the dividers computed at every start [D]? (else frozen
#: after each aggregation [C])
DIVIDERS_AT_START = {"start": True, "aggregation": False}
#: first_comparison (§3.2; issue 11 (f)): the first global version Mod① compares from
#: (``initial``: any — w^1 vs the initial model [P]; ``skip_initial``: 2 [C])
FIRST_COMPARISON_ROUND = {"initial": 0, "skip_initial": 2}
FEEDBACK_RESETS = tuple(FEEDBACK_WITH_UPDATE)
THRESHOLDS_ON = tuple(DISTANCE_THRESHOLD)
BIAS_RATIOS = tuple(DISTANCE_BIAS_RATIO)
MOMENTUM_RULES = tuple(CODE_MOMENTUM)
THRESHOLD_REFRESHES = tuple(DIVIDERS_AT_START)
FIRST_COMPARISONS = tuple(FIRST_COMPARISON_ROUND)

#: every named rule: (the kind named in errors, its table of choices)
_RULE_CHOICES = {
    "similarity": ("similarity", SIMILARITY_REGISTRY),
    "mod1_vector": ("Mod① vector", PSEUDO_GRADIENTS),
    "feedback_reset": ("FedQS feedback_reset", FEEDBACK_WITH_UPDATE),
    "validation": ("FedQS validation", VALIDATION_RULES),
    "threshold_on": ("FedQS threshold_on", DISTANCE_THRESHOLD),
    "bias_ratio": ("FedQS bias_ratio", DISTANCE_BIAS_RATIO),
    "momentum_rule": ("FedQS momentum_rule", CODE_MOMENTUM),
    "threshold_refresh": ("FedQS threshold_refresh", DIVIDERS_AT_START),
    "first_comparison": ("FedQS first_comparison", FIRST_COMPARISON_ROUND),
}


@dataclass(frozen=True)
class FedQSRules:
    """The resolved value of every fidelity-governed FedQS rule (spec §3-§5; issue 11 (a)-(g)).

    Two named instances: :data:`PAPER_RULES` [P]/[D] and :data:`OFFICIAL_RULES` [C];
    :meth:`FedQSOptions.fidelity_rules` picks one by ``fidelity`` and replaces the rules whose
    option is set explicitly (``dataclasses.replace``). Fields hold the choices' names (as in the
    options); the properties give the behaviour each name selects, from the tables above.
    Validated on construction (names, φ, and the distance rules needing a distance similarity).
    """

    similarity: str
    mod1_vector: str
    feedback_reset: str
    validation: str
    threshold_on: str
    bias_ratio: str
    phi: float | str
    momentum_rule: str
    threshold_refresh: str
    first_comparison: str

    def __post_init__(self):
        for name, (kind, table) in _RULE_CHOICES.items():
            check_choice(kind, getattr(self, name), table)
        phi = self.phi
        if isinstance(phi, str):
            check_choice("FedQS phi", phi, (PHI_K_OVER_N,))
        else:
            check(isinstance(phi, (int, float)) and not isinstance(phi, bool) and phi > 0,
                  f"FedQS phi must be 'k/n' or a number > 0, got {phi!r}", "e.g. phi=k/n or phi=0.1")
        uses_distance = [name for name, on in (("threshold_on", self.distance_threshold),
                                               ("bias_ratio", self.distance_bias_ratio),
                                               ("momentum_rule", self.code_momentum)) if on]
        if uses_distance and not self.measure.distance:
            raise FedlibError(
                f"FedQS {', '.join(f'{n}={getattr(self, n)!r}' for n in uses_distance)} needs a "
                f"distance-based similarity ({', '.join(DISTANCE_SIMILARITIES)}), got similarity={self.similarity!r}",
                "set options.similarity=angle, or the paper's rules "
                + " ".join(f"options.{n}={getattr(PAPER_RULES, n)}" for n in uses_distance),
            )

    def as_dict(self) -> dict:
        """The rules by name (the options' spelling)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def measure(self) -> Similarity:
        """Mod①'s metric (:data:`SIMILARITY_REGISTRY`)."""
        return SIMILARITY_REGISTRY[self.similarity]

    @property
    def pseudo_gradient(self) -> Callable[[Tensor, Tensor], Tensor]:
        """Mod①'s L_g of one entry (:data:`PSEUDO_GRADIENTS`)."""
        return PSEUDO_GRADIENTS[self.mod1_vector]

    @property
    def validation_rule(self) -> ValidationRule:
        return VALIDATION_RULES[self.validation]

    @property
    def feedback_with_update(self) -> bool:
        return FEEDBACK_WITH_UPDATE[self.feedback_reset]

    @property
    def distance_threshold(self) -> bool:
        return DISTANCE_THRESHOLD[self.threshold_on]

    @property
    def distance_bias_ratio(self) -> bool:
        return DISTANCE_BIAS_RATIO[self.bias_ratio]

    @property
    def code_momentum(self) -> bool:
        return CODE_MOMENTUM[self.momentum_rule]

    @property
    def dividers_at_start(self) -> bool:
        return DIVIDERS_AT_START[self.threshold_refresh]

    @property
    def first_comparison_round(self) -> int:
        return FIRST_COMPARISON_ROUND[self.first_comparison]

    @property
    def phi_value(self) -> float | None:
        """φ for :func:`mod3_weights`: None = K/N [P], else the number ([C] (c) 0.1)."""
        return None if isinstance(self.phi, str) else float(self.phi)


#: the paper's rules (the default fidelity)
PAPER_RULES = FedQSRules(
    similarity="cosine",  # [P] §5.1
    mod1_vector="delta",  # [P] §3.2 L_g = w^t − w^{t−1}
    feedback_reset="update",  # [D]
    validation="auto",  # spec §4 revised: the code's ≤ 20 per class of the training data [C],
    # or the paper's 8:2 holdout [P] when the run sets data.validation=holdout (a named variant)
    threshold_on="similarity",  # [P] eq. 2: s_i < s̄
    bias_ratio="similarity",  # [P] §3.3 G = s̄/s_i
    phi=PHI_K_OVER_N,  # [P] §3.4 φ = K/N
    momentum_rule="paper",  # [P] §3.3 m = m0 + k(1/G − 1), G = s̄/s_i
    threshold_refresh="start",  # [D] dividers from the current tables at each start
    first_comparison="initial",  # [P] L_g = w^1 − w^0 is the first pseudo-gradient
)
#: the official code's rules (``fidelity="official"``)
OFFICIAL_RULES = FedQSRules(
    similarity="angle",  # [C] spec §3 (b)
    mod1_vector="prev_global",  # [C] spec §3 (a)
    feedback_reset="global",  # [C] spec §5
    validation="first_per_class",  # [C] (g) first ≤ 20 per class of the training data
    threshold_on="distance",  # [C] (a) θ_i > mean θ over θ > 0
    bias_ratio="distance",  # [C] (b) G = θ_i / mean θ (θ > 0)
    phi=CODE_PHI,  # [C] (c) φ = 0.1
    momentum_rule="code",  # [C] (d) m = m0 + clamp(2·(θ̄/θ_i − 1), [0, 0.4])
    threshold_refresh="aggregation",  # [C] (e) dividers recomputed after each aggregation
    first_comparison="skip_initial",  # [C] (f) the initial model is never w^{t−1}
)
#: ``FedQSOptions.fidelity`` → its rules object
RULES_BY_FIDELITY = {"paper": PAPER_RULES, "official": OFFICIAL_RULES}
FIDELITIES = tuple(RULES_BY_FIDELITY)
#: the fidelity-governed option names (the fields of :class:`FedQSRules`)
RULE_NAMES = tuple(f.name for f in dataclasses.fields(FedQSRules))
#: the same rules as plain dicts (what each ``fidelity`` selects for the options left at None)
FIDELITY_RULES = {fidelity: rules.as_dict() for fidelity, rules in RULES_BY_FIDELITY.items()}


# ============================================================================================
# the options and the Strategy
# ============================================================================================
def _combine_models(global_state: State, updates: list[Update], p: Tensor) -> State:
    """FedQS-Avg (§3.4): w ← Σ p_i w_i."""
    return weighted_model_average([u.state for u in updates], p)


def _combine_deltas(global_state: State, updates: list[Update], p: Tensor) -> State:
    """FedQS-SGD (§3.4): w ← w + Σ p_i Δ_i."""
    return apply_delta(global_state, [u.delta for u in updates], p)


#: variant → (the Strategy's ``aggregation``, its Mod③ combination)
VARIANT_AGGREGATION = {"avg": ("model", _combine_models), "sgd": ("gradient", _combine_deltas)}
VARIANTS = tuple(VARIANT_AGGREGATION)
#: local_update → is the client's latest update stored at upload (else once aggregated)?
STORE_AT_UPLOAD = {"upload": True, "aggregated": False}
LOCAL_UPDATE_AT = tuple(STORE_AT_UPLOAD)


@dataclass
class FedQSOptions:
    """Every FedQS option (spec §3-§5). Defaults follow the paper; the code's behaviour where it
    differs is one option away ([C] below), and ``fidelity="official"`` selects all of it at once.

    fidelity: ``paper`` (default) | ``official`` [C]: picks the rules object (:data:`PAPER_RULES`
        | :data:`OFFICIAL_RULES`) that gives the value of every option below that is left at
        ``None`` (:meth:`fidelity_rules`). An option set explicitly always wins over
        the fidelity (so ``fidelity=official, similarity=euclidean`` is the code's wiring on
        Euclidean distances); contradictory combinations raise (the distance rules need a
        distance-based similarity). ``None`` stays in the stored (hashed) options — it means "as
        ``fidelity`` says", and keeps ``--set options.fidelity=official`` working on a validated
        preset, whose options are completed with defaults; :meth:`fidelity_rules` gives the
        resolved :class:`FedQSRules` (the Strategy keeps it), :meth:`resolved` the options with
        those values explicit. Not governed: ``momentum`` (the official main scripts
        train without momentum, its momentum scripts with the rule of (d); fidelity keeps it on)
        and the simulator's ``safl.upload=overwrite`` (not an algorithm option).
    variant: ``avg`` FedQS-Avg (w ← Σ p_i w_i) | ``sgd`` FedQS-SGD (w ← w + Σ p_i Δ_i).
    mod1_vector: ``delta`` [P] L_g = w^t − w^{t−1} | ``prev_global`` [C] the code's w^{t−1}.
    similarity: ``cosine`` [P] | ``angle`` [C] | ``euclidean`` | ``manhattan`` (larger = more
        similar; the last three are s = 1/(1+d) with a distance d).
    local_update: when a client's "latest local update" for Mod① is refreshed: ``upload`` (when
        it reaches the buffer — the client knows its own update then, as in the code) |
        ``aggregated`` (only once the server aggregated it).
    adapt_lr: Mod② learning-rate adaptation on/off (off: η stays ``eta0``).
    momentum: Mod② momentum on/off (off = the official main scripts: momentum 0 everywhere).
    feedback: Mod③ feedback on/off.
    feedback_reset: ``update`` [D] (the flag and G travel with the update they were computed for)
        | ``global`` [C] a per-client flag table, read at aggregation (with the current G) and
        cleared for every client after each aggregation.
    validation: SSBC situation test data: ``auto`` (default, spec §4 revised: ``holdout`` where the
        run sets ``data.validation=holdout``, else ``first_per_class``) | ``holdout`` [P] (the client's validation part
        ``ctx.val_parts``, spec 8:2) | ``per_class`` [D] ≤ 20 *random* samples per class from the
        client's training data | ``first_per_class`` [C] (g) the *first* ≤ 20 per class, in the
        order of the client's training indices; both per-class forms halve the accuracy of a
        class with < 10 samples [C].
    threshold_on: Mod② "strongly biased" test (§3.3, eq. 2): ``similarity`` [P] s_i < s̄, s̄ the
        mean s | ``distance`` [C] (a) d_i > d̄, d = 1/s − 1 (θ for ``angle``) and d̄ the mean over
        clients with d > 0 (a zero angle counts as "no value").
    bias_ratio: G of Mod③'s Q(G) (§3.4): ``similarity`` [P] G = s̄/s_i = (1+θ_i)·mean(1/(1+θ)) |
        ``distance`` [C] (b) G = d_i/d̄ (d̄ over d > 0).
    phi: φ of Mod③'s exp(φ−F)/2^(φ−F) (§3.4): ``"k/n"`` [P] φ = K/N | a number [C] (c) the code's
        0.1 (equal to K/N only at K = 10, N = 100).
    momentum_rule: m_i of Mod② (§3.3): ``paper`` [P] m0 + k(1/G − 1), G = s̄/s_i | ``code`` [C]
        (d) m0 + 2·(d̄/d_i − 1) (the code's 20·(0.1·θ̄/θ_i − 0.1): an effective k = 2, ``k`` is
        not used); both clamp the increase to [momentum_min_increase, momentum_max_increase]
        (the code's [0, 0.4], m ≤ 0.5).
    threshold_refresh: when the dividers s̄ (or d̄) of Mod② are computed: ``start`` [D] at every
        training start, from the current table (the new s_i included) | ``aggregation`` [C] (e)
        after each aggregation, then frozen until the next one (warm-up until the first).
    first_comparison: Mod① (§3.2): ``initial`` [P] the first comparison uses the initial model
        as w^{t−1} (a client starting from version 1) | ``skip_initial`` [C] (f) one round later
        (from version 2: the code's round-0 model overwrites the initial one).
    a, m0, k: change rate of η, initial momentum, momentum change speed (paper §5.4 defaults).
    eta0: initial learning rate (None = ``local.lr`` of the run).
    lr_min, lr_max: η bounds [C]. f_cap: cap of F = f̄/f_i [C].
    momentum_min_increase, momentum_max_increase: bounds on k(1/G − 1) [C] (None = unbounded).
    situation_threshold: per-label accuracy spread (percentage points) for SSBC situation 2 [C].
    q: ``code`` Q = 1 + min(G, 2)² | ``paper`` Q = (1 + G)². g_cap: cap on G in Q (None = none).
    """

    variant: str = "avg"
    fidelity: str = "paper"
    mod1_vector: str | None = None
    similarity: str | None = None
    local_update: str = "upload"
    adapt_lr: bool = True
    momentum: bool = True
    feedback: bool = True
    feedback_reset: str | None = None
    validation: str | None = None
    threshold_on: str | None = None
    bias_ratio: str | None = None
    phi: float | str | None = None
    momentum_rule: str | None = None
    threshold_refresh: str | None = None
    first_comparison: str | None = None
    a: float = 0.002
    m0: float = 0.1
    k: float = 0.2
    eta0: float | None = None
    lr_min: float = 0.001
    lr_max: float = 0.2
    f_cap: float | None = 9.0
    momentum_min_increase: float | None = 0.0
    momentum_max_increase: float | None = 0.4
    situation_threshold: float = 30.0
    q: str = "code"
    g_cap: float | None = 2.0


    def fidelity_rules(self) -> FedQSRules:
        """The rules this run uses: the fidelity's object (:data:`RULES_BY_FIDELITY`) with every
        rule whose option is set (not None) replaced by that option; validated."""
        check_choice("FedQS fidelity", self.fidelity, RULES_BY_FIDELITY)
        explicit = {name: getattr(self, name) for name in RULE_NAMES if getattr(self, name) is not None}
        return dataclasses.replace(RULES_BY_FIDELITY[self.fidelity], **explicit)

    def rules(self) -> dict:
        """The fidelity-governed options with ``None`` replaced by the fidelity's value."""
        return self.fidelity_rules().as_dict()

    def resolved(self) -> "FedQSOptions":
        """A copy with every fidelity-governed option explicit (what :class:`FedQS` runs with)."""
        return dataclasses.replace(self, **self.rules())

    def __post_init__(self):
        self.fidelity_rules()  # validates the fidelity and every rule
        check_choice("FedQS variant", self.variant, VARIANT_AGGREGATION)
        check_choice("FedQS local_update", self.local_update, STORE_AT_UPLOAD)
        check_choice("Mod③ Q form", self.q, Q_FUNCTIONS)
        check(0 < self.lr_min <= self.lr_max, f"FedQS needs 0 < lr_min <= lr_max, got {self.lr_min}, {self.lr_max}")
        check(self.eta0 is None or self.eta0 > 0, f"FedQS eta0 must be > 0, got {self.eta0}")
        check(self.a >= 0 and self.k >= 0, f"FedQS a and k must be >= 0, got a={self.a}, k={self.k}")
        check(0 <= self.m0 < 1, f"FedQS m0 must be in [0, 1), got {self.m0}")
        check(self.f_cap is None or self.f_cap > 0, f"FedQS f_cap must be > 0, got {self.f_cap}")
        check(self.g_cap is None or self.g_cap > 0, f"FedQS g_cap must be > 0, got {self.g_cap}")

    def mod2_params(self, rules: FedQSRules, warmup_momentum: float = 0.0) -> Mod2Params:
        """Mod②'s constants for these options under ``rules`` (k = 2 for the code's momentum
        rule [C] (d))."""
        return Mod2Params(
            a=self.a, m0=self.m0, k=CODE_K if rules.code_momentum else self.k,
            lr_bounds=(self.lr_min, self.lr_max), f_cap=self.f_cap, adapt_lr=self.adapt_lr,
            momentum=self.momentum, feedback=self.feedback,
            momentum_increase_bounds=(self.momentum_min_increase, self.momentum_max_increase),
            situation_threshold=self.situation_threshold, warmup_momentum=warmup_momentum,
        )


def _nanmean(x: Tensor) -> float:
    x = x[~torch.isnan(x)]
    return float(x.mean()) if x.numel() else float("nan")


class FedQS(Strategy):
    """FedQS (paper §3) on the shared SAFL simulator.

    Per client the strategy keeps its learning rate η_i (cumulative across starts), its latest
    similarity s_i, its latest not-yet-used local update (for Mod①) and, for
    ``feedback_reset="global"``, its feedback flag. The rules are resolved once, at
    construction, into :attr:`rules` (:class:`FedQSRules`); the hooks read that object.

    * :meth:`on_upload` (``local_update="upload"``) / :meth:`aggregate`
      (``local_update="aggregated"``) stores the client's newest Δ_i.
    * :meth:`start`: Mod① on the two newest globals (``ctx.global_history(2)``) and the stored
      Δ_i (used once, then dropped — the next start always follows a newer upload; no new Δ or
      an undefined similarity keeps the previous s_i), then Mod② with f from ``ctx.agg_counts``
      and the dividers f̄, s̄ of the current tables. Returns ``base_local`` with lr = η_i and
      momentum = m_i (heavy-ball, fresh buffer per local run — the engine's job) and an info dict
      {type, feedback, s, f, F, G, situation, lr, momentum} carried by the Update.
    * :meth:`aggregate`: Mod③ weights, then the variant's rule (BN buffers like parameters,
      integer buffers rounded by the helpers).
    """

    name = "fedqs"
    Options = FedQSOptions
    history = 2

    def __init__(self, options=None):
        super().__init__(options)
        self.rules: FedQSRules = self.options.fidelity_rules()  # chosen once: fidelity + explicit options
        self.aggregation, self._combine = VARIANT_AGGREGATION[self.options.variant]
        self._store_at_upload = STORE_AT_UPLOAD[self.options.local_update]
        self._mod2 = self.options.mod2_params(self.rules)  # warmup_momentum follows ctx.base_local
        self.n = 0
        self._lr = torch.zeros(0, dtype=torch.float64)
        self._sim = torch.zeros(0, dtype=torch.float64)
        self._flags = torch.zeros(0, dtype=torch.bool)
        self._pending: dict[int, State] = {}
        self._rows: list[dict] = []
        self._keys: list[str] | None = None
        self._val_cache: dict[int, Tensor] = {}
        self._mod1_cache: dict = {}  # speed only: L_g of the two newest globals (mod1_similarity)
        self._frozen = (float("nan"), float("nan"))  # (s̄, d̄) after the last aggregation
        self.last_weights: Tensor | None = None

    # -- setup ----------------------------------------------------------------------------
    def _eta0(self, ctx: SimContext) -> float:
        if self.options.eta0 is not None:
            return float(self.options.eta0)
        lr = getattr(ctx.base_local, "lr", None)
        return float(lr) if lr is not None else 0.1

    def setup(self, ctx: SimContext) -> None:
        o = self.options
        self.n = int(ctx.n_clients)
        self._lr = torch.full((self.n,), self._eta0(ctx), dtype=torch.float64)
        self._sim = torch.full((self.n,), float("nan"), dtype=torch.float64)
        self._flags = torch.zeros(self.n, dtype=torch.bool)
        self._pending, self._rows, self._val_cache, self._mod1_cache = {}, [], {}, {}
        self._frozen = (float("nan"), float("nan"))
        if o.momentum:
            opt = getattr(ctx.base_local, "optimizer", "sgd")
            check(
                opt == "sgd",
                f"FedQS momentum (Mod②, heavy-ball) needs local.optimizer='sgd', got {opt!r}",
                "set local.optimizer='sgd' or options momentum=False",
            )
        if o.momentum or o.feedback:  # the SSBC situation test can change something
            self.rules.validation_rule.for_context(ctx).check_context(ctx)

    def _param_keys(self, ctx: SimContext, state: State) -> list[str]:
        if self._keys is None:
            names = [n for n, _ in ctx.model.named_parameters()] if ctx.model is not None else []
            keys = [k for k in names if k in state and torch.is_floating_point(state[k])]
            self._keys = keys or float_keys(state)
        return self._keys

    # -- Mod① inputs ----------------------------------------------------------------------
    def _store_local(self, update: Update) -> None:
        self._pending[int(update.client_id)] = {
            k: v.detach().clone() for k, v in update.delta.items() if torch.is_floating_point(v)
        }

    def on_upload(self, update: Update, ctx: SimContext) -> None:
        if self._store_at_upload:
            self._store_local(update)

    def _refresh_similarity(self, c: int, ctx: SimContext) -> float:
        delta = self._pending.get(c)
        if delta is not None:
            hist = ctx.global_history(2)
            # first_comparison="skip_initial" [C] (f): the initial model (version 0) is never
            # w^{t−1}, so the first comparison is w^2 vs w^1 (the code overwrites its file 0)
            if len(hist) >= 2 and int(ctx.round) >= self.rules.first_comparison_round:
                s = mod1_similarity(
                    hist[-1],
                    hist[-2],
                    delta,
                    vector=self.rules.pseudo_gradient,
                    similarity=self.rules.measure,
                    keys=self._param_keys(ctx, hist[-1]),
                    cache=self._mod1_cache,
                )
                del self._pending[c]
                if not math.isnan(s):
                    self._sim[c] = s
        return float(self._sim[c])

    # -- SSBC situation test ----------------------------------------------------------------
    def _validation(self, c: int, ctx: SimContext) -> Tensor:
        """The client's situation-test indices (cached; derived from the seed, not saved)."""
        if c not in self._val_cache:
            self._val_cache[c] = self.rules.validation_rule.for_context(ctx).indices(c, ctx)
        return self._val_cache[c]

    def _per_class_accuracy(self, c: int, ctx: SimContext) -> Tensor | None:
        """Per-label accuracy (percent) of the received global model on the client's validation
        samples; ``validation="per_class"`` / ``"first_per_class"`` halve a class with < 10 samples
        (the code)."""
        idx = self._validation(c, ctx)
        if idx.numel() == 0:
            return None
        acc = torch.as_tensor(ctx.evaluate_per_class(ctx.global_history(1)[-1], idx), dtype=torch.float64)
        acc = acc.cpu() * 100.0  # evaluate_per_class gives fractions; the threshold is in points
        if self.rules.validation_rule.for_context(ctx).per_class:
            counts = torch.bincount(ctx.dataset.train_y.detach().cpu()[idx], minlength=acc.numel())
            acc = torch.where(counts[: acc.numel()] < 10, acc / 2, acc)
        return acc

    # -- the Strategy hooks -------------------------------------------------------------------
    def _speeds(self, ctx: SimContext) -> tuple[Tensor, float]:
        counts = torch.as_tensor(ctx.agg_counts, dtype=torch.float64).cpu()
        total = float(counts.sum())
        if total <= 0:
            return torch.full((self.n,), float("nan"), dtype=torch.float64), float("nan")
        f = counts / (total / self.n)  # eq. 1: f_i = n(i) / mean_j n(j)
        f = torch.where(counts > 0, f, torch.full_like(f, float("nan")))
        return f, _nanmean(f)

    def _mod2_params(self, base) -> Mod2Params:
        """Mod②'s constants, with the warm-up momentum of the run's local config."""
        warmup = float(getattr(base, "momentum", 0.0) or 0.0)
        if self._mod2.warmup_momentum != warmup:
            self._mod2 = dataclasses.replace(self._mod2, warmup_momentum=warmup)
        return self._mod2

    def start(self, client_id: int, ctx: SimContext):
        r = self.rules
        c = int(client_id)
        if self.n == 0:
            self.setup(ctx)
        s_i = self._refresh_similarity(c, ctx)
        # dividers: at every start from the current table [D], or frozen after aggregation [C] (e)
        s_bar, d_bar = self._dividers() if r.dividers_at_start else self._frozen
        f, f_bar = self._speeds(ctx)
        f_i = float(f[c])
        base = ctx.base_local
        # [P] s_i < s̄; [C] (a) d_i > d̄ ⇔ s_i < 1/(1+d̄) (NaN d̄ = no threshold: warm-up)
        divider = 1.0 / (1.0 + d_bar) if r.distance_threshold else s_bar
        paper_G = bias_ratio(s_i, s_bar)
        code_G = distance_ratio(s_i, d_bar)
        res = mod2_adapt(
            float(self._lr[c]), s_i, divider, f_i, f_bar, self._mod2_params(base),
            per_class_accuracy=lambda: self._per_class_accuracy(c, ctx),
            G=code_G if r.distance_bias_ratio else paper_G,  # Mod③'s G: [C] (b) | [P]
            momentum_G=code_G if r.code_momentum else paper_G,  # [C] (d) | [P]
        )
        self._lr[c] = res.lr
        self._flags[c] = res.feedback
        self._rows.append(_client_row(ctx, c, res, s_i, f_i))
        info = {
            "type": res.type,
            "feedback": res.feedback,
            "s": s_i,
            "f": f_i,
            "s_bar": s_bar,
            "d_bar": d_bar,
            "f_bar": f_bar,
            "F": res.F,
            "G": res.G,
            "situation": res.situation,
            "lr": res.lr,
            "momentum": res.momentum,
        }
        return _local_config(base, res.lr, res.momentum), info

    def _feedback_of(self, updates: list[Update]) -> tuple[list[bool], list[float]]:
        """(flags, G) of the updates for Mod③: none with feedback off; [D] those each update
        carries; [C] the per-client flag table, with G from the current similarity table."""
        if not self.options.feedback:
            return [False] * len(updates), [1.0] * len(updates)
        if self.rules.feedback_with_update:
            return ([bool(u.info.get("feedback", False)) for u in updates],
                    [float(u.info.get("G", 1.0)) for u in updates])
        s_bar, d_bar = self._dividers()
        flags = [bool(self._flags[int(u.client_id)]) for u in updates]
        sims = [float(self._sim[int(u.client_id)]) for u in updates]
        if self.rules.distance_bias_ratio:  # [C] (b): θ_i / mean θ over θ > 0, from the current table
            return flags, [distance_ratio(s, d_bar) for s in sims]
        return flags, [bias_ratio(s, s_bar) for s in sims]

    def aggregate(self, global_state: State, updates: list[Update], ctx: SimContext) -> State:
        check(len(updates) > 0, "FedQS.aggregate got no updates")
        # F_i: share of all aggregated updates so far, this round's included (as the code, which
        # increments its counts before weighing).
        counts = torch.as_tensor(ctx.agg_counts, dtype=torch.float64).cpu().clone()
        for u in updates:
            counts[int(u.client_id)] += 1
        total = float(counts.sum())
        F = [float(counts[int(u.client_id)]) / total for u in updates]
        flags, G = self._feedback_of(updates)
        p = mod3_weights(
            [u.num_samples for u in updates], flags, F, G, len(updates), ctx.n_clients,
            q=self.options.q, g_cap=self.options.g_cap, phi=self.rules.phi_value,  # [P] K/N | [C] (c) 0.1
        )
        self.last_weights = p
        new = self._combine(global_state, updates, p)
        if not self.rules.feedback_with_update:
            self._flags.zero_()
        if not self._store_at_upload:
            for u in updates:
                self._store_local(u)
        self._frozen = self._dividers()  # [C] (e) the code recomputes its thresholds here
        return new

    def _dividers(self) -> tuple[float, float]:
        """(s̄, d̄) of the current similarity table: s̄ the mean s [P], d̄ the code's mean
        distance over d > 0 [C] (:func:`distance_mean`)."""
        key = self._sim.numpy().tobytes()  # speed only: the table changes far less often than it is read
        cached = getattr(self, "_div_cache", None)
        if cached is None or cached[0] != key:
            cached = self._div_cache = (key, (_nanmean(self._sim), distance_mean(self._sim)))
        return cached[1]

    # -- persistence / records ---------------------------------------------------------------
    def client_rows(self) -> list[dict]:
        rows, self._rows = self._rows, []
        return rows

    def state_dict(self) -> dict:
        return {
            "n": self.n,
            "lr": self._lr.clone(),
            "sim": self._sim.clone(),
            "flags": self._flags.clone(),
            "frozen": list(self._frozen),
            "pending": {str(c): {k: v.clone() for k, v in d.items()} for c, d in self._pending.items()},
            "rows": [dict(r) for r in self._rows],
        }

    def load_state_dict(self, d: dict) -> None:
        self.n = int(d["n"])
        self._lr = d["lr"].clone().to(torch.float64)
        self._sim = d["sim"].clone().to(torch.float64)
        self._flags = d["flags"].clone().to(torch.bool)
        self._frozen = tuple(float(v) for v in d.get("frozen", (float("nan"), float("nan"))))
        self._pending = {int(c): {k: v.clone() for k, v in s.items()} for c, s in d["pending"].items()}
        self._rows = [dict(r) for r in d["rows"]]
        self._val_cache = {}
        self._mod1_cache = {}


def _local_config(base, lr: float, momentum: float):
    if base is None:
        from fedlib.train.config import LocalConfig  # noqa: PLC0415

        base = LocalConfig()
    return dataclasses.replace(base, lr=lr, momentum=momentum)


def _client_row(ctx: SimContext, c: int, res: Mod2Result, s_i: float, f_i: float) -> dict:
    """One record of :meth:`FedQS.client_rows`: a client's Mod② decision at one start."""
    return {
        "round": int(ctx.round),
        "tick": int(ctx.tick),
        "client": c,
        "type": res.type,
        "lr": res.lr,
        "momentum": res.momentum,
        "similarity": s_i,
        "speed": f_i,
        "feedback": res.feedback,
        "situation": res.situation,
        "spread": res.spread,
        "F": res.F,
        "G": res.G,
    }


@dataclass
class FedQSSGDOptions(FedQSOptions):
    """FedQS options with ``variant='sgd'`` as the default."""

    variant: str = "sgd"


class FedQSAvg(FedQS):
    """FedQS-Avg: model aggregation w ← Σ p_i w_i (paper §3.4)."""

    name = "fedqs-avg"
    aggregation = "model"

    def __init__(self, options=None):
        super().__init__(options)
        check(self.options.variant == "avg", "fedqs-avg aggregates models (variant='avg')",
              "use the algorithm fedqs-sgd for gradient aggregation")


class FedQSSGD(FedQS):
    """FedQS-SGD: gradient aggregation w ← w + Σ p_i Δ_i (paper §3.4; the momentum is inside Δ_i)."""

    name = "fedqs-sgd"
    aggregation = "gradient"
    Options = FedQSSGDOptions

    def __init__(self, options=None):
        super().__init__(options)
        check(self.options.variant == "sgd", "fedqs-sgd aggregates gradients (variant='sgd')",
              "use the algorithm fedqs-avg for model aggregation")


#: the registered FedQS algorithms (read by :mod:`fedlib.safl.algorithms`)
STRATEGIES = {FedQSAvg.name: FedQSAvg, FedQSSGD.name: FedQSSGD}
