"""FedQS (Li et al., NeurIPS 2025, §3; spec fedqs.md §3-§5): the three modules and the Strategy.

* **Mod①** global aggregation estimation (§3.2) — :func:`mod1_similarity`: how well a client's
  latest local update agrees with the pseudo-global gradient L_g = w_g^t − w_g^{t−1}.
* **Mod②** local training adaptation (§3.3, eqs. 1-3) — :func:`mod2_adapt`: the client's type
  (FSBC / FWBC / SWBC / SSBC) from update speed f and similarity s, and its learning rate,
  momentum and feedback flag.
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

Fidelity (issue 11): ``fidelity="paper"`` (default) or ``"official"`` — the official code's
wiring around its angles, each rule also a named option (:data:`FIDELITY_RULES`; an option set
explicitly wins over the fidelity): ``similarity=angle``, ``mod1_vector=prev_global``,
``feedback_reset=global`` and (a) ``threshold_on=distance`` θ_i > mean θ over θ > 0,
(b) ``bias_ratio=distance`` G = θ_i/θ̄, (c) ``phi=0.1``, (d) ``momentum_rule=code``
m = m0 + clamp(2(θ̄/θ_i − 1), [0, 0.4]), (e) ``threshold_refresh=aggregation``,
(f) ``first_comparison=skip_initial``, (g) ``validation=first_per_class``. The simulator's
``safl.upload=overwrite`` (the code's file-path buffer) is separate: it is not a FedQS option.
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
    "TYPES",
    "mod1_similarity",
    "code_angle",
    "bias_ratio",
    "per_label_spread",
    "Mod2Result",
    "mod2_adapt",
    "mod3_weights",
    "FedQSOptions",
    "FIDELITY_RULES",
    "FedQS",
    "FedQSAvg",
    "FedQSSGD",
    "FedQSSGDOptions",
    "momentum_rate",
    "STRATEGIES",
]

VECTORS = ("delta", "prev_global")
SIMILARITIES = ("cosine", "angle", "euclidean", "manhattan")
TYPES = ("FSBC", "FWBC", "SWBC", "SSBC", "warmup")
Q_FORMS = ("code", "paper")
VARIANTS = ("avg", "sgd")
FEEDBACK_RESETS = ("update", "global")
VALIDATIONS = ("holdout", "per_class", "first_per_class")
PER_CLASS_VALIDATIONS = VALIDATIONS[1:]  # ≤ 20 samples per class of the training data [D]/[C]
LOCAL_UPDATE_AT = ("upload", "aggregated")
FIDELITIES = ("paper", "official")
THRESHOLDS_ON = ("similarity", "distance")
BIAS_RATIOS = ("similarity", "distance")
MOMENTUM_RULES = ("paper", "code")
THRESHOLD_REFRESHES = ("start", "aggregation")
FIRST_COMPARISONS = ("initial", "skip_initial")
PHI_K_OVER_N = "k/n"
#: the similarities of the form s = 1/(1+d) with a distance d ≥ 0 (d = 1/s − 1; θ for ``angle``)
DISTANCE_SIMILARITIES = ("angle", "euclidean", "manhattan")
#: the official code's momentum rule: increase = 20·(0.1·θ̄/θ_i − 0.1) = CODE_K·(θ̄/θ_i − 1)
CODE_K = 2.0
#: the official code's φ (hard-coded; equals K/N only at N = 100, K = 10)
CODE_PHI = 0.1

#: what each ``FedQSOptions.fidelity`` selects for the options left at None (spec §3-§5; issue 11)
FIDELITY_RULES = {
    "paper": {
        "similarity": "cosine",  # [P] §5.1
        "mod1_vector": "delta",  # [P] §3.2 L_g = w^t − w^{t−1}
        "feedback_reset": "update",  # [D]
        "validation": "holdout",  # [P] 8:2 split
        "threshold_on": "similarity",  # [P] eq. 2: s_i < s̄
        "bias_ratio": "similarity",  # [P] §3.3 G = s̄/s_i
        "phi": PHI_K_OVER_N,  # [P] §3.4 φ = K/N
        "momentum_rule": "paper",  # [P] §3.3 m = m0 + k(1/G − 1), G = s̄/s_i
        "threshold_refresh": "start",  # [D] dividers from the current tables at each start
        "first_comparison": "initial",  # [P] L_g = w^1 − w^0 is the first pseudo-gradient
    },
    "official": {
        "similarity": "angle",  # [C] spec §3 (b)
        "mod1_vector": "prev_global",  # [C] spec §3 (a)
        "feedback_reset": "global",  # [C] spec §5
        "validation": "first_per_class",  # [C] (g) first ≤ 20 per class of the training data
        "threshold_on": "distance",  # [C] (a) θ_i > mean θ over θ > 0
        "bias_ratio": "distance",  # [C] (b) G = θ_i / mean θ (θ > 0)
        "phi": CODE_PHI,  # [C] (c) φ = 0.1
        "momentum_rule": "code",  # [C] (d) m = m0 + clamp(2·(θ̄/θ_i − 1), [0, 0.4])
        "threshold_refresh": "aggregation",  # [C] (e) dividers recomputed after each aggregation
        "first_comparison": "skip_initial",  # [C] (f) the initial model is never w^{t−1}
    },
}


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


def mod1_similarity(
    global_new: State,
    global_prev: State,
    local_update: State,
    *,
    vector: str = "delta",
    similarity: str = "cosine",
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
    *larger = more similar* (see the module docstring for the transforms). ``keys`` selects the
    state entries compared (default: every floating-point entry; :class:`FedQS` passes the model
    parameters). Returns NaN when the similarity is undefined (a zero vector for the cosine, no
    qualifying layer for the angle) — callers treat NaN as "no new value".

    Inputs may be states (``dict[str, Tensor]``) or plain tensors.

    ``cache`` (speed only): a dict the caller keeps while ``global_new``/``global_prev`` stay the
    same objects; the pseudo-global gradient and its squared norm per entry are computed once
    there and reused for every client (the same tensors, so the same numbers).
    """
    check_choice("Mod① vector", vector, VECTORS)
    check_choice("similarity", similarity, SIMILARITIES)
    g_new, g_prev, local = _as_state(global_new), _as_state(global_prev), _as_state(local_update)
    if keys is None:
        keys = float_keys(g_new)

    if cache is not None and not (cache.get("new") is global_new and cache.get("prev") is global_prev
                                  and cache.get("vector") == vector):
        cache.clear()
        cache.update(new=global_new, prev=global_prev, vector=vector, lg={}, aa={})

    def lg(k: str) -> Tensor:  # the pseudo-global gradient of one entry (float32, on its device)
        if cache is not None and k in cache["lg"]:
            return cache["lg"][k]
        if vector == "delta":
            v = g_new[k].detach().float() - g_prev[k].detach().float()
        else:
            v = g_prev[k].detach().float()
        if cache is not None:
            cache["lg"][k] = v
        return v

    def aa(k: str, a: Tensor) -> Tensor:  # ‖L_g‖² of one entry (float32)
        if cache is None:
            return torch.dot(a, a)
        if k not in cache["aa"]:
            cache["aa"][k] = torch.dot(a, a)
        return cache["aa"][k]

    if similarity == "angle":
        angle_keys = [k for k in keys if ("weight" in k or "bias" in k)] or list(keys)
        theta = code_angle({k: lg(k) for k in angle_keys}, local, angle_keys)
        return theta if math.isnan(theta) else 1.0 / (1.0 + theta)
    # entry by entry (float32 reductions summed in float64): no concatenated copy of the model
    sums = []
    for k in keys:
        a, b = lg(k).reshape(-1), local[k].detach().reshape(-1).to(g_new[k].device, torch.float32)
        if similarity == "cosine":
            parts = torch.stack([torch.dot(a, b), aa(k, a), torch.dot(b, b)])
        elif similarity == "euclidean":
            parts = torch.stack([(a - b).square().sum()])
        else:
            parts = torch.stack([(a - b).abs().sum()])
        sums.append(parts.double())
    acc = torch.stack(sums).sum(0).cpu() if sums else torch.zeros(3, dtype=torch.float64)
    if similarity == "cosine":
        if acc[1] == 0 or acc[2] == 0:
            return float("nan")
        return max(-1.0, min(1.0, float(acc[0] / (acc[1].sqrt() * acc[2].sqrt()))))
    d = float(acc[0].sqrt()) if similarity == "euclidean" else float(acc[0])
    return 1.0 / (1.0 + d)


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


