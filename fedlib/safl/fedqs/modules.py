"""FedQS's three modules as pure functions (Li et al., NeurIPS 2025, §3; spec fedqs.md §3-§5).

* **Mod①** global aggregation estimation (§3.2) — :func:`mod1_similarity`: how well a client's
  latest local update Δ_i agrees with the pseudo-global gradient L_g = w_g^t − w_g^{t−1}.
* **Mod②** local training adaptation (§3.3, eqs. 1-3) — :func:`mod2_adapt`: the client's type
  (FSBC / FWBC / SWBC / SSBC) from update speed f and similarity s, and its learning rate,
  momentum and feedback flag (constants in :class:`Mod2Params`).
* **Mod③** global model aggregation (§3.4) — :func:`mod3_weights`: p_i = n_i/n, boosted for
  feedback clients by exp(φ−F)/2^(φ−F) · Q(G), then normalised.

Similarity convention (every metric): **larger = more similar**, and every value except the
cosine is positive, so that the ratio G = s̄/s_i of Mod② (momentum) and Mod③ (Q) is meaningful:
``cosine`` cos(L_g, Δ_i) ∈ [−1, 1] (the paper's, §5.1); ``euclidean`` 1/(1 + ‖L_g − Δ_i‖₂);
``manhattan`` 1/(1 + ‖L_g − Δ_i‖₁); ``angle`` 1/(1 + θ), θ the official code's mean per-layer
angle in degrees (:func:`code_angle`). The three distance-like metrics share d ↦ 1/(1+d): bounded,
positive, defined at d = 0, and for d ≫ 1 G = s̄/s_i ≈ d_i/d̄, the code's ``theta_i / mean theta``.
The cosine can be ≤ 0, so G is guarded (:func:`bias_ratio`).

Nothing here keeps state: the :class:`~fedlib.safl.fedqs.strategy.FedQS` strategy holds the
per-client tables and calls these functions with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch
from torch import Tensor

from fedlib.core.errors import check, check_choice
from fedlib.safl.strategy import State, float_keys

__all__ = [
    "PSEUDO_GRADIENTS", "SIMILARITY_REGISTRY", "Similarity", "Q_FUNCTIONS", "SMALL_CLASS",
    "code_angle", "mod1_similarity",
    "bias_ratio", "distance_of", "distance_mean", "distance_ratio", "halve_small_classes", "per_label_spread",
    "momentum_rate", "Mod2Params", "Mod2Result", "mod2_adapt",
    "mod3_weights",
]

#: [C] spec §4: a class with fewer validation samples than this has its accuracy halved
SMALL_CLASS = 10


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


def halve_small_classes(acc: Tensor, counts: Tensor) -> Tensor:
    """[C] spec §4 (the official code's situation test): the accuracy of a class with fewer than
    :data:`SMALL_CLASS` validation samples is halved. ``acc`` and ``counts`` per class."""
    counts = torch.as_tensor(counts).flatten().to(acc.device)[: acc.numel()]
    return torch.where(counts < SMALL_CLASS, acc / 2, acc)


def per_label_spread(acc: Tensor, counts: Tensor | None = None) -> float:
    """SSBC situation test statistic (paper §3.3; spec §4): max − min per-label accuracy.

    ``acc``: per-class accuracy in percent (NaN = class absent, ignored). With ``counts``
    (validation samples per class) small classes are halved first (:func:`halve_small_classes`).
    No class with a value → 0.
    """
    acc = torch.as_tensor(acc, dtype=torch.float64).clone().flatten()
    if counts is not None:
        acc = halve_small_classes(acc, counts)
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


