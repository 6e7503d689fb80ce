"""SAFL baselines with gradient aggregation (spec fedqs.md §6): :class:`FedSGD`,
:class:`FedBuff`, :class:`WKAFL`, :class:`FedAC`, :class:`DeFedAvg`, :class:`FADAS`,
:class:`CA2FL` (``cfl``) — the server applies a weighted combination of client deltas Δ_j.
Conventions (notation, staleness, BN buffers): :mod:`fedlib.safl.baselines`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from fedlib.core.errors import check, check_choice
from fedlib.core.server_opt import ServerAdam
from fedlib.core.utils import generator
from fedlib.safl.baselines.common import (
    ServerLrOptions,
    WEIGHTINGS, add_step, as_vector, cosine, mean_delta, param_keys, update_weights,
)
from fedlib.safl.strategy import State, Strategy, apply_delta, clone_state

__all__ = ["FedSGD", "FedBuff", "WKAFL", "FedAC", "DeFedAvg", "FADAS", "CA2FL"]


class AdaptiveServer(Strategy):
    """A strategy with a server-side Adam/AMSGrad (:class:`fedlib.core.server_opt.ServerAdam`,
    kept in its checkpoint): FedAC and FADAS."""

    def __init__(self, options=None):
        super().__init__(options)
        self.adam = ServerAdam()

    def state_dict(self):
        return self.adam.state_dict()

    def load_state_dict(self, d):
        self.adam.load_state_dict(d)


class FedSGD(Strategy):
    """FedSGD in SAFL (gradient aggregation): w ← w + η_g · Σ_j p_j Δ_j, p_j = 1/K.

    McMahan et al., AISTATS 2017 (server averages client updates); spec §6 "mean of deltas";
    official ``afl_sgd_pure.py`` (η_g = 1, uniform). ``weighting="samples"`` gives n_j/Σn.
    Differences from the official code: none in the rule.
    """

    name, aggregation = "fedsgd", "gradient"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    @dataclass
    class Options:
        weighting: str = "uniform"
        server_lr: float = 1.0

        def __post_init__(self):
            check_choice("fedsgd options.weighting", self.weighting, WEIGHTINGS)
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

    def aggregate(self, global_state, updates, ctx):
        return apply_delta(global_state, [u.delta for u in updates],
                           update_weights(updates, self.options.weighting), lr=self.options.server_lr)



class FedBuff(Strategy):
    """FedBuff (Nguyen et al., "Federated learning with buffered asynchronous aggregation",
    AISTATS 2022, Alg. 1): w ← w + η_g · (1/K) Σ_j s(τ_j) Δ_j with s(τ) = 1/√(1 + τ), η_g = 1.

    Differences from the official ``afl_sgd_fedbuff.py``: none in the rule; its τ is read from
    file names and so is one larger for every update not trained from the initial model —
    fedlib uses the true staleness (a fresh update gets s = 1).
    """

    name, aggregation = "fedbuff", "gradient"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    Options = ServerLrOptions

    def weights(self, updates) -> torch.Tensor:
        k = len(updates)
        return torch.tensor([1.0 / math.sqrt(1.0 + u.staleness) / k for u in updates], dtype=torch.float64)

    def aggregate(self, global_state, updates, ctx):
        return apply_delta(global_state, [u.delta for u in updates], self.weights(updates),
                           lr=self.options.server_lr)



class WKAFL(Strategy):
    """WKAFL (Zhou et al., "Towards efficient and stable K-asynchronous federated learning with
    unbounded stale gradients on non-IID data", IEEE TPDS 2022, §4): staleness-weighted gradient
    estimate, similarity-gated weights and two-stage norm clipping.

    Rule for the K selected deltas (vectors over the parameters):
      1. staleness weights a_j = (e/2)^(−τ_j); estimated global gradient ĝ = Σ a_j Δ_j / Σ a_j;
      2. two-stage clipping: in the late stage — when the mean local training loss of the K
         updates is below ``stage_bound`` (0.1) — each Δ_j is clipped to norm
         ``norm_bound``·‖ĝ‖ (1.5): Δ_j ← Δ_j · min(1, 1.5‖ĝ‖/‖Δ_j‖); in the early stage no
         clipping (large stale gradients are still informative);
      3. similarity weights p'_j = exp(β·cos(Δ_j, ĝ)) if cos(Δ_j, ĝ) ≥ ``sim_threshold`` (0)
         else 0 (β = 1); p = p'/Σp' (all gated out: fall back to a_j/Σa);
      4. w ← w + η_g Σ p_j Δ_j (η_g = 1); the first round (e = 0) is plain FedSGD as in the code.
    Differences from the official ``afl_sgd_wkafl.py`` and why:
      * its clipping stage does nothing (it clips ``.grad`` of a model that has none, and its
        reference norm ‖ĝ‖ evaluates to 0 — spec §6); fedlib clips as the paper describes;
      * its similarity is a sum over layers of ‖cos + 1‖ with a threshold of 8000 (tied to the
        ResNet-18 layer count); fedlib uses one cosine over all parameters and threshold 0
        (gradients pointing against the estimate are dropped);
      * it adds ``global_lr``·(previous global gradient) to every update, but ``global_lr`` is
        missing from its configuration (the script cannot run that branch); fedlib omits it;
      * its stage test accumulates test-set losses of the local models; fedlib uses the mean
        local training loss reported by the engine;
      * its clients continue from their local model if no aggregation happened since their last
        upload; fedlib always starts from the newest global model (spec §1).
    """

    name, aggregation = "wkafl", "gradient"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    @dataclass
    class Options:
        beta: float = 1.0
        sim_threshold: float = 0.0
        norm_bound: float = 1.5
        stage_bound: float = 0.1
        server_lr: float = 1.0

        def __post_init__(self):
            check(self.norm_bound > 0, f"options.norm_bound must be > 0, got {self.norm_bound}")
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")
            check(-1.0 <= self.sim_threshold <= 1.0,
                  f"options.sim_threshold is a cosine in [-1, 1], got {self.sim_threshold}")

    def combine(self, global_state, updates, ctx) -> tuple[list[State], torch.Tensor]:
        """The (possibly clipped) deltas and their weights."""
        deltas = [u.delta for u in updates]
        if ctx.round == 0:
            return deltas, torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64)
        keys = param_keys(global_state, ctx)
        a = torch.tensor([(math.e / 2.0) ** (-u.staleness) for u in updates], dtype=torch.float64)
        a = a / a.sum()
        vecs = [as_vector(d, keys) for d in deltas]
        g_hat = torch.stack(vecs).T @ a.to(vecs[0].device) if vecs and len(vecs[0]) \
            else torch.zeros(0, dtype=torch.float64)
        losses = [u.loss for u in updates if not math.isnan(u.loss)]
        late = bool(losses) and sum(losses) / len(losses) < self.options.stage_bound
        if late:
            bound = self.options.norm_bound * float(g_hat.norm())
            clipped = []
            for d, v in zip(deltas, vecs):
                nv = float(v.norm())
                f = 1.0 if nv <= bound or nv == 0.0 else bound / nv
                clipped.append({k: (t * f if k in keys else t) for k, t in d.items()} if f != 1.0 else d)
            deltas = clipped
            vecs = [as_vector(d, keys) for d in deltas]
        p = []
        for v in vecs:
            c = cosine(v, g_hat)
            ok = not math.isnan(c) and c >= self.options.sim_threshold
            p.append(math.exp(self.options.beta * c) if ok else 0.0)
        p = torch.tensor(p, dtype=torch.float64)
        return deltas, (p / p.sum() if float(p.sum()) > 0 else a)

    def aggregate(self, global_state, updates, ctx):
        deltas, w = self.combine(global_state, updates, ctx)
        return apply_delta(global_state, deltas, w, lr=self.options.server_lr)



class FedAC(AdaptiveServer):
    """FedAC (Zang et al., "Efficient asynchronous federated learning with prospective momentum
    aggregation and fine-grained correction", AAAI 2024): temporal-gradient client weights and an
    adaptive server step with prospective (look-ahead) momentum.

    Rule:
      1. client weight from the temporal gradient: D_j = w_g − w_start_j (how the global model
         moved while client j trained; w_start_j = w_j − Δ_j), s_j = cos(Δ_j, D_j) over the
         parameters (s_j = 1 for a fresh update, D_j = 0); p_j ∝ (1 + s_j)/2, normalised;
      2. Δ̄ = Σ p_j Δ_j; server moments m ← β1 m + (1−β1) Δ̄, v ← β2 v + (1−β2) Δ̄²;
         prospective step w ← w + η_g (β1 m + (1−β1) Δ̄) / (√v + ε) on the parameters
         (``server_opt="adam"``, η_g = 0.001, β1 = 0.9, β2 = 0.99, ε = 1e-3); BN buffers get Δ̄.
         ``server_opt="none"`` applies w ← w + Δ̄ (what the official code effectively does).
    Differences from the official ``afl_sgd_fedac.py`` and why:
      * its moments and control variates are computed but never applied (no-op assignments into
        temporary state dicts, spec §6); fedlib applies the adaptive server step;
      * its weight compares Δ_j − w_start (a delta minus a model) with the drift and takes |cos|
        (opposed updates get large weights), fresh updates 1/K; fedlib uses cos(Δ_j, D_j) mapped
        to [0, 1];
      * the client-side fine-grained gradient correction (SCAFFOLD-style control variates) is
        not implemented: the shared engine has no control-variate term, and the official code
        never applies it either; β and ε are fedlib's choices and η_g = 0.001 was picked from
        {0.01, 0.003, 0.001} on adult-gender (seed 0, 100 rounds: mean accuracy of the last 20
        rounds 0.782 / 0.710 / 0.804) — the spec gives no value.
    """

    name, aggregation = "fedac", "gradient"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    @dataclass
    class Options:
        server_opt: str = "adam"  # adam | none
        server_lr: float = 0.001
        beta1: float = 0.9
        beta2: float = 0.99
        eps: float = 1e-3

        def __post_init__(self):
            check_choice("fedac options.server_opt", self.server_opt, ("adam", "none"))
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")
            check(0 <= self.beta1 < 1 and 0 <= self.beta2 < 1, "options.beta1/beta2 must be in [0, 1)")
            check(self.eps > 0, f"options.eps must be > 0, got {self.eps}")

    def weights(self, global_state, updates, ctx) -> torch.Tensor:
        keys = param_keys(global_state, ctx)
        g = as_vector(global_state, keys)
        p = []
        for u in updates:
            d = as_vector(u.delta, keys)
            drift = g - (as_vector(u.state, keys) - d)
            s = 1.0 if u.staleness == 0 else cosine(d, drift)
            p.append((1.0 + (1.0 if math.isnan(s) else s)) / 2.0)
        p = torch.tensor(p, dtype=torch.float64)
        return p / p.sum() if float(p.sum()) > 0 else torch.full_like(p, 1.0 / len(p))

    def aggregate(self, global_state, updates, ctx):
        mean = mean_delta(updates, self.weights(global_state, updates, ctx))
        o = self.options
        if o.server_opt == "none":
            return add_step(global_state, mean)
        step = self.adam.scaled_step(mean, param_keys(global_state, ctx), o.server_lr, o.beta1, o.beta2,
                                     nesterov=True, eps=o.eps)
        return add_step(global_state, step)



class DeFedAvg(Strategy):
    """DeFedAvg (Wang et al., "Achieving linear speedup in asynchronous federated learning with
    heterogeneous clients", IEEE TMC 2024): the server aggregates K updates drawn uniformly at
    random from its buffer — not the oldest K — and averages their deltas:
    w ← w + η_g (1/K) Σ_j Δ_j (η_g = 1).

    The draw uses the stream (seed, "defedavg", round), so runs are reproducible. Undrawn updates
    stay buffered. Differences from the official ``afl_sgd_de.py``: it uses Python's global
    ``random`` (unseeded); otherwise the same rule.
    """

    name, aggregation = "defedavg", "gradient"
    # no per-client state, no on_upload (its random select still keeps the simulator from skipping)
    reads_unaggregated = False

    Options = ServerLrOptions

    def select(self, buffer, ctx):
        g = generator(ctx.seed, "defedavg", ctx.round)
        return sorted(torch.randperm(len(buffer), generator=g)[: ctx.k].tolist())

    def aggregate(self, global_state, updates, ctx):
        return apply_delta(global_state, [u.delta for u in updates], None, lr=self.options.server_lr)



class FADAS(AdaptiveServer):
    """FADAS (Wang et al., "FADAS: towards federated adaptive asynchronous optimization", ICML
    2024, Alg. 1): AMSGrad-style server step with a delay-adaptive learning rate.

    Rule: Δ̄ = (1/K) Σ_j Δ_j; m ← β1 m + (1−β1) Δ̄; v ← β2 v + (1−β2) Δ̄²; v̂ ← max(v̂, v);
    η_t = η if τ_max ≤ τ_c else min(η, 1/τ_max) (τ_max = largest staleness in the round,
    τ_c = ``delay_threshold`` = 10, the official code's threshold); w ← w + η_t m / (√v̂ + ε) on
    the parameters (η = 0.001, β1 = 0.9, β2 = 0.99, ε = 1e-3); BN buffers get Δ̄.
    ``adaptive=False`` reproduces the official code: w ← w + Δ̄.
    Differences from the official ``afl_sgd_fadas.py`` and why:
      * it computes the moments but adds the plain mean delta (spec §6 "FADAS applies no adaptive
        step") — except for integer buffers, which get the rounded moment ratio; fedlib applies
        the adaptive step to parameters and the mean delta to all buffers;
      * its delay-adaptive lr is a running minimum that never recovers and is never used; fedlib
        recomputes η_t each round as in the paper;
      * its β1 = β2 = 0.1; fedlib uses the usual 0.9 / 0.99; η = 0.001 was picked from
        {0.01, 0.003, 0.001} on adult-gender (seed 0, 100 rounds: mean accuracy of the last 20
        rounds 0.786 / 0.642 / 0.803) — the spec gives no value.
    """

    name, aggregation = "fadas", "gradient"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    @dataclass
    class Options:
        adaptive: bool = True
        server_lr: float = 0.001
        beta1: float = 0.9
        beta2: float = 0.99
        eps: float = 1e-3
        delay_threshold: int = 10

        def __post_init__(self):
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")
            check(0 <= self.beta1 < 1 and 0 <= self.beta2 < 1, "options.beta1/beta2 must be in [0, 1)")
            check(self.eps > 0, f"options.eps must be > 0, got {self.eps}")
            check(self.delay_threshold >= 0, "options.delay_threshold must be >= 0")

    def lr(self, updates) -> float:
        tmax = max(u.staleness for u in updates)
        eta = self.options.server_lr
        return eta if tmax <= self.options.delay_threshold else min(eta, 1.0 / tmax)

    def aggregate(self, global_state, updates, ctx):
        mean = mean_delta(updates)
        o = self.options
        if not o.adaptive:
            return add_step(global_state, mean)
        step = self.adam.scaled_step(mean, param_keys(global_state, ctx), self.lr(updates), o.beta1, o.beta2,
                                     amsgrad=True, eps=o.eps)
        return add_step(global_state, step)



class CA2FL(Strategy):
    """CA²FL (Wang et al., "Tackling the data heterogeneity in asynchronous federated learning
    with cached update calibration", FL@FM workshop 2023 / ICLR 2024, Alg. 1), called "CFL" in
    the FedQS paper: the server caches each client's latest update h_i (initially 0) and
    calibrates the buffered updates with it.

    Rule at a round with selected set S (|S| = K): h̄ = (1/N) Σ_{i=1..N} h_i (before this round's
    updates); v = h̄ + (1/K) Σ_{j∈S} (Δ_j − h_{c(j)}); then h_{c(j)} ← Δ_j; w ← w + η_g v
    (η_g = ``server_lr`` = 0.25). (If a client appears twice in S, both use its cache from before the round and the
    later update is the one cached.)
    Differences from the official ``afl_sgd_cafl.py`` and why: it adds h̄ once *per update*
    (K·h̄ in total) and scales the step by 0.05·local lr (= 0.005); fedlib follows the paper's
    rule. η_g = 0.25 was picked from {1, 0.5, 0.25} on adult-gender (seed 0, 100 rounds: mean
    accuracy of the last 20 rounds 0.778 / 0.797 / 0.803; η_g = 1 drifts because every round
    re-applies the cached updates of all N clients) — the spec gives no value.
    """

    name, aggregation = "cfl", "gradient"
    reads_unaggregated = False  # its cache h_i holds aggregated updates only; default start, no on_upload

    @dataclass
    class Options:
        server_lr: float = 0.25

        def __post_init__(self):
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

    def __init__(self, options=None):
        super().__init__(options)
        self.cache: State | None = None  # key -> [N, ...] float64

    def aggregate(self, global_state, updates, ctx):
        n = ctx.n_clients
        if self.cache is None:
            self.cache = {k: torch.zeros((n, *v.shape), dtype=torch.float64, device=v.device)
                          for k, v in global_state.items()}
        k_ = len(updates)
        v = {}
        for key in global_state:
            h = self.cache[key]
            corr = sum(u.delta[key].to(torch.float64) - h[u.client_id] for u in updates) / k_
            v[key] = h.mean(0) + corr
        for u in updates:
            for key in global_state:
                self.cache[key][u.client_id] = u.delta[key].to(torch.float64)
        return add_step(global_state, v, self.options.server_lr)

    def state_dict(self):
        return {} if self.cache is None else {"cache": clone_state(self.cache)}

    def load_state_dict(self, d):
        if d:
            self.cache = clone_state(d["cache"])