def mod2_adapt(
    lr_prev: float,
    s_i: float | None,
    s_bar: float | None,
    f_i: float | None,
    f_bar: float | None,
    *,
    per_class_accuracy: Tensor | Callable[[], Tensor] | None = None,
    a: float = 0.002,
    m0: float = 0.1,
    k: float = 0.2,
    lr_bounds: tuple[float, float] = (0.001, 0.2),
    f_cap: float | None = 9.0,
    adapt_lr: bool = True,
    momentum: bool = True,
    feedback: bool = True,
    momentum_increase_bounds=(0.0, 0.4),
    situation_threshold: float = 30.0,
    warmup_momentum: float = 0.0,
    G: float | None = None,
    momentum_G: float | None = None,
) -> Mod2Result:
    """Mod② (paper §3.3, eqs. 1-2 and the type table of spec §4) for one training start.

    Indicators: update speed f_i = n(i)/mean_j n(j) (eq. 1) and similarity s_i (Mod①); the
    dividers f̄, s̄ are means over the clients that have a value (eq. 2). Until all four are
    defined the client is in **warm-up** (no adaptation: lr unchanged, ``warmup_momentum``, no
    feedback) [C].

    ========  ======================  ==============  ====================  ==============
    type      condition               learning rate   momentum              feedback
    ========  ======================  ==============  ====================  ==============
    FSBC      f_i > f̄, s_i < s̄        unchanged       0                     on
    FWBC      f_i > f̄, s_i ≥ s̄        η − a·F         m_i                   off
    SWBC      f_i ≤ f̄, s_i ≥ s̄        η + a·F         m_i                   off
    SSBC      f_i ≤ f̄, s_i < s̄        η + a·F         sit. 1: m_i, 2: 0     sit. 2: on
    ========  ======================  ==============  ====================  ==============

    F = f̄/f_i capped at ``f_cap`` = 9 [C]; η clipped to ``lr_bounds`` = [0.001, 0.2] [C];
    m_i from :func:`momentum_rate` with G = s̄/s_i (:func:`bias_ratio`). ``momentum=False``
    makes every momentum 0 (the official main scripts), ``feedback=False`` never raises the flag,
    ``adapt_lr=False`` keeps η = ``lr_prev``.

    ``s_bar`` is the divider of the type test (s_i < s_bar = strongly biased). The official code's
    test θ_i > θ̄ [C] (issue 11 (a)) is this one with s_bar = 1/(1+θ̄) (d ↦ 1/(1+d) is
    decreasing). ``G`` overrides the reported ratio (Mod③ uses it; default s̄/s_i), and
    ``momentum_G`` the ratio in m_i (default s̄/s_i) — :class:`FedQS` passes the code's d_i/d̄ for
    ``bias_ratio`` / ``momentum_rule`` [C].

    SSBC situation (§3.3): ``per_class_accuracy`` (percent per label, NaN = absent; a tensor or
    a zero-argument callable, evaluated only for SSBC) of the received global model on the
    client's validation set; spread = max − min ≥ ``situation_threshold`` (30 pp [C]) →
    situation 2 (dispersed data: momentum 0, feedback on), else situation 1 (straggling:
    momentum m_i). Without accuracies the spread counts as 0 (situation 1). The test is skipped
    (situation None, treated as 1) when neither momentum nor feedback is on — it could change
    nothing.
    """
    lo, hi = lr_bounds
    defined = all(v is not None and not math.isnan(v) for v in (s_i, s_bar, f_i, f_bar))
    if not defined or f_i <= 0:
        m = warmup_momentum if momentum else 0.0
        return Mod2Result("warmup", float(lr_prev), float(m), False, float("nan"), float("nan"))

    F = f_bar / f_i
    if f_cap is not None:
        F = min(F, f_cap)
    paper_G = bias_ratio(s_i, s_bar)
    G = paper_G if G is None else G
    fast = f_i > f_bar
    biased = s_i < s_bar
    mG = paper_G if momentum_G is None else momentum_G
    m_i = momentum_rate(mG, m0, k, momentum_increase_bounds) if momentum else 0.0

    situation = spread = None
    if fast and biased:
        kind, lr, m, fb = "FSBC", lr_prev, 0.0, True
    elif fast:
        kind, lr, m, fb = "FWBC", lr_prev - a * F, m_i, False
    elif not biased:
        kind, lr, m, fb = "SWBC", lr_prev + a * F, m_i, False
    else:
        kind, lr = "SSBC", lr_prev + a * F
        if momentum or feedback:
            acc = per_class_accuracy() if callable(per_class_accuracy) else per_class_accuracy
            spread = per_label_spread(acc) if acc is not None else 0.0
            situation = 2 if spread >= situation_threshold else 1
        if situation == 2:
            m, fb = 0.0, True
        else:
            m, fb = m_i, False
    if not adapt_lr:
        lr = lr_prev
    lr = min(max(lr, lo), hi)
    return Mod2Result(kind, float(lr), float(m), bool(fb and feedback), float(F), float(G), situation, spread)


