"""The explicit split path: client parts and server surrogates exchanging smashed data (spec §1).

This is split FL as it runs between machines, written with plain ``torch.optim`` optimizers:
every selected client j holds a copy of the client part W_{c,j} and its optimizer; the server
holds one surrogate W_{s,j} and one optimizer per client (SFLV1) — or a single server part
trained sequentially (SFLV2). Per step only tensors cross the cut
(:func:`fedlib.models.split.split_forward_backward`): the smashed activations and labels go up,
the activation gradient comes back.

fedlib's fast SFLV1 path trains the *whole* model per client through the engine instead — the
same computation when both parts use the same optimizer (spec §1); this module is the reference
the identity tests compare it with (spec §6 identities 6 and 7), and it is how SFLV2 runs.

Local-step semantics are those of :class:`fedlib.train.LocalConfig`: batches from the engine's
per-client stream (:class:`ClientBatches`), loss = cross-entropy + ``prox_mu``/2‖W − W^n‖²
+ ``l2_in_loss``/2‖W‖² (each part computes its own terms), the gradient 2-norm of the whole model
clipped to ``clip_norm`` (client and server each send one scalar across the cut [D]), then the
optimizer step (``weight_decay`` inside the optimizer).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import torch
from torch import Tensor, nn

from fedlib.core.errors import FedlibError, check
from fedlib.models.split import split_forward_backward
from fedlib.train.loop import make_optimizer

from fedlib.core.state import State  # noqa: E402
Batch = tuple[Tensor, Tensor]

__all__ = ["ClientBatches", "SplitClientResult", "optimizer_kinds",
           "seed_optimizer_state", "train_split_clients", "train_sflv2_round"]


def optimizer_kinds(local) -> tuple[str, ...]:
    """State kinds the optimizer of ``local`` keeps per parameter (as ``fedlib.train.buffers``)."""
    if str(local.optimizer).lower() == "sgd":
        return ("momentum_buffer",) if float(local.momentum) > 0 else ()
    return ("exp_avg", "exp_avg_sq")


def seed_optimizer_state(opt: torch.optim.Optimizer, named: dict[str, nn.Parameter],
                         init: dict | None) -> None:
    """Start ``opt`` from ``init = {kind: {name: tensor}}`` (carried SMoFi / FedNAG momentum).

    SGD then takes its first step as ``m = β·m_init + g`` (``torch.optim.SGD`` with an existing
    buffer); Adam/AdamW states get ``step = 0`` and zero entries for the kinds not given.
    """
    if not init:
        return
    is_adam = isinstance(opt, (torch.optim.Adam, torch.optim.AdamW))
    for kind, per_name in init.items():
        for name, t in per_name.items():
            if name not in named:
                continue
            p = named[name]
            st = opt.state[p]
            st[kind] = t.detach().to(p.device, p.dtype).clone()
            if is_adam:
                st.setdefault("step", torch.tensor(0.0))
                st.setdefault("exp_avg", torch.zeros_like(p.detach()))
                st.setdefault("exp_avg_sq", torch.zeros_like(p.detach()))


@dataclass
class SplitClientResult:
    """One client's outcome of a split-path round: whole-model end state, mean data loss, steps,
    and the final optimizer state ``{kind: {name: tensor}}`` of both parts."""

    state: State
    loss: float
    steps: int
    opt_state: dict = field(default_factory=dict)


class ClientBatches:
    """A client's local batches drawn exactly as the engine draws them
    (:class:`fedlib.train.stream.ClientStream`: a permutation per epoch, augmentation), lazily."""

    def __init__(self, task, dataset, seed: int, round: int, device=None):
        from fedlib.train.stream import ClientStream

        self.dataset = dataset
        self.device = torch.device(device) if device is not None else dataset.device
        self.stream = ClientStream(task, int(seed), int(round), dataset.device)

    def __len__(self) -> int:
        return int(self.stream.steps)

    def __iter__(self):
        for _ in range(len(self)):
            yield self.stream.next_batch(self.dataset, self.device)


def _regularise_and_clip(cparams, sparams, cstart, sstart, local) -> None:
    """Add the gradients of μ/2‖W − W^n‖² and l2/2‖W‖² (each part its own), then clip the whole
    model's gradient norm."""
    from fedlib.train.common import regularised_loss

    mu = float(local.prox_mu) or None
    l2 = float(local.l2_in_loss) or None
    if mu is not None or l2 is not None:
        for params, start in ((cparams, cstart), (sparams, sstart)):
            if params:
                regularised_loss(params[0].new_zeros(()), params, start, mu, l2).backward()
    if local.clip_norm is not None:
        torch.nn.utils.clip_grad_norm_([p for p in cparams + sparams if p.grad is not None],
                                       float(local.clip_norm))


