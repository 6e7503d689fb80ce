"""The batched backend: a whole group of clients trained at once with ``torch.func``.

Every client's parameters, buffers (BatchNorm running statistics included) and optimizer state are
stacked along a leading client dimension. One lock-step τ:

1. every active client draws its batch (and dropout masks) from its own stream (stream.py);
2. clients whose batches have the same shape are trained together: a ``torch.func.vmap`` of
   ``functional_call`` computes every client's loss on its own batch with its own weights (BN
   normalises with each client's own batch statistics and updates each client's own running
   buffers), and one ``torch.autograd.grad`` of the summed losses gives every client its own
   gradient (the clients' losses share no parameter, so ∂(Σ_c L_c)/∂w_c = ∂L_c/∂w_c);
3. the per-client clip and the ``torch.optim`` update (optim.py) run on the stacked tensors with
   per-client hyper-parameters as ``[C]`` tensors broadcast over the client dimension.

Unequal client sizes: a client that has finished (τ ≥ its steps) simply does not take part —
the active rows are gathered (``index_select``), trained and scattered back (``index_copy_``), so
a finished client's parameters, buffers and optimizer state never change. (This replaces the
"pad + ``where(mask, new, old)`` on every piece of state" of the guide: same guarantee, no wasted
compute on finished clients, and it also covers different batch sizes within a group, e.g. the
short last batch of ``drop_last=False``.) When every client is active and batches agree, the full
stack is used without any copy.
"""

from __future__ import annotations

from collections import defaultdict

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from fedlib.train.buffers import StackedBuffers
from fedlib.train.common import StateLayout, autocast, cross_entropy, regularised_loss, upcast
from fedlib.train.config import ClientResult
from fedlib.train.direct import direct_losses, supports_direct
from fedlib.train.optim import Hyper, adam_step, clip_by_total_norm, sgd_step
from fedlib.train.stream import (ClientStream, dropout_specs, fill_mask_words, has_dropout, mask_word_count,
                                 use_masks, words_to_mask)

__all__ = ["train_stacked"]


def _stack(tensors: list[Tensor]) -> Tensor:
    return torch.stack(tensors).contiguous()


