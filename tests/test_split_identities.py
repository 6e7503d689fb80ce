"""The eight identities of spec §6 (SMoFi), on small models with real CIFAR-10 batches.

Real data: ``FEDLIB_DATA`` (``../shared/data``) and the data module's tensor cache, loaded once per
module; every test uses a few dozen images.
"""

import copy
import dataclasses
import os
from pathlib import Path

import pytest
import torch

from fedlib.models import build_model, split_model
from fedlib.models.split import split_forward_backward
from fedlib.split.readings import SMOFI_READINGS
from fedlib.split.smofi import SMoFiHook, SMoFiOptions
from fedlib.split.splitpath import ClientBatches, train_split_clients
from fedlib.train import ClientTask, LocalConfig
from fedlib.train.buffers import LoopBuffers
from fedlib.train.common import cross_entropy

torch.set_num_threads(1)
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def cifar(tmp_path_factory):
    from fedlib.data import load_dataset

    root = os.environ.get("FEDLIB_DATA") or str(_SHARED)
    cache = os.environ.get("FEDLIB_CACHE") or str(Path(__file__).resolve().parents[1] / "data" / "cache")
    return load_dataset("cifar10", root=root, cache_dir=cache)


def _close(a: dict, b: dict, atol=1e-5, rtol=1e-4, keys=None):
    keys = keys or a.keys()
    for k in keys:
        assert torch.allclose(a[k].float(), b[k].float(), atol=atol, rtol=rtol), \
            f"{k}: max diff {(a[k].float() - b[k].float()).abs().max().item():.3g}"


def _tasks(sizes, local, offset=0):
    out, lo = [], offset
    for cid, n in enumerate(sizes):
        out.append(ClientTask(cid, torch.arange(lo, lo + n), local))
        lo += n
    return out


def _batches(tasks, ds, seed=0, round=0):
    return [list(ClientBatches(t, ds, seed, round)) for t in tasks]


def _parts(name="cnn", seed=0, cut=None):
    model = build_model(name, 10, seed=seed, **({"width": 8, "hidden": 32} if name == "cnn" else {}))
    client, server = split_model(model, cut, copy=True)
    return model, client, server


SGDM = LocalConfig(lr=0.05, momentum=0.9, weight_decay=5e-4, batch_size=8, epochs=1)
#: identities 1-4 hold under every named reading of the open fusion rule (fedlib.split.readings)
READINGS = list(SMOFI_READINGS)


def _reading_hook(names, optimizer, reading, n, sizes, **options):
    """A SMoFi hook under ``reading``, started for a round of ``n`` clients with ``sizes`` samples."""
    hook = SMoFiHook(names, optimizer, SMoFiOptions(**dict(SMOFI_READINGS[reading].options), **options))
    hook.start_round(n, sizes=sizes)
    return hook


# ---------------------------------------------------------------------------------------- 6
@pytest.mark.parametrize("name", ["cnn", "resnet18"])
def test_6_split_forward_backward_equals_whole_model(cifar, name):
    model, client, server = _parts(name)
    x, y = cifar.batch(torch.arange(8), train=True, generator=torch.Generator().manual_seed(0))
    model.train()
    whole = copy.deepcopy(model)
    loss_w = cross_entropy(whole(x), y)
    loss_w.backward()
    loss_s, smashed = split_forward_backward(client, server, x, y, cross_entropy)
    assert torch.allclose(loss_s, loss_w.detach(), atol=1e-6)
    grads = {n: p.grad for n, p in whole.named_parameters()}
    split_grads = {**{n: p.grad for n, p in client.named_parameters()},
                   **{n: p.grad for n, p in server.named_parameters()}}
    assert grads.keys() == split_grads.keys()
    _close(grads, split_grads, atol=1e-6)
    assert smashed.grad is not None and smashed.grad.shape == smashed.shape


# ---------------------------------------------------------------------------------------- 1
@pytest.mark.parametrize("reading", READINGS)
def test_1_one_selected_client_smofi_equals_sflv1_sgdm(cifar, reading):
    model, client, server = _parts()
    tasks = _tasks([40], SGDM)
    hook = _reading_hook([n for n, _ in server.named_parameters()], "sgd", reading, 1, [40])
    plain = train_split_clients(client, server, model.state_dict(), _batches(tasks, cifar), SGDM)
    fused = train_split_clients(client, server, model.state_dict(), _batches(tasks, cifar), SGDM,
                                hook=hook)
    assert hook.tau == 5
    for k in plain[0].state:
        assert torch.equal(plain[0].state[k], fused[0].state[k]), k


# ---------------------------------------------------------------------------------------- 2
@pytest.mark.parametrize("reading", READINGS)
def test_2_beta_zero_smofi_equals_sflv1_plain_sgd(cifar, reading):
    local = dataclasses.replace(SGDM, momentum=0.0)
    model, client, server = _parts()
    tasks = _tasks([40, 16, 24], local)  # unequal |T_j|: 5, 2, 3 steps
    hook = _reading_hook([n for n, _ in server.named_parameters()], "sgd", reading, 3, [40, 16, 24])  # not told β = 0
    plain = train_split_clients(client, server, model.state_dict(), _batches(tasks, cifar), local)
    fused = train_split_clients(client, server, model.state_dict(), _batches(tasks, cifar), local,
                                hook=hook)
    for a, b in zip(plain, fused):
        for k in a.state:
            assert torch.equal(a.state[k], b.state[k]), k


