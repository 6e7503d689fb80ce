"""FedQS ``options.fidelity=official`` (issue 11, part 3): each official-code rule (a)-(g) on
values computed by hand from the official formulas, written in the spec's terms (θ = the code's
angle, s = 1/(1+θ); spec fedqs.md §3-§5), plus the switch itself on the preset."""

from __future__ import annotations

import dataclasses
import math
import types

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import RunConfig
from fedlib.train.config import LocalConfig
from fedlib.safl.fedqs import (
    OFFICIAL_RULES,
    PAPER_RULES,
    RULES_BY_FIDELITY,
    FedQSRules,
    FedQS,
    FedQSOptions,
    FedQSSGD,
    distance_mean,
    mod3_weights,
    momentum_rate,
)
from fedlib.safl.strategy import SimContext, Update

torch.set_num_threads(1)
T = torch.tensor
E2 = math.e / 2  # exp(x) / 2^x = (e/2)^x

OFFICIAL = {
    "similarity": "angle", "mod1_vector": "prev_global", "feedback_reset": "global",
    "validation": "first_per_class", "threshold_on": "distance", "bias_ratio": "distance", "phi": 0.1,
    "momentum_rule": "code", "threshold_refresh": "aggregation", "first_comparison": "skip_initial",
}
PAPER = {
    "similarity": "cosine", "mod1_vector": "delta", "feedback_reset": "update", "validation": "auto",
    "threshold_on": "similarity", "bias_ratio": "similarity", "phi": "k/n", "momentum_rule": "paper",
    "threshold_refresh": "start", "first_comparison": "initial",
}


def s_of(theta: float) -> float:
    """The angle similarity s = 1/(1+θ); NaN = no value."""
    return 1.0 / (1.0 + theta)


def _ctx(n, counts=None, history=None, rnd=0, per_class=None, **extra):
    ctx = SimContext(
        n_clients=n, k=2, sizes=torch.full((n,), 10), base_local=LocalConfig(lr=0.1, momentum=0.0),
        val_parts=[torch.arange(3) for _ in range(n)], agg_counts=torch.as_tensor(counts or [0] * n),
        per_class_fn=per_class or (lambda state, idx: T([0.5, 0.5])), round=rnd,
        versions=list(history or [{"w": T([1.0, 1.0])}]), **extra,
    )
    return ctx


def _strategy(n, thetas, counts=None, **opts):
    """A set-up FedQS whose similarity table holds 1/(1+θ) (NaN = no value)."""
    st = FedQS(FedQSOptions(**opts))
    ctx = _ctx(n, counts=counts)
    st.setup(ctx)
    st.state.sim = torch.tensor([s_of(t) for t in thetas], dtype=torch.float64)
    return st, ctx


def _upd(c, n=10, info=None):
    return Update(c, delta={"w": T([0.0, 0.0])}, state={"w": T([1.0, 1.0])}, version=0, num_samples=n, steps=1,
                  lr=0.1, info=info or {})


# ================================================================ (a) threshold on mean θ over θ > 0
def test_a_threshold_on_mean_angle_over_positive_angles():
    nan = float("nan")
    # clients: no value, θ = 0 exactly (left out of the code's mean), 10, 20, 60, and client 5 at 25
    thetas = [nan, 0.0, 10.0, 20.0, 60.0, 25.0]
    # official: θ̄ = (10 + 20 + 60 + 25) / 4 = 28.75 ; θ_5 = 25 ≤ 28.75 → weakly biased
    assert distance_mean([s_of(t) for t in thetas]) == pytest.approx(28.75)
    # paper: s̄ = mean(1, 1/11, 1/21, 1/61, 1/26) ≈ 0.2387 > s_5 = 1/26 → strongly biased
    s_bar = (1 + 1 / 11 + 1 / 21 + 1 / 61 + 1 / 26) / 5
    assert s_of(25.0) < s_bar
    kw = dict(similarity="angle", momentum=False, feedback=False, counts=[1] * 6)  # all equally slow
    for rule, expected in (("similarity", "SSBC"), ("distance", "SWBC")):
        st, ctx = _strategy(6, thetas, threshold_on=rule, **kw)
        _, info = st.start(5, ctx)
        assert info["type"] == expected, rule
        assert info["d_bar"] == pytest.approx(28.75) and info["s_bar"] == pytest.approx(s_bar)
    # strictly above the mean angle → strongly biased (the code's θ_i > θ̄): θ_5 = 40, θ̄ = 32.5
    st, ctx = _strategy(6, thetas[:5] + [40.0], threshold_on="distance", **kw)
    assert st.start(5, ctx)[1]["type"] == "SSBC"


