"""The explicit split path: client parts and server surrogates exchanging smashed data (spec §1).

This is split FL as it runs between machines, written with plain ``torch.optim`` optimizers:
every selected client j holds a copy of the client part W_{c,j} and its optimizer; the server
holds one surrogate W_{s,j} and one optimizer per client (SFLV1) — or a single server part
trained sequentially (SFLV2). Per step, only tensors cross the cut
(:func:`fedlib.models.split.split_forward_backward`): the smashed activations and labels go up,
the activation gradient comes back.

fedlib's fast SFLV1 path trains the *whole* model per client through the engine instead (the same
computation when both parts use the same optimizer, spec §1); this module is the reference the
identity tests compare it with (spec §6 identities 6 and 7), and it is how SFLV2 runs.

Local-step semantics follow :class:`fedlib.train.LocalConfig`: weight decay inside the optimizer,
or as an L2 term of the loss (``l2_in_loss``, FedNAR) that then takes part in clipping; a
proximal term μ/2‖W − W^n‖² toward the start weights (FedProx); the gradient of the whole model
(client and server part together — one scalar norm crosses the cut [D]) clipped to
``clip_norm``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from torch import Tensor, nn

from fedlib.errors import FedlibError, check
from fedlib.models.split import split_forward_backward

State = dict[str, Tensor]
Batch = tuple[Tensor, Tensor]

__all__ = ["TorchOptimBuffers", "SplitClientResult", "make_optimizer", "train_split_clients",
           "train_sflv2_round"]


def make_optimizer(params, local) -> torch.optim.Optimizer:
    """The ``torch.optim`` optimizer of a LocalConfig (sgd | adam | adamw)."""
    opt = str(getattr(local, "optimizer", "sgd")).lower()
    wd = 0.0 if getattr(local, "l2_in_loss", False) else float(getattr(local, "weight_decay", 0.0))
    lr = float(local.lr)
    if opt == "sgd":
        mom = float(getattr(local, "momentum", 0.0))
        return torch.optim.SGD(params, lr=lr, momentum=mom, weight_decay=wd,
                               nesterov=bool(getattr(local, "nesterov", False)) and mom > 0)
    betas = tuple(getattr(local, "betas", (0.9, 0.999)))
    eps = float(getattr(local, "eps", 1e-8))
    if opt == "adam":
        return torch.optim.Adam(params, lr=lr, betas=betas, eps=eps, weight_decay=wd)
    if opt == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=wd)
    raise FedlibError(f"unknown optimizer {opt!r}", "use sgd, adam or adamw")


class TorchOptimBuffers:
    """The engine's ``OptimizerBuffers`` interface over one ``torch.optim`` optimizer per client.

    ``get(kind, name)`` stacks ``optimizer.state[param][kind]`` over the clients (zeros where a
    client has no such state yet); ``set(kind, name, tensor, mask)`` copies ``tensor[c]`` into the
    state of every client ``c`` with ``mask[c]``.
    """

    def __init__(self, optimizers: Sequence[torch.optim.Optimizer],
                 named_params: Sequence[dict[str, nn.Parameter]]):
        self.optimizers = list(optimizers)
        self.params = list(named_params)

    def get(self, kind: str, name: str) -> Tensor:
        rows = []
        for opt, params in zip(self.optimizers, self.params):
            p = params[name]
            st = opt.state.get(p, {})
            rows.append(st[kind].detach() if kind in st else torch.zeros_like(p.detach()))
        return torch.stack(rows)

    def set(self, kind: str, name: str, tensor: Tensor, mask) -> None:
        mask = torch.as_tensor(mask, dtype=torch.bool).tolist()
        for c, (opt, params) in enumerate(zip(self.optimizers, self.params)):
            if not mask[c]:
                continue
            p = params[name]
            st = opt.state[p]
            if kind in st:
                st[kind].copy_(tensor[c])
            else:
                st[kind] = tensor[c].detach().clone()


@dataclass
class SplitClientResult:
    """One client's outcome of a split-path round: whole-model end state, mean loss, steps."""

    state: State
    loss: float
    steps: int
    optimizer_state: dict = field(default_factory=dict)


def _extra_grads(named: list[tuple[str, nn.Parameter]], start: State, local) -> None:
    """Add the L2-in-loss and proximal gradients, then clip the joint norm (in place)."""
    l2 = float(getattr(local, "weight_decay", 0.0)) if getattr(local, "l2_in_loss", False) else 0.0
    mu = float(getattr(local, "prox_mu", 0.0) or 0.0)
    for name, p in named:
        if p.grad is None:
            continue
        if l2:
            p.grad.add_(p.detach(), alpha=l2)
        if mu:
            p.grad.add_(p.detach() - start[name], alpha=mu)
    clip = getattr(local, "clip_norm", None)
    if clip:
        torch.nn.utils.clip_grad_norm_([p for _, p in named if p.grad is not None], float(clip))


def _load(module: nn.Module, state: State) -> None:
    own = module.state_dict()
    module.load_state_dict({k: state[k] for k in own}, strict=True)