def _precise(module: nn.Module, local, x: Tensor) -> nn.Module:
    """``module`` as the step runs it: itself in fp32, its forward under bfloat16 autocast for
    ``local.precision="bf16"`` (outputs back in float32, backward outside autocast;
    :func:`fedlib.train.common.precision_wrap`)."""
    from fedlib.train.common import precision_wrap

    return precision_wrap(module, getattr(local, "precision", "fp32"), x.device)


def _load(module: nn.Module, state: State) -> None:
    module.load_state_dict({k: state[k] for k in module.state_dict()}, strict=True)


def _trainable(module: nn.Module) -> list[tuple[str, nn.Parameter]]:
    return [(n, p) for n, p in module.named_parameters() if p.requires_grad]


def check_no_dropout(*modules: nn.Module) -> None:
    """The explicit path draws no dropout masks: refuse models that would need them."""
    from fedlib.models import dropouts

    for m in modules:
        if drop := dropouts(m):
            raise FedlibError(f"the explicit split path cannot draw per-client dropout: {drop[0]}",
                              "use a model without dropout (cnn, resnet18, ...) with split.framework=sflv1")


def check_sflv2_model(name: str) -> None:
    """SFLV2 trains its server sequentially on this explicit path, which draws no dropout masks: refuse a
    model with dropout when the config is built (not at round 1 of every run)."""
    from fedlib.models import MODELS, dropout_layers

    drop = dropout_layers(name) if name in MODELS else ()
    if drop:
        raise FedlibError(f"SFLV2 trains its server sequentially on the explicit split path, which draws no "
                          f"dropout masks, but model {name!r} has dropout: {', '.join(drop)}",
                          "use a model without dropout for SFLV2 (cnn, resnet18, ...)")


def _opt_state(opt: torch.optim.Optimizer, named: Iterable[tuple[str, nn.Parameter]]) -> dict:
    out: dict = {}
    for name, p in named:
        for kind, t in opt.state.get(p, {}).items():
            if torch.is_tensor(t) and t.shape == p.shape:
                out.setdefault(kind, {})[name] = t.detach().clone()
    return out


def train_split_clients(client_part: nn.Module, server_part: nn.Module, start: State,
                        batches: Sequence[Sequence[Batch]], local, hook: Callable | None = None,
                        loss_fn: Callable | None = None, init_opt: Sequence[dict] | None = None
                        ) -> list[SplitClientResult]:
    """SFLV1 local training of C clients in lock-step, across the cut (spec §1).

    ``client_part``/``server_part`` are templates (copied per client; parameter names are those of
    the whole model, see :func:`fedlib.models.split_model`); ``start`` is the whole model's global
    state; ``batches[j]`` yields client j's ``(x, y)`` for each local step (|T_j| = its ``len``;
    :class:`ClientBatches` gives the engine's batches). After every lock-step τ,
    ``hook(τ, active, buffers)`` receives the *server surrogates'* optimizer buffers as a
    :class:`fedlib.train.buffers.LoopBuffers` — e.g. :class:`~fedlib.split.smofi.SMoFiHook`.
    ``init_opt[j]`` optionally starts client j's optimizers from ``{kind: {name: tensor}}``.
    """
    from fedlib.train.buffers import LoopBuffers
    from fedlib.train.common import cross_entropy

    loss_fn = loss_fn or cross_entropy
    check_no_dropout(client_part, server_part)
    c = len(batches)
    start = {k: v.detach().clone() for k, v in start.items()}
    clients, servers, copt, sopt, snamed, cnamed, losses = [], [], [], [], [], [], []
    for j in range(c):
        cp, sp = copy.deepcopy(client_part), copy.deepcopy(server_part)
        _load(cp, start)
        _load(sp, start)
        cp.train()
        sp.train()
        cn, sn = _trainable(cp), _trainable(sp)
        co = make_optimizer([p for _, p in cn], local)
        so = make_optimizer([p for _, p in sn], local)
        if init_opt is not None:
            seed_optimizer_state(co, dict(cn), init_opt[j])
            seed_optimizer_state(so, dict(sn), init_opt[j])
        clients.append(cp)
        servers.append(sp)
        copt.append(co)
        sopt.append(so)
        cnamed.append(cn)
        snamed.append(sn)
        losses.append([])
    cstart = [start[n] for n, _ in cnamed[0]] if c else []
    sstart = [start[n] for n, _ in snamed[0]] if c else []
    steps = [len(b) for b in batches]
    its = [iter(b) for b in batches]
    server_names = [n for n, _ in snamed[0]] if c else []
    kinds = optimizer_kinds(local)
    for tau in range(max(steps, default=0)):
        active = torch.tensor([tau < s for s in steps])
        for j in range(c):
            if not active[j]:
                continue
            x, y = next(its[j])
            copt[j].zero_grad(set_to_none=True)
            sopt[j].zero_grad(set_to_none=True)
            loss, _ = split_forward_backward(_precise(clients[j], local, x), _precise(servers[j], local, x), x, y,
                                             loss_fn)
            _regularise_and_clip([p for _, p in cnamed[j]], [p for _, p in snamed[j]],
                                 cstart, sstart, local)
            copt[j].step()
            sopt[j].step()
            losses[j].append(float(loss))
        if hook is not None and kinds:
            hook(tau, active, LoopBuffers(sopt, [dict(n) for n in snamed], server_names, kinds,
                                          active))
    out = []
    for j in range(c):
        state = {**clients[j].state_dict(), **servers[j].state_dict()}
        ostate = _opt_state(copt[j], cnamed[j])
        for kind, per in _opt_state(sopt[j], snamed[j]).items():
            ostate.setdefault(kind, {}).update(per)
        out.append(SplitClientResult({k: v.detach().clone() for k, v in state.items()},
                                     sum(losses[j]) / len(losses[j]) if losses[j] else float("nan"),
                                     steps[j], ostate))
    return out