# ============================================================================================
# Mod③ — global model aggregation weights (paper §3.4)
# ============================================================================================
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
    check_choice("Mod③ Q form", q, Q_FORMS)
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
        Q = 1 + g**2 if q == "code" else (1 + g) ** 2
        boost = (math.e / 2) ** (phi - F) * Q  # exp(φ−F)/2^(φ−F) = (e/2)^(φ−F)
        p = torch.where(flags, p * boost, p)
        if torch.isinf(p).any():
            p = torch.isinf(p).to(torch.float64)
    s = p.sum()
    return p / s if s > 0 else torch.full_like(p, 1.0 / max(p.numel(), 1))


# ============================================================================================
# the Strategy
# ============================================================================================
@dataclass
class FedQSOptions:
    """Every FedQS option (spec §3-§5). Defaults follow the paper; the code's behaviour where it
    differs is one option away ([C] below), and ``fidelity="official"`` selects all of it at once.

    fidelity: ``paper`` (default) | ``official`` [C]: the value of every option below that is
        left at ``None`` (table :data:`FIDELITY_RULES`). An option set explicitly always wins over
        the fidelity (so ``fidelity=official, similarity=euclidean`` is the code's wiring on
        Euclidean distances); contradictory combinations raise (the distance rules need a
        distance-based similarity). ``None`` stays in the stored (hashed) options — it means "as
        ``fidelity`` says", and keeps ``--set options.fidelity=official`` working on a validated
        preset, whose options are completed with defaults; :meth:`resolved` gives the explicit
        values (the Strategy uses them). Not governed: ``momentum`` (the official main scripts
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
    validation: SSBC situation test data: ``holdout`` [P] (the client's validation part
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

    def rules(self) -> dict:
        """The fidelity-governed options with ``None`` replaced by the fidelity's value."""
        check_choice("FedQS fidelity", self.fidelity, FIDELITIES)
        preset = FIDELITY_RULES[self.fidelity]
        return {name: preset[name] if getattr(self, name) is None else getattr(self, name) for name in preset}

    def resolved(self) -> "FedQSOptions":
        """A copy with every fidelity-governed option explicit (what :class:`FedQS` runs with)."""
        return dataclasses.replace(self, **self.rules())

    def __post_init__(self):
        r = self.rules()
        check_choice("FedQS variant", self.variant, VARIANTS)
        check_choice("Mod① vector", r["mod1_vector"], VECTORS)
        check_choice("similarity", r["similarity"], SIMILARITIES)
        check_choice("FedQS local_update", self.local_update, LOCAL_UPDATE_AT)
        check_choice("FedQS feedback_reset", r["feedback_reset"], FEEDBACK_RESETS)
        check_choice("FedQS validation", r["validation"], VALIDATIONS)
        check_choice("FedQS threshold_on", r["threshold_on"], THRESHOLDS_ON)
        check_choice("FedQS bias_ratio", r["bias_ratio"], BIAS_RATIOS)
        check_choice("FedQS momentum_rule", r["momentum_rule"], MOMENTUM_RULES)
        check_choice("FedQS threshold_refresh", r["threshold_refresh"], THRESHOLD_REFRESHES)
        check_choice("FedQS first_comparison", r["first_comparison"], FIRST_COMPARISONS)
        check_choice("Mod③ Q form", self.q, Q_FORMS)
        phi = r["phi"]
        if isinstance(phi, str):
            check_choice("FedQS phi", phi, (PHI_K_OVER_N,))
        else:
            check(isinstance(phi, (int, float)) and not isinstance(phi, bool) and phi > 0,
                  f"FedQS phi must be 'k/n' or a number > 0, got {phi!r}", "e.g. phi=k/n or phi=0.1")
        uses_distance = [name for name, value in (("threshold_on", r["threshold_on"]), ("bias_ratio", r["bias_ratio"]),
                                                  ("momentum_rule", r["momentum_rule"]))
                         if value in ("distance", "code")]
        check(
            not uses_distance or r["similarity"] in DISTANCE_SIMILARITIES,
            f"FedQS {', '.join(f'{n}={r[n]!r}' for n in uses_distance)} needs a distance-based similarity "
            f"({', '.join(DISTANCE_SIMILARITIES)}), got similarity={r['similarity']!r}",
            "set options.similarity=angle, or the paper's rules "
            + " ".join(f"options.{n}={FIDELITY_RULES['paper'][n]}" for n in uses_distance),
        )
        check(0 < self.lr_min <= self.lr_max, f"FedQS needs 0 < lr_min <= lr_max, got {self.lr_min}, {self.lr_max}")
        check(self.eta0 is None or self.eta0 > 0, f"FedQS eta0 must be > 0, got {self.eta0}")
        check(self.a >= 0 and self.k >= 0, f"FedQS a and k must be >= 0, got a={self.a}, k={self.k}")
        check(0 <= self.m0 < 1, f"FedQS m0 must be in [0, 1), got {self.m0}")
        check(self.f_cap is None or self.f_cap > 0, f"FedQS f_cap must be > 0, got {self.f_cap}")
        check(self.g_cap is None or self.g_cap > 0, f"FedQS g_cap must be > 0, got {self.g_cap}")


