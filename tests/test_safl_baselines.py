"""Each SAFL baseline's aggregation rule on tiny hand-computed inputs (spec fedqs.md §6), plus the
strategy-contract helpers."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from fedlib.core.dataclass_io import build_options
from fedlib.core.errors import FedlibError
from fedlib.safl.baselines import (
    BASELINES, CA2FL, FADAS, SAFA, WKAFL, DeFedAvg, FedAC, FedAT, FedAvg, FedBuff, FedSGD, MStep,
)
from fedlib.safl.strategy import (
    SimContext, Strategy, Update, apply_delta, flatten, unflatten, weighted_model_average,
)
from fedlib.train import LocalConfig

T = torch.tensor


def ctx(n=3, k=2, round=0, sizes=None, delays=None, seed=0):
    sizes = T(sizes or [1] * n)
    return SimContext(n_clients=n, k=k, sizes=sizes, base_local=LocalConfig(lr=0.1), round=round, seed=seed,
                      delays=None if delays is None else T(delays))


def up(client, start, after, version=0, staleness=0, samples=10, loss=float("nan"), start_tick=0, upload_tick=1):
    start, after = T(start, dtype=torch.float32), T(after, dtype=torch.float32)
    return Update(client, {"w": after - start}, {"w": after}, version, samples, 1, 0.1, {}, staleness, loss,
                  start_tick, upload_tick)


def w(state):
    return state["w"].tolist()


# ---------------------------------------------------------------- contract helpers
def test_state_helpers_round_integer_buffers():
    a = {"w": T([1.0, 2.0]), "n": T(3)}
    b = {"w": T([3.0, 6.0]), "n": T(4)}
    avg = weighted_model_average([a, b], [1, 3])
    assert avg["w"].tolist() == [2.5, 5.0] and avg["n"].dtype == torch.long and int(avg["n"]) == 4  # 3.75
    moved = apply_delta(a, [b, b], [0.5, 0.25])  # weights are not normalised
    assert moved["w"].tolist() == [3.25, 6.5] and int(moved["n"]) == 3 + 3
    assert flatten(a).tolist() == [1.0, 2.0]  # integer entries are not part of the vector
    assert unflatten(T([9.0, 8.0]), a)["w"].tolist() == [9.0, 8.0]
    with pytest.raises(FedlibError, match="positive finite sum"):
        weighted_model_average([a, b], [0, 0])
    with pytest.raises(FedlibError, match="unknown option"):
        build_options(FedBuff.Options, {"server_rl": 1.0}, "fedbuff")


def test_default_strategy_hooks():
    s = Strategy()
    c = ctx(k=2)
    assert s.start(0, c) == (c.base_local, {})
    assert s.ready([1], c) is False and s.ready([1, 2, 3], c) is True
    assert s.select([1, 2, 3], c) == [0, 1]
    with pytest.raises(NotImplementedError):
        s.aggregate({}, [], c)


# ---------------------------------------------------------------- model aggregation
def test_fedavg_mean_and_sample_weights():
    ups = [up(0, [0, 0], [1, 2], samples=1), up(1, [0, 0], [3, 6], samples=3)]
    assert w(FedAvg().aggregate({"w": T([0.0, 0.0])}, ups, ctx())) == [2.0, 4.0]
    assert w(FedAvg({"weighting": "samples"}).aggregate({"w": T([0.0, 0.0])}, ups, ctx())) == [2.5, 5.0]


def test_safa_cache_lag_tolerance_and_bypass():
    s = SAFA()  # tolerance 10, data-size weights, caches start as the initial global model
    c = ctx(n=3, k=2, sizes=[1, 1, 2])
    g0 = {"w": T([0.0, 0.0])}
    # round 0: c0 twice -> the first is picked (cache before aggregation), the duplicate bypassed
    new = s.aggregate(g0, [up(0, [0, 0], [2, 2]), up(0, [0, 0], [4, 4])], c)
    assert w(new) == [0.5, 0.5]  # (1*[2,2] + 1*0 + 2*0) / 4
    assert s.cache["w"][0].tolist() == [4.0, 4.0]  # the bypassed update entered the cache afterwards
    # round 12: c1 arrives; c0's and c2's cached models were trained from version 0, 12 - 0 > 10:
    # deprecated -> refreshed with the current global model [1, 1]
    c = dataclasses.replace(c, round=12)
    new = s.aggregate({"w": T([1.0, 1.0])}, [up(1, [0, 0], [8, 8], version=11), up(1, [0, 0], [8, 8], version=11)], c)
    assert w(new) == [2.75, 2.75]  # (1*[1,1] + 1*[8,8] + 2*[1,1]) / 4
    assert s.cache_version.tolist() == [12, 11, 12]
    zeros = SAFA({"init": "zeros"})
    assert w(zeros.aggregate({"w": T([5.0, 5.0])}, [up(0, [0, 0], [2, 2]), up(1, [0, 0], [2, 2])], ctx(sizes=[1, 1, 2]))) \
        == [1.0, 1.0]  # the official code's zero caches


def test_fedat_tiers_warmup_and_mirror_weights():
    s = FedAT({"tiers": 2, "warmup": 1, "reg": "none"})
    c = ctx(n=4, k=2, delays=[1, 2, 8, 9])
    s.setup(c)
    fast = lambda v: up(0, [0, 0], v, start_tick=0, upload_tick=1)  # noqa: E731  latency 1 -> tier 0
    slow = lambda v: up(2, [0, 0], v, start_tick=0, upload_tick=8)  # noqa: E731  latency 8 -> tier 1
    assert s.tier_of(fast([0, 0])) == 0 and s.tier_of(slow([0, 0])) == 1
    # warm-up round: plain FedAvg of the oldest K; every tier model starts from it
    assert s.ready([fast([0, 0]), slow([0, 0])], c)
    g = s.aggregate({"w": T([0.0, 0.0])}, [fast([2, 2]), slow([4, 4])], c)
    assert w(g) == [3.0, 3.0]
    c = dataclasses.replace(c, round=1)
    buffer = [fast([1, 1]), slow([9, 9]), fast([3, 3])]
    assert s.ready(buffer, c) and s.select(buffer, c) == [0, 2]  # tier 0 has K = 2
    assert not s.ready([fast([1, 1]), slow([9, 9])], c)  # no tier holds K updates
    # tier 0 becomes mean([1,1],[3,3]) = [2,2]; counts T = [1, 0]; tier m gets T[1-m]/ΣT:
    # weight 0 for tier 0, 1 for tier 1 (still the warm-up model [3,3])
    g = s.aggregate(g, [fast([1, 1]), fast([3, 3])], c)
    assert w(g) == [3.0, 3.0] and s.counts == [1, 0]
    c = dataclasses.replace(c, round=2)
    g = s.aggregate(g, [slow([5, 5]), slow([7, 7])], c)  # tier 1 -> [6,6]; T = [1, 1] -> halves
    assert w(g) == [4.0, 4.0]
    cfg, _ = FedAT().start(0, c)  # default: FedAT's proximal constraint, strength 0.1
    assert cfg.prox_mu == 0.1 and cfg.l2_in_loss == 0
    assert FedAT({"reg": "l2"}).start(0, c)[0].l2_in_loss == 0.1
    assert FedAT({"reg": "none"}).start(0, c)[0] is c.base_local


def test_mstep_weights_by_hand():
    s = MStep()
    c = ctx(n=2, k=2)
    s.setup(c)
    s.on_upload(up(0, [0, 0], [0, 0]), c)
    for _ in range(3):
        s.on_upload(up(1, [0, 0], [0, 0]), c)
    g = {"w": T([1.0, 0.0])}
    # w1 = [1, 0]: λ1 = |1/1 - 1| = 0; w2 = [2, 0]: λ2 = |2/4 - 1| = 0.5
    # upload counts [1, 3] -> q1 = 3/4, q2 = 1/4 (mirrored ranks); equal sizes
    ups = [up(0, [0, 0], [1, 0]), up(1, [0, 0], [2, 0])]
    p = s.weights(g, ups, c)
    e = math.exp(-2 * 0.5 / 0.25)
    assert p.tolist() == pytest.approx([1 / (1 + e), e / (1 + e)])
    assert w(s.aggregate(g, ups, c)) == pytest.approx([(1 + 2 * e) / (1 + e), 0.0], rel=1e-6)


# ---------------------------------------------------------------- gradient aggregation
def test_fedsgd_and_fedbuff():
    g = {"w": T([0.0, 0.0])}
    ups = [up(0, [0, 0], [1, 2], staleness=0), up(1, [0, 0], [4, 4], staleness=3)]
    assert w(FedSGD().aggregate(g, ups, ctx())) == [2.5, 3.0]
    assert w(FedSGD({"server_lr": 0.5}).aggregate(g, ups, ctx())) == [1.25, 1.5]
    # FedBuff: s(0) = 1, s(3) = 1/2, each / K=2 -> 0.5*[1,2] + 0.25*[4,4]
    assert w(FedBuff().aggregate(g, ups, ctx())) == [1.5, 2.0]


def test_wkafl_weights_gating_and_clipping():
    s = WKAFL()
    g = {"w": T([0.0, 0.0])}
    c = ctx(round=5)
    ups = [up(0, [0, 0], [1, 0], staleness=0), up(1, [0, 0], [0, 1], staleness=1)]
    a = torch.tensor([1.0, 2 / math.e], dtype=torch.float64)
    a = a / a.sum()
    g_hat = a  # Δ1 = e1, Δ2 = e2
    cos = (a / a.norm()).tolist()
    p = torch.tensor([math.exp(x) for x in cos])
    p = (p / p.sum()).tolist()
    _, weights = s.combine(g, ups, c)
    assert weights.tolist() == pytest.approx(p)
    assert w(s.aggregate(g, ups, c)) == pytest.approx(p)
    # an update pointing against the estimate is gated out (cos < 0)
    ups3 = ups + [up(2, [0, 0], [-1, -0.5], staleness=0)]
    _, w3 = s.combine(g, ups3, c)
    assert float(w3[2]) == 0.0 and float(w3.sum()) == pytest.approx(1.0)
    # late stage (mean loss < 0.1): a delta longer than 1.5 ||ĝ|| is clipped to that norm
    big = [up(0, [0, 0], [10, 0], loss=0.01), up(1, [0, 0], [0, 1], loss=0.01)]
    deltas, _ = s.combine(g, big, c)
    a2 = torch.tensor([1.0, 1.0]) / 2  # equal staleness
    bound = 1.5 * float(torch.tensor([10 * a2[0], a2[1]]).norm())
    assert float(deltas[0]["w"].norm()) == pytest.approx(bound, rel=1e-5)
    assert deltas[1]["w"].tolist() == [0.0, 1.0]
    early, _ = s.combine(g, [up(0, [0, 0], [10, 0], loss=1.0), up(1, [0, 0], [0, 1], loss=1.0)], c)
    assert early[0]["w"].tolist() == [10.0, 0.0]
    # round 0 is plain FedSGD
    assert w(s.aggregate(g, ups, ctx(round=0))) == [0.5, 0.5]


def test_fedac_weights_and_prospective_adam_step():
    g = {"w": T([2.0, 0.0])}
    fresh = up(0, [2, 0], [3, 0], staleness=0)
    aligned = up(1, [1, 0], [2, 0], staleness=1)  # global moved +[1,0] since its start, Δ = [1,0]
    opposed = up(2, [3, 0], [4, 0], staleness=1)  # global moved -[1,0], Δ = [1,0]: cos = -1
    s = FedAC({"server_opt": "none"})
    assert s.weights(g, [fresh, aligned, opposed], ctx(n=3, k=3)).tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert w(s.aggregate(g, [fresh, aligned, opposed], ctx(n=3, k=3))) == [3.0, 0.0]
    a = FedAC({"server_lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3})
    out = a.aggregate({"w": T([0.0, 0.0])}, [up(0, [0, 0], [1, -2])], ctx(n=1, k=1))
    # m = 0.1 d, v = 0.01 d²; step = 0.1 * (0.9 m + 0.1 d) / (sqrt(v) + 1e-3) = 0.1 * 0.19 d / (0.1|d| + 1e-3)
    assert w(out) == pytest.approx([0.1 * 0.19 / 0.101, -0.1 * 0.38 / 0.201], rel=1e-5)


def test_defedavg_random_selection_is_seeded():
    s = DeFedAvg()
    buf = list(range(10))
    c = ctx(n=10, k=3, seed=7)
    sel = s.select(buf, c)
    assert len(set(sel)) == 3 and sel == sorted(sel) and sel == s.select(buf, c)
    picks = set()
    for r in range(8):
        c = dataclasses.replace(c, round=r)
        picks.add(tuple(s.select(buf, c)))
    assert len(picks) > 1  # a fresh draw each round, not the oldest K
    g = {"w": T([0.0, 0.0])}
    assert w(s.aggregate(g, [up(0, [0, 0], [1, 2]), up(1, [0, 0], [3, 2])], c)) == [2.0, 2.0]


def test_fadas_amsgrad_and_delay_adaptive_lr():
    s = FADAS({"server_lr": 0.1})
    ups = [up(0, [0, 0], [1, -2], staleness=20)]
    assert s.lr(ups) == pytest.approx(0.05)  # τ_max = 20 > 10 -> min(0.1, 1/20)
    assert s.lr([up(0, [0, 0], [1, 1], staleness=3)]) == 0.1
    out = s.aggregate({"w": T([0.0, 0.0])}, ups, ctx(n=1, k=1))
    # m = 0.1 d, v̂ = 0.01 d² -> 0.05 * 0.1 d / (0.1 |d| + 1e-3)
    assert w(out) == pytest.approx([0.05 * 0.1 / 0.101, -0.05 * 0.2 / 0.201], rel=1e-5)
    # second round: v̂ keeps the larger second moment (AMSGrad)
    out2 = s.aggregate(out, [up(0, [0, 0], [0.1, 0.1], staleness=0)], ctx(n=1, k=1))
    m = 0.9 * 0.1 * 1 + 0.1 * 0.1
    vhat = max(0.99 * 0.01 * 1 + 0.01 * 0.01, 0.01)
    assert out2["w"][0].item() == pytest.approx(out["w"][0].item() + 0.1 * m / (math.sqrt(vhat) + 1e-3), rel=1e-5)
    plain = FADAS({"adaptive": False}).aggregate({"w": T([0.0, 0.0])}, ups, ctx(n=1, k=1))
    assert w(plain) == [1.0, -2.0]


def test_ca2fl_cached_calibration_by_hand():
    s = CA2FL({"server_lr": 1.0})
    c = ctx(n=3, k=2)
    g = {"w": T([0.0])}
    # round 1: caches all 0 -> v = 0 + ((1-0) + (3-0))/2 = 2
    g = s.aggregate(g, [up(0, [0], [1]), up(1, [0], [3])], c)
    assert w(g) == [2.0]
    # round 2: h̄ = (1 + 3 + 0)/3; v = h̄ + (2 - 1)
    g = s.aggregate(g, [up(0, [0], [2])], c)
    assert w(g) == pytest.approx([2 + 4 / 3 + 1])


def test_every_baseline_persists_its_state():
    g = {"w": T([0.0, 0.0])}
    c = ctx(n=3, k=2, round=3, delays=[1, 2, 3])
    for name, cls in BASELINES.items():
        a = cls()
        a.setup(c)
        ups = [up(0, [0, 0], [1, 2], staleness=1, upload_tick=2), up(1, [0, 0], [2, 1], staleness=0, upload_tick=2)]
        for u in ups:
            a.on_upload(u, c)
        a.aggregate(g, ups, c)
        b = cls()
        b.setup(c)
        b.load_state_dict(a.state_dict())
        more = [up(2, [0, 0], [3, 1], staleness=2, upload_tick=3), up(0, [0, 0], [1, 1], upload_tick=3)]
        c2 = ctx(n=3, k=2, round=4, delays=[1, 2, 3])
        assert a.aggregate(g, more, c2)["w"].tolist() == b.aggregate(g, more, c2)["w"].tolist(), name
