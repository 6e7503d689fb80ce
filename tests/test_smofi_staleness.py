"""SMoFi staleness modes, index readings and the Adam/AdamW fusion rule (issue 12, parts 2–3)."""

import copy
import warnings

import pytest
import torch
from torch import nn

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import RunConfig
from fedlib.split.smofi import (FirstMomentOnlyWarning, SMoFiHook, SMoFiOptions, fuse_momentum,
                                fusion_weights, staleness_weight, step_count_spread)
from fedlib.train.buffers import LoopBuffers

torch.set_num_threads(1)

# a hand-built fusion step: 5 selected clients, τ = 6 (fedlib's 0-based index)
C, TAU = 5, 6
ACTIVE = torch.tensor([True, False, True, False, False])
STEPS = torch.tensor([9, 2, 9, 5, 0])  # clients 1, 3, 4 finished after 2, 5, 0 steps


def _buffers(seed=0, shape=(3, 4)):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(C, *shape, generator=g), torch.randn(C, *shape, generator=g)


# ------------------------------------------------------------------------- index readings
def test_both_index_readings_give_the_hand_computed_weights():
    alpha = -0.1
    # a client with |T_h| = 5 is finished from fedlib step τ = 5 on
    taus = torch.arange(5, 10)
    from0 = staleness_weight(taus, 5, alpha, stale_index="from0")
    from1 = staleness_weight(taus, 5, alpha, stale_index="from1")
    assert torch.allclose(from0, torch.tensor([1.0, 2 ** alpha, 3 ** alpha, 4 ** alpha, 5 ** alpha],
                                              dtype=torch.float64))
    assert torch.allclose(from1, torch.tensor([2 ** alpha, 3 ** alpha, 4 ** alpha, 5 ** alpha,
                                               6 ** alpha], dtype=torch.float64))
    assert from1[0].item() == pytest.approx(0.9330329915)  # issue 12: 2^α ≈ 0.933
    # from1 is from0 one step older; the default is from1 (the paper's steps counted from 1)
    assert torch.allclose(from1[:-1], from0[1:])
    assert torch.equal(staleness_weight(taus, 5, alpha), from1)
    assert SMoFiOptions().stale_index == "from1"
    # clients not finished yet weigh 1 in either reading
    assert staleness_weight(4, 5, alpha, "from1").item() == 1.0
    # the index reaches the fused buffer: τ = 6, α = −0.3, |J^n| = 5
    act, fin = _buffers()
    a = -0.3
    for index, extra in (("from0", 0), ("from1", 1)):
        fused = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, alpha=a, stale_index=index)
        expect = (act[0] + act[2] + (6 - 2 + 1 + extra) ** a * fin[1]
                  + (6 - 5 + 1 + extra) ** a * fin[3] + (6 - 0 + 1 + extra) ** a * fin[4]) / C
        assert torch.allclose(fused, expect, atol=1e-6), index


def _drive(hook, own, actives) -> list[float]:
    """Run ``hook`` over lock-steps: each step an active client's buffer becomes its ``own`` value
    (a finished one keeps the fused value it last got); returns the fused value after each step."""
    buf = _FakeBuffers({("momentum_buffer", "s.w"): torch.zeros(len(actives[0]), 1)})
    seen = []
    for tau, (mine, active) in enumerate(zip(own, actives)):
        cur = buf.data[("momentum_buffer", "s.w")]
        buf.data[("momentum_buffer", "s.w")] = torch.where(active.view(-1, 1), mine, cur)
        hook(tau, active, buf)
        seen.append(hook.last_fused[("momentum_buffer", "s.w")].item())
    return seen


def test_hook_default_index_weighs_a_just_finished_client_2_to_the_alpha():
    """Two clients, |T| = 1 and 3: at fedlib steps 1 and 2 client 1 has paper ages 2 and 3."""
    alpha = -0.5
    hook = SMoFiHook(["s.w"], "sgd", SMoFiOptions(alpha=alpha))
    hook.start_round()
    own = [torch.tensor([[1.0], [3.0]]), torch.tensor([[4.0], [0.0]]), torch.tensor([[6.0], [0.0]])]
    actives = [torch.tensor([True, True]), torch.tensor([True, False]), torch.tensor([True, False])]
    seen = _drive(hook, own, actives)
    assert seen == pytest.approx([(1 + 3) / 2, (4 + 2 ** alpha * 3) / 2, (6 + 3 ** alpha * 3) / 2])
    assert hook.step_counts.tolist() == [3, 1]