def _nanmean(x: Tensor) -> float:
    x = x[~torch.isnan(x)]
    return float(x.mean()) if x.numel() else float("nan")


class FedQS(Strategy):
    """FedQS (paper §3) on the shared SAFL simulator.

    Per client the strategy keeps its learning rate η_i (cumulative across starts), its latest
    similarity s_i, its latest not-yet-used local update (for Mod①) and, for
    ``feedback_reset="global"``, its feedback flag.

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
        self.options = self.options.resolved()  # every fidelity-governed option explicit
        self.aggregation = "model" if self.options.variant == "avg" else "gradient"
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
        if (o.momentum or o.feedback) and o.validation == "holdout":
            check(
                ctx.val_parts is not None,
                "FedQS validation='holdout' needs a validation part per client (SSBC situation test)",
                "set data.validation='holdout' (8:2 split) or options validation='per_class'",
            )
        if (o.momentum or o.feedback) and o.validation in PER_CLASS_VALIDATIONS:
            check(
                ctx.train_parts is not None and getattr(ctx.dataset, "train_y", None) is not None,
                f"FedQS validation={o.validation!r} needs ctx.train_parts and ctx.dataset.train_y",
                "run FedQS through the SAFL simulator",
            )

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
        if self.options.local_update == "upload":
            self._store_local(update)

    def _refresh_similarity(self, c: int, ctx: SimContext) -> float:
        delta = self._pending.get(c)
        if delta is not None:
            hist = ctx.global_history(2)
            # first_comparison="skip_initial" [C] (f): the initial model (version 0) is never
            # w^{t−1}, so the first comparison is w^2 vs w^1 (the code overwrites its file 0)
            ready = len(hist) >= 2 and (self.options.first_comparison == "initial" or int(ctx.round) >= 2)
            if ready:
                s = mod1_similarity(
                    hist[-1],
                    hist[-2],
                    delta,
                    vector=self.options.mod1_vector,
                    similarity=self.options.similarity,
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
            if self.options.validation == "holdout":
                idx = torch.as_tensor(ctx.val_parts[c], dtype=torch.long).cpu()
            elif self.options.validation == "first_per_class":  # [C] (g): the first <= 20 per class
                part = torch.as_tensor(ctx.train_parts[c], dtype=torch.long).cpu()
                y = ctx.dataset.train_y.detach().cpu()[part]
                keep = torch.zeros(part.numel(), dtype=torch.bool)
                for cls in torch.unique(y).tolist():
                    keep[torch.nonzero(y == cls).flatten()[:20]] = True
                idx = part[keep]  # in the order of the client's training indices
            else:  # [D] <= 20 random samples per class from the client's own training data
                from fedlib.core.utils import generator  # noqa: PLC0415

                part = torch.as_tensor(ctx.train_parts[c], dtype=torch.long).cpu()
                y = ctx.dataset.train_y.detach().cpu()[part]
                order = torch.randperm(part.numel(), generator=generator(ctx.seed, "fedqs-val", c))
                picked = [part[order[y[order] == cls][:20]] for cls in torch.unique(y).tolist()]
                idx = torch.cat(picked) if picked else part[:0]
            self._val_cache[c] = idx
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
        if self.options.validation in PER_CLASS_VALIDATIONS:
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

    def start(self, client_id: int, ctx: SimContext):
        o = self.options
        c = int(client_id)
        if self.n == 0:
            self.setup(ctx)
        s_i = self._refresh_similarity(c, ctx)
        # dividers: at every start from the current table [D], or frozen after aggregation [C] (e)
        s_bar, d_bar = self._dividers() if o.threshold_refresh == "start" else self._frozen
        f, f_bar = self._speeds(ctx)
        f_i = float(f[c])
        base = ctx.base_local
        # [P] s_i < s̄; [C] (a) d_i > d̄ ⇔ s_i < 1/(1+d̄) (NaN d̄ = no threshold: warm-up)
        divider = s_bar if o.threshold_on == "similarity" else 1.0 / (1.0 + d_bar)
        paper_G = bias_ratio(s_i, s_bar)
        code_G = distance_ratio(s_i, d_bar)
        res = mod2_adapt(
            float(self._lr[c]),
            s_i,
            divider,
            f_i,
            f_bar,
            per_class_accuracy=lambda: self._per_class_accuracy(c, ctx),
            a=o.a,
            m0=o.m0,
            k=o.k if o.momentum_rule == "paper" else CODE_K,
            lr_bounds=(o.lr_min, o.lr_max),
            f_cap=o.f_cap,
            adapt_lr=o.adapt_lr,
            momentum=o.momentum,
            feedback=o.feedback,
            momentum_increase_bounds=(o.momentum_min_increase, o.momentum_max_increase),
            situation_threshold=o.situation_threshold,
            warmup_momentum=float(getattr(base, "momentum", 0.0) or 0.0),
            G=paper_G if o.bias_ratio == "similarity" else code_G,
            momentum_G=paper_G if o.momentum_rule == "paper" else code_G,
        )
        self._lr[c] = res.lr
        self._flags[c] = res.feedback
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
        self._rows.append(
            {
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
        )
        return _local_config(base, res.lr, res.momentum), info

    def aggregate(self, global_state: State, updates: list[Update], ctx: SimContext) -> State:
        o = self.options
        check(len(updates) > 0, "FedQS.aggregate got no updates")
        # F_i: share of all aggregated updates so far, this round's included (as the code, which
        # increments its counts before weighing).
        counts = torch.as_tensor(ctx.agg_counts, dtype=torch.float64).cpu().clone()
        for u in updates:
            counts[int(u.client_id)] += 1
        total = float(counts.sum())
        F = [float(counts[int(u.client_id)]) / total for u in updates]
        if not o.feedback:
            flags = [False] * len(updates)
            G = [1.0] * len(updates)
        elif o.feedback_reset == "update":
            flags = [bool(u.info.get("feedback", False)) for u in updates]
            G = [float(u.info.get("G", 1.0)) for u in updates]
        else:  # "global": the code's per-client table, with the current G
            s_bar, d_bar = self._dividers()
            flags = [bool(self._flags[int(u.client_id)]) for u in updates]
            sims = [float(self._sim[int(u.client_id)]) for u in updates]
            if o.bias_ratio == "similarity":
                G = [bias_ratio(s, s_bar) for s in sims]
            else:  # [C] (b): θ_i / mean θ over θ > 0, from the current table
                G = [distance_ratio(s, d_bar) for s in sims]
        phi = None if o.phi == PHI_K_OVER_N else float(o.phi)  # [P] K/N | [C] (c) 0.1
        p = mod3_weights(
            [u.num_samples for u in updates], flags, F, G, len(updates), ctx.n_clients, q=o.q, g_cap=o.g_cap,
            phi=phi,
        )
        self.last_weights = p
        if o.variant == "avg":
            new = weighted_model_average([u.state for u in updates], p)
        else:
            new = apply_delta(global_state, [u.delta for u in updates], p)
        if o.feedback_reset == "global":
            self._flags.zero_()
        if o.local_update == "aggregated":
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