def train_stacked(template: nn.Module, starts: list[dict], dataset, tasks, streams: list[ClientStream],
                  layout: StateLayout, device: torch.device, hook=None) -> list[ClientResult]:
    C = len(tasks)
    template.train()
    configs = [t.config for t in tasks]
    optimizer = configs[0].optimizer
    precision = configs[0].precision  # one per group (engine.train_clients groups by it)
    pnames, onames = layout.params, layout.others
    same_start = len({t.start for t in tasks}) == 1

    P = {k: _stack([starts[t.start][k] for t in tasks]) for k in pnames}
    B = {k: _stack([starts[t.start][k] for t in tasks]) for k in onames}
    dtype = P[pnames[0]].dtype if pnames else torch.get_default_dtype()
    h_all = Hyper.of(configs, dtype, device)
    if h_all.any_prox:  # start weights for the proximal term
        P0 = ({k: starts[tasks[0].start][k].unsqueeze(0).expand(C, *starts[tasks[0].start][k].shape)
               for k in pnames} if same_start else {k: _stack([starts[t.start][k] for t in tasks]) for k in pnames})
    else:
        P0 = None

    if optimizer == "sgd":  # buffers only where torch.optim would keep them (or a hook may look)
        use_buf = h_all.any_momentum or hook is not None
        opt = {"momentum_buffer": {k: torch.zeros_like(v) for k, v in P.items()}} if use_buf else {}
    else:
        opt = {"exp_avg": {k: torch.zeros_like(v) for k, v in P.items()},
               "exp_avg_sq": {k: torch.zeros_like(v) for k, v in P.items()}}
    # optimizer state carried in (ClientTask.init_opt_state): rows start from it instead of zeros
    seeded = {kind: torch.zeros(C, dtype=torch.bool, device=device) for kind in opt}
    for c, t in enumerate(tasks):
        for kind, per in (t.init_opt_state or {}).items():
            if kind not in opt:
                continue
            for name, v in per.items():
                opt[kind][name][c] = v.detach().to(device=device, dtype=opt[kind][name].dtype)
            seeded[kind][c] = bool(per)
    step_count = torch.tensor([float((t.init_opt_state or {}).get("step", 0)) if optimizer != "sgd" else 0.0
                               for t in tasks], dtype=torch.float64, device=device)
    stepped = torch.zeros(C, dtype=torch.bool, device=device)
    mom_pos = h_all.momentum > 0
    loss_sum = torch.zeros(C, dtype=torch.float64, device=device)

    drop = has_dropout(template)
    spec_cache: dict = {}
    direct = supports_direct(template)  # plain feed-forward: batched matmuls, no vmap (direct.py)
    vloss = None if direct else _client_losses(template, pnames, onames, h_all.any_prox, h_all.any_l2)

    merged = _batch_draws_nothing(dataset, {t.config.augment for t in tasks}, streams[0].data_device)
    float_dtype = streams[0].float_dtype

    max_steps = max(s.steps for s in streams)
    rows = list(range(C))  # the clients the working stacks hold, in order (see _Retired)
    retired = _Retired()
    for tau in range(max_steps):
        active = [c for c in range(C) if streams[c].active]
        if hook is None and len(active) < len(rows):  # speed only: drop finished clients' rows once
            P, B, opt, step_count, loss_sum, P0, h_all = retired.retire(rows, active, P, B, opt, step_count,
                                                                        loss_sum, P0, h_all, device)
            rows = active
        pos = {c: i for i, c in enumerate(rows)}
        for members, X, Y, M in _group_batches(template, dataset, streams, active, merged, drop, spec_cache,
                                               device, float_dtype):
            full = len(members) == len(rows)
            idx = None if full else torch.tensor([pos[c] for c in members], device=device)

            def sel(t: Tensor) -> Tensor:
                return t if idx is None else t.index_select(0, idx)

            h = h_all.take(idx)
            p = {k: sel(v) for k, v in P.items()}
            b = {k: sel(v) for k, v in B.items()}  # BN updates these in place (gathered: copies)
            leaves = {k: v.detach().requires_grad_(True) for k, v in p.items()}
            p0 = {k: sel(v) for k, v in P0.items()} if h.any_prox else None
            with autocast(precision, device):  # bf16: forward + loss in autocast, backward outside
                if direct:
                    losses, ce = direct_losses(template, pnames, {**leaves, **b}, X, Y, M, p0,
                                               h.prox_mu if h.any_prox else None, h.l2 if h.any_l2 else None)
                else:
                    args = [leaves, b, X, Y, M]
                    if h.any_prox:
                        args += [p0, h.prox_mu]
                    if h.any_l2:
                        args.append(h.l2)
                    losses, ce = vloss(*args)
            grads = torch.autograd.grad(losses.sum(), [leaves[k] for k in pnames])
            with torch.no_grad():
                if h.any_clip:
                    grads = clip_by_total_norm(list(grads), h.clip)
                new_p, new_opt = {}, {kind: {} for kind in opt}
                if optimizer == "sgd":
                    for k, g in zip(pnames, grads):
                        buf = sel(opt["momentum_buffer"][k]) if opt else None
                        new_p[k], buf = sgd_step(p[k], g, buf, h)
                        if opt:
                            new_opt["momentum_buffer"][k] = buf
                else:
                    step = sel(step_count) + 1
                    for k, g in zip(pnames, grads):
                        new_p[k], m, v = adam_step(p[k], g, sel(opt["exp_avg"][k]), sel(opt["exp_avg_sq"][k]),
                                                   step, h, optimizer == "adamw")
                        new_opt["exp_avg"][k], new_opt["exp_avg_sq"][k] = m, v
                if full:
                    P = new_p
                    B = b
                    for kind in opt:
                        opt[kind] = new_opt[kind]
                    step_count = step_count + 1
                    loss_sum = loss_sum + ce.detach().to(torch.float64)
                else:
                    # out of place: tensors a hook was handed earlier never change under it
                    for k in pnames:
                        P[k] = P[k].index_copy(0, idx, new_p[k])
                    for k in onames:
                        B[k] = B[k].index_copy(0, idx, b[k])
                    for kind in opt:
                        for k in pnames:
                            opt[kind][k] = opt[kind][k].index_copy(0, idx, new_opt[kind][k])
                    step_count = step_count.index_add(0, idx, torch.ones(len(members), dtype=torch.float64,
                                                                         device=device))
                    loss_sum = loss_sum.index_add(0, idx, ce.detach().to(torch.float64))
        act = torch.zeros(C, dtype=torch.bool)
        act[active] = True
        stepped |= act.to(device)
        if hook is not None:
            valid = {kind: ((stepped | seeded[kind]) & mom_pos if kind == "momentum_buffer"
                            else stepped | seeded[kind]) for kind in opt}
            bufs = StackedBuffers(opt, pnames, valid, act)
            hook(tau, act, bufs)
            opt = bufs.state  # set() replaces tensors, never mutates them

    if retired.stacks is not None:
        P, B, opt, step_count, loss_sum = retired.finish(rows, P, B, opt, step_count, loss_sum, device)
    return _results(tasks, streams, starts, layout, P, B, opt, step_count, mom_pos, loss_sum, same_start)


