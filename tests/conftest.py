"""Shared pytest setup: one intra-op thread (2 shared cores), and the real-data location."""

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real datasets (``$FEDLIB_DATA``, default /work/shared/data; read-only); skip if absent."""
    root = Path(os.environ.get("FEDLIB_DATA") or "/work/shared/data")
    if not root.is_dir() or not any(root.iterdir()):
        pytest.skip(f"real data folder {root} not available (set FEDLIB_DATA)")
    return root


@pytest.fixture
def tiny_smofi_trainer():
    """``make(options) -> SplitTrainer``: SMoFi on 96 CIFAR-10 images over 4 clients (2 per round),
    one round, the small CNN cut after conv1, with ``options`` (``"options.x=y"`` overrides) on top;
    ``make.parts`` is the partition; skips where CIFAR-10 is not available. The trainer is the
    registry's for ``algorithm`` (``build_trainer`` for every built-in name; an add-on registered
    with ``addon_factory`` too)."""
    import dataclasses

    from fedlib.core.errors import FedlibError
    from fedlib.data import load_dataset, make_partition
    from fedlib.experiments import RunConfig, get_algorithm

    root = os.environ.get("FEDLIB_DATA") or str(Path(__file__).resolve().parents[2] / "shared" / "data")
    cache = os.environ.get("FEDLIB_CACHE") or str(Path(__file__).resolve().parents[1] / "data" / "cache")
    try:
        ds = load_dataset("cifar10", root=root, cache_dir=cache)
    except FedlibError as e:  # pragma: no cover - data not available
        pytest.skip(f"CIFAR-10 not available: {e}")
    ds = dataclasses.replace(ds, train_x=ds.train_x[:96], train_y=ds.train_y[:96],
                             test_x=ds.test_x[:32], test_y=ds.test_y[:32], meta={})
    parts = make_partition("dirichlet", ds, 4, 0, alpha=0.5)

    def make(options):
        cfg = RunConfig.from_preset("smofi-cifar10-cpu", [
            *options, "model.name=cnn", "model.cut=conv1", "split.clients=4", "split.per_round=2",
            "rounds=1", "device=cpu", "backend=loop", "checkpoint_every=0", "local.batch_size=8",
            "data.max_train=null", "data.max_test=null"])
        factory = get_algorithm("split", cfg.algorithm).trainer
        return factory(cfg, cfg.resolve(data_fingerprint=None).options, dataset=ds, parts=parts)

    make.parts = parts
    return make
