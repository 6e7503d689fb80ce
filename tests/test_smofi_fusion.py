"""SMoFi's fusion function and staleness factor (spec §2; identities 4 and 5 of spec §6)."""

import functools

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.split.smofi import (FirstMomentOnlyWarning, SMoFiHook, SMoFiOptions, fuse_momentum,
                                fusion_weights, staleness_weight)


def test_staleness_weight_is_one_right_after_finishing_and_decreases_with_age():
    # a client that took |T_h| = 5 steps is finished from step τ = 5 on: ages 1, 2, 3, ...
    w = staleness_weight(torch.arange(5, 25), 5, alpha=-0.1, stale_index="from0")
    assert w[0].item() == 1.0
    assert torch.all(w[1:] < w[:-1])
    assert torch.allclose(w, torch.arange(1, 21, dtype=torch.float64) ** -0.1)
    # a stronger (more negative) alpha decays faster
    assert torch.all(staleness_weight(torch.arange(6, 25), 5, -1.0, "from0") <
                     staleness_weight(torch.arange(6, 25), 5, -0.1, "from0"))
    # the default reading counts the paper's steps from 1: the first stale weight is 2^α
    assert staleness_weight(5, 5, -0.1).item() == pytest.approx(2 ** -0.1)
    # at a fixed step, the client that finished earlier weighs less
    by_finish = staleness_weight(20, torch.tensor([3, 8, 15, 20]), -0.5)
    assert torch.all(by_finish[1:] > by_finish[:-1])


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0, float("nan")])
def test_alpha_must_be_negative(alpha):
    with pytest.raises(FedlibError, match="alpha"):
        staleness_weight(3, 1, alpha)
    with pytest.raises(FedlibError, match="alpha"):
        SMoFiOptions(alpha=alpha)
    with pytest.raises(FedlibError, match="alpha"):
        fuse_momentum(torch.zeros(2, 3), torch.tensor([True, False]), torch.zeros(2, 3),
                      torch.tensor([4, 2]), 3, alpha=alpha)


fuse0 = functools.partial(fuse_momentum, stale_index="from0")
weights0 = functools.partial(fusion_weights, stale_index="from0")


def test_fusion_is_a_plain_mean_over_all_selected_clients():
    """Hand formula in the ``stale_index="from0"`` reading (ages 1, 2, …; first stale weight 1)."""
    torch.manual_seed(0)
    c, shape = 5, (3, 4)
    active_buf = torch.randn(c, *shape)
    final_buf = torch.randn(c, *shape)
    active = torch.tensor([True, False, True, False, False])
    steps = torch.tensor([9, 2, 9, 5, 0])  # clients 1, 3, 4 finished after 2, 5, 0 steps
    tau, alpha = 6, -0.3
    fused = fuse0(active_buf, active, final_buf, steps, tau, alpha=alpha)
    expect = (active_buf[0] + active_buf[2] + (6 - 2 + 1) ** alpha * final_buf[1]
              + (6 - 5 + 1) ** alpha * final_buf[3] + (6 - 0 + 1) ** alpha * final_buf[4]) / c
    assert torch.allclose(fused, expect, atol=1e-6)
    # denominator |J^n| (not the weights, not the number of active clients)
    w = weights0(active, steps, tau, alpha)
    assert w.sum() < 1
    assert torch.allclose(w[active], torch.full((2,), 1 / c, dtype=torch.float64))
    # |J^n| may exceed the stacked clients (n_selected): still the denominator
    fused7 = fuse0(active_buf, active, final_buf, steps, tau, alpha=alpha, n_selected=7)
    assert torch.allclose(fused7, expect * c / 7, atol=1e-6)
    # renormalise: divide by Σ weights instead
    ren = fuse0(active_buf, active, final_buf, steps, tau, alpha=alpha, renormalise=True)
    assert torch.allclose(ren, expect * c / (w.sum().item() * c), atol=1e-6)
    assert weights0(active, steps, tau, alpha, renormalise=True).sum().item() == \
        pytest.approx(1.0)
    with pytest.raises(FedlibError, match="n_selected"):
        fuse0(active_buf, active, final_buf, steps, tau, n_selected=3)