class _Retired:
    """Finished clients' rows, kept out of the working stacks (speed only, no hook).

    Clients only ever finish (τ ≥ their steps), so once one has, its parameters, buffers,
    optimizer state, step count and loss sum are final. Without a hook, instead of gathering the
    active rows (``index_select``) and scattering them back (``index_copy``) at every lock-step
    (the partial-group path), the working stacks are compacted to the active clients once, when
    the active set shrinks, and the finished rows are written to full-size stacks here. A step
    then computes on exactly the tensors the partial path would gather (the same rows in the same
    order, freshly allocated), so every result is bit-identical; only the copies are saved.
    """

    def __init__(self):
        self.stacks = None  # (P, B, opt, step_count, loss_sum), full size

    @staticmethod
    def _write(full: Tensor, ids: Tensor, work: Tensor, pos: Tensor) -> Tensor:
        return full.index_copy(0, ids, work.index_select(0, pos))

    def _store(self, ids, pos, P, B, opt, step_count, loss_sum):
        fP, fB, fopt, fstep, floss = self.stacks
        fP = {k: self._write(fP[k], ids, v, pos) for k, v in P.items()}
        fB = {k: self._write(fB[k], ids, v, pos) for k, v in B.items()}
        fopt = {kind: {k: self._write(fopt[kind][k], ids, v, pos) for k, v in per.items()} for kind, per in opt.items()}
        self.stacks = (fP, fB, fopt, self._write(fstep, ids, step_count, pos), self._write(floss, ids, loss_sum, pos))

    def retire(self, rows, active, P, B, opt, step_count, loss_sum, P0, h, device):
        """Store the rows of ``rows`` not in ``active``; the working state compacted to ``active``."""
        keep = set(active)
        gone = [i for i, c in enumerate(rows) if c not in keep]
        if self.stacks is None:  # rows are still every client: the stacks themselves are full size
            self.stacks = (dict(P), dict(B), {kind: dict(per) for kind, per in opt.items()}, step_count, loss_sum)
        else:
            self._store(torch.tensor([rows[i] for i in gone], device=device), torch.tensor(gone, device=device),
                        P, B, opt, step_count, loss_sum)
        idx = torch.tensor([i for i, c in enumerate(rows) if c in keep], device=device)

        def sel(t: Tensor) -> Tensor:
            return t.index_select(0, idx)

        return ({k: sel(v) for k, v in P.items()}, {k: sel(v) for k, v in B.items()},
                {kind: {k: sel(v) for k, v in per.items()} for kind, per in opt.items()}, sel(step_count),
                sel(loss_sum), None if P0 is None else {k: sel(v) for k, v in P0.items()}, h.take(idx))

    def finish(self, rows, P, B, opt, step_count, loss_sum, device):
        """The full-size stacks, with the still-working rows ``rows`` written in."""
        if rows:
            self._store(torch.tensor(rows, device=device), torch.arange(len(rows), device=device),
                        P, B, opt, step_count, loss_sum)
        return self.stacks


def _batch_draws_nothing(dataset, augment_flags, data_device) -> dict:
    """For each ``augment`` flag: does ``dataset.batch`` leave the generator untouched (no random
    augmentation)? Then a group's batches can be fetched with one call on the concatenated indices
    (the per-client streams still draw their permutations and dropout masks themselves)."""
    out = {}
    probe_idx = torch.zeros(1, dtype=torch.long, device=data_device)
    for flag in augment_flags:
        g = torch.Generator(device=data_device)
        g.manual_seed(0)
        before = g.get_state()
        try:
            dataset.batch(probe_idx, train=True, generator=g, augment=flag)
        except Exception:  # noqa: BLE001 - an odd dataset: keep to the per-client path
            out[flag] = False
            continue
        out[flag] = torch.equal(before, g.get_state())
    return out


