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
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from fedlib.train.buffers import StackedBuffers
from fedlib.train.common import StateLayout, autocast, cross_entropy, regularised_loss, upcast
from fedlib.train.config import ClientResult
from fedlib.train.direct import direct_losses, supports_direct
from fedlib.train.optim import Hyper, StackedOptimizer, clip_by_total_norm, stacked_optimizer
from fedlib.train.stream import (ClientStream, dropout_specs, fill_mask_words, has_dropout, mask_word_count,
                                 use_masks, words_to_mask)

__all__ = ["train_stacked"]


def _stack(tensors: list[Tensor]) -> Tensor:
    return torch.stack(tensors).contiguous()


def train_stacked(template: nn.Module, starts: list[dict], dataset, tasks, streams: list[ClientStream],
                  layout: StateLayout, device: torch.device, hook=None) -> list[ClientResult]:
    """Train one group (one optimizer, one precision) in lock-steps; results in ``tasks`` order."""
    template.train()
    optim = stacked_optimizer(tasks[0].config.optimizer)
    st, seeded = _initial_stacks(starts, tasks, layout, device, optim, hook)
    mom_pos = st.h.momentum > 0
    lock_step = _LockStep(template, dataset, tasks, streams, layout, device, optim, st.h)
    stepped = torch.zeros(len(tasks), dtype=torch.bool, device=device)
    retired = _Retired()
    for tau in range(max(s.steps for s in streams)):
        active = [c for c in range(len(tasks)) if streams[c].active]
        if hook is None and len(active) < len(st.rows):  # speed only: drop finished clients' rows once
            retired.retire(st, active, device)
        lock_step(st, active)
        act = torch.zeros(len(tasks), dtype=torch.bool)
        act[active] = True
        stepped |= act.to(device)
        if hook is not None:
            _call_hook(hook, tau, act, st, optim, layout.params, stepped, seeded, mom_pos)
    if retired.stacks is not None:
        retired.finish(st, device)
    return _results(tasks, streams, starts, layout, st, optim, mom_pos)


@dataclass
class _Stacks:
    """The group's working state, one row per client of ``rows`` (every client until some retire)."""

    P: dict[str, Tensor]  # trainable parameters
    B: dict[str, Tensor]  # the other state entries (BatchNorm running statistics)
    opt: dict[str, dict[str, Tensor]]  # optimizer state: kind -> parameter name -> stack
    step_count: Tensor  # float64: optimizer steps so far (Adam's t)
    loss_sum: Tensor  # float64: sum of the steps' cross-entropies
    P0: dict[str, Tensor] | None  # start weights for the proximal term (None: no client uses it)
    h: Hyper
    rows: list[int]


def _initial_stacks(starts, tasks, layout: StateLayout, device, optim: StackedOptimizer, hook):
    """The group's start state and, per optimizer state kind, which clients had it carried in."""
    C = len(tasks)
    pnames, onames = layout.params, layout.others
    P = {k: _stack([starts[t.start][k] for t in tasks]) for k in pnames}
    B = {k: _stack([starts[t.start][k] for t in tasks]) for k in onames}
    dtype = P[pnames[0]].dtype if pnames else torch.get_default_dtype()
    h = Hyper.of([t.config for t in tasks], dtype, device)
    P0 = _prox_start(starts, tasks, pnames) if h.any_prox else None
    opt = optim.init(P, h, hook)
    seeded = _seed_opt_state(opt, tasks, device)
    step_count = torch.tensor(optim.start_steps(tasks), dtype=torch.float64, device=device)
    loss_sum = torch.zeros(C, dtype=torch.float64, device=device)
    return _Stacks(P, B, opt, step_count, loss_sum, P0, h, list(range(C))), seeded


