"""The real datasets in /work/shared/data (FEDLIB_DATA): sizes, classes, roles, attributes.

The tensor caches go to a temporary folder; CIFAR-10 is converted once for this module.
"""

from __future__ import annotations

import json

import pytest
import torch

from fedlib.cli import main as cli_main
from fedlib.data import dataset_info, load_dataset, make_partition, partition_summary
from fedlib.data.partition import by_role_test
from fedlib.data.registry import SPECS
from fedlib.core.errors import FedlibError
from fedlib.core.utils import generator


@pytest.fixture(scope="module")
def env(data_root, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FEDLIB_DATA", str(data_root))
    mp.setenv("FEDLIB_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield data_root
    mp.undo()


def _need(root, name):
    try:
        SPECS[name].locate(root)
    except FedlibError:
        pytest.skip(f"{name} is not in {root}")


@pytest.fixture(scope="module")
def cifar10(env):
    _need(env, "cifar10")
    return load_dataset("cifar10")  # the one conversion of this module


@pytest.fixture(scope="module")
def shakespeare(env):
    _need(env, "shakespeare")
    return load_dataset("shakespeare")


def test_adult_sizes_features_attributes(env, capsys):
    _need(env, "adult")
    assert cli_main(["data", "info", "adult", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["num_train"], info["num_test"], info["num_classes"]) == (32561, 16281, 2)
    assert info["num_features"] == 11 and not info["balanced"]
    assert info["train_class_counts"] == [24720, 7841]
    assert info["attributes"]["sex"] == {"Female": 10771, "Male": 21790}
    assert sum(info["attributes"]["race"].values()) == 32561 and len(info["attributes"]["race"]) == 5
    assert cli_main(["data", "info", "adult"]) == 0
    assert "32,561 train / 16,281 test" in capsys.readouterr().out
    onehot = load_dataset("adult_onehot")
    assert onehot.num_train == 32561 and onehot.input_shape == (64,)
    ds = load_dataset("adult")
    for kind, n in (("sex", 10), ("race", 20)):
        parts = make_partition(kind, ds, n, seed=0)
        assert sum(len(p) for p in parts) == 32561
        assert all(len(set(ds.meta[kind][p].tolist())) == 1 for p in parts)


@pytest.mark.slow
def test_cifar10_sizes_balanced_stats_and_cache(cifar10, capsys):
    ds = cifar10
    assert (ds.num_train, ds.num_test, ds.num_classes) == (50000, 10000, 10)
    assert ds.train_x.shape == (50000, 3, 32, 32) and ds.train_x.dtype == torch.uint8
    assert ds.class_counts().tolist() == [5000] * 10
    assert ds.class_counts(train=False).tolist() == [1000] * 10
    assert ds.meta["classes"][0] == "airplane" and ds.meta["classes"][9] == "truck"
    # README: this JPEG copy has train means 0.491/0.482/0.447 and stds 0.245/0.243/0.261
    assert torch.allclose(torch.tensor(ds.mean), torch.tensor([0.491, 0.482, 0.447]), atol=2e-3)
    assert torch.allclose(torch.tensor(ds.std), torch.tensor([0.245, 0.243, 0.261]), atol=2e-3)
    assert cli_main(["data", "info", "cifar10"]) == 0  # from the cache now
    assert "50,000 train / 10,000 test, 10 classes (balanced)" in capsys.readouterr().out
    assert dataset_info("cifar10")["balanced"] is True
    again = load_dataset("cifar10")
    assert again.meta["converted"] is False and torch.equal(again.test_x, ds.test_x)
    x, y = ds.batch(torch.arange(256), train=True, generator=generator(0, 0))
    assert x.shape == (256, 3, 32, 32) and x.dtype == torch.float32 and -1 <= x.min() < x.max() <= 1


@pytest.mark.slow
def test_cifar10_dirichlet_partitions(cifar10):
    parts = make_partition("dirichlet", cifar10, 100, seed=0, alpha=0.1)
    df = partition_summary(parts, cifar10.train_y, 10)
    assert df["size"].sum() == 50000 and len(df) == 100
    hist = df[[f"class_{k}" for k in range(10)]].to_numpy()
    top = hist.max(axis=1) / hist.sum(axis=1).clip(min=1)
    assert (top > 0.5).mean() > 0.5  # strong skew at alpha = 0.1: most clients are mostly one class
    iid = partition_summary(make_partition("iid", cifar10, 100, seed=0), cifar10.train_y, 10)
    assert (iid[[f"class_{k}" for k in range(10)]].to_numpy().max(axis=1) < 0.3 * 500).all()


def test_shakespeare_roles_and_counts(shakespeare, capsys):
    ds = shakespeare
    n_roles = len(ds.meta["roles"])
    assert 300 <= n_roles <= 2000  # "several hundred" speaking roles (LEAF has 1,129)
    assert len(set(ds.meta["role_play"])) == 37  # every play; sonnets and poems have no roles
    tr = torch.bincount(ds.meta["train_role"], minlength=n_roles)
    te = torch.bincount(ds.meta["test_role"], minlength=n_roles)
    assert tr.min() >= 80 and te.min() >= 20 and (tr + te).max() <= 1000
    assert ds.num_train == int(tr.sum()) and ds.num_test == int(te.sum())
    assert "hamlet/Ham" in ds.meta["roles"] and "lear/Lear" in ds.meta["roles"]
    assert ds.train_x.shape[1] == 80 and int(ds.train_x.max()) < 80
    assert cli_main(["data", "info", "shakespeare", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["num_roles"] == n_roles and info["train_samples_per_role"]["max"] == 800
    parts = make_partition("role", ds, 50, seed=1)
    tests = by_role_test(ds.meta["test_role"], 50, seed=1, train_role_ids=ds.meta["train_role"])
    for p, q in zip(parts, tests):
        assert ds.meta["train_role"][p].unique().tolist() == ds.meta["test_role"][q].unique().tolist()