# ================================================================ (b) Mod③ G = θ_i / mean θ
@pytest.mark.parametrize("rule", ["similarity", "distance"])
def test_b_mod3_bias_ratio(rule):
    nan = float("nan")
    thetas = [40.0, 20.0, nan, 0.0]  # θ̄ over θ > 0 = 30
    st, ctx = _strategy(4, thetas, similarity="angle", feedback_reset="global", bias_ratio=rule, momentum=False,
                        phi="k/n")
    st.state.flags[0] = True
    st.aggregate({"w": T([1.0, 1.0])}, [_upd(0, n=10), _upd(1, n=30)], ctx)
    # F_0 = F_1 = 1/2 (this round's updates counted), φ = K/N = 2/4 → (e/2)^0 = 1
    if rule == "distance":
        G = 40 / 30  # [C] θ_i / θ̄
    else:
        G = min(41 * (1 / 41 + 1 / 21 + 1) / 3, 2.0)  # [P] (1+θ_i)·mean(1/(1+θ)) ≈ 14.65, capped at 2
    p0 = 0.25 * (1 + G**2)
    expected = [p0 / (p0 + 0.75), 0.75 / (p0 + 0.75)]
    assert st.last_weights.tolist() == pytest.approx(expected)
    if rule == "distance":
        assert expected == pytest.approx([25 / 52, 27 / 52])  # Q = 1 + 16/9 = 25/9


def test_b_bias_ratio_travels_with_the_update():
    # feedback_reset=update: the G computed at the start is the code's θ_i/θ̄ (FSBC: fast and biased)
    st, ctx = _strategy(3, [40.0, 20.0, 30.0], counts=[3, 1, 1], similarity="angle", bias_ratio="distance",
                        threshold_on="distance", momentum=False)
    _, info = st.start(0, ctx)
    assert info["type"] == "FSBC" and info["G"] == pytest.approx(40 / 30)


# ================================================================ (c) φ = 0.1 vs K/N
@pytest.mark.parametrize("phi, value", [("k/n", 2 / 200), (0.1, 0.1)])
def test_c_phi_at_200_clients(phi, value):
    st, ctx = _strategy(200, [float("nan")] * 200, phi=phi, momentum=False)
    info = {"feedback": True, "G": 1.0}
    st.aggregate({"w": T([1.0, 1.0])}, [_upd(0, info=info), _upd(1)], ctx)
    boost = E2 ** (value - 0.5) * (1 + 1.0**2)  # F_0 = 1/2, Q = 1 + min(G, 2)^2 = 2
    assert st.last_weights.tolist() == pytest.approx([boost / (boost + 1), 1 / (boost + 1)])
    # the function itself: φ = 0.1 differs from K/N = 0.05 at N = 200, K = 10
    a = mod3_weights([1, 1], [True, False], [0.3, 0.2], [1.0, 1.0], K=10, N=200, phi=0.1)
    b = mod3_weights([1, 1], [True, False], [0.3, 0.2], [1.0, 1.0], K=10, N=200)
    x, y = 2 * E2 ** (0.1 - 0.3), 2 * E2 ** (0.05 - 0.3)
    assert a.tolist() == pytest.approx([x / (x + 1), 1 / (x + 1)])
    assert b.tolist() == pytest.approx([y / (y + 1), 1 / (y + 1)])