def _prox_start(starts, tasks, pnames) -> dict[str, Tensor]:
    """Every client's start weights (one expanded view when all start from the same state)."""
    if len({t.start for t in tasks}) == 1:
        s0 = starts[tasks[0].start]
        return {k: s0[k].unsqueeze(0).expand(len(tasks), *s0[k].shape) for k in pnames}
    return {k: _stack([starts[t.start][k] for t in tasks]) for k in pnames}


def _seed_opt_state(opt: dict, tasks, device) -> dict[str, Tensor]:
    """Optimizer state carried in (``ClientTask.init_opt_state``) written into its rows, which then
    start from it instead of zeros; per kind, the clients that had some."""
    seeded = {kind: torch.zeros(len(tasks), dtype=torch.bool, device=device) for kind in opt}
    for c, t in enumerate(tasks):
        for kind, per in (t.init_opt_state or {}).items():
            if kind not in opt:
                continue
            for name, v in per.items():
                opt[kind][name][c] = v.detach().to(device=device, dtype=opt[kind][name].dtype)
            seeded[kind][c] = bool(per)
    return seeded


class _LockStep:
    """One lock-step τ: every active client's batch (grouped by shape), loss, gradient, clip and
    optimizer step; the rows of :class:`_Stacks` updated (module docstring, steps 1-3)."""

    def __init__(self, template, dataset, tasks, streams, layout: StateLayout, device,
                 optim: StackedOptimizer, h_all: Hyper):
        self.template, self.dataset, self.streams, self.device = template, dataset, streams, device
        self.pnames, self.onames = layout.params, layout.others
        self.optim = optim
        self.precision = tasks[0].config.precision  # one per group (engine.train_clients groups by it)
        self.drop = has_dropout(template)
        self.spec_cache: dict = {}
        self.direct = supports_direct(template)  # plain feed-forward: batched matmuls, no vmap (direct.py)
        self.vloss = None if self.direct else _client_losses(template, self.pnames, self.onames,
                                                             h_all.any_prox, h_all.any_l2)
        self.merged = _batch_draws_nothing(dataset, {t.config.augment for t in tasks}, streams[0].data_device)
        self.float_dtype = streams[0].float_dtype
        # the client-side correction (ClientTask.correction, one per group) and every client's state
        self.correction = tasks[0].correction
        self.cstate = {k: _stack([t.correction_state[k].to(device) for t in tasks])
                       for k in (tasks[0].correction_state or {})} if self.correction is not None else {}

    def __call__(self, st: _Stacks, active: list[int]) -> None:
        pos = {c: i for i, c in enumerate(st.rows)}
        for members, X, Y, M in _group_batches(self.template, self.dataset, self.streams, active, self.merged,
                                               self.drop, self.spec_cache, self.device, self.float_dtype):
            full = len(members) == len(st.rows)
            idx = None if full else torch.tensor([pos[c] for c in members], device=self.device)
            self._train(st, idx, X, Y, M)

    def _train(self, st: _Stacks, idx: Tensor | None, X, Y, M) -> None:
        """One step of the rows ``idx`` (all when ``None``) on the batches ``X``/``Y``."""

        def sel(t: Tensor) -> Tensor:
            return t if idx is None else t.index_select(0, idx)

        h = st.h.take(idx)
        p = {k: sel(v) for k, v in st.P.items()}
        b = {k: sel(v) for k, v in st.B.items()}  # BN updates these in place (gathered: copies)
        leaves = {k: v.detach().requires_grad_(True) for k, v in p.items()}
        p0 = {k: sel(v) for k, v in st.P0.items()} if h.any_prox else None
        losses, ce = self._losses(leaves, b, X, Y, M, p0, h)
        grads = torch.autograd.grad(losses.sum(), [leaves[k] for k in self.pnames])
        with torch.no_grad():
            if self.correction is not None:
                grads = self._corrected(st, idx, p, grads)
            if h.any_clip:
                grads = clip_by_total_norm(list(grads), h.clip)
            new_p, new_opt = self.optim.step(p, grads, self.pnames, st.opt, sel, st.step_count, h)
            if idx is None:
                _replace_all(st, new_p, b, new_opt, ce)
            else:
                _write_rows(st, idx, new_p, b, new_opt, ce, self.pnames, self.onames)

    def _corrected(self, st: _Stacks, idx: Tensor | None, p: dict, grads) -> tuple:
        """The correction rule vmapped over the stepped rows (their clients' own state rows)."""
        rows = torch.tensor(st.rows, device=self.device)
        rows = rows if idx is None else rows.index_select(0, idx)
        state = {k: v.index_select(0, rows) for k, v in self.cstate.items()}
        g = dict(zip(self.pnames, grads))
        new = vmap(self.correction)({k: p[k].detach() for k in self.pnames}, g, state)
        return tuple(new[k].to(g[k].dtype) if k in new else g[k] for k in self.pnames)

    def _losses(self, leaves, b, X, Y, M, p0, h: Hyper) -> tuple[Tensor, Tensor]:
        """Per-client (regularised loss, cross-entropy); bf16: in autocast, the backward outside."""
        with autocast(self.precision, self.device):
            if self.direct:
                return direct_losses(self.template, self.pnames, {**leaves, **b}, X, Y, M, p0,
                                     h.prox_mu if h.any_prox else None, h.l2 if h.any_l2 else None)
            args = [leaves, b, X, Y, M]
            if h.any_prox:
                args += [p0, h.prox_mu]
            if h.any_l2:
                args.append(h.l2)
            return self.vloss(*args)


