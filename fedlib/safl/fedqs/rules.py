"""FedQS's rules where the paper and the official code differ (spec §3-§5; issues 11 and 21).

A rule is one behaviour FedQS must choose (which similarity, when the dividers are computed, …).
:class:`FedQSRules` holds one behaviour per rule; :data:`PAPER_RULES` and :data:`OFFICIAL_RULES`
are its two frozen instances (``fidelity=paper | official``). An option set explicitly replaces
exactly one field (:meth:`FedQSRules.replaced`), looked up by name in that rule's table
(:data:`RULE_TABLES`), so every behaviour is chosen once, when the rules are built.

[P] the paper, [C] the official code (issue 11 (a)-(g)), [D] fedlib's decision.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.core.utils import generator
from fedlib.safl.fedqs.modules import (PSEUDO_GRADIENTS, SIMILARITY_REGISTRY, Similarity, bias_ratio,
                                       distance_ratio)
from fedlib.safl.strategy import SimContext, State, Update, apply_delta, weighted_model_average

__all__ = ["Choice", "ValidationRule", "MomentumRule", "FedQSRules", "PAPER_RULES", "OFFICIAL_RULES",
           "RULES_BY_FIDELITY", "RULE_TABLES", "VARIANT_AGGREGATION", "STORE_AT_UPLOAD"]

#: [P] §3.4: φ = K/N, the spelling of the option
PHI_K_OVER_N = "k/n"
#: [C] (c) the official code's φ (hard-coded; equals K/N only at N = 100, K = 10)
CODE_PHI = 0.1
#: [C] (d) the code's momentum rule: increase = 20·(0.1·θ̄/θ_i − 0.1) = CODE_K·(θ̄/θ_i − 1)
CODE_K = 2.0
#: [C] (g) validation samples per class taken from the client's training data
PER_CLASS_SAMPLES = 20


@dataclass(frozen=True)
class Choice:
    """One named behaviour of a rule: ``name`` is the option's spelling, ``value`` what it selects;
    ``distance``: it reads distances d = 1/s − 1 (needs a distance-based similarity)."""

    name: Any
    value: Any
    distance: bool = False


def _table(*choices) -> dict:
    return {c.name: c for c in choices}


# -- the SSBC situation test's data (spec §4) ------------------------------------------------
def _holdout_indices(c: int, ctx: SimContext) -> Tensor:
    """[P] the client's validation part (``ctx.val_parts``, spec 8:2)."""
    return torch.as_tensor(ctx.val_parts[c], dtype=torch.long).cpu()


def _client_labels(c: int, ctx: SimContext) -> tuple[Tensor, Tensor]:
    part = torch.as_tensor(ctx.train_parts[c], dtype=torch.long).cpu()
    return part, ctx.dataset.train_y.detach().cpu()[part]


def _first_per_class_indices(c: int, ctx: SimContext) -> Tensor:
    """[C] (g): the first ≤ 20 samples per class, in the order of the client's training indices."""
    part, y = _client_labels(c, ctx)
    keep = torch.zeros(part.numel(), dtype=torch.bool)
    for cls in torch.unique(y).tolist():
        keep[torch.nonzero(y == cls).flatten()[:PER_CLASS_SAMPLES]] = True
    return part[keep]


def _random_per_class_indices(c: int, ctx: SimContext) -> Tensor:
    """[D] ≤ 20 random samples per class from the client's own training data (seeded)."""
    part, y = _client_labels(c, ctx)
    order = torch.randperm(part.numel(), generator=generator(ctx.seed, "fedqs-val", c))
    picked = [part[order[y[order] == cls][:PER_CLASS_SAMPLES]] for cls in torch.unique(y).tolist()]
    return torch.cat(picked) if picked else part[:0]


@dataclass(frozen=True)
class ValidationRule:
    """One SSBC situation-test data rule (spec §4): ``indices(c, ctx)`` picks client c's
    validation samples; ``per_class``: ≤ 20 per class of the training data, and small classes
    have their accuracy halved [C] (else the holdout part [P])."""

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


