"""The FedQS strategy (paper §3) on the shared SAFL simulator: its state and its hooks.

:class:`FedQSState` is everything FedQS remembers between calls — per client its learning rate
η_i (cumulative across starts, §3.3), its latest similarity s_i (Mod①), its feedback flag (the
code's per-client table, ``feedback_reset="global"``), its not-yet-compared local update Δ_i, and
the dividers frozen after the last aggregation ([C] (e)). The checkpoint is that value
(:meth:`FedQSState.to_checkpoint` / :meth:`FedQSState.from_checkpoint`, field by field).

:class:`FedQS` wires the three modules (:mod:`fedlib.safl.fedqs.modules`) together under one
:class:`~fedlib.safl.fedqs.rules.FedQSRules` object, chosen once from the options:

* :meth:`FedQS.on_upload` (``local_update="upload"``) / :meth:`FedQS.aggregate` (``"aggregated"``)
  store the client's newest Δ_i;
* :meth:`FedQS.start`: Mod① on the two newest globals and the stored Δ_i (used once, then dropped;
  no new Δ or an undefined similarity keeps the previous s_i), then Mod② with f from
  ``ctx.agg_counts`` (eq. 1) and the dividers f̄, s̄ (eq. 2). Returns the run's LocalConfig with
  lr = η_i and momentum = m_i, and an info dict carried by the Update;
* :meth:`FedQS.aggregate`: Mod③'s weights, then the variant's combination (FedQS-Avg
  w ← Σ p_i w_i, FedQS-SGD w ← w + Σ p_i Δ_i).

Decisions where paper and code leave room (spec §3-§5 [D]): the dividers s̄ and f̄ are computed
from the current tables (s̄ includes the value just computed; f_i = n(i)/mean_j n(j) over all N,
eq. 1; f̄ over clients aggregated at least once, s̄ over clients with a similarity); warm-up until
f_i, f̄, s_i and s̄ all exist, with the run's ``local.momentum``; Mod③'s F_i counts this round's
updates too (the code increments before weighing); the situation test scores the newest global
model on the client's validation samples, in percent. Only the model *parameters* enter Mod① (BN
running statistics are aggregated but are no gradient).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from fedlib.core.errors import check
from fedlib.safl.fedqs.modules import (Mod2Params, Mod2Result, distance_mean, halve_small_classes,
                                       mod1_similarity, mod2_adapt, mod3_weights)
from fedlib.safl.fedqs.options import FedQSOptions, FedQSSGDOptions
from fedlib.safl.fedqs.rules import STORE_AT_UPLOAD, VARIANT_AGGREGATION, FedQSRules
from fedlib.safl.strategy import SimContext, State, Strategy, Update, float_keys

__all__ = ["FedQSState", "FedQS", "FedQSAvg", "FedQSSGD", "STRATEGIES"]

_NAN2 = (float("nan"), float("nan"))


def _codec(save, load) -> dict:
    """Field metadata: how a :class:`FedQSState` field is written to / read from a checkpoint."""
    return {"save": save, "load": load}


def _tensor_codec(dtype) -> dict:
    return _codec(lambda t: t.clone(), lambda t: t.clone().to(dtype))


def _empty(dtype):
    return lambda: torch.zeros(0, dtype=dtype)


@dataclass
class FedQSState:
    """FedQS's memory between calls (module docstring); its checkpoint is this value."""

    n: int = field(default=0, metadata=_codec(int, int))  # clients
    lr: Tensor = field(default_factory=_empty(torch.float64),
                       metadata=_tensor_codec(torch.float64))  # η_i (§3.3)
    sim: Tensor = field(default_factory=_empty(torch.float64),
                        metadata=_tensor_codec(torch.float64))  # s_i (Mod①; NaN = none yet)
    flags: Tensor = field(default_factory=_empty(torch.bool),
                          metadata=_tensor_codec(torch.bool))  # feedback flags [C] per client
    frozen: tuple[float, float] = field(default=_NAN2, metadata=_codec(
        list, lambda v: tuple(float(x) for x in v)))  # (s̄, d̄) after the last aggregation [C] (e)
    pending: dict[int, State] = field(default_factory=dict, metadata=_codec(
        lambda d: {str(c): {k: v.clone() for k, v in s.items()} for c, s in d.items()},
        lambda d: {int(c): {k: v.clone() for k, v in s.items()} for c, s in d.items()}))  # Δ_i not yet compared
    rows: list[dict] = field(default_factory=list, metadata=_codec(
        lambda rows: [dict(r) for r in rows], lambda rows: [dict(r) for r in rows]))  # client rows not yet read

    @classmethod
    def initial(cls, n: int, eta0: float) -> "FedQSState":
        """Before the first start: η_i = η0, no similarity, no flag."""
        return cls(n=n, lr=torch.full((n,), eta0, dtype=torch.float64),
                   sim=torch.full((n,), float("nan"), dtype=torch.float64), flags=torch.zeros(n, dtype=torch.bool))

    def to_checkpoint(self) -> dict:
        return {f.name: f.metadata["save"](getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_checkpoint(cls, d: dict) -> "FedQSState":
        """The state a checkpoint holds (a field it lacks, e.g. ``frozen`` before issue 11, keeps its default)."""
        return cls(**{f.name: f.metadata["load"](d[f.name]) for f in dataclasses.fields(cls) if f.name in d})


def _nanmean(x: Tensor) -> float:
    x = x[~torch.isnan(x)]
    return float(x.mean()) if x.numel() else float("nan")


class FedQS(Strategy):
    """FedQS (paper §3) on the shared SAFL simulator (module docstring). ``rules`` is the
    :class:`FedQSRules` object chosen once, at construction, from the options."""

    name = "fedqs"
    Options = FedQSOptions
    history = 2

    def __init__(self, options=None):
        super().__init__(options)
        self.rules: FedQSRules = self.options.fidelity_rules()  # fidelity + explicit options
        self.aggregation, self._combine = VARIANT_AGGREGATION[self.options.variant]
        self._store_at_upload = STORE_AT_UPLOAD[self.options.local_update]
        self.state = FedQSState()
        self.last_weights: Tensor | None = None
        self._setup_caches(None, None)

    def _setup_caches(self, keys: list[str] | None, mod2: Mod2Params | None) -> None:
        """What :meth:`setup` derives from the run (never saved: rebuilt from the context)."""
        self._keys = keys  # Mod①'s entries: the model parameters (None: every float entry)
        self._mod2 = mod2  # Mod②'s constants, with the run's warm-up momentum (None before setup)
        self._val_cache: dict[int, Tensor] = {}  # situation-test indices per client
        self._mod1_cache: dict = {}  # speed only: L_g of the two newest globals (mod1_similarity)
        self._div_cache: tuple = (None, _NAN2)  # speed only: (similarity table bytes, (s̄, d̄))

    # -- setup ----------------------------------------------------------------------------
    def setup(self, ctx: SimContext) -> None:
        """Before training: the tables for ``ctx.n_clients`` clients and what the run fixes (the
        parameters Mod① compares, Mod②'s warm-up momentum); checks the run can serve FedQS."""
        o, base = self.options, ctx.base_local
        eta0 = o.eta0 if o.eta0 is not None else getattr(base, "lr", None)
        eta0 = float(eta0 if eta0 is not None else 0.1)
        # issue 30: an η0 outside the bounds is clipped at the first adaptation, silently training
        # FedQS at another rate than every baseline (the Shakespeare cpu overlay's lr 0.8 vs 0.2)
        check(o.lr_min <= eta0 <= o.lr_max,
              f"FedQS's initial rate η0 = {eta0:g} ({'options.eta0' if o.eta0 is not None else 'local.lr'}) lies "
              f"outside its bounds [lr_min, lr_max] = [{o.lr_min:g}, {o.lr_max:g}]: Mod② would clip every client "
              "to the bound at its first adaptation",
              f"set options.lr_min / options.lr_max around η0 (the official code's [0.001, 0.2] are [η0/100, 2·η0] "
              f"for its η0 = 0.1, i.e. [{eta0 / 100:g}, {2 * eta0:g}] here), or choose a local.lr inside them")
        self.state = FedQSState.initial(int(ctx.n_clients), eta0)
        warmup = float(getattr(base, "momentum", 0.0) or 0.0)
        self._setup_caches(_parameter_keys(ctx.model), o.mod2_params(self.rules, warmup_momentum=warmup))
        if o.momentum:
            opt = getattr(base, "optimizer", "sgd")
            check(opt == "sgd", f"FedQS momentum (Mod②, heavy-ball) needs local.optimizer='sgd', got {opt!r}",
                  "set local.optimizer='sgd' or options momentum=False")
        if o.momentum or o.feedback:  # the SSBC situation test can change something
            self.rules.validation.for_context(ctx).check_context(ctx)

    # -- Mod① -----------------------------------------------------------------------------
    def _store_local(self, update: Update) -> None:
        self.state.pending[int(update.client_id)] = {
            k: v.detach().clone() for k, v in update.delta.items() if torch.is_floating_point(v)}

    def on_upload(self, update: Update, ctx: SimContext) -> None:
        if self._store_at_upload:
            self._store_local(update)

    def _refresh_similarity(self, c: int, ctx: SimContext) -> float:
        """s_i after comparing the client's pending Δ_i with L_g (§3.2), if it can be compared now."""
        st, delta = self.state, self.state.pending.get(c)
        if delta is not None:
            hist = ctx.global_history(2)
            # first_comparison="skip_initial" [C] (f): the first comparison is w^2 vs w^1
            if len(hist) >= 2 and int(ctx.round) >= self.rules.first_comparison.value:
                s = mod1_similarity(hist[-1], hist[-2], delta, vector=self.rules.mod1_vector.value,
                                    similarity=self.rules.similarity, keys=self._keys or float_keys(hist[-1]),
                                    cache=self._mod1_cache)
                del st.pending[c]
                if not math.isnan(s):
                    st.sim[c] = s
        return float(st.sim[c])

    def _dividers(self) -> tuple[float, float]:
        """(s̄, d̄) of the current similarity table: s̄ the mean s [P], d̄ the code's mean
        distance over d > 0 [C] (:func:`~fedlib.safl.fedqs.modules.distance_mean`)."""
        key = self.state.sim.numpy().tobytes()  # the table changes far less often than it is read
        if self._div_cache[0] != key:
            self._div_cache = (key, (_nanmean(self.state.sim), distance_mean(self.state.sim)))
        return self._div_cache[1]

    # -- Mod② -----------------------------------------------------------------------------
    def _validation(self, c: int, ctx: SimContext) -> Tensor:
        """The client's situation-test indices (cached; derived from the seed, not saved)."""
        if c not in self._val_cache:
            self._val_cache[c] = self.rules.validation.for_context(ctx).indices(c, ctx)
        return self._val_cache[c]

    def _per_class_accuracy(self, c: int, ctx: SimContext) -> Tensor | None:
        """Per-label accuracy (percent) of the newest global model on the client's validation
        samples; the per-class rules halve small classes (the code)."""
        idx = self._validation(c, ctx)
        if idx.numel() == 0:
            return None
        acc = torch.as_tensor(ctx.evaluate_per_class(ctx.global_history(1)[-1], idx), dtype=torch.float64)
        acc = acc.cpu() * 100.0  # evaluate_per_class gives fractions; the threshold is in points
        if self.rules.validation.for_context(ctx).per_class:
            acc = halve_small_classes(acc, torch.bincount(ctx.dataset.train_y.detach().cpu()[idx],
                                                          minlength=acc.numel()))
        return acc

    def _speeds(self, ctx: SimContext) -> tuple[Tensor, float]:
        """(f, f̄): f_i = n(i) / mean_j n(j) (eq. 1; NaN for a client never aggregated) and its mean."""
        n = self.state.n
        counts = torch.as_tensor(ctx.agg_counts, dtype=torch.float64).cpu()
        total = float(counts.sum())
        if total <= 0:
            return torch.full((n,), float("nan"), dtype=torch.float64), float("nan")
        f = counts / (total / n)
        f = torch.where(counts > 0, f, torch.full_like(f, float("nan")))
        return f, _nanmean(f)

    def start(self, client_id: int, ctx: SimContext):
        check(self._mod2 is not None, "FedQS.start before FedQS.setup", "call strategy.setup(ctx) first (the simulator does)")
        r, st, c = self.rules, self.state, int(client_id)
        s_i = self._refresh_similarity(c, ctx)
        # dividers: at every start from the current table [D], or frozen after aggregation [C] (e)
        s_bar, d_bar = self._dividers() if r.threshold_refresh.value else st.frozen
        f, f_bar = self._speeds(ctx)
        f_i = float(f[c])
        res = mod2_adapt(
            float(st.lr[c]), s_i, r.threshold_on.value(s_bar, d_bar), f_i, f_bar, self._mod2,
            per_class_accuracy=lambda: self._per_class_accuracy(c, ctx),
            G=r.bias_ratio.value(s_i, s_bar, d_bar),  # Mod③'s G: [P] s̄/s_i | [C] (b) d_i/d̄
            momentum_G=r.momentum_rule.value.ratio(s_i, s_bar, d_bar),  # [P] | [C] (d)
        )
        st.lr[c] = res.lr
        st.flags[c] = res.feedback
        st.rows.append(_client_row(ctx, c, res, s_i, f_i))
        info = {"type": res.type, "feedback": res.feedback, "s": s_i, "f": f_i, "s_bar": s_bar,
                "d_bar": d_bar, "f_bar": f_bar, "F": res.F, "G": res.G, "situation": res.situation,
                "lr": res.lr, "momentum": res.momentum}
        return _local_config(ctx.base_local, res.lr, res.momentum), info

    # -- Mod③ -----------------------------------------------------------------------------
    def _feedback_of(self, updates: list[Update]) -> tuple[list[bool], list[float]]:
        """(flags, G) of the updates for Mod③: none with feedback off; [D] those each update
        carries; [C] the per-client flag table, with G from the current similarity table."""
        if not self.options.feedback:
            return [False] * len(updates), [1.0] * len(updates)
        if self.rules.feedback_reset.value:
            return ([bool(u.info.get("feedback", False)) for u in updates],
                    [float(u.info.get("G", 1.0)) for u in updates])
        s_bar, d_bar = self._dividers()
        clients = [int(u.client_id) for u in updates]
        return ([bool(self.state.flags[c]) for c in clients],
                [self.rules.bias_ratio.value(float(self.state.sim[c]), s_bar, d_bar) for c in clients])

    def aggregate(self, global_state: State, updates: list[Update], ctx: SimContext) -> State:
        check(len(updates) > 0, "FedQS.aggregate got no updates")
        # F_i: share of all aggregated updates so far, this round's included (the code increments
        # its counts before weighing)
        counts = torch.as_tensor(ctx.agg_counts, dtype=torch.float64).cpu().clone()
        for u in updates:
            counts[int(u.client_id)] += 1
        total = float(counts.sum())
        F = [float(counts[int(u.client_id)]) / total for u in updates]
        flags, G = self._feedback_of(updates)
        p = mod3_weights([u.num_samples for u in updates], flags, F, G, len(updates), ctx.n_clients,
                         q=self.options.q, g_cap=self.options.g_cap, phi=self.rules.phi.value)
        self.last_weights = p
        new = self._combine(global_state, updates, p)
        if not self.rules.feedback_reset.value:
            self.state.flags.zero_()
        if not self._store_at_upload:
            for u in updates:
                self._store_local(u)
        self.state.frozen = self._dividers()  # [C] (e) the code recomputes its thresholds here
        return new

    # -- persistence / records ---------------------------------------------------------------
    def client_rows(self) -> list[dict]:
        rows, self.state.rows = self.state.rows, []
        return rows

    def state_dict(self) -> dict:
        return self.state.to_checkpoint()

    def load_state_dict(self, d: dict) -> None:
        self.state = FedQSState.from_checkpoint(d)
        self._val_cache, self._mod1_cache = {}, {}


def _parameter_keys(model) -> list[str] | None:
    """The model's floating-point parameters by state key (None without a model or parameter)."""
    if model is None:
        return None
    entries = model.state_dict()
    keys = [k for k, _ in model.named_parameters() if k in entries and torch.is_floating_point(entries[k])]
    return keys or None


def _local_config(base, lr: float, momentum: float):
    if base is None:
        from fedlib.train.config import LocalConfig  # noqa: PLC0415

        base = LocalConfig()
    return dataclasses.replace(base, lr=lr, momentum=momentum)


def _client_row(ctx: SimContext, c: int, res: Mod2Result, s_i: float, f_i: float) -> dict:
    """One record of :meth:`FedQS.client_rows`: a client's Mod② decision at one start."""
    return {"round": int(ctx.round), "tick": int(ctx.tick), "client": c, "type": res.type, "lr": res.lr,
            "momentum": res.momentum, "similarity": s_i, "speed": f_i, "feedback": res.feedback,
            "situation": res.situation, "spread": res.spread, "F": res.F, "G": res.G}


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