def _replace_all(st: _Stacks, new_p, b, new_opt, ce: Tensor) -> None:
    """Every row stepped: the new stacks replace the old."""
    st.P = new_p
    st.B = b
    for kind in st.opt:
        st.opt[kind] = new_opt[kind]
    st.step_count = st.step_count + 1
    st.loss_sum = st.loss_sum + ce.detach().to(torch.float64)


def _write_rows(st: _Stacks, idx: Tensor, new_p, b, new_opt, ce: Tensor, pnames, onames) -> None:
    """Rows ``idx`` stepped: scattered back out of place (tensors a hook was handed earlier never
    change under it)."""
    for k in pnames:
        st.P[k] = st.P[k].index_copy(0, idx, new_p[k])
    for k in onames:
        st.B[k] = st.B[k].index_copy(0, idx, b[k])
    for kind in st.opt:
        for k in pnames:
            st.opt[kind][k] = st.opt[kind][k].index_copy(0, idx, new_opt[kind][k])
    st.step_count = st.step_count.index_add(0, idx, torch.ones(len(idx), dtype=torch.float64,
                                                               device=st.step_count.device))
    st.loss_sum = st.loss_sum.index_add(0, idx, ce.detach().to(torch.float64))


def _call_hook(hook, tau: int, act: Tensor, st: _Stacks, optim: StackedOptimizer, pnames, stepped: Tensor,
               seeded: dict, mom_pos: Tensor) -> None:
    """The between-steps hook (buffers.py) on the optimizer state; its writes become the state."""
    valid = {kind: optim.valid_rows(stepped | seeded[kind], mom_pos) for kind in st.opt}
    bufs = StackedBuffers(st.opt, pnames, valid, act)
    hook(tau, act, bufs)
    st.opt = bufs.state  # set() replaces tensors, never mutates them


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

    def _store(self, ids, pos, st: _Stacks):
        fP, fB, fopt, fstep, floss = self.stacks
        fP = {k: self._write(fP[k], ids, v, pos) for k, v in st.P.items()}
        fB = {k: self._write(fB[k], ids, v, pos) for k, v in st.B.items()}
        fopt = {kind: {k: self._write(fopt[kind][k], ids, v, pos) for k, v in per.items()}
                for kind, per in st.opt.items()}
        self.stacks = (fP, fB, fopt, self._write(fstep, ids, st.step_count, pos),
                       self._write(floss, ids, st.loss_sum, pos))

    def retire(self, st: _Stacks, active: list[int], device) -> None:
        """Store the rows of ``st.rows`` not in ``active``; ``st`` compacted to ``active``."""
        rows, keep = st.rows, set(active)
        gone = [i for i, c in enumerate(rows) if c not in keep]
        if self.stacks is None:  # rows are still every client: the stacks themselves are full size
            self.stacks = (dict(st.P), dict(st.B), {kind: dict(per) for kind, per in st.opt.items()},
                           st.step_count, st.loss_sum)
        else:
            self._store(torch.tensor([rows[i] for i in gone], device=device), torch.tensor(gone, device=device), st)
        idx = torch.tensor([i for i, c in enumerate(rows) if c in keep], device=device)

        def sel(t: Tensor) -> Tensor:
            return t.index_select(0, idx)

        st.P, st.B = {k: sel(v) for k, v in st.P.items()}, {k: sel(v) for k, v in st.B.items()}
        st.opt = {kind: {k: sel(v) for k, v in per.items()} for kind, per in st.opt.items()}
        st.step_count, st.loss_sum = sel(st.step_count), sel(st.loss_sum)
        st.P0 = None if st.P0 is None else {k: sel(v) for k, v in st.P0.items()}
        st.h = st.h.take(idx)
        st.rows = active

    def finish(self, st: _Stacks, device) -> None:
        """``st`` made full size again, with the still-working rows ``st.rows`` written in."""
        if st.rows:
            self._store(torch.tensor(st.rows, device=device), torch.arange(len(st.rows), device=device), st)
        st.P, st.B, st.opt, st.step_count, st.loss_sum = self.stacks
        st.rows = []


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