# ================================================================ (d) momentum θ̄/θ_i, k = 2, m ≤ 0.5
def test_d_code_momentum_rule():
    kw = dict(similarity="angle", threshold_on="distance", feedback=False, counts=[1, 1, 1])
    # θ̄ = (27 + 33 + 30)/3 = 30; client 0 (θ = 27, slow, weak: SWBC): 0.1 + 2·(30/27 − 1) = 0.1 + 2/9
    st, ctx = _strategy(3, [27.0, 33.0, 30.0], momentum_rule="code", **kw)
    _, info = st.start(0, ctx)
    assert info["type"] == "SWBC" and info["momentum"] == pytest.approx(0.1 + 2 / 9)
    # θ_0 = 20, θ̄ = 30: 2·(1.5 − 1) = 1 → the increase is capped at 0.4: m = 0.5
    st, ctx = _strategy(3, [20.0, 40.0, 30.0], momentum_rule="code", **kw)
    assert st.start(0, ctx)[1]["momentum"] == pytest.approx(0.5)
    # the paper's rule on the same table: G = s̄/s_0, m = 0.1 + 0.2·(1/G − 1)
    st, ctx = _strategy(3, [20.0, 40.0, 30.0], momentum_rule="paper", **kw)
    G = (1 / 21 + 1 / 41 + 1 / 31) / 3 * 21
    assert st.start(0, ctx)[1]["momentum"] == pytest.approx(0.1 + 0.2 * (1 / G - 1))
    # SSBC situation 1 (θ_i > θ̄): the code floors the increase at 0 → m = 0.1
    assert momentum_rate(40 / 30, 0.1, 2.0) == pytest.approx(0.1)
    assert momentum_rate(0.0, 0.1, 2.0) == pytest.approx(0.5)  # θ_i = 0: θ̄/θ_i = ∞ → the cap


# ================================================================ (e) thresholds refreshed at aggregation
@pytest.mark.parametrize("refresh", ["start", "aggregation"])
def test_e_thresholds_frozen_between_aggregations(refresh):
    kw = dict(similarity="angle", threshold_on="distance", momentum=False, feedback=False)
    st, ctx = _strategy(2, [10.0, 30.0], threshold_refresh=refresh, **kw)
    ctx = dataclasses.replace(ctx, agg_counts=torch.tensor([1, 1]))
    first = st.start(0, ctx)[1]
    if refresh == "aggregation":
        assert first["type"] == "warmup"  # no threshold before the first aggregation (the code's 0)
    st.aggregate({"w": T([1.0, 1.0])}, [_upd(0), _upd(1)], ctx)  # freezes θ̄ = (10 + 30)/2 = 20
    ctx = dataclasses.replace(ctx, agg_counts=torch.tensor([2, 2]))
    st.state.sim[0] = s_of(25.0)  # client 0's new angle, after the aggregation
    _, info = st.start(0, ctx)
    if refresh == "aggregation":  # θ̄ = 20 (frozen): 25 > 20 → strongly biased
        assert info["d_bar"] == pytest.approx(20.0) and info["type"] == "SSBC"
    else:  # θ̄ = (25 + 30)/2 = 27.5 from the current table: 25 ≤ 27.5 → weakly biased
        assert info["d_bar"] == pytest.approx(27.5) and info["type"] == "SWBC"
    # the frozen dividers survive a checkpoint
    st2 = FedQS(FedQSOptions(threshold_refresh=refresh, **kw))
    st2.load_state_dict(st.state_dict())
    assert st2.state.frozen == pytest.approx(st.state.frozen, nan_ok=True)


