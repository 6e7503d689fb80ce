"""SAFL baselines with model aggregation (spec fedqs.md §6): :class:`FedAvg`, :class:`SAFA`,
:class:`FedAT`, :class:`MStep` (M-step KAFL) — the new global model is a weighted average of
client models. Conventions (notation, staleness, BN buffers): :mod:`fedlib.safl.baselines`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from fedlib.core.errors import check, check_choice
from fedlib.safl.baselines.common import WEIGHTINGS, as_vector, update_weights
from fedlib.safl.strategy import (
    NoOptions, State, Strategy, Update, clone_state, float_keys, weighted_model_average,
)

__all__ = ["FedAvg", "SAFA", "FedAT", "MStep"]


class FedAvg(Strategy):
    """FedAvg in SAFL: the new global model is the mean of the K buffered client models.

    Rule: w ← Σ_j p_j w_j with p_j = 1/K (``weighting="uniform"``, spec §6 "mean of K models",
    and what the official ``afl_avg_pure.py`` does) or p_j = n_j / Σ n (``"samples"``, the
    data-size weights of McMahan et al., AISTATS 2017, eq. in §2).
    Differences from the official code: none in the rule (its staleness log is off by one, see
    the module docstring).
    """

    name, aggregation = "fedavg", "model"
    reads_unaggregated = False  # no per-client state across trainings, no on_upload

    @dataclass
    class Options:
        weighting: str = "uniform"  # uniform | samples

        def __post_init__(self):
            check_choice("fedavg options.weighting", self.weighting, WEIGHTINGS)

    def aggregate(self, global_state, updates, ctx):
        return weighted_model_average([u.state for u in updates], update_weights(updates, self.options.weighting))



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
    reads_unaggregated = False  # its cache holds aggregated updates only; default start, no on_upload

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
        return {"cache": clone_state(self.cache), "cache_version": self.cache_version.clone()}

    def load_state_dict(self, d):
        if d:
            self.cache = clone_state(d["cache"])
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
    # reads_unaggregated stays True: ready/select read the tier (upload − start tick) of every
    # buffered entry's own upload, also one replaced by a later training

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
    # reads_unaggregated stays True: on_upload counts every upload, aggregated or not
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
        g = as_vector(global_state, keys)
        counts = [max(1, int(self.uploads[u.client_id])) for u in updates]
        s = float(sum(counts))
        asc = sorted(counts)
        logits = []
        for u, c in zip(updates, counts):
            wj = as_vector(u.state, keys)
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