def _results(tasks, streams, starts, layout: StateLayout, st: _Stacks, optim: StackedOptimizer,
             mom_pos: Tensor) -> list[ClientResult]:
    """Per-client results as independent tensors (not views of the stack: a caller that keeps
    one client's update must not keep the whole group's memory alive)."""
    steps = [s.steps for s in streams]
    states, deltas = _state_rows(tasks, starts, layout, st)
    opt_states = _opt_state_rows(st.opt, optim, steps, mom_pos.tolist())
    losses = st.loss_sum.tolist()
    results = []
    for c, t in enumerate(tasks):
        ost = opt_states[c]
        if ost is not None and optim.counts_steps:
            ost["step"] = int(st.step_count[c])
        loss = losses[c] / steps[c] if steps[c] else float("nan")
        results.append(ClientResult(t.client_id, states[c], deltas[c], loss, steps[c], streams[c].n, ost))
    return results


def _state_rows(tasks, starts, layout: StateLayout, st: _Stacks) -> tuple[list[dict], list[dict]]:
    """Every client's final state and its delta from its start, key by key, releasing each stacked
    tensor once its rows are copied, so the peak stays ~one stack."""
    stacked = {**st.P, **st.B}
    st.P.clear()
    st.B.clear()
    states: list[dict] = [{} for _ in tasks]
    deltas: list[dict] = [{} for _ in tasks]
    for k in layout.keys:
        full = stacked.pop(k)
        for c, t in enumerate(tasks):
            row = full[c].clone()
            states[c][k] = row
            deltas[c][k] = row - starts[t.start][k]
        del full
    return states, deltas


def _opt_state_rows(opt: dict, optim: StackedOptimizer, steps: list[int], mom_pos: list[bool]) -> list[dict | None]:
    """Every client's final optimizer state ``{kind: {name: tensor}}`` (None where it keeps none),
    releasing the stacks as they are copied."""
    opt_states: list[dict | None] = [None] * len(steps)
    for kind in list(opt):
        per = opt.pop(kind)
        for name in list(per):
            full = per.pop(name)
            for c in range(len(steps)):
                if optim.keeps_row(steps[c], mom_pos[c]):
                    opt_states[c] = opt_states[c] or {}
                    opt_states[c].setdefault(kind, {})[name] = full[c].clone()
            del full
    return opt_states