# ================================================================ (f) first Mod① comparison one round later
@pytest.mark.parametrize("first", ["initial", "skip_initial"])
def test_f_first_comparison(first):
    g0, g1, g2 = {"w": T([1.0, 1.0])}, {"w": T([2.0, 1.0])}, {"w": T([2.0, 3.0])}
    st = FedQS(FedQSOptions(first_comparison=first, momentum=False, feedback=False))
    ctx = _ctx(2, history=[g0, g1], rnd=1)  # the client starts from version 1
    st.setup(ctx)
    st.on_upload(Update(0, delta={"w": T([1.0, 1.0])}, state=g1, version=0, num_samples=10, steps=1, lr=0.1), ctx)
    s1 = st.start(0, ctx)[1]["s"]
    if first == "initial":  # L_g = w^1 − w^0 = [1, 0] vs Δ = [1, 1]: cos = 1/√2
        assert s1 == pytest.approx(1 / math.sqrt(2))
        return
    assert math.isnan(s1) and 0 in st.state.pending  # the initial model is never w^{t−1}: no comparison yet
    ctx = dataclasses.replace(ctx, versions=[g1, g2], round=2)
    # L_g = w^2 − w^1 = [0, 2] vs Δ = [1, 1]: cos = 1/√2 — the first comparison, at version 2
    assert st.start(0, ctx)[1]["s"] == pytest.approx(1 / math.sqrt(2))


# ================================================================ (g) first ≤ 20 per class
def test_g_first_20_per_class():
    y = torch.cat([torch.zeros(30), torch.ones(5), torch.full((25,), 2.0)]).long()  # 60 samples
    part = torch.arange(59, -1, -1)  # the client's training indices, in this order
    expected = list(range(59, 39, -1)) + list(range(34, 29, -1)) + list(range(29, 9, -1))
    ds = types.SimpleNamespace(train_y=y)

    def val(validation):
        st = FedQS(FedQSOptions(validation=validation))
        ctx = _ctx(1, train_parts=[part], dataset=ds, per_class=lambda state, idx: T([0.8, 0.6, 1.0]))
        st.setup(ctx)
        return st, ctx, st._validation(0, ctx)

    st, ctx, idx = val("first_per_class")
    assert idx.tolist() == expected
    # class 1 has 5 < 10 samples: its accuracy is halved (the code)
    assert st._per_class_accuracy(0, ctx).tolist() == pytest.approx([80.0, 30.0, 100.0])
    _, _, rnd = val("per_class")  # fedlib's [D] form: 20 random samples of class 0, not the first 20
    assert len(rnd) == len(expected) and rnd.tolist() != expected


# ================================================================ the switch
def test_fidelity_official_on_the_preset_selects_every_rule():
    paper = RunConfig.from_preset("fedqs-sgd-adult-gender")
    official = paper.with_overrides(["options.fidelity=official"])
    assert FedQSOptions(**paper.options).rules() == PAPER == RULES_BY_FIDELITY["paper"].as_dict()
    assert FedQSOptions(**official.options).rules() == OFFICIAL == RULES_BY_FIDELITY["official"].as_dict()
    strategy = FedQSSGD(official.options)  # what it runs with: its rules object, every rule explicit
    assert strategy.rules.as_dict() == OFFICIAL and strategy.options.variant == "sgd"
    assert FedQSSGD(paper.options).rules.as_dict() == PAPER
    assert FedQSOptions().fidelity == "paper" and FedQSOptions().resolved().similarity == "cosine"
    assert official.config_hash() != paper.config_hash()
    # and back: the paper's rules again, the same hash as the preset
    back = official.with_overrides(["options.fidelity=paper"])
    assert back.config_hash() == paper.config_hash()