# ------------------------------------------------------------------------- drop mode
@pytest.mark.parametrize("renormalise", [False, True])
def test_drop_equals_decay_in_the_alpha_to_minus_infinity_limit(renormalise):
    act, fin = _buffers(1)
    drop = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, renormalise=renormalise, stale="drop")
    # from1 (default): every finished age is >= 2, so 2^α -> 0 removes them all
    for alpha in (-60.0, -200.0):
        decay = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, alpha=alpha, renormalise=renormalise)
        assert torch.allclose(drop, decay, atol=1e-12, rtol=0)
    assert torch.allclose(fusion_weights(ACTIVE, STEPS, TAU, -200.0, renormalise=renormalise),
                          fusion_weights(ACTIVE, STEPS, TAU, renormalise=renormalise, stale="drop"),
                          atol=1e-15, rtol=0)
    # from0 is NOT that limit: a client finished right now (age 1) keeps weight 1 for every α
    steps = STEPS.clone()
    steps[3] = TAU  # client 3 finished after 6 steps: age 1 at τ = 6 in the from0 reading
    w0 = fusion_weights(ACTIVE, steps, TAU, -200.0, renormalise=renormalise, stale_index="from0")
    assert w0[3] == w0[0] > 0
    assert fusion_weights(ACTIVE, steps, TAU, renormalise=renormalise, stale="drop",
                          stale_index="from0")[3] == 0


def test_drop_denominator_is_J_by_default_and_the_active_count_with_renormalise():
    """Paper: the aligned signals count "始终为 |J^n|" — drop keeps that denominator and only
    removes the finished clients' terms; ``renormalise=True`` divides by Σ weights, which in drop
    mode is the number of active surrogates (a plain mean of their momenta)."""
    act, fin = _buffers(2)
    drop = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, stale="drop")
    assert torch.allclose(drop, (act[0] + act[2]) / C, atol=1e-6)
    assert torch.allclose(fuse_momentum(act, ACTIVE, fin, STEPS, TAU, n_selected=8, stale="drop"),
                          (act[0] + act[2]) / 8, atol=1e-6)
    ren = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, renormalise=True, stale="drop")
    assert torch.allclose(ren, (act[0] + act[2]) / 2, atol=1e-6)
    w = fusion_weights(ACTIVE, STEPS, TAU, stale="drop")
    assert torch.allclose(w, torch.tensor([0.2, 0, 0.2, 0, 0], dtype=torch.float64))
    # the finished clients' final buffers do not matter at all
    assert torch.equal(fuse_momentum(act, ACTIVE, fin * 1e6, STEPS, TAU, stale="drop"), drop)
    # nobody active (drop + renormalise): no weight left, all-zero coefficients, no NaN
    none = torch.zeros(C, dtype=torch.bool)
    assert torch.equal(fusion_weights(none, STEPS, 20, renormalise=True, stale="drop"),
                       torch.zeros(C, dtype=torch.float64))


def test_hook_drop_mode_by_hand():
    """Three clients with |T| = 3, 1, 2 (as in test_smofi_fusion), drop: |J^n| = 3 throughout."""
    hook = SMoFiHook(["s.w"], "sgd", SMoFiOptions(stale="drop"))
    hook.start_round()
    own = [torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[4.0], [0.0], [5.0]]),
           torch.tensor([[6.0], [0.0], [0.0]])]
    actives = [torch.tensor([True, True, True]), torch.tensor([True, False, True]),
               torch.tensor([True, False, False])]
    seen = _drive(hook, own, actives)
    assert seen == pytest.approx([6 / 3, (4 + 5) / 3, 6 / 3])
    assert step_count_spread(hook.step_counts) == {"n": 3, "min": 1, "median": 2.0, "max": 3}