def train_sflv2_round(client_part: nn.Module, server_part: nn.Module, start: State,
                      batches: Sequence[Sequence[Batch]], order: Sequence[int], local,
                      loss_fn: Callable | None = None,
                      server_momentum: str = "carry") -> tuple[list[SplitClientResult], State]:
    """SFLV2 (spec §1): ONE server part trained sequentially over the clients' smashed data.

    Clients are served one after the other in ``order`` (a seeded permutation); client j runs all
    its |T_j| local steps against the *current* server part, whose single optimizer (momentum
    included) carries over from one client to the next within the round (``server_momentum=
    "carry"`` [D]) or is made afresh for every client (``"reset"``, issue 31: the server part's
    weights still carry over, its momentum / Adam moments start at zero); it starts every
    round fresh. Every client part starts from the global client part. Returns the per-client
    results (whole-model states whose server entries are the server part as it was when that
    client finished) and the server part's state after the last client.
    """
    from fedlib.train.common import cross_entropy

    loss_fn = loss_fn or cross_entropy
    check_no_dropout(client_part, server_part)
    check(sorted(int(o) for o in order) == list(range(len(batches))),
          f"SFLV2 order {list(order)} is not a permutation of the {len(batches)} clients")
    start = {k: v.detach().clone() for k, v in start.items()}
    server = copy.deepcopy(server_part)
    _load(server, start)
    server.train()
    sn = _trainable(server)
    sopt = make_optimizer([p for _, p in sn], local)
    sstart = [start[n] for n, _ in sn]
    results: list[SplitClientResult | None] = [None] * len(batches)
    check(server_momentum in ("carry", "reset"),
          f"server_momentum must be 'carry' or 'reset', got {server_momentum!r}")
    for i, j in enumerate(order):
        j = int(j)
        if server_momentum == "reset" and i > 0:
            sopt = make_optimizer([p for _, p in sn], local)
        cp = copy.deepcopy(client_part)
        _load(cp, start)
        cp.train()
        cn = _trainable(cp)
        copt = make_optimizer([p for _, p in cn], local)
        cstart = [start[n] for n, _ in cn]
        losses = []
        for x, y in batches[j]:
            copt.zero_grad(set_to_none=True)
            sopt.zero_grad(set_to_none=True)
            loss, _ = split_forward_backward(_precise(cp, local, x), _precise(server, local, x), x, y, loss_fn)
            _regularise_and_clip([p for _, p in cn], [p for _, p in sn], cstart, sstart, local)
            copt.step()
            sopt.step()
            losses.append(float(loss))
        state = {**cp.state_dict(), **server.state_dict()}
        results[j] = SplitClientResult({k: v.detach().clone() for k, v in state.items()},
                                       sum(losses) / len(losses) if losses else float("nan"),
                                       len(losses), _opt_state(copt, cn))
    server_state = {k: v.detach().clone() for k, v in server.state_dict().items()}
    return results, server_state
