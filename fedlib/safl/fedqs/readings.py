"""Named readings of FedQS: which rules a run of FedQS follows (spec §3-§5, "Readings").

The paper's text and the official code that produced the paper's numbers differ in FedQS's own
rules (:data:`~fedlib.safl.fedqs.rules.PAPER_RULES` vs :data:`~fedlib.safl.fedqs.rules.OFFICIAL_RULES`)
and in whether FedQS trains with momentum (the code's main scripts set it to 0; its momentum
scripts use the code's momentum rule). A *reading* names one such choice as the config overrides
it adds to a FedQS preset, so every reading is an ordinary, hashed run:

* ``paper`` — the paper's text: paper rules, Mod② momentum on (the presets' default; no override);
* ``code-main`` — the official main scripts: the code's rules, momentum 0;
* ``code-momentum`` — the official momentum scripts: the code's rules with its momentum rule.

The rule-by-rule ablation (:data:`RULE_STEPS`) switches one code rule at a time starting from the
``paper`` reading, so each rule's effect on FedQS − foundation gets its own paired interval; the
reverse ablation (:data:`REVERSE_STEPS`) starts from ``code-main`` and switches one rule back to the
text's.
"""

from __future__ import annotations

from fedlib.core.errors import check_choice

__all__ = ["READINGS", "DEFAULT_READING", "READING_LABELS", "RULE_STEPS", "REVERSE_STEPS", "ACTING_HYPERPARAMETERS",
           "reading_overrides", "reading_tag", "step_overrides"]

#: reading name → the overrides it adds to a FedQS preset (the ``paper`` reading is the preset itself)
READINGS: dict[str, tuple[str, ...]] = {
    "paper": (),
    "code-main": ("options.fidelity=official", "options.momentum=false"),
    "code-momentum": ("options.fidelity=official",),
}
#: the reading every FedQS row of a report runs unless told otherwise
DEFAULT_READING = "paper"
#: how a table names each reading
READING_LABELS = {
    "paper": "paper text (paper rules, momentum on)",
    "code-main": "code, main scripts (code rules, momentum 0)",
    "code-momentum": "code, momentum scripts (code rules, code's momentum rule)",
}
#: Mod②'s hyperparameters that change a run under each reading (Figure 5's sweeps): momentum 0 (code-main)
#: leaves m0 and k unused, and the code's momentum rule (d) fixes k = 2 (spec §4)
ACTING_HYPERPARAMETERS = {
    "paper": ("eta0", "a", "m0", "k"),
    "code-main": ("eta0", "a"),
    "code-momentum": ("eta0", "a", "m0"),
}

#: one code rule switched on top of the ``paper`` reading: step name → (spec tag of the two sides,
#: overrides). The distance-based rules (threshold on θ, G = θ_i/θ̄, the code's momentum rule) need
#: the angle similarity, so they are switched together with it; φ and the validation data are equal
#: under both rule sets at N = 100, K = 10 without a holdout (φ = K/N = 0.1; ≤ 20 first per class)
#: and have no step.
RULE_STEPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "momentum off": ("[P] on → [C] main scripts 0", ("options.momentum=false",)),
    "angle similarity": ("[P] cosine → [C] (b) angle, s = 1/(1+θ)", ("options.similarity=angle",)),
    "Mod① vector w^{t-1}": ("[P] Δ = w^t − w^{t−1} → [C] (a) w^{t−1}", ("options.mod1_vector=prev_global",)),
    "feedback flags per client": ("[D] with the update → [C] table cleared at aggregation",
                                  ("options.feedback_reset=global",)),
    "dividers at aggregation": ("[D] at each start → [C] (e) after each aggregation",
                                ("options.threshold_refresh=aggregation",)),
    "first comparison skipped": ("[P] from the initial model → [C] (f) one round later",
                                 ("options.first_comparison=skip_initial",)),
    "angle + distance test and G": ("[P] s_i < s̄, G = s̄/s_i → [C] (a)(b) θ_i > θ̄, G = θ_i/θ̄",
                                    ("options.similarity=angle", "options.threshold_on=distance",
                                     "options.bias_ratio=distance")),
    "angle + code momentum rule": ("[P] m0 + k(1/G − 1) → [C] (d) m0 + 2(θ̄/θ_i − 1)",
                                   ("options.similarity=angle", "options.momentum_rule=code")),
}

#: one rule switched back to the paper's text on top of the ``code-main`` reading (code rules, momentum 0):
#: step name → (spec tag of the two sides, overrides after code-main's). The text's cosine similarity goes
#: back with its own test, ratio and momentum rule (the code's are distance-based and need the angle);
#: momentum back on under the text's rule is the one momentum step (the code's rule on is ``code-momentum``).
REVERSE_STEPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "back: cosine, its test and G": ("[C] (a)(b) angle, θ_i > θ̄, G = θ_i/θ̄ → [P] cosine, s_i < s̄, G = s̄/s_i",
                                     ("options.similarity=cosine", "options.threshold_on=similarity",
                                      "options.bias_ratio=similarity", "options.momentum_rule=paper")),
    "back: Mod① vector Δ": ("[C] (a) w^{t−1} → [P] Δ = w^t − w^{t−1}", ("options.mod1_vector=delta",)),
    "back: feedback flags per client": ("[C] table cleared at aggregation → [D] with the update",
                                        ("options.feedback_reset=update",)),
    "back: dividers at each start": ("[C] (e) after each aggregation → [D] at each start",
                                     ("options.threshold_refresh=start",)),
    "back: first comparison from w^0": ("[C] (f) one round later → [P] from the initial model",
                                        ("options.first_comparison=initial",)),
    "back: momentum on, the text's rule": ("[C] main scripts 0 → [P] on, m0 + k(1/G − 1)",
                                           ("options.momentum=true", "options.momentum_rule=paper")),
}


def reading_overrides(reading: str) -> tuple[str, ...]:
    """The config overrides of FedQS reading ``reading`` (one of :data:`READINGS`)."""
    check_choice("FedQS reading", reading, READINGS)
    return READINGS[reading]


def reading_tag(reading: str) -> str:
    """How a report's row names a FedQS run under ``reading``: ``" · code-main"``; the paper reading: ``""``
    (:mod:`fedlib.claims.evidence` reads the tag back)."""
    check_choice("FedQS reading", reading, READINGS)
    return "" if reading == DEFAULT_READING else f" · {reading}"


def step_overrides(step: str) -> tuple[str, ...]:
    """The overrides of rule step ``step``: one of :data:`RULE_STEPS` (on top of the paper reading, which has
    none), or of :data:`REVERSE_STEPS` (``code-main``'s overrides followed by the step's)."""
    check_choice("FedQS rule step", step, {**RULE_STEPS, **REVERSE_STEPS})
    if step in REVERSE_STEPS:
        return READINGS["code-main"] + REVERSE_STEPS[step][1]
    return RULE_STEPS[step][1]