# -- Mod②'s ratios and thresholds (§3.3; issue 11 (a), (b), (d)) --------------------------------
def _similarity_divider(s_bar: float, d_bar: float) -> float:
    """[P] eq. 2: strongly biased ⇔ s_i < s̄."""
    return s_bar


def _distance_divider(s_bar: float, d_bar: float) -> float:
    """[C] (a): d_i > d̄ ⇔ s_i < 1/(1+d̄) (d ↦ 1/(1+d) is decreasing; NaN d̄: no threshold)."""
    return 1.0 / (1.0 + d_bar)


def _similarity_ratio(s_i: float, s_bar: float, d_bar: float) -> float:
    """[P] §3.3: G = s̄/s_i (:func:`~fedlib.safl.fedqs.modules.bias_ratio`)."""
    return bias_ratio(s_i, s_bar)


def _distance_ratio(s_i: float, s_bar: float, d_bar: float) -> float:
    """[C] (b)/(d): G = d_i/d̄ (:func:`~fedlib.safl.fedqs.modules.distance_ratio`)."""
    return distance_ratio(s_i, d_bar)


@dataclass(frozen=True)
class MomentumRule:
    """How Mod② computes m_i = m0 + k(1/G − 1): the ratio G(s_i, s̄, d̄), and k (None = the
    option ``k``; the code's rule fixes k = 2 [C] (d))."""

    ratio: Callable[[float, float, float], float]
    k: float | None = None


# -- Mod③'s combination (§3.4) and when Δ_i is stored for Mod① ---------------------------------
def _combine_models(global_state: State, updates: list[Update], p: Tensor) -> State:
    """FedQS-Avg (§3.4): w ← Σ p_i w_i."""
    return weighted_model_average([u.state for u in updates], p)


def _combine_deltas(global_state: State, updates: list[Update], p: Tensor) -> State:
    """FedQS-SGD (§3.4): w ← w + Σ p_i Δ_i."""
    return apply_delta(global_state, [u.delta for u in updates], p)


#: option ``variant`` → (the Strategy's ``aggregation``, its Mod③ combination)
VARIANT_AGGREGATION = {"avg": ("model", _combine_models), "sgd": ("gradient", _combine_deltas)}
#: option ``local_update`` → is the client's latest update stored at upload (else once aggregated)?
STORE_AT_UPLOAD = {"upload": True, "aggregated": False}


#: every fidelity-governed option → its table of choices (name → behaviour)
RULE_TABLES: dict[str, dict] = {
    "similarity": SIMILARITY_REGISTRY,  # Mod① metric (§3.2, §5.1; Table 5)
    "mod1_vector": _table(Choice("delta", PSEUDO_GRADIENTS["delta"]),  # [P] L_g = w^t − w^{t−1}
                          Choice("prev_global", PSEUDO_GRADIENTS["prev_global"])),  # [C] spec §3 (a)
    # does the feedback flag (and G) travel with its update [D], or the code's per-client table [C]?
    "feedback_reset": _table(Choice("update", True), Choice("global", False)),
    "validation": VALIDATION_RULES,
    "threshold_on": _table(Choice("similarity", _similarity_divider),
                           Choice("distance", _distance_divider, distance=True)),
    "bias_ratio": _table(Choice("similarity", _similarity_ratio),
                         Choice("distance", _distance_ratio, distance=True)),
    "momentum_rule": _table(Choice("paper", MomentumRule(_similarity_ratio)),
                            Choice("code", MomentumRule(_distance_ratio, k=CODE_K), distance=True)),
    # are the dividers computed at every start [D], or frozen after each aggregation [C] (e)?
    "threshold_refresh": _table(Choice("start", True), Choice("aggregation", False)),
    # the first global version Mod① compares from: any [P]; 2 [C] (f)
    "first_comparison": _table(Choice("initial", 0), Choice("skip_initial", 2)),
}
_KINDS = {"similarity": "similarity", "mod1_vector": "Mod① vector"}  # how errors name a rule