def _group_batches(template, dataset, streams, active, merged, drop, spec_cache, device, float_dtype):
    """Every active client's next batch and dropout masks, grouped by shape: ``(members, X, Y, M)``
    with ``X``/``Y`` ``[c, B, ...]`` and ``M`` the client-stacked dropout multipliers."""
    out = []
    if all(merged.get(streams[c].config.augment, False) for c in active):
        picks = {c: streams[c].next_indices() for c in active}
        groups: dict = defaultdict(list)
        for c in active:
            groups[(len(picks[c]), streams[c].config.augment)].append(c)
        for (bs, flag), members in groups.items():
            cat = torch.cat([picks[c] for c in members])
            x, y = dataset.batch(cat, train=True, generator=streams[members[0]].gen, augment=flag)
            dt = float_dtype if (float_dtype is not None and x.is_floating_point()) else None
            X = x.to(device, dtype=dt).reshape(len(members), bs, *x.shape[1:])
            Y = y.to(device).reshape(len(members), bs, *y.shape[1:])
            specs = dropout_specs(template, X[0], spec_cache) if drop else []
            M = []
            for pj, shape, dtype in specs:  # each client's words from its own stream, in its order
                W = torch.empty(len(members), mask_word_count(shape), dtype=torch.int64,
                                device=streams[members[0]].data_device)
                for row, c in enumerate(members):
                    fill_mask_words(W[row], streams[c].gen)
                M.append(words_to_mask(W.to(device), shape, pj, dtype))
            out.append((members, X, Y, M))
        return out
    groups = defaultdict(list)
    batch = {}
    for c in active:
        x, y = streams[c].next_batch(dataset, device)
        specs = dropout_specs(template, x, spec_cache) if drop else []
        batch[c] = (x, y, streams[c].mask_words(specs), specs)
        groups[(tuple(x.shape), x.dtype, tuple(y.shape), tuple(specs))].append(c)
    for members in groups.values():
        X = _stack([batch[c][0] for c in members])
        Y = _stack([batch[c][1] for c in members])
        specs = batch[members[0]][3]  # every client's masks converted at once
        M = [words_to_mask(_stack([batch[c][2][j] for c in members]).to(device), shape, pj, dt)
             for j, (pj, shape, dt) in enumerate(specs)]
        out.append((members, X, Y, M))
    return out


def _client_losses(template: nn.Module, pnames, onames, prox: bool, l2: bool):
    """``vmap`` over clients of (regularised loss, cross-entropy) for one batch each."""

    def one(params, buffers, x, y, masks, *extra):
        with use_masks(masks):
            out = functional_call(template, (params, buffers), (x,))
        ce = cross_entropy(upcast(out), y)
        plist = [params[k] for k in pnames]
        i = 0
        mu = p0 = lam = None
        if prox:
            p0 = [extra[0][k] for k in pnames]
            mu = extra[1]
            i = 2
        if l2:
            lam = extra[i]
        return regularised_loss(ce, plist, p0, mu, lam), ce

    return vmap(one, randomness="error")


def _results(tasks, streams, starts, layout, P, B, opt, step_count, mom_pos, loss_sum, same_start):
    """Per-client results as independent tensors (not views of the stack: a caller that keeps
    one client's update must not keep the whole group's memory alive). Key by key, releasing
    each stacked tensor once its rows are copied, so the peak stays ~one stack."""
    C = len(tasks)
    mom_pos = mom_pos.tolist()
    losses = loss_sum.tolist()
    steps = [s.steps for s in streams]
    stacked = {**P, **B}
    P.clear()
    B.clear()
    states: list[dict] = [{} for _ in range(C)]
    deltas: list[dict] = [{} for _ in range(C)]
    for k in layout.keys:
        full = stacked.pop(k)
        for c, t in enumerate(tasks):
            row = full[c].clone()
            states[c][k] = row
            deltas[c][k] = row - starts[t.start][k]
        del full
    opt_states: list[dict | None] = [None] * C
    for kind in list(opt):
        per = opt.pop(kind)
        for name in list(per):
            full = per.pop(name)
            for c in range(C):
                if steps[c] and not (kind == "momentum_buffer" and not mom_pos[c]):
                    opt_states[c] = opt_states[c] or {}
                    opt_states[c].setdefault(kind, {})[name] = full[c].clone()
            del full
    results = []
    for c, t in enumerate(tasks):
        ost = opt_states[c]
        if ost is not None and "exp_avg" in ost:
            ost["step"] = int(step_count[c])
        loss = losses[c] / steps[c] if steps[c] else float("nan")
        results.append(ClientResult(t.client_id, states[c], deltas[c], loss, steps[c], streams[c].n, ost))
    return results