def test_explicit_option_wins_and_contradictions_raise():
    cfg = RunConfig.from_preset("fedqs-sgd-adult-gender")
    mixed = cfg.with_overrides(["options.fidelity=official", "options.similarity=euclidean", "options.phi=k/n"])
    rules = FedQSOptions(**mixed.options).rules()
    assert rules == {**OFFICIAL, "similarity": "euclidean", "phi": "k/n"}
    # each rule alone on the paper default
    one = FedQSOptions(**cfg.with_overrides(["options.threshold_refresh=aggregation"]).options).rules()
    assert one == {**PAPER, "threshold_refresh": "aggregation"}
    # the distance rules need a distance-based similarity
    with pytest.raises(FedlibError, match="needs a distance-based similarity"):
        cfg.with_overrides(["options.fidelity=official", "options.similarity=cosine"])
    with pytest.raises(FedlibError, match="needs a distance-based similarity"):
        FedQSOptions(momentum_rule="code")
    for bad, match in (("fidelity=code", "official, paper"), ("threshold_on=theta", "distance, similarity"),
                       ("momentum_rule=official", "code, paper"), ("validation=first", "first_per_class"),
                       ("phi=K/N", "k/n"), ("phi=-0.1", "phi"), ("first_comparison=round1", "skip_initial"),
                       ("threshold_refresh=never", "aggregation, start"), ("bias_ratio=angle", "distance")):
        with pytest.raises(FedlibError, match=match):
            cfg.with_overrides([f"options.{bad}"])


def test_rules_object_official_with_one_override_differs_in_that_field_only():
    rules = FedQSOptions(fidelity="official", threshold_refresh="start").fidelity_rules()
    assert isinstance(rules, FedQSRules)
    differ = [f.name for f in dataclasses.fields(FedQSRules) if getattr(rules, f.name) != getattr(OFFICIAL_RULES, f.name)]
    assert differ == ["threshold_refresh"] and rules.threshold_refresh.name == "start"
    assert rules.threshold_refresh.value and not OFFICIAL_RULES.threshold_refresh.value  # dividers at each start
    # no override: the fidelity's own object (equal); the strategy keeps the resolved object
    assert FedQSOptions(fidelity="official").fidelity_rules() == OFFICIAL_RULES
    assert FedQSOptions().fidelity_rules() == PAPER_RULES
    assert FedQS(FedQSOptions(fidelity="official", phi="k/n")).rules == OFFICIAL_RULES.replaced(phi="k/n")
    # each field holds the behaviour its name selects, looked up once from the rule tables
    assert OFFICIAL_RULES.similarity.name == "angle" and OFFICIAL_RULES.similarity.distance
    assert PAPER_RULES.phi.value is None and OFFICIAL_RULES.phi.value == 0.1
    assert (PAPER_RULES.first_comparison.value, OFFICIAL_RULES.first_comparison.value) == (0, 2)
    assert OFFICIAL_RULES.momentum_rule.value.k == 2.0 and PAPER_RULES.momentum_rule.value.k is None


def test_official_end_to_end_adult(data_root, tmp_path):
    from fedlib.data import load_dataset, make_partition
    from fedlib.models import build_model
    from fedlib.safl.delays import make_delays
    from fedlib.safl.simulator import SAFLSimulator, SimSettings
    from fedlib.train import LocalConfig

    ds = load_dataset("adult", root=data_root, cache_dir=tmp_path)
    parts = [p[:200] for p in make_partition("sex", ds, n_clients=10, seed=0)]
    model = build_model("fcn", ds.num_classes, seed=0, in_features=ds.input_shape[0])
    st = FedQSSGD({"fidelity": "official"})
    sim = SAFLSimulator(model, ds, parts, st, SimSettings(k=3, rounds=6, seed=0),
                        delays=make_delays("uniform", 10, 5, 0),
                        local=LocalConfig(lr=0.1, epochs=2, batch_size=50, clip_norm=20.0),
                        test_indices=torch.arange(500))
    rows = []
    for _ in range(6):
        assert math.isfinite(sim.run_round()["accuracy"])
        rows += sim.client_rows()
    # (f): no similarity before the client starts from version 2; (e): warm-up until the 1st aggregation
    assert all(math.isnan(r["similarity"]) for r in rows if r["round"] < 2)
    assert {r["type"] for r in rows} - {"warmup"}
    assert all(0.001 <= r["lr"] <= 0.2 and 0.0 <= r["momentum"] <= 0.5 for r in rows)
