"""The eleven SAFL baselines of FedQS (spec fedqs.md §6), each a small :class:`Strategy`.

Model aggregation: :class:`FedAvg`, :class:`SAFA`, :class:`FedAT`, :class:`MStep` (KAFL).
Gradient aggregation: :class:`FedSGD`, :class:`FedBuff`, :class:`WKAFL`, :class:`FedAC`,
:class:`DeFedAvg`, :class:`FADAS`, :class:`CA2FL` (registered as ``cfl``).

Every strategy runs in the same simulator with the same local training (spec §2); clients always
start from the newest global model (spec §1). Each docstring states the rule, cites the paper and
lists where it differs from the official FedQS repository (github.com/bkjod/FedQS_,
``utils/afl_*.py``) and why. Notation: K = updates per round, Δ_j = w_j − w_start_j, τ_j = the
update's staleness (``ctx.round − version``; a fresh update has τ = 0 — the official code's file
naming makes its τ one larger for every update not trained from the initial model), e =
``ctx.round``. "Parameters" below means ``ctx.model.named_parameters()``; BN running statistics
and counters are always averaged like the rest of the update (integer buffers rounded, spec §5)
but never enter similarities, norms or adaptive optimiser moments.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Sequence

import torch

from fedlib.core.errors import check, check_choice
from fedlib.core.server_opt import ServerAdam
from fedlib.safl.strategy import (
    NoOptions,
    SimContext,
    State,
    Strategy,
    Update,
    apply_delta,
    clone_state,
    float_keys,
    weighted_model_average,
)
from fedlib.core.utils import generator

__all__ = [
    "FedAvg", "FedSGD", "SAFA", "FedAT", "MStep", "FedBuff", "WKAFL", "FedAC", "DeFedAvg",
    "FADAS", "CA2FL", "BASELINES", "param_keys",
]

WEIGHTINGS = ("uniform", "samples")


# --------------------------------------------------------------------------------- helpers
def param_keys(state: State, ctx: SimContext | None) -> list[str]:
    """Floating-point entries of ``state`` that are trainable parameters of ``ctx.model``
    (all floating-point entries when the context has no model)."""
    keys = float_keys(state)
    model = getattr(ctx, "model", None) if ctx is not None else None
    if model is None:
        return keys
    names = {n for n, _ in model.named_parameters()}
    return [k for k in keys if k in names]


def _vec(state: State, keys: Sequence[str]) -> torch.Tensor:
    if not keys:
        return torch.zeros(0, dtype=torch.float64)
    return torch.cat([state[k].reshape(-1).to(torch.float64) for k in keys])


def _cos(a: torch.Tensor, b: torch.Tensor) -> float:
    na, nb = float(a.norm()), float(b.norm())
    if na == 0.0 or nb == 0.0:
        return float("nan")
    return float(torch.dot(a, b) / (na * nb))


def _weights(updates: list[Update], how: str) -> torch.Tensor:
    if how == "samples":
        w = torch.tensor([float(u.num_samples) for u in updates], dtype=torch.float64)
        if float(w.sum()) > 0:
            return w / w.sum()
    return torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64)


def _mean_delta(updates: list[Update], weights=None) -> State:
    """Σ_j w_j Δ_j in float64 for every entry (uniform 1/K when ``weights`` is None)."""
    w = torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64) if weights is None \
        else torch.as_tensor(weights, dtype=torch.float64)
    out = {}
    for key in updates[0].delta:
        stacked = torch.stack([u.delta[key].to(torch.float64) for u in updates])
        out[key] = torch.tensordot(w.to(stacked.device), stacked, dims=1)
    return out


def _add(global_state: State, step: State, lr: float = 1.0) -> State:
    """w + lr·step (float64 step; integer entries get the rounded step)."""
    out = {}
    for key, g in global_state.items():
        s = lr * step[key]
        out[key] = (g.to(torch.float64) + s).to(g.dtype) if torch.is_floating_point(g) \
            else g + s.round().to(g.dtype)
    return out


def _stack_states(states: Sequence[State]) -> State:
    return {k: torch.stack([s[k] for s in states]) for k in states[0]}


def _states_tensor_dict(d: dict) -> dict:
    return {k: v.clone() for k, v in d.items()}


# ===================================================================== model aggregation
class FedAvg(Strategy):
    """FedAvg in SAFL: the new global model is the mean of the K buffered client models.

    Rule: w ← Σ_j p_j w_j with p_j = 1/K (``weighting="uniform"``, spec §6 "mean of K models",
    and what the official ``afl_avg_pure.py`` does) or p_j = n_j / Σ n (``"samples"``, the
    data-size weights of McMahan et al., AISTATS 2017, eq. in §2).
    Differences from the official code: none in the rule (its staleness log is off by one, see
    the module docstring).
    """

    name, aggregation = "fedavg", "model"

    @dataclass
    class Options:
        weighting: str = "uniform"  # uniform | samples

        def __post_init__(self):
            check_choice("fedavg options.weighting", self.weighting, WEIGHTINGS)

    def aggregate(self, global_state, updates, ctx):
        return weighted_model_average([u.state for u in updates], _weights(updates, self.options.weighting))


class FedSGD(Strategy):
    """FedSGD in SAFL (gradient aggregation): w ← w + η_g · Σ_j p_j Δ_j, p_j = 1/K.

    McMahan et al., AISTATS 2017 (server averages client updates); spec §6 "mean of deltas";
    official ``afl_sgd_pure.py`` (η_g = 1, uniform). ``weighting="samples"`` gives n_j/Σn.
    Differences from the official code: none in the rule.
    """

    name, aggregation = "fedsgd", "gradient"

    @dataclass
    class Options:
        weighting: str = "uniform"
        server_lr: float = 1.0

        def __post_init__(self):
            check_choice("fedsgd options.weighting", self.weighting, WEIGHTINGS)
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

    def aggregate(self, global_state, updates, ctx):
        return apply_delta(global_state, [u.delta for u in updates],
                           _weights(updates, self.options.weighting), lr=self.options.server_lr)


class SAFA(Strategy):
    """SAFA (Wu et al., "SAFA: a semi-asynchronous protocol for fast federated learning with low
    overhead", IEEE TC 2021, §3): discriminative aggregation over a cache of all N client models.

    Rule at round e, for the K selected updates:
      1. *picked* = the first update of each client among the K, *bypassed* = later duplicates;
      2. pre-aggregation cache update: cache_i ← w_i for every picked update;
      3. lag tolerance (τ_lag = ``tolerance`` = 10): every other client whose cached model was
         trained from a version older than e − τ_lag is "deprecated" and its cache entry is
         refreshed with the current global model;
      4. w ← Σ_{i=1..N} (n_i / Σ n) cache_i over *all* N caches (``weighting="samples"``);
      5. post-aggregation: bypassed updates enter the cache (used from the next round on).
    The cache starts as N copies of the initial global model (SAFA: every client holds w_0).

    Differences from the official ``afl_avg_safa.py`` and why:
      * it starts from zero caches, so early global models are shrunk towards 0 — SAFA's clients
        start from w_0, so fedlib does (option ``init="zeros"`` reproduces the code);
      * it consumes the whole buffer every round; fedlib aggregates the K oldest like every
        other strategy (spec §1) — duplicates within those K are bypassed as in SAFA;
      * its lag is "rounds since last picked"; SAFA's is the version lag of the cached model,
        which fedlib uses;
      * SAFA forces deprecated clients to abandon their local work; here every client always
        starts from the newest global (spec §1), so only the server-side cache rule applies.
    """

    name, aggregation = "safa", "model"

    @dataclass
    class Options:
        tolerance: int = 10
        weighting: str = "samples"
        init: str = "global"  # global | zeros

        def __post_init__(self):
            check(self.tolerance >= 0, f"options.tolerance must be >= 0, got {self.tolerance}")
            check_choice("safa options.weighting", self.weighting, WEIGHTINGS)
            check_choice("safa options.init", self.init, ("global", "zeros"))

    def __init__(self, options=None):
        super().__init__(options)
        self.cache: State | None = None  # key -> [N, ...]
        self.cache_version: torch.Tensor | None = None

    def _init_cache(self, global_state: State, n: int) -> None:
        self.cache = {}
        for k, v in global_state.items():
            base = torch.zeros_like(v) if self.options.init == "zeros" else v
            self.cache[k] = base.unsqueeze(0).repeat(n, *([1] * v.dim())).clone()
        self.cache_version = torch.zeros(n, dtype=torch.long)

    def _put(self, c: int, state: State, version: int) -> None:
        for k in self.cache:
            self.cache[k][c] = state[k]
        self.cache_version[c] = version

    def aggregate(self, global_state, updates, ctx):
        n = ctx.n_clients
        if self.cache is None:
            self._init_cache(global_state, n)
        e = ctx.round
        seen, picked, bypass = set(), [], []
        for u in updates:
            (bypass if u.client_id in seen else picked).append(u)
            seen.add(u.client_id)
        for u in picked:
            self._put(u.client_id, u.state, u.version)
        for c in range(n):
            if c not in seen and e - int(self.cache_version[c]) > self.options.tolerance:
                self._put(c, global_state, e)
        if self.options.weighting == "samples":
            w = ctx.sizes.to(torch.float64)
            w = w / w.sum() if float(w.sum()) > 0 else torch.full((n,), 1.0 / n, dtype=torch.float64)
        else:
            w = torch.full((n,), 1.0 / n, dtype=torch.float64)
        new = {}
        for k, ref in global_state.items():
            avg = torch.tensordot(w.to(ref.device), self.cache[k].to(torch.float64), dims=1)
            new[k] = avg.to(ref.dtype) if torch.is_floating_point(ref) else avg.round().to(ref.dtype)
        for u in bypass:
            self._put(u.client_id, u.state, u.version)
        return new

    def state_dict(self):
        if self.cache is None:
            return {}
        return {"cache": _states_tensor_dict(self.cache), "cache_version": self.cache_version.clone()}

    def load_state_dict(self, d):
        if d:
            self.cache = _states_tensor_dict(d["cache"])
            self.cache_version = d["cache_version"].clone()


class FedAT(Strategy):
    """FedAT (Chai et al., "FedAT: a high-performance and communication-efficient federated
    learning system with asynchronous tiers", SC 2021, §4): synchronous within tiers,
    asynchronous across tiers.

    Rule:
      * tiers: an update's tier is set by its observed latency d = upload tick − start tick,
        ``tiers`` = M = 5 equal-width bins over [1, D] (D = the largest delay of the run's delay
        profile): tier = min(M − 1, ⌊(d − 1)·M / D⌋) — for D = 50 exactly the official
        ``(r − 1) // 10``;
      * warm-up (``warmup`` = 30 rounds, FedQS default): plain FedAvg over the K oldest updates;
        at its end every tier model is set to the global model;
      * afterwards a round happens when some tier has K buffered updates (the tier that filled
        first; ties to the faster tier): the tier model becomes the mean of those K models
        (intra-tier synchronous FedAvg, uniform weights as in the official code), the tier's
        update count T_m increases, and the global model is the cross-tier weighted average
        w = Σ_m (T_{M−1−m} / Σ T) · w_m — each tier gets the share of its *mirror* tier, so the
        slow tiers are not drowned by the fast ones (FedAT eq. 4);
      * local objective: FedAT's constraint term λ/2‖w − w_global‖² (``reg="prox"``, through the
        engine's proximal term; λ = ``reg_strength`` = 0.1, the FedQS default strength), or
        ``"l2"`` (λ/2‖w‖² over all parameters, the engine's ``l2_in_loss``) or ``"none"``.
    Differences from the official ``afl_avg_fedat.py`` and why:
      * it crashes for delays > 50 (tier index out of range); fedlib bins over the run's range;
      * its tier models start from a fresh random initialisation (a no-op "zeros" assignment);
        fedlib starts them from the warm-up global model;
      * it can aggregate several tiers in one tick; fedlib keeps the simulator's rule of at most
        one aggregation per tick (the next ready tier aggregates in the next tick);
      * its local term is 0.1/2·Σ‖W_conv‖² on convolution weights only (a no-op for the FCN and
        the LSTM); the engine has no per-layer penalty, and FedAT's own term is the proximal
        constraint, which fedlib uses.
    """

    name, aggregation = "fedat", "model"

    @dataclass
    class Options:
        tiers: int = 5
        warmup: int = 30
        reg: str = "prox"  # prox | l2 | none
        reg_strength: float = 0.1

        def __post_init__(self):
            check(self.tiers >= 1, f"options.tiers must be >= 1, got {self.tiers}")
            check(self.warmup >= 0, f"options.warmup must be >= 0, got {self.warmup}")
            check_choice("fedat options.reg", self.reg, ("prox", "l2", "none"))
            check(self.reg_strength >= 0, f"options.reg_strength must be >= 0, got {self.reg_strength}")

    def __init__(self, options=None):
        super().__init__(options)
        self.max_delay = 1
        self.tier_models: list[State] | None = None
        self.counts = [0] * self.options.tiers

    def setup(self, ctx):
        if ctx.delays is not None and len(ctx.delays):
            self.max_delay = max(1, int(torch.as_tensor(ctx.delays).max()))

    def tier_of(self, u: Update) -> int:
        d = max(1, int(u.upload_tick) - int(u.start_tick))
        m = self.options.tiers
        return min(m - 1, (d - 1) * m // self.max_delay)

    def _warm(self, ctx) -> bool:
        return ctx.round < self.options.warmup

    def _tier_indices(self, buffer) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i, u in enumerate(buffer):
            out.setdefault(self.tier_of(u), []).append(i)
        return out

    def ready(self, buffer, ctx):
        if self._warm(ctx):
            return len(buffer) >= ctx.k
        return any(len(ix) >= ctx.k for ix in self._tier_indices(buffer).values())

    def select(self, buffer, ctx):
        if self._warm(ctx):
            return list(range(ctx.k))
        full = [(ix[ctx.k - 1], t, ix[: ctx.k]) for t, ix in self._tier_indices(buffer).items()
                if len(ix) >= ctx.k]
        return min(full)[2]

    def start(self, client_id, ctx):
        cfg = ctx.base_local
        o = self.options
        if o.reg == "none" or o.reg_strength == 0 or cfg is None:
            return cfg, {}
        field = "prox_mu" if o.reg == "prox" else "l2_in_loss"
        if dataclasses.is_dataclass(cfg) and field in {f.name for f in dataclasses.fields(cfg)}:
            cfg = dataclasses.replace(cfg, **{field: o.reg_strength})
        return cfg, {}

    def aggregate(self, global_state, updates, ctx):
        mean = weighted_model_average([u.state for u in updates])
        if self._warm(ctx):
            if ctx.round + 1 >= self.options.warmup:
                self.tier_models = [clone_state(mean) for _ in range(self.options.tiers)]
            return mean
        if self.tier_models is None:  # warmup = 0
            self.tier_models = [clone_state(global_state) for _ in range(self.options.tiers)]
        m = self.tier_of(updates[0])
        self.tier_models[m] = mean
        self.counts[m] += 1
        total = sum(self.counts)
        mt = self.options.tiers
        w = [self.counts[mt - 1 - t] / total for t in range(mt)]
        keep = [t for t in range(mt) if w[t] > 0]
        return weighted_model_average([self.tier_models[t] for t in keep], [w[t] for t in keep])

    def state_dict(self):
        d = {"counts": list(self.counts), "max_delay": self.max_delay}
        if self.tier_models is not None:
            d["tier_models"] = [clone_state(s) for s in self.tier_models]
        return d

    def load_state_dict(self, d):
        self.counts = [int(c) for c in d.get("counts", self.counts)]
        self.max_delay = int(d.get("max_delay", self.max_delay))
        tm = d.get("tier_models")
        self.tier_models = [clone_state(s) for s in tm] if tm is not None else None


class MStep(Strategy):
    """M-step KAFL (Wu & Wang, "KAFL: achieving high training efficiency for fast-K asynchronous
    federated learning", ICDCS 2022, §IV-B "M-step-FedAsync"): model aggregation whose weights
    discount models that drifted from the global model, relative to how often they arrive.

    Rule for the K selected models w_j:
      λ_j = |⟨w_g, w_j⟩ / ⟨w_j, w_j⟩ − 1|   (deviation of w_j from the global w_g, all float
                                               entries, as in the official code)
      q_j = c_{mirror(j)} / Σ_{i∈K} c_i      (c_j = number of uploads of client j so far; rank
                                               the K counts ascending, mirror(j) = the entry at
                                               the mirrored rank — frequent clients get the count
                                               of infrequent ones and vice versa)
      p_j ∝ b_j · exp(−2 λ_j / q_j)         (b_j = the client's number of samples), normalised
                                               (computed as a softmax of the log-weights, so it
                                               cannot under-flow to 0/0);
      w ← Σ_j p_j w_j.
    Differences from the official ``afl_avg_mstep.py`` and why:
      * its loop index is reset inside the loop, so every client gets q of the *first* update
        (spec §6 "q is the same for all clients"); fedlib computes q per update as intended;
      * its b_j is the number of batches of the client's loader; fedlib uses the sample count
        (proportional up to rounding);
      * its clients that restart before the next aggregation continue from their own local model;
        in fedlib every client starts from the newest global model (spec §1).
    """

    name, aggregation = "m-step", "model"
    Options = NoOptions

    def __init__(self, options=None):
        super().__init__(options)
        self.uploads: torch.Tensor | None = None

    def setup(self, ctx):
        self.uploads = torch.zeros(ctx.n_clients, dtype=torch.long)

    def on_upload(self, update, ctx):
        if self.uploads is None:
            self.uploads = torch.zeros(ctx.n_clients, dtype=torch.long)
        self.uploads[update.client_id] += 1

    def weights(self, global_state, updates, ctx) -> torch.Tensor:
        if self.uploads is None:
            self.setup(ctx)
        keys = float_keys(global_state)
        g = _vec(global_state, keys)
        counts = [max(1, int(self.uploads[u.client_id])) for u in updates]
        s = float(sum(counts))
        asc = sorted(counts)
        logits = []
        for u, c in zip(updates, counts):
            wj = _vec(u.state, keys)
            dd = float(torch.dot(wj, wj))
            lam = abs(float(torch.dot(g, wj)) / dd - 1.0) if dd > 0 else 0.0
            q = asc[len(asc) - 1 - asc.index(c)] / s
            logits.append(math.log(max(float(u.num_samples), 1e-12)) - 2.0 * lam / q)
        return torch.softmax(torch.tensor(logits, dtype=torch.float64), 0)

    def aggregate(self, global_state, updates, ctx):
        return weighted_model_average([u.state for u in updates], self.weights(global_state, updates, ctx))

    def state_dict(self):
        return {} if self.uploads is None else {"uploads": self.uploads.clone()}

    def load_state_dict(self, d):
        if d:
            self.uploads = d["uploads"].clone()


# ================================================================== gradient aggregation
class FedBuff(Strategy):
    """FedBuff (Nguyen et al., "Federated learning with buffered asynchronous aggregation",
    AISTATS 2022, Alg. 1): w ← w + η_g · (1/K) Σ_j s(τ_j) Δ_j with s(τ) = 1/√(1 + τ), η_g = 1.

    Differences from the official ``afl_sgd_fedbuff.py``: none in the rule; its τ is read from
    file names and so is one larger for every update not trained from the initial model —
    fedlib uses the true staleness (a fresh update gets s = 1).
    """

    name, aggregation = "fedbuff", "gradient"

    @dataclass
    class Options:
        server_lr: float = 1.0

        def __post_init__(self):
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

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
        vecs = [_vec(d, keys) for d in deltas]
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
            vecs = [_vec(d, keys) for d in deltas]
        p = []
        for v in vecs:
            c = _cos(v, g_hat)
            ok = not math.isnan(c) and c >= self.options.sim_threshold
            p.append(math.exp(self.options.beta * c) if ok else 0.0)
        p = torch.tensor(p, dtype=torch.float64)
        return deltas, (p / p.sum() if float(p.sum()) > 0 else a)

    def aggregate(self, global_state, updates, ctx):
        deltas, w = self.combine(global_state, updates, ctx)
        return apply_delta(global_state, deltas, w, lr=self.options.server_lr)


class FedAC(Strategy):
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

    def __init__(self, options=None):
        super().__init__(options)
        self.adam = ServerAdam()

    def weights(self, global_state, updates, ctx) -> torch.Tensor:
        keys = param_keys(global_state, ctx)
        g = _vec(global_state, keys)
        p = []
        for u in updates:
            d = _vec(u.delta, keys)
            drift = g - (_vec(u.state, keys) - d)
            s = 1.0 if u.staleness == 0 else _cos(d, drift)
            p.append((1.0 + (1.0 if math.isnan(s) else s)) / 2.0)
        p = torch.tensor(p, dtype=torch.float64)
        return p / p.sum() if float(p.sum()) > 0 else torch.full_like(p, 1.0 / len(p))

    def aggregate(self, global_state, updates, ctx):
        mean = _mean_delta(updates, self.weights(global_state, updates, ctx))
        o = self.options
        if o.server_opt == "none":
            return _add(global_state, mean)
        keys = param_keys(global_state, ctx)
        step = dict(mean)
        adam = self.adam.step(mean, keys, o.beta1, o.beta2, nesterov=True, eps=o.eps)
        for k in keys:
            step[k] = o.server_lr * adam[k]
        return _add(global_state, step)

    def state_dict(self):
        return self.adam.state_dict()

    def load_state_dict(self, d):
        self.adam.load_state_dict(d)


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

    @dataclass
    class Options:
        server_lr: float = 1.0

        def __post_init__(self):
            check(self.server_lr > 0, f"options.server_lr must be > 0, got {self.server_lr}")

    def select(self, buffer, ctx):
        g = generator(ctx.seed, "defedavg", ctx.round)
        return sorted(torch.randperm(len(buffer), generator=g)[: ctx.k].tolist())

    def aggregate(self, global_state, updates, ctx):
        return apply_delta(global_state, [u.delta for u in updates], None, lr=self.options.server_lr)


class FADAS(Strategy):
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

    def __init__(self, options=None):
        super().__init__(options)
        self.adam = ServerAdam()

    def lr(self, updates) -> float:
        tmax = max(u.staleness for u in updates)
        eta = self.options.server_lr
        return eta if tmax <= self.options.delay_threshold else min(eta, 1.0 / tmax)

    def aggregate(self, global_state, updates, ctx):
        mean = _mean_delta(updates)
        o = self.options
        if not o.adaptive:
            return _add(global_state, mean)
        keys = param_keys(global_state, ctx)
        adam = self.adam.step(mean, keys, o.beta1, o.beta2, amsgrad=True, eps=o.eps)
        eta = self.lr(updates)
        step = dict(mean)
        for k in keys:
            step[k] = eta * adam[k]
        return _add(global_state, step)

    def state_dict(self):
        return self.adam.state_dict()

    def load_state_dict(self, d):
        self.adam.load_state_dict(d)


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
        return _add(global_state, v, self.options.server_lr)

    def state_dict(self):
        return {} if self.cache is None else {"cache": _states_tensor_dict(self.cache)}

    def load_state_dict(self, d):
        if d:
            self.cache = _states_tensor_dict(d["cache"])


BASELINES: dict[str, type[Strategy]] = {
    cls.name: cls for cls in (FedAvg, FedSGD, SAFA, FedAT, MStep, FedBuff, WKAFL, FedAC, DeFedAvg,
                              FADAS, CA2FL)
}