def _phi_choice(phi) -> Choice:
    """``"k/n"`` [P] φ = K/N (value None) or a number > 0 [C] (c)."""
    if isinstance(phi, str):
        check_choice("FedQS phi", phi, (PHI_K_OVER_N,))
        return Choice(PHI_K_OVER_N, None)
    check(isinstance(phi, (int, float)) and not isinstance(phi, bool) and phi > 0,
          f"FedQS phi must be 'k/n' or a number > 0, got {phi!r}", "e.g. phi=k/n or phi=0.1")
    return Choice(phi, float(phi))


def choice(rule: str, name) -> Any:
    """The behaviour ``name`` selects for option ``rule`` (raises listing the valid names)."""
    if rule == "phi":
        return _phi_choice(name)
    table = RULE_TABLES[rule]
    check_choice(_KINDS.get(rule, f"FedQS {rule}"), name, table)
    return table[name]


@dataclass(frozen=True)
class FedQSRules:
    """One behaviour per fidelity-governed rule (spec §3-§5; issue 11 (a)-(g)); each field is
    named after its option and holds what the option's name selects (every field has a ``name``).

    similarity: Mod①'s metric (:class:`~fedlib.safl.fedqs.modules.Similarity`). mod1_vector: L_g
    of one entry. feedback_reset: does the flag travel with its update? validation: the SSBC
    situation test's data (:class:`ValidationRule`). threshold_on: the divider of "strongly biased"
    from (s̄, d̄). bias_ratio: Mod③'s G(s_i, s̄, d̄). phi: φ (None = K/N). momentum_rule:
    :class:`MomentumRule`. threshold_refresh: dividers at every start? first_comparison: the first
    global version Mod① compares from.
    """

    similarity: Similarity
    mod1_vector: Choice
    feedback_reset: Choice
    validation: ValidationRule
    threshold_on: Choice
    bias_ratio: Choice
    phi: Choice
    momentum_rule: Choice
    threshold_refresh: Choice
    first_comparison: Choice

    @classmethod
    def named(cls, **names) -> "FedQSRules":
        """The rules from one name per option (validated)."""
        return cls(**{rule: choice(rule, name) for rule, name in names.items()}).checked()

    def replaced(self, **names) -> "FedQSRules":
        """These rules with each option given by name replacing its field (validated)."""
        return dataclasses.replace(self, **{rule: choice(rule, name) for rule, name in names.items()}).checked()

    def checked(self) -> "FedQSRules":
        """Raise when a distance rule meets a similarity that is not distance-based; else self."""
        uses_distance = [f.name for f in dataclasses.fields(self)
                         if isinstance(rule := getattr(self, f.name), Choice) and rule.distance]
        if uses_distance and not self.similarity.distance:
            have = ", ".join(n for n, s in SIMILARITY_REGISTRY.items() if s.distance)
            raise FedlibError(
                f"FedQS {', '.join(f'{n}={getattr(self, n).name!r}' for n in uses_distance)} needs a "
                f"distance-based similarity ({have}), got similarity={self.similarity.name!r}",
                "set options.similarity=angle, or the paper's rules "
                + " ".join(f"options.{n}={getattr(PAPER_RULES, n).name}" for n in uses_distance),
            )
        return self

    def as_dict(self) -> dict:
        """The rules by name (the options' spelling)."""
        return {f.name: getattr(self, f.name).name for f in dataclasses.fields(self)}


#: the paper's rules (the default fidelity)
PAPER_RULES = FedQSRules.named(
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
OFFICIAL_RULES = FedQSRules.named(
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
#: option ``fidelity`` → its rules object (``.as_dict()``: the rules by name, what each ``fidelity``
#: selects for the options left at None)
RULES_BY_FIDELITY = {"paper": PAPER_RULES, "official": OFFICIAL_RULES}