@pytest.mark.parametrize("bad", [{"stale": "dropped"}, {"stale": "Drop"}, {"stale_index": 1},
                                 {"stale_index": "from2"}])
def test_bad_staleness_options_are_rejected(bad):
    with pytest.raises(FedlibError, match=next(iter(bad))):
        SMoFiOptions(**bad)


def test_step_count_spread():
    assert step_count_spread([1, 23, 15, 1, 18, 4]) == {"n": 6, "min": 1, "median": 9.5, "max": 23}
    assert step_count_spread(torch.tensor([7])) == {"n": 1, "min": 7, "median": 7.0, "max": 7}
    with pytest.raises(FedlibError):
        step_count_spread([])
    with pytest.raises(FedlibError):
        step_count_spread([3, -1])


# ------------------------------------------------------------------------- Adam / AdamW
LR = 0.01
# Bound on any coordinate's step of one fused Adam step. With both moments fused by the same
# non-negative weights c_j (Σ c_j ≤ 1), each buffer is a sum over "fusion paths" of past
# gradients g with weights P·β1^k (first moment) and P·β2^k (second moment), Σ_paths P ≤ 1 for
# each k; weighted Cauchy–Schwarz gives |m_t|/√v_t ≤ (1−β1)/√(1−β2)·(1−β1²/β2)^{-1/2} = 7.27 for
# (0.9, 0.999), and the bias correction √(1−β2^t)/(1−β1^t) ≤ 1 only lowers it. AdamW's decoupled
# decay adds lr·wd·|p| ≤ 0.01·0.01·10 = 1e-3. So 10·lr holds with margin for every t.
BOUND = 10 * LR


def _relu_surrogates(n=3, d=8, h=6, k=3):
    """A server part Linear(d, h) → ReLU → Linear(h, k) with hidden units 3..5 wired only to the
    input dims 4..7 and biased at −10: dead (gradient exactly 0) for client 0, whose inputs are
    zero on dims 4..7; alive for the other clients, whose inputs there are large."""
    torch.manual_seed(0)
    server = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, k))
    with torch.no_grad():
        w = server[0].weight
        w[3:, :4] = 0.0
        w[3:, 4:] = 3.0
        server[0].bias[3:] = -10.0
    xs, ys = [], []
    g = torch.Generator().manual_seed(1)
    for j in range(n):
        x = torch.rand(16, d, generator=g)
        if j == 0:
            x[:, 4:] = 0.0
        else:
            x[:, 4:] = x[:, 4:] + 2.0  # pre-activation of units 3..5 ≥ −10 + 4·3·2 > 0
        xs.append(x)
        ys.append(torch.randint(0, k, (16,), generator=g))
    return server, xs, ys


def _fused_adam_steps(options, optimizer="adam", steps=(9, 9, 4), weight_decay=0.0):
    """Run the surrogates (|T_j| = ``steps``) with the SMoFi hook; return every step's largest
    |Δparam| over active surrogates and coordinates, and per step whether client 0's gradient
    was exactly zero on the dead units."""
    server, xs, ys = _relu_surrogates(len(steps))
    names = [n for n, _ in server.named_parameters()]
    surr = [copy.deepcopy(server) for _ in steps]
    cls = torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW
    opts = [cls(s.parameters(), lr=LR, weight_decay=weight_decay) for s in surr]
    named = [dict(s.named_parameters()) for s in surr]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FirstMomentOnlyWarning)
        hook = SMoFiHook(names, optimizer, options)
    hook.start_round(len(steps))
    moves, dead_zero = [], []
    for tau in range(max(steps)):
        active = torch.tensor([tau < t for t in steps])
        move = 0.0
        for j in active.nonzero().flatten().tolist():
            before = {n: p.detach().clone() for n, p in named[j].items()}
            opts[j].zero_grad()
            nn.functional.cross_entropy(surr[j](xs[j]), ys[j]).backward()
            if j == 0:
                dead_zero.append(bool((named[0]["0.weight"].grad[3:] == 0).all()
                                  and (named[0]["2.weight"].grad[:, 3:] == 0).all()))
            opts[j].step()
            move = max(move, max((named[j][n].detach() - before[n]).abs().max().item()
                                 for n in names))
        moves.append(move)
        hook(tau, active, LoopBuffers(opts, named, names, hook.kinds, active))
    return moves, dead_zero


