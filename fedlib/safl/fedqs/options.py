"""FedQS's options (spec §3-§5): one dataclass, validated on construction.

The fidelity-governed options (``similarity`` … ``first_comparison``) are ``None`` by default,
meaning "as ``fidelity`` says"; :meth:`FedQSOptions.fidelity_rules` builds the
:class:`~fedlib.safl.fedqs.rules.FedQSRules` a run uses (the fidelity's object, each explicit option
replacing its field) and :meth:`FedQSOptions.mod2_params` Mod②'s constants.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fedlib.core.errors import check, check_choice
from fedlib.safl.fedqs.modules import Q_FUNCTIONS, Mod2Params
from fedlib.safl.fedqs.rules import RULES_BY_FIDELITY, STORE_AT_UPLOAD, VARIANT_AGGREGATION, FedQSRules

__all__ = ["FedQSOptions", "FedQSSGDOptions", "RULE_NAMES"]

#: the fidelity-governed option names (the fields of :class:`FedQSRules`)
RULE_NAMES = tuple(f.name for f in dataclasses.fields(FedQSRules))


@dataclass
class FedQSOptions:
    """Every FedQS option (spec §3-§5). Defaults follow the paper; the code's behaviour where it
    differs is one option away ([C] below), and ``fidelity="official"`` selects all of it at once.

    fidelity: ``paper`` (default) | ``official`` [C]: picks the rules object (:data:`~fedlib.safl.fedqs.rules.PAPER_RULES`
        | :data:`~fedlib.safl.fedqs.rules.OFFICIAL_RULES`) that gives the value of every option below that is left at
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
        """The rules this run uses: the fidelity's object (``RULES_BY_FIDELITY``) with every rule
        whose option is set (not None) replacing its field; validated. Built once per options
        instance (issue 45: at construction) and kept while those options are unchanged."""
        key = (self.fidelity, *(getattr(self, name) for name in RULE_NAMES))
        kept = self.__dict__.get("_rules")
        if kept is not None and kept[0] == key:
            return kept[1]
        check_choice("FedQS fidelity", self.fidelity, RULES_BY_FIDELITY)
        explicit = {name: getattr(self, name) for name in RULE_NAMES if getattr(self, name) is not None}
        rules = RULES_BY_FIDELITY[self.fidelity].replaced(**explicit)
        self.__dict__["_rules"] = (key, rules)  # beside the fields (equality and the hash never see it)
        return rules

    def rules(self) -> dict:
        """The fidelity-governed options with ``None`` replaced by the fidelity's value."""
        return self.fidelity_rules().as_dict()

    def resolved(self) -> "FedQSOptions":
        """A copy with every fidelity-governed option explicit."""
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
        k = rules.momentum_rule.value.k
        return Mod2Params(
            a=self.a, m0=self.m0, k=self.k if k is None else k,
            lr_bounds=(self.lr_min, self.lr_max), f_cap=self.f_cap, adapt_lr=self.adapt_lr,
            momentum=self.momentum, feedback=self.feedback,
            momentum_increase_bounds=(self.momentum_min_increase, self.momentum_max_increase),
            situation_threshold=self.situation_threshold, warmup_momentum=warmup_momentum,
        )


@dataclass
class FedQSSGDOptions(FedQSOptions):
    """FedQS options with ``variant='sgd'`` as the default."""

    variant: str = "sgd"