def test_no_finished_client_gives_global_momentum_of_the_mean_gradient():
    """Spec §6.4 on the formula: m_j = β m̄ + g_j for all j active ⇒ m̄' = β m̄ + mean g."""
    torch.manual_seed(1)
    beta, c = 0.9, 6
    m_bar = torch.randn(10)
    g = torch.randn(c, 10)
    m = beta * m_bar + g
    fused = fuse_momentum(m, torch.ones(c, dtype=torch.bool), torch.zeros_like(m),
                          torch.full((c,), 100), 3)
    assert torch.allclose(fused, beta * m_bar + g.mean(0), atol=1e-6)


class FakeBuffers:
    """A dict-backed stand-in for the engine's OptimizerBuffers (get/set over [C, ...])."""

    def __init__(self, data):
        self.data = {k: v.clone() for k, v in data.items()}
        self.calls = []

    def get(self, kind, name):
        return self.data[(kind, name)].clone()

    def set(self, kind, name, tensor, mask):
        self.calls.append((kind, name))
        cur = self.data[(kind, name)]
        m = torch.as_tensor(mask).view(-1, *([1] * (cur.dim() - 1)))
        self.data[(kind, name)] = torch.where(m, tensor, cur)


def test_hook_tracks_finished_clients_and_uses_their_own_final_momentum():
    """Three clients with |T| = 3, 1, 2; check m̄ at every step by hand."""
    alpha = -0.5
    hook = SMoFiHook(["s.w"], optimizer="sgd",
                     options=SMoFiOptions(alpha=alpha, stale_index="from0"))
    hook.start_round()
    own = [torch.tensor([[1.0], [2.0], [3.0]]),   # step 0: all three active
           torch.tensor([[4.0], [0.0], [5.0]]),   # step 1: client 1 finished after 1 step
           torch.tensor([[6.0], [0.0], [0.0]])]   # step 2: only client 0 active
    actives = [torch.tensor([True, True, True]), torch.tensor([True, False, True]),
               torch.tensor([True, False, False])]
    fused_seen = []
    buf = FakeBuffers({("momentum_buffer", "s.w"): torch.zeros(3, 1)})
    for tau in range(3):
        # the optimizer writes the active clients' new own momentum
        cur = buf.data[("momentum_buffer", "s.w")]
        m = actives[tau].view(-1, 1)
        buf.data[("momentum_buffer", "s.w")] = torch.where(m, own[tau], cur)
        hook(tau, actives[tau], buf)
        fused_seen.append(hook.last_fused[("momentum_buffer", "s.w")].item())
        # every active client now holds the fused buffer, finished ones are untouched
        after = buf.data[("momentum_buffer", "s.w")]
        assert torch.all(after[actives[tau]] == fused_seen[-1])
    assert fused_seen[0] == pytest.approx((1 + 2 + 3) / 3)
    # step 1: client 1 finished with |T|=1 at τ=1 → age 1, weight 1, its OWN final m = 2
    assert fused_seen[1] == pytest.approx((4 + 1.0 * 2 + 5) / 3)
    # step 2: client 1 age 2, client 2 (|T|=2) age 1 with own final 5
    assert fused_seen[2] == pytest.approx((6 + 2 ** alpha * 2 + 1.0 * 5) / 3)


def test_hook_kinds_per_optimizer():
    assert SMoFiHook(["a"], "sgd").kinds == ("momentum_buffer",)
    assert SMoFiHook(["a"], "adam").kinds == ("exp_avg", "exp_avg_sq")  # default: both moments
    with pytest.warns(FirstMomentOnlyWarning, match="fuse_second_moment"):
        assert SMoFiHook(["a"], "adamw", SMoFiOptions(fuse_second_moment=False)).kinds == \
            ("exp_avg",)
    assert SMoFiHook(["a"], "sgd", SMoFiOptions(fuse_second_moment=False)).kinds == \
        ("momentum_buffer",)
    assert not SMoFiHook(["a"], "sgd", momentum=0.0).enabled
    with pytest.raises(FedlibError, match="server-part"):
        SMoFiHook([], "sgd")
