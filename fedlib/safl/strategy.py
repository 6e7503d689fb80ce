"""The SAFL strategy contract: one simulator, many small aggregation strategies.

Every semi-asynchronous algorithm (FedQS and the eleven baselines, spec §5-§6) is a
:class:`Strategy` plugged into :class:`fedlib.safl.simulator.SAFLSimulator`. The simulator owns
the virtual clock, the FIFO buffer and local training (spec §1-§2); a strategy only decides

* what a client trains with when it starts (:meth:`Strategy.start`: its LocalConfig + an
  ``info`` dict that travels with the resulting :class:`Update`), and
* how K buffered updates become the next global model (:meth:`Strategy.aggregate`).

Optional hooks with harmless defaults (never required):
:meth:`Strategy.on_upload` (called when an update reaches the buffer, i.e. when the client
itself knows its own new update), :meth:`Strategy.ready` (whether the buffer may be aggregated
at the end of this tick; default: it holds >= K updates, spec §1), :meth:`Strategy.select`
(which buffered updates form the round; default the oldest K) and the class attribute
``history`` (how many global versions :meth:`SimContext.global_history` must serve; default 2,
what FedQS Mod① needs), and ``reads_unaggregated`` (default True; False lets the simulator skip
trainings whose result no aggregation reads). A strategy receives a frozen :class:`SimContext`
per tick and keeps its own state itself.

Conventions
-----------
* A *state* is a ``dict[str, Tensor]`` like ``model.state_dict()``: parameters and BN buffers.
  Integer entries (``num_batches_tracked``) are averaged/added in float64 and rounded (spec §5:
  "integer buffers are rounded").
* ``ctx.round`` = number of aggregations done so far = version of the current global model
  (the initial model is version 0). During :meth:`Strategy.aggregate` the returned state becomes
  version ``ctx.round + 1``, and ``update.staleness = ctx.round - update.version``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch
from torch import Tensor

from fedlib.core.dataclass_io import build_options
from fedlib.core.errors import FedlibError
from fedlib.core.state import (  # noqa: F401  (the state arithmetic strategies use, re-exported)
    State, apply_delta, clone_state, flatten, float_keys, state_sub, unflatten, weighted_model_average,
    zeros_like_state)

__all__ = [
    "Update",
    "SimContext",
    "Strategy",
    "NoOptions",
    "weighted_model_average",
    "apply_delta",
    "flatten",
    "unflatten",
    "clone_state",
    "state_sub",
    "zeros_like_state",
    "float_keys",
]


# --------------------------------------------------------------------------------------------
# data passed between simulator and strategies
# --------------------------------------------------------------------------------------------
@dataclass
class Update:
    """One buffered client upload (spec §2: Δ_i = w_after − w_before over params + BN buffers)."""

    client_id: int
    delta: State  # w_after - w_start
    state: State  # w_after
    version: int  # global round (version) it trained from
    num_samples: int
    steps: int
    lr: float
    info: dict = field(default_factory=dict)  # what the strategy attached at training start
    staleness: int = 0  # set by the simulator at aggregation: ctx.round - version
    loss: float = float("nan")  # mean local training loss (engine), informative only
    start_tick: int = 0  # virtual tick the training started (set by the simulator)
    upload_tick: int = 0  # virtual tick it was uploaded (upload_tick - start_tick = its delay)


@dataclass
class NoOptions:
    """Options of a strategy that has none."""


@dataclass(frozen=True, eq=False)
class SimContext:
    """The simulation as a strategy sees it during one tick: a frozen value.

    The simulator builds a new one at every tick (:meth:`at_tick`: ``round``, ``tick``,
    ``delays`` and a copy of ``agg_counts``); everything else is fixed for the run. Tests may build
    one directly with only the fields they need (``versions``: the global states
    :meth:`global_history` serves when there is no ``history_fn``).
    """

    n_clients: int
    k: int
    sizes: Tensor  # LongTensor [N]: training samples per client
    base_local: Any = None  # fedlib.train.LocalConfig: the run's default local settings
    model: Any = None  # template nn.Module (architecture; do not train it in place)
    dataset: Any = None  # fedlib.data dataset object: read by FedQS's per-class validation (its clients' labels, train_y)
    train_parts: list | None = None  # list[LongTensor]: each client's training indices
    val_parts: list | None = None  # list[LongTensor] | None: each client's validation indices
    device: Any = "cpu"
    seed: int = 0
    round: int = 0  # aggregations so far = version of the current global model
    tick: int = 0
    agg_counts: Tensor | None = None  # LongTensor [N]: how often each client was aggregated
    delays: Tensor | None = None  # LongTensor [N]: each client's current delay r_i (ticks)
    history_fn: Callable[[int], list] | None = None
    per_class_fn: Callable[[State, Tensor], Tensor] | None = None
    versions: Sequence = ()  # the global states, oldest first, when history_fn is None

    def __post_init__(self):
        if self.agg_counts is None:
            object.__setattr__(self, "agg_counts", torch.zeros(self.n_clients, dtype=torch.long))

    def at_tick(self, round: int, tick: int, delays: Tensor, agg_counts: Tensor) -> "SimContext":
        """The context of one tick: this one with its per-tick fields replaced."""
        return dataclasses.replace(self, round=round, tick=tick, delays=delays, agg_counts=agg_counts)

    def global_history(self, n: int) -> list[State]:
        """The last ``n`` global states, newest last (fewer at the start of training).

        The simulator keeps ``max(strategy.history, 1)`` versions; asking for more raises.
        """
        if self.history_fn is not None:
            return self.history_fn(n)
        return list(self.versions[-n:]) if n > 0 else []

    def evaluate_per_class(self, state: State, indices: Tensor) -> Tensor:
        """Per-class accuracy (float tensor [num_classes], NaN where a class has no sample) of
        ``state`` on the training-set samples ``indices`` (e.g. a client's validation part)."""
        if self.per_class_fn is None:
            raise FedlibError("this SimContext has no evaluator", "build it through SAFLSimulator")
        return self.per_class_fn(state, indices)


# --------------------------------------------------------------------------------------------
# the strategy base
# --------------------------------------------------------------------------------------------
class Strategy:
    """Base class of every SAFL algorithm.

    Subclasses set ``name`` and ``Options`` (a dataclass; the registry validates user options
    against it), and implement :meth:`aggregate`; optional: ``description`` and ``aggregation``
    ("model" = the new global is built from client models, "gradient" = from client deltas; a
    label of the catalogue line). Register one with :func:`fedlib.plugins.register`.
    """

    name: str = "strategy"
    # "model" | "gradient": a label of the catalogue line only (None: no label; issue 61)
    aggregation: str | None = None
    description: str = ""  # one line for `fedlib presets` / docs (default: the docstring's first paragraph)
    Options: type = NoOptions
    history: int = 2  # global versions ctx.global_history() must be able to return
    # True (the safe default): the strategy may depend on trainings that no aggregation reads —
    # state kept across a client's trainings in start(), an on_upload that looks at every upload.
    # False declares that only aggregated updates matter: start() returns the same for a client
    # whether or not its earlier trainings ran and on_upload ignores the updates no aggregation
    # will read; the simulator may then skip those trainings (simulator docstring, "Skipped
    # trainings"). A subclass that adds such state or hook must set it back to True.
    reads_unaggregated: bool = True

    def __init__(self, options=None):
        if options is None:
            options = self.Options()
        elif isinstance(options, dict):
            options = build_options(self.Options, options, self.name)
        self.options = options

    # -- lifecycle ------------------------------------------------------------------------
    def setup(self, ctx: SimContext) -> None:
        """Called once before training (ctx.round == 0)."""

    def start(self, client_id: int, ctx: SimContext) -> tuple[Any, dict]:
        """At a client's training start (it trains on the newest global, version ctx.round):
        return its LocalConfig and the info dict carried by its Update. Default: the run's
        base local config and no info."""
        return ctx.base_local, {}

    def on_upload(self, update: Update, ctx: SimContext) -> None:
        """Optional hook: ``update`` has just been uploaded (entered the buffer) at ctx.tick."""

    def ready(self, buffer: Sequence[Update], ctx: SimContext) -> bool:
        """Aggregate at the end of this tick? Default: the FIFO buffer holds >= K updates."""
        return len(buffer) >= ctx.k

    def select(self, buffer: Sequence[Update], ctx: SimContext) -> list[int]:
        """Indices into the FIFO ``buffer`` that form this round (called when :meth:`ready`).
        Default: the oldest K."""
        return list(range(ctx.k))

    def aggregate(self, global_state: State, updates: list[Update], ctx: SimContext) -> State:
        """Return the new global state from the current one and the K selected updates."""
        raise NotImplementedError

    # -- client side (optional, issue 61) ---------------------------------------------------
    # A method ``correct_grads(self, params, grads, state) -> {name: gradient}`` makes every client
    # correct its gradients after each backward pass (FedProx-, FedDyn-, SCAFFOLD-like local terms;
    # ``fedlib.train.ClientTask.correction``): ``params``/``grads`` are one client's trainable
    # tensors by name, ``state`` what :meth:`correction_state` returned for that training. Use plain
    # tensor operations (the stacked engine runs it under ``torch.func.vmap``).
    correct_grads = None

    def correction_state(self, client_id: int, ctx: SimContext) -> dict:
        """At a training's start: the tensors its ``correct_grads`` reads (e.g. the global weights
        ``ctx.global_history(1)[-1]``, a control variate); default none."""
        return {}

    # -- persistence / records -------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything needed to resume bit-identically (tensors, numbers, strings, lists, dicts)."""
        return {}

    def load_state_dict(self, d: dict) -> None:
        pass

    def client_rows(self) -> list[dict]:
        """Per-client records produced since the last call (e.g. FedQS: types per start)."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"