@pytest.mark.parametrize("optimizer,wd", [("adam", 0.0), ("adamw", 0.01)])
@pytest.mark.parametrize("opts", [{}, {"stale": "drop"}, {"stale_index": "from0"},
                                  {"renormalise": True}], ids=["default", "drop", "from0", "renorm"])
def test_default_adam_fusion_cannot_blow_up_on_dead_relu_units(optimizer, wd, opts):
    options = SMoFiOptions(**opts)
    assert options.fuse_second_moment  # the default: both moments fused
    moves, dead_zero = _fused_adam_steps(options, optimizer, weight_decay=wd)
    assert all(dead_zero), "the test model must give client 0 exact-zero gradients on units 3..5"
    assert max(moves) <= BOUND, moves
    assert max(moves) > LR / 10  # it did move


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_first_moment_only_adam_fusion_warns_and_exceeds_the_bound(optimizer):
    with pytest.warns(FirstMomentOnlyWarning, match="exp_avg_sq"):
        SMoFiHook(["x"], optimizer, SMoFiOptions(fuse_second_moment=False))
    moves, dead_zero = _fused_adam_steps(SMoFiOptions(fuse_second_moment=False), optimizer)
    assert dead_zero[:2] == [True, True]  # later the blow-up may revive the units
    assert max(moves) > 100 * BOUND, moves  # m̂/(√0 + eps): the issue-12 blow-up
    # SGD has no second moment: no warning, nothing changes
    with warnings.catch_warnings():
        warnings.simplefilter("error", FirstMomentOnlyWarning)
        SMoFiHook(["x"], "sgd", SMoFiOptions(fuse_second_moment=False))


# ------------------------------------------------------------------------- RunConfig
def test_options_reachable_from_the_smofi_preset():
    base = RunConfig.from_preset("smofi-cifar10-cpu")
    assert {k: base.options[k] for k in ("stale", "stale_index", "fuse_second_moment")} == \
        {"stale": "decay", "stale_index": "from1", "fuse_second_moment": True}
    cfg = RunConfig.from_preset("smofi-cifar10-cpu", ["options.stale=drop",
                                                      "options.stale_index=from0",
                                                      "options.fuse_second_moment=false"])
    assert (cfg.options["stale"], cfg.options["stale_index"],
            cfg.options["fuse_second_moment"]) == ("drop", "from0", False)
    assert cfg.short_hash != base.short_hash
    assert RunConfig.from_preset("smofi-cifar10-cpu", ["options.stale=decay"]).short_hash == \
        base.short_hash
    with pytest.raises(FedlibError, match="stale"):
        RunConfig.from_preset("smofi-cifar10-cpu", ["options.stale=forget"])
    with pytest.raises(FedlibError, match="stale_index"):
        RunConfig.from_preset("smofi-cifar10-cpu", ["options.stale_index=from2"])


def test_options_reach_the_trainers_hook(tiny_smofi_trainer):
    t = tiny_smofi_trainer(["options.stale=drop", "options.stale_index=from0"])
    hook = t.addon.engine_hook
    assert (hook.options.stale, hook.options.stale_index) == ("drop", "from0")
    t.run_round()
    spread = step_count_spread(hook.step_counts)
    assert spread["n"] == 2 and 1 <= spread["min"] <= spread["max"]


class _FakeBuffers:
    def __init__(self, data):
        self.data = {k: v.clone() for k, v in data.items()}

    def get(self, kind, name):
        return self.data[(kind, name)].clone()

    def set(self, kind, name, tensor, mask):
        cur = self.data[(kind, name)]
        m = torch.as_tensor(mask).view(-1, *([1] * (cur.dim() - 1)))
        self.data[(kind, name)] = torch.where(m, tensor, cur)
