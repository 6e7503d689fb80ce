"""Partition properties: disjoint, complete, seeded, skew behaves as the parameters say."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedlib.data import (
    FedDataset,
    by_attribute,
    by_role,
    by_role_test,
    dirichlet,
    iid,
    make_partition,
    partition_summary,
    plot_partition,
    shards,
    validation_split,
)
from fedlib.core.errors import FedlibError

LABELS = torch.arange(2000) % 10  # 10 balanced classes


def _disjoint_complete(parts, n):
    allidx = torch.cat(parts)
    assert len(allidx) == n, "every sample used exactly once"
    assert torch.equal(torch.sort(allidx).values, torch.arange(n))
    assert all(p.dtype == torch.long for p in parts)


def _skew(parts, labels, k=10):
    """Mean total-variation distance between client label histograms and the global one."""
    h = partition_summary(parts, labels, k)[[f"class_{c}" for c in range(k)]].to_numpy(float)
    h = h[h.sum(1) > 0]
    h /= h.sum(1, keepdims=True)
    return 0.5 * np.abs(h - 0.1).sum(1).mean()


def _tabular(n=300, **meta):
    x = torch.zeros(n, 3)
    y = torch.arange(n) % 2
    return FedDataset("t", "tabular", x, y, x[:10], y[:10], 2, meta=meta)


def test_iid_near_equal_disjoint_complete_deterministic():
    parts = iid(1003, 10, seed=1)
    _disjoint_complete(parts, 1003)
    assert {len(p) for p in parts} == {100, 101}
    assert all(torch.equal(a, b) for a, b in zip(parts, iid(1003, 10, seed=1)))
    assert not torch.equal(parts[0], iid(1003, 10, seed=2)[0])


def test_dirichlet_disjoint_complete_deterministic():
    parts = dirichlet(LABELS, 20, 0.5, seed=3)
    assert len(parts) == 20
    _disjoint_complete(parts, len(LABELS))
    again = dirichlet(LABELS.numpy(), 20, 0.5, seed=3)  # numpy labels work the same
    assert all(torch.equal(a, b) for a, b in zip(parts, again))
    assert any(not torch.equal(a, b) for a, b in zip(parts, dirichlet(LABELS, 20, 0.5, seed=4)))


def test_dirichlet_skew_grows_as_alpha_falls():
    skews = [np.mean([_skew(dirichlet(LABELS, 20, a, seed=s), LABELS) for s in range(3)])
             for a in (100.0, 1.0, 0.5, 0.1)]
    assert skews == sorted(skews), skews
    assert skews[0] < 0.15 and skews[-1] > 0.6


def test_dirichlet_follows_the_fedqs_cut_rule():
    """One class, 2 clients: the cut is round(p_0 * n) of the shuffled class indices."""
    y = torch.zeros(101, dtype=torch.long)
    parts = dirichlet(y, 2, 1.0, seed=0)
    from fedlib.data.partition import _rng

    rng = _rng("dirichlet", 0)
    p = rng.dirichlet([1.0, 1.0], size=1)[0]
    assert len(parts[0]) == round(p[0] * 101) and len(parts[1]) == 101 - len(parts[0])


def test_dirichlet_min_size():
    parts = dirichlet(LABELS, 50, 0.1, seed=0, min_size=5)
    assert min(len(p) for p in parts) >= 5
    with pytest.raises(FedlibError, match="no Dirichlet"):
        dirichlet(LABELS, 50, 0.01, seed=0, min_size=39, max_tries=3)


def test_shards_labels_per_client():
    parts = shards(LABELS, 10, 2, seed=0)
    _disjoint_complete(parts, len(LABELS))
    ncls = partition_summary(parts, LABELS, 10)["n_classes"]
    assert ncls.max() <= 2 and all(len(p) == 200 for p in parts)
    assert all(torch.equal(a, b) for a, b in zip(parts, shards(LABELS, 10, 2, seed=0)))


def test_by_role_and_by_role_test_match():
    train_role = torch.tensor([0, 0, 1, 2, 2, 2, 3, 1])
    test_role = torch.tensor([2, 0, 1, 3, 3])
    tr = by_role(train_role, 3, seed=5)
    te = by_role_test(test_role, 3, seed=5, train_role_ids=train_role)
    assert len(tr) == len(te) == 3
    for a, b in zip(tr, te):
        roles_a, roles_b = set(train_role[a].tolist()), set(test_role[b].tolist())
        assert len(roles_a) == 1 and roles_a == roles_b
    chosen = [int(train_role[p[0]]) for p in tr]
    assert len(set(chosen)) == 3  # without replacement
    all_four = by_role(train_role, 4, seed=0)
    _disjoint_complete(all_four, len(train_role))
    with pytest.raises(FedlibError, match="has 4 roles"):
        by_role(train_role, 5, seed=0)


@pytest.mark.parametrize("sigma", [0.0, 1.0])
def test_by_attribute_one_group_per_client_proportional(sigma):
    attr = torch.cat([torch.zeros(700), torch.ones(250), torch.full((50,), 2)]).long()
    attr = attr[torch.randperm(1000, generator=torch.Generator().manual_seed(0))]
    parts = by_attribute(attr, 20, seed=1, sigma=sigma)
    _disjoint_complete(parts, 1000)
    groups = [set(attr[p].tolist()) for p in parts]
    assert all(len(g) == 1 for g in groups)
    per_group = np.bincount([g.pop() for g in groups])
    assert per_group.tolist() == [14, 5, 1]  # proportional to 700/250/50, at least one each
    sizes = np.array([len(p) for p in parts])
    if sigma == 0:  # equal shares within a group
        assert sizes.max() - sizes.min() <= 51
    assert min(sizes) >= 1


def test_by_attribute_lognormal_sizes_spread_with_sigma():
    attr = torch.zeros(5000, dtype=torch.long)
    spread = [np.std([len(p) for p in by_attribute(attr, 20, seed=0, sigma=s)]) for s in (0.1, 1.5)]
    assert spread[0] < spread[1]


def test_by_attribute_needs_a_client_per_group():
    with pytest.raises(FedlibError, match="at least 3 clients"):
        by_attribute(torch.tensor([0, 1, 2, 2]), 2, seed=0)


def test_validation_split_holdout_and_per_class():
    parts = dirichlet(LABELS, 5, 1.0, seed=0)
    tr, va = validation_split(parts, LABELS, mode="holdout", frac=0.2, seed=0)
    for p, t, v in zip(parts, tr, va):
        assert len(v) == int(0.2 * len(p))
        assert set(t.tolist()).isdisjoint(v.tolist())
        assert sorted(t.tolist() + v.tolist()) == p.tolist()
    tr, va = validation_split(parts, LABELS, mode="per_class", per_class=20, seed=0)
    for p, t, v in zip(parts, tr, va):
        counts = np.bincount(LABELS[p], minlength=10)
        vcounts = np.bincount(LABELS[v], minlength=10)
        assert (vcounts == np.minimum(counts, 20)).all()
        assert set(t.tolist()).isdisjoint(v.tolist())
    tr2, va2 = validation_split(parts, LABELS, mode="per_class", seed=0, keep_in_train=True)
    assert all(torch.equal(a, b) for a, b in zip(tr2, parts))  # FedQS: val drawn from train
    assert all(torch.equal(a, b) for a, b in zip(va2, va))
    with pytest.raises(FedlibError, match="unknown validation mode"):
        validation_split(parts, LABELS, mode="kfold")


def test_partition_summary_and_plot():
    parts = shards(LABELS, 4, 1, seed=0)
    df = partition_summary(parts, LABELS, 10)
    assert list(df.columns[:2]) == ["size", "n_classes"] and len(df) == 4
    assert df["size"].sum() == 2000
    assert (df[[f"class_{k}" for k in range(10)]].sum(axis=1) == df["size"]).all()
    import matplotlib

    matplotlib.use("Agg")
    ax = plot_partition(parts, LABELS, 10)
    assert ax.get_xlabel() == "class"
    import matplotlib.pyplot as plt

    plt.close("all")


def test_make_partition_dispatch_and_validation():
    ds = _tabular(sex=torch.arange(300) % 2, race=torch.arange(300) % 3)
    _disjoint_complete(make_partition("iid", ds, 7, seed=0), 300)
    _disjoint_complete(make_partition("dirichlet", ds, 7, seed=0, alpha=0.5), 300)
    _disjoint_complete(make_partition("shards", ds, 5, seed=0, shards_per_client=3), 300)
    sex = make_partition("sex", ds, 6, seed=0, sigma=0.5)
    assert all(len(set(ds.meta["sex"][p].tolist())) == 1 for p in sex)
    race = make_partition("race", ds, 6, seed=0)
    assert all(len(set(ds.meta["race"][p].tolist())) == 1 for p in race)
    same = make_partition("dirichlet", ds, 7, seed=0, alpha=0.5)
    assert all(torch.equal(a, b) for a, b in
               zip(same, make_partition("dirichlet", ds, 7, seed=0, alpha=0.5)))
    roles = _tabular(train_role=torch.arange(300) % 30)
    assert len(make_partition("role", roles, 12, seed=0)) == 12

    with pytest.raises(FedlibError) as e:
        make_partition("label_skew", ds, 5, seed=0)
    assert all(k in str(e.value) for k in ("iid", "dirichlet", "shards", "role", "sex", "race"))
    for alpha in (0, -1.0):
        with pytest.raises(FedlibError, match="alpha must be > 0"):
            make_partition("dirichlet", ds, 5, seed=0, alpha=alpha)
    with pytest.raises(FedlibError, match="needs alpha"):
        make_partition("dirichlet", ds, 5, seed=0)
    with pytest.raises(FedlibError, match="positive integer"):
        make_partition("iid", ds, 0, seed=0)
    with pytest.raises(FedlibError, match="more than the 300 samples"):
        make_partition("iid", ds, 301, seed=0)
    with pytest.raises(FedlibError, match="has no option"):
        make_partition("iid", ds, 5, seed=0, alpha=1)
    with pytest.raises(FedlibError, match="needs speaking roles"):
        make_partition("role", ds, 5, seed=0)
    with pytest.raises(FedlibError, match="needs the sex attribute"):
        make_partition("sex", roles, 5, seed=0)


def test_partitions_do_not_depend_on_global_rng():
    torch.manual_seed(123)
    np.random.seed(123)
    a = dirichlet(LABELS, 10, 0.3, seed=9)
    torch.manual_seed(456)
    np.random.seed(456)
    b = dirichlet(LABELS, 10, 0.3, seed=9)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