def train_split_clients(client_part: nn.Module, server_part: nn.Module, start: State,
                        batches: Sequence[Sequence[Batch]], local, hook: Callable | None = None,
                        loss_fn: Callable | None = None,
                        server_init: Sequence[dict] | None = None) -> list[SplitClientResult]:
    """SFLV1 local training of C clients in lock-step, across the cut (spec §1).

    ``client_part``/``server_part`` are templates (copied per client; their names are those of the
    whole model, see :func:`fedlib.models.split_model`); ``start`` is the whole model's global
    state; ``batches[j]`` is client j's list of ``(x, y)`` per local step (|T_j| = its length).
    After every lock-step τ, ``hook(τ, active, buffers)`` gets the *server surrogates'* optimizer
    buffers (:class:`TorchOptimBuffers`) — SMoFi's :class:`~fedlib.split.smofi.SMoFiHook`.
    ``server_init[j]`` optionally seeds surrogate j's optimizer state (``{kind: {name: tensor}}``).
    """
    loss_fn = loss_fn or nn.CrossEntropyLoss()
    c = len(batches)
    clients, servers, copt, sopt, snamed, named_all, losses = [], [], [], [], [], [], []
    start = {k: v.detach().clone() for k, v in start.items()}
    for j in range(c):
        cp, sp = copy.deepcopy(client_part), copy.deepcopy(server_part)
        _load(cp, start)
        _load(sp, start)
        cp.train()
        sp.train()
        clients.append(cp)
        servers.append(sp)
        copt.append(make_optimizer(list(cp.parameters()), local))
        so = make_optimizer(list(sp.parameters()), local)
        sn = dict(sp.named_parameters())
        if server_init is not None and server_init[j]:
            for kind, per_name in server_init[j].items():
                for name, t in per_name.items():
                    so.state[sn[name]][kind] = t.detach().clone()
        sopt.append(so)
        snamed.append(sn)
        named_all.append(list(cp.named_parameters()) + list(sp.named_parameters()))
        losses.append([])
    steps = [len(b) for b in batches]
    buffers = TorchOptimBuffers(sopt, snamed)
    for tau in range(max(steps, default=0)):
        active = torch.tensor([tau < s for s in steps])
        for j in range(c):
            if not active[j]:
                continue
            x, y = batches[j][tau]
            copt[j].zero_grad(set_to_none=True)
            sopt[j].zero_grad(set_to_none=True)
            loss, _ = split_forward_backward(clients[j], servers[j], x, y, loss_fn)
            _extra_grads(named_all[j], start, local)
            copt[j].step()
            sopt[j].step()
            losses[j].append(float(loss))
        if hook is not None:
            hook(tau, active, buffers)
    out = []
    for j in range(c):
        state = {**clients[j].state_dict(), **servers[j].state_dict()}
        ostate = {}
        for name, p in snamed[j].items():
            for kind, t in sopt[j].state.get(p, {}).items():
                if torch.is_tensor(t) and t.shape == p.shape:
                    ostate.setdefault(kind, {})[name] = t.detach().clone()
        out.append(SplitClientResult({k: v.detach().clone() for k, v in state.items()},
                                     sum(losses[j]) / max(len(losses[j]), 1), steps[j], ostate))
    return out


def train_sflv2_round(client_part: nn.Module, server_part: nn.Module, start: State,
                      batches: Sequence[Sequence[Batch]], order: Sequence[int], local,
                      loss_fn: Callable | None = None) -> tuple[list[SplitClientResult], State]:
    """SFLV2 (spec §1): ONE server part trained sequentially over the clients' smashed data.

    Clients are served one after the other in ``order`` (a seeded permutation); client j runs all
    its |T_j| local steps against the *current* server part, which carries its single optimizer
    (momentum included) from one client to the next within the round [D]. Every client part
    starts from the global client part. Returns the per-client results (whole-model states whose
    server entries are the server part as it was when that client finished) and the server part's
    state after the last client.
    """
    loss_fn = loss_fn or nn.CrossEntropyLoss()
    check(sorted(order) == list(range(len(batches))),
          f"SFLV2 order {list(order)} is not a permutation of the {len(batches)} clients")
    start = {k: v.detach().clone() for k, v in start.items()}
    server = copy.deepcopy(server_part)
    _load(server, start)
    server.train()
    sopt = make_optimizer(list(server.parameters()), local)
    results: list[SplitClientResult | None] = [None] * len(batches)
    for j in order:
        cp = copy.deepcopy(client_part)
        _load(cp, start)
        cp.train()
        copt = make_optimizer(list(cp.parameters()), local)
        named = list(cp.named_parameters()) + list(server.named_parameters())
        losses = []
        for x, y in batches[j]:
            copt.zero_grad(set_to_none=True)
            sopt.zero_grad(set_to_none=True)
            loss, _ = split_forward_backward(cp, server, x, y, loss_fn)
            _extra_grads(named, start, local)
            copt.step()
            sopt.step()
            losses.append(float(loss))
        state = {**cp.state_dict(), **server.state_dict()}
        results[j] = SplitClientResult({k: v.detach().clone() for k, v in state.items()},
                                       sum(losses) / max(len(losses), 1), len(batches[j]))
    server_state = {k: v.detach().clone() for k, v in server.state_dict().items()}
    return results, server_state
