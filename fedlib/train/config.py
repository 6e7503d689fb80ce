"""What one client's local run is told (:class:`LocalConfig`, :class:`ClientTask`) and what it returns.

Local training in both papers is mini-batch SGD-type optimisation on the client's own samples:
FedQS §2 (spec ``fedqs.md`` §2: E = 2 epochs, batch 50, drop_last, clip 20, per-client lr and
heavy-ball momentum from Mod②) and SMoFi (spec ``smofi.md`` §3-4: SGDM/NAG/Adam/AdamW, FedProx's
μ/2‖W − W^n‖², FedNAR's L2-in-loss with co-clipping). Every knob is a field of
:class:`LocalConfig`; :meth:`LocalConfig.validate` rejects bad values before any work starts.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor

from fedlib.core.errors import FedlibError, check, check_choice

OPTIMIZERS = ("sgd", "adam", "adamw")
#: local-training arithmetic (``LocalConfig.precision``): fp32 throughout, or bfloat16 autocast
PRECISIONS = ("fp32", "bf16")

__all__ = ["check_corrections", "OPTIMIZERS", "PRECISIONS", "LocalConfig", "ClientTask", "ClientResult"]


def is_int(v) -> bool:
    """A Python int or anything integer-like (numpy / 0-dim integer tensor), but not a bool."""
    if isinstance(v, bool) or (isinstance(v, Tensor) and (v.dim() != 0 or v.is_floating_point()
                                                           or v.dtype == torch.bool)):
        return False
    try:
        return operator.index(v) == v
    except TypeError:
        return False


def _is_real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class LocalConfig:
    """One client's local-training settings.

    ``optimizer``: ``"sgd"`` (``momentum``/``nesterov``/``weight_decay`` as ``torch.optim.SGD``,
    dampening 0; NAG is ``sgd`` + ``nesterov=True``), ``"adam"`` or ``"adamw"`` (``betas``,
    ``eps``, ``weight_decay`` as ``torch.optim.Adam``/``AdamW``; ``momentum`` must stay 0).

    Steps: ``steps`` (if given) overrides ``epochs``; otherwise ``epochs`` passes over the client's
    samples, each epoch a fresh permutation, ``len // batch_size`` batches per epoch with
    ``drop_last`` (so a client with fewer than ``batch_size`` samples takes no step — FedQS spec
    §2) or ``ceil(len / batch_size)`` without (the last batch is smaller). With ``steps``, epochs
    follow one another until ``steps`` batches were taken.

    Loss: cross-entropy + ``prox_mu``/2 ‖w − w_start‖² (FedProx) + ``l2_in_loss``/2 ‖w‖² (FedNAR:
    weight decay inside the loss, so it is clipped together with the data gradient) over the
    trainable parameters. ``clip_norm``: the client's total gradient 2-norm is clipped to this
    value each step (``torch.nn.utils.clip_grad_norm_``), before the optimizer adds
    ``weight_decay``.

    ``precision`` (issue 17, speed only; neither paper fixes it): ``"fp32"`` (default; every
    operation in float32 as before the option existed, bit for bit) or ``"bf16"``: the local
    forward pass and the loss run under ``torch.autocast(dtype=torch.bfloat16)`` on the training
    device (CPU or CUDA), the backward pass outside it (as torch's autocast documentation
    prescribes); parameters, gradients, optimizer state, clipping and the model update stay
    float32, and so does evaluation [D] (accuracies are measured the same way under either
    precision). See :func:`fedlib.train.common.autocast`.
    """

    lr: float = 0.01
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    optimizer: str = "sgd"
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    batch_size: int = 50
    epochs: int | None = 1
    steps: int | None = None
    drop_last: bool = True
    clip_norm: float | None = None
    prox_mu: float = 0.0
    l2_in_loss: float = 0.0
    augment: bool = True
    precision: str = "fp32"

    def validate(self) -> "LocalConfig":
        """Raise :class:`FedlibError` for any invalid value; return ``self`` when all is well."""
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check(_is_real(self.lr) and self.lr >= 0, f"learning rate must be a number >= 0, got lr={self.lr!r}",
              "use e.g. lr=0.01")
        check(_is_real(self.momentum) and 0 <= self.momentum < 1,
              f"momentum must be in [0, 1), got momentum={self.momentum!r}", "use e.g. momentum=0.9")
        check(isinstance(self.nesterov, bool), f"nesterov must be True or False, got {self.nesterov!r}")
        if self.nesterov:
            check(self.optimizer == "sgd", f"nesterov=True needs optimizer='sgd', got {self.optimizer!r}",
                  "NAG is optimizer='sgd', nesterov=True, momentum>0")
            check(self.momentum > 0, "nesterov=True needs momentum > 0 (torch.optim.SGD rule)",
                  "set momentum, e.g. momentum=0.9, or nesterov=False")
        if self.optimizer != "sgd":
            check(self.momentum == 0, f"momentum={self.momentum} only applies to optimizer='sgd'",
                  f"for {self.optimizer} set betas=(beta1, beta2) and leave momentum=0")
        check(_is_real(self.weight_decay) and self.weight_decay >= 0,
              f"weight_decay must be a number >= 0, got {self.weight_decay!r}")
        check(isinstance(self.betas, (tuple, list)) and len(self.betas) == 2
              and all(_is_real(b) and 0 <= b < 1 for b in self.betas),
              f"betas must be two numbers in [0, 1), got {self.betas!r}", "use e.g. betas=(0.9, 0.999)")
        check(_is_real(self.eps) and self.eps > 0, f"eps must be a number > 0, got {self.eps!r}")
        check(is_int(self.batch_size) and self.batch_size >= 1,
              f"batch_size must be an integer >= 1, got batch_size={self.batch_size!r}", "use e.g. batch_size=50")
        check(self.steps is not None or self.epochs is not None,
              "local training needs epochs or steps, both are None", "set epochs=1 or steps=N")
        if self.steps is not None:
            check(is_int(self.steps) and self.steps >= 0,
                  f"steps must be an integer >= 0 (or None to use epochs), got steps={self.steps!r}")
        if self.epochs is not None:
            check(is_int(self.epochs) and self.epochs >= 0,
                  f"epochs must be an integer >= 0 (or None with steps), got epochs={self.epochs!r}")
        check(isinstance(self.drop_last, bool), f"drop_last must be True or False, got {self.drop_last!r}")
        if self.clip_norm is not None:
            check(_is_real(self.clip_norm) and self.clip_norm > 0,
                  f"clip_norm must be a number > 0 or None, got clip_norm={self.clip_norm!r}",
                  "use None to disable clipping")
        check(_is_real(self.prox_mu) and self.prox_mu >= 0, f"prox_mu must be a number >= 0, got {self.prox_mu!r}")
        check(_is_real(self.l2_in_loss) and self.l2_in_loss >= 0,
              f"l2_in_loss must be a number >= 0, got {self.l2_in_loss!r}")
        check(isinstance(self.augment, bool), f"augment must be True or False, got {self.augment!r}")
        check(self.precision in PRECISIONS,
              f"unknown local precision {self.precision!r}",
              f"use one of: {', '.join(PRECISIONS)} (fp32: bit-reproducible; bf16: bfloat16 autocast)")
        return self

    def num_steps(self, num_samples: int) -> int:
        """How many optimizer steps a client with ``num_samples`` samples takes."""
        per_epoch = batches_per_epoch(num_samples, self.batch_size, self.drop_last)
        if per_epoch == 0:
            return 0
        return int(self.steps) if self.steps is not None else int(self.epochs) * per_epoch


def check_trainable(local: "LocalConfig", sizes, what: str = "clients") -> None:
    """FedlibError when no client of ``sizes`` (samples per client) takes a single optimizer step
    under ``local`` (issue 33: such a run trains nothing, yet used to be stored as done)."""
    sizes = [int(n) for n in sizes]
    empty = sum(n == 0 for n in sizes)
    if sizes and empty > len(sizes) // 2:
        raise FedlibError(f"{empty} of the {len(sizes)} {what} hold no training sample (e.g. a "
                          "Dirichlet alpha so small that each class goes to one client, or a tiny "
                          "data.max_train): most clients would train nothing",
                          "raise data.alpha (e.g. 0.1) or data.max_train, or use fewer clients")
    if any(local.num_steps(n) > 0 for n in sizes):
        return
    biggest = max(sizes, default=0)
    if biggest == 0:
        raise FedlibError(f"every one of the {len(sizes)} {what} holds 0 training samples: the run "
                          "would train nothing", "raise data.max_train (or leave it out), or use fewer clients")
    rule = "with local.drop_last=true a client needs a full batch" if local.drop_last else \
        "no client takes a step"
    raise FedlibError(f"no client has a full batch: the largest of the {len(sizes)} {what} holds "
                      f"{biggest} training samples, local.batch_size is {local.batch_size} ({rule}), "
                      "so the run would train nothing",
                      f"set local.batch_size <= {biggest}, or raise data.max_train / use fewer clients")


def batches_per_epoch(n: int, batch_size: int, drop_last: bool) -> int:
    """Batches in one pass over ``n`` samples."""
    return n // batch_size if drop_last else -(-n // batch_size)


@dataclass
class ClientTask:
    """One client's local run: its sample indices (into the dataset's train split), its settings,
    and which start state it begins from (an index into ``train_clients``' ``starts`` list).

    ``init_opt_state`` (optional): the optimizer state to start from instead of a fresh one,
    ``{kind: {param_name: tensor}}`` with the kinds of :attr:`ClientResult.opt_state` (SGD
    ``momentum_buffer``: the first step is then ``buf = μ·buf_init + g`` as ``torch.optim.SGD`` with
    an existing buffer; Adam/AdamW ``exp_avg``/``exp_avg_sq``, missing ones zero, and an optional
    int ``step`` (default 0) for the bias correction). For FedNAG's averaged momentum and SMoFi's
    carried fused momentum. Parameters not named start fresh.

    ``correction`` (optional, issue 61): a client-side gradient rule the engine calls after every
    backward pass, before clipping and the optimizer step: ``correction(params, grads, state) ->
    {name: new gradient}`` on one client's ``{name: tensor}`` dicts of trainable parameters (detached)
    and gradients, and ``correction_state`` — that client's own tensors (e.g. a control variate, the
    global weights). Names it leaves out keep their gradient. Written with plain tensor operations it
    runs per client in the loop backend and under ``torch.func.vmap`` in the stacked one (one
    function per ``train_clients`` call). FedProx-, FedDyn- and SCAFFOLD-like terms are corrections.
    """

    client_id: int
    indices: Tensor
    config: LocalConfig = LocalConfig()
    start: int = 0
    init_opt_state: dict | None = None
    correction: Callable | None = None
    correction_state: dict | None = None


@dataclass
class ClientResult:
    """One client's outcome.

    ``state``: every ``state_dict`` entry (parameters and buffers, BN running statistics and
    ``num_batches_tracked`` included) after training. ``delta``: ``state − start`` for every entry
    (integer buffers as an integer difference). ``loss``: mean training cross-entropy over the
    client's steps (the data loss only, without the proximal/L2 terms; NaN with 0 steps).
    ``steps``: optimizer steps taken. ``num_samples``: ``len(indices)``. ``opt_state``: the final
    optimizer state ``{kind: {param_name: tensor}}`` (SGD: ``momentum_buffer``, only when
    momentum > 0; Adam/AdamW: ``exp_avg``, ``exp_avg_sq`` and ``step`` (an int)), ``None`` when the
    client took no step or keeps no state.
    """

    client_id: int
    state: dict[str, Tensor]
    delta: dict[str, Tensor]
    loss: float
    steps: int
    num_samples: int
    opt_state: dict | None = None


def validate_init_opt_state(task: "ClientTask", shapes: dict) -> None:
    """Reject an ``init_opt_state`` with unknown kinds, names or shapes (``shapes``: trainable param shapes)."""
    init = task.init_opt_state
    if init is None:
        return
    from fedlib.train.buffers import KINDS

    cid = task.client_id
    check(isinstance(init, dict), f"client {cid}: init_opt_state must be a dict {{kind: {{name: tensor}}}}, "
          f"got {type(init).__name__}")
    allowed = KINDS[task.config.optimizer]
    for kind, per in init.items():
        if kind == "step" and task.config.optimizer != "sgd":
            check(is_int(per) and per >= 0, f"client {cid}: init_opt_state['step'] must be an int >= 0, got {per!r}")
            continue
        check(kind in allowed, f"client {cid}: init_opt_state kind {kind!r} does not belong to optimizer "
              f"{task.config.optimizer!r}", f"use {', '.join(allowed)}")
        check(isinstance(per, dict), f"client {cid}: init_opt_state[{kind!r}] must be a dict {{name: tensor}}")
        for name, t in per.items():
            check(name in shapes, f"client {cid}: init_opt_state[{kind!r}] names {name!r}, "
                  "which is not a trainable parameter of the model")
            check(isinstance(t, Tensor) and tuple(t.shape) == shapes[name],
                  f"client {cid}: init_opt_state[{kind!r}][{name!r}] must be a tensor of shape {shapes[name]}, got "
                  f"{tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__}")


def validate_tasks(tasks, num_train: int, num_starts: int) -> None:
    """Reject an empty task list, bad configs, bad indices and start indices out of range."""
    check(isinstance(tasks, (list, tuple)) and len(tasks) > 0, "train_clients needs at least one ClientTask",
          "pass a non-empty list of ClientTask")
    for pos, t in enumerate(tasks):
        check(isinstance(t, ClientTask), f"task {pos} is a {type(t).__name__}, not a ClientTask")
        check(is_int(t.client_id), f"task {pos}: client_id must be an int, got {t.client_id!r}")
        check(isinstance(t.config, LocalConfig),
              f"client {t.client_id}: config must be a LocalConfig, got {type(t.config).__name__}")
        try:
            t.config.validate()
        except FedlibError as err:
            raise FedlibError(f"client {t.client_id}: {err.problem}", err.fix) from None
        idx = t.indices
        check(isinstance(idx, Tensor) and idx.dim() == 1 and not idx.is_floating_point()
              and idx.dtype != torch.bool,
              f"client {t.client_id}: indices must be a 1-D integer tensor, got "
              f"{type(idx).__name__}{tuple(idx.shape) if isinstance(idx, Tensor) else ''}"
              f"{' ' + str(idx.dtype) if isinstance(idx, Tensor) else ''}",
              "pass torch.as_tensor(indices, dtype=torch.long)")
        if idx.numel():
            lo, hi = int(idx.min()), int(idx.max())
            check(lo >= 0 and hi < num_train,
                  f"client {t.client_id}: sample indices out of range [{lo}, {hi}] for a train split "
                  f"of {num_train} samples", "indices must lie in [0, dataset.num_train)")
        check(is_int(t.start) and 0 <= t.start < num_starts,
              f"client {t.client_id}: start={t.start!r} is out of range for {num_starts} start state(s)",
              f"use 0 <= start < {num_starts}")


def check_corrections(tasks) -> None:
    """The tasks' ``correction`` rules (issue 61): one function for the whole call (or none), callable,
    and every ``correction_state`` a dict of tensors with the same names in every task."""
    rules = {t.correction for t in tasks}
    if rules == {None}:
        return
    check(len(rules) == 1, f"the tasks of one train_clients call have {len(rules)} different corrections",
          "give every task the same correction function (or train them in separate calls)")
    rule = next(iter(rules))
    check(callable(rule), f"correction must be callable, got {type(rule).__name__}")
    keys = {tuple(sorted((t.correction_state or {}).keys())) for t in tasks}
    check(len(keys) == 1, "the tasks' correction_state dicts hold different names",
          "give every client's correction_state the same keys")
    for t in tasks:
        for k, v in (t.correction_state or {}).items():
            check(isinstance(v, Tensor), f"client {t.client_id}: correction_state[{k!r}] must be a tensor, "
                  f"got {type(v).__name__}", "pass tensors (e.g. a control variate per parameter)")