# ---------------------------------------------------------------------------------------- 3
@pytest.mark.parametrize("local", [
    SGDM,
    dataclasses.replace(SGDM, nesterov=True),
    LocalConfig(lr=1e-3, optimizer="adam", batch_size=8, epochs=1),
    LocalConfig(lr=1e-3, optimizer="adamw", weight_decay=0.01, batch_size=8, epochs=1),
], ids=["sgdm", "nag", "adam", "adamw"])
@pytest.mark.parametrize("reading", READINGS)
def test_3_identical_batches_keep_surrogates_identical_and_equal_sgdm(cifar, local, reading):
    model, client, server = _parts()
    one = list(ClientBatches(ClientTask(0, torch.arange(32), local), cifar, 0, 0))
    names = [n for n, _ in server.named_parameters()]
    hook = _reading_hook(names, local.optimizer, reading, 3, [32, 32, 32], fuse_second_moment=True)
    fused = train_split_clients(client, server, model.state_dict(), [one, one, one], local, hook=hook)
    single = train_split_clients(client, server, model.state_dict(), [one], local)[0]
    for r in fused[1:]:
        _close(r.state, fused[0].state, atol=1e-6)
    _close(fused[0].state, single.state, atol=2e-6)


# ---------------------------------------------------------------------------------------- 4
@pytest.mark.parametrize("reading", READINGS)
def test_4_no_finished_client_fused_momentum_is_global_momentum_of_mean_gradient(cifar, reading):
    """Server surrogates on real smashed data; check m̄^{τ+1} = β m̄^τ + mean_j ∇L_j at each τ (equal shares)."""
    beta = 0.9
    model, client, server = _parts()
    names = [n for n, _ in server.named_parameters()]
    C, steps = 3, 4
    servers = [copy.deepcopy(server) for _ in range(C)]
    opts = [torch.optim.SGD(s.parameters(), lr=0.05, momentum=beta) for s in servers]
    named = [dict(s.named_parameters()) for s in servers]
    hook = _reading_hook(names, "sgd", reading, C, [steps * 8] * C)
    prev = {n: torch.zeros_like(p) for n, p in server.named_parameters()}
    with torch.no_grad():
        acts = client(cifar.batch(torch.arange(C * steps * 8), train=False)[0])
    ys = cifar.train_y[:C * steps * 8]
    for tau in range(steps):
        grads = {n: [] for n in names}
        for j in range(C):
            sl = slice((tau * C + j) * 8, (tau * C + j + 1) * 8)
            opts[j].zero_grad()
            cross_entropy(servers[j](acts[sl]), ys[sl]).backward()
            for n in names:
                grads[n].append(named[j][n].grad.clone())
            opts[j].step()
        active = torch.ones(C, dtype=torch.bool)
        hook(tau, active, LoopBuffers(opts, named, names, ("momentum_buffer",), active))
        for n in names:
            expect = beta * prev[n] + torch.stack(grads[n]).mean(0)
            got = hook.last_fused[("momentum_buffer", n)]
            assert torch.allclose(got, expect, atol=1e-6), n
            prev[n] = got
            for j in range(C):  # every surrogate continues from the fused buffer
                assert torch.equal(opts[j].state[named[j][n]]["momentum_buffer"], got)


# ---------------------------------------------------------------------------------------- 5
def test_5_finished_clients_count_with_staleness_and_denominator_is_J(cifar):
    """Unequal |T_j| on the split path: after the short clients stop, m̄ keeps their final own
    momentum weighted by s_α, over |J^n| = 3 — checked against a hand recomputation."""
    model, client, server = _parts()
    names = [n for n, _ in server.named_parameters()]
    tasks = _tasks([32, 8, 16], SGDM)  # |T| = 4, 1, 2
    seen = []

    class Spy(SMoFiHook):
        def __call__(self, step, active, buffers):
            own = {n: buffers.get("momentum_buffer", n).clone() for n in self.names}
            super().__call__(step, active, buffers)
            seen.append((step, active.clone(), own,
                         {n: self.last_fused[("momentum_buffer", n)].clone() for n in self.names}))

    hook = Spy(names, "sgd", SMoFiOptions(alpha=-0.5, stale_index="from0"))  # ages 1, 2, ...
    hook.start_round(3)
    train_split_clients(client, server, model.state_dict(), _batches(tasks, cifar), SGDM, hook=hook)
    assert [s[0] for s in seen] == [0, 1, 2, 3]
    final_own = {}
    for step, active, own, fused in seen:
        for j in range(3):
            if active[j]:
                final_own[j] = {n: own[n][j] for n in names}
        T = {0: 4, 1: 1, 2: 2}
        for n in names[:3]:
            expect = sum(final_own[j][n] * (1.0 if active[j] else (step - T[j] + 1) ** -0.5)
                         for j in range(3)) / 3
            assert torch.allclose(fused[n], expect, atol=1e-6)
