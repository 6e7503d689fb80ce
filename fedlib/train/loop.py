"""The reference backend: one plain module and one ``torch.optim`` optimizer per client.

Obviously correct by construction — every client is an ordinary PyTorch training loop
(forward, cross-entropy (+ proximal / L2 terms), ``backward``, ``clip_grad_norm_``,
``optimizer.step()``) — and run in lock-step: at step τ every client with τ < its steps takes
one step, then the hook sees every client's optimizer state. The stacked backend is tested equal
to this one.

Memory format (speed only, engine decision [D]): on CPU, models with 2-D convolutions train in
``channels_last`` (parameters, optimizer buffers and inputs), measured ~1.3x faster than NCHW for
the small CNNs on one thread (``benchmarks/README.md``). Results are handed back contiguous (NCHW),
so callers never see the difference beyond floating-point rounding of the convolutions.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from fedlib.train.buffers import KINDS, LoopBuffers
from fedlib.train.common import StateLayout, autocast, cross_entropy, regularised_loss, upcast
from fedlib.train.config import ClientResult, LocalConfig
from fedlib.train.stream import ClientStream, dropout_specs, has_dropout, use_masks

__all__ = ["train_loop", "make_optimizer", "seed_state", "fast_memory_format"]


def fast_memory_format(model: nn.Module, device: torch.device) -> torch.memory_format:
    """``channels_last`` for models with 2-D convolutions on CPU, else ``contiguous_format``."""
    if torch.device(device).type == "cpu" and any(isinstance(m, nn.Conv2d) for m in model.modules()):
        return torch.channels_last
    return torch.contiguous_format


def to_format(x: torch.Tensor, fmt: torch.memory_format) -> torch.Tensor:
    """``x`` in memory format ``fmt`` when it is a 4-D tensor (else unchanged)."""
    return x.contiguous(memory_format=fmt) if x.dim() == 4 and fmt is not torch.contiguous_format else x


def make_optimizer(params, cfg: LocalConfig) -> torch.optim.Optimizer:
    """The ``torch.optim`` optimizer a :class:`LocalConfig` describes."""
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.nesterov,
                               weight_decay=cfg.weight_decay)
    cls = torch.optim.Adam if cfg.optimizer == "adam" else torch.optim.AdamW
    return cls(params, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.eps, weight_decay=cfg.weight_decay)


def train_loop(template: nn.Module, starts: list[dict], dataset, tasks, streams: list[ClientStream],
               layout: StateLayout, device: torch.device, hook=None) -> list[ClientResult]:
    C = len(tasks)
    fmt = fast_memory_format(template, device)
    template.train()
    drop = has_dropout(template)
    spec_cache: dict = {}
    models, opts, named, start_params, loss_sum = [], [], [], [], []
    for t in tasks:
        m = copy.deepcopy(template)
        m.load_state_dict(starts[t.start])
        m.to(memory_format=fmt)
        m.train()
        params = {n: p for n, p in m.named_parameters() if p.requires_grad}
        models.append(m)
        named.append(params)
        opt = make_optimizer([params[n] for n in layout.params], t.config)
        seed_state(opt, params, t.init_opt_state)
        opts.append(opt)
        start_params.append([starts[t.start][n] for n in layout.params] if t.config.prox_mu else None)
        loss_sum.append(torch.zeros((), dtype=torch.float64, device=device))
    kinds = KINDS[tasks[0].config.optimizer]
    max_steps = max(s.steps for s in streams)
    for tau in range(max_steps):
        active = torch.tensor([s.active for s in streams], dtype=torch.bool)
        for c in range(C):
            if not active[c]:
                continue
            cfg, stream, m, opt = tasks[c].config, streams[c], models[c], opts[c]
            x, y = stream.next_batch(dataset, device)
            x = to_format(x, fmt)
            masks = stream.masks(dropout_specs(template, x, spec_cache), device) if drop else []
            with autocast(cfg.precision, device), use_masks(masks):  # bf16: forward in autocast
                out = m(x)
            ce = cross_entropy(upcast(out), y)
            plist = [named[c][n] for n in layout.params]
            loss = regularised_loss(ce, plist, start_params[c], cfg.prox_mu or None, cfg.l2_in_loss or None)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if tasks[c].correction is not None:
                correct_grads(tasks[c], named[c], layout.params)
            if cfg.clip_norm is not None:
                torch.nn.utils.clip_grad_norm_(plist, cfg.clip_norm)
            opt.step()
            loss_sum[c] += ce.detach()
        if hook is not None:
            hook(tau, active, LoopBuffers(opts, named, layout.params, kinds, active,
                                          [t.config.momentum for t in tasks]))
    results = []
    for c, t in enumerate(tasks):
        state = {k: v.detach().clone(memory_format=torch.contiguous_format)
                 for k, v in models[c].state_dict().items()}
        start = starts[t.start]
        delta = {k: state[k] - start[k] for k in layout.keys}
        steps = streams[c].steps
        loss = float(loss_sum[c]) / steps if steps else float("nan")
        results.append(ClientResult(t.client_id, state, delta, loss, steps, streams[c].n,
                                    _opt_state(opts[c], named[c], layout.params, t.config) if steps else None))
    return results


def correct_grads(task, params: dict, names) -> None:
    """The task's client-side ``correction`` (``ClientTask``) applied to its parameters' gradients."""
    with torch.no_grad():
        device = params[names[0]].device
        new = task.correction({n: params[n].detach() for n in names}, {n: params[n].grad for n in names},
                              {k: v.to(device) for k, v in (task.correction_state or {}).items()})
        for n, g in new.items():
            params[n].grad = g.to(params[n].grad.dtype)


def seed_state(opt: torch.optim.Optimizer, params: dict, init: dict | None) -> None:
    """Start ``opt`` from ``init = {kind: {name: tensor}}`` (+ ``step`` for Adam), see ``ClientTask``.

    Adam/AdamW: every parameter's state is created (zeros, ``step`` = ``init.get("step", 0)``),
    then the given entries are copied in — one step count per client, as the stacked backend.
    """
    if not init:
        return
    if isinstance(opt, torch.optim.Adam):  # AdamW is a subclass
        step = float(init.get("step", 0))
        for p in params.values():
            st = opt.state[p]
            st["step"] = torch.tensor(step, dtype=torch.float32)
            st["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format).detach()
            st["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format).detach()
    for kind, per in init.items():
        if kind == "step":
            continue
        for name, t in per.items():
            p = params[name]
            opt.state[p][kind] = torch.empty_like(p, memory_format=torch.preserve_format).copy_(t.detach())


def _opt_state(opt: torch.optim.Optimizer, params: dict, names, cfg: LocalConfig) -> dict | None:
    out: dict = {}
    for n in names:
        st = opt.state.get(params[n], {})
        for kind, v in st.items():
            if kind == "momentum_buffer" and cfg.momentum == 0:
                continue  # only a carried-in buffer can be here; SGD with momentum 0 never uses it
            if kind == "step":
                out["step"] = int(v)
            elif isinstance(v, torch.Tensor):
                out.setdefault(kind, {})[n] = v.detach().clone(memory_format=torch.contiguous_format)
    return out or None
