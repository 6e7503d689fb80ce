"""Dataset names -> loaders: find the raw files, convert once to a cache, build a `FedDataset`."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from fedlib.data import adult, images, shakespeare
from fedlib.data.base import FedDataset
from fedlib.data.cache import load_or_build
from fedlib.data.paths import cache_root, data_root
from fedlib.core.errors import FedlibError, check_choice


@dataclass(frozen=True)
class Spec:
    """How to find (``locate``), convert (``build``) and finish (``finish``) one dataset."""

    kind: str
    cache_name: str  # datasets that share a conversion share a cache file
    locate: Callable  # root -> (source, layout)
    build: Callable  # (source, layout) -> payload to cache
    sources: Callable = lambda source, layout: [source]  # files guarding the cache
    finish: Callable = lambda payload, **opts: payload  # cached payload -> split tensors
    options: tuple = ()  # load-time options accepted by finish


SPECS: dict[str, Spec] = {
    "cifar10": Spec("image", "cifar10", lambda r: images.locate_cifar("cifar10", r),
                    lambda s, l: images.build_cifar("cifar10", s, l)),
    "cifar100": Spec("image", "cifar100", lambda r: images.locate_cifar("cifar100", r),
                     lambda s, l: images.build_cifar("cifar100", s, l)),
    "tinyimagenet": Spec("image", "tinyimagenet", images.locate_tiny, images.build_tiny),
    "shakespeare": Spec("text", "shakespeare", shakespeare.locate, shakespeare.build,
                        shakespeare.sources, shakespeare.materialise,
                        ("min_samples_per_role", "max_samples_per_role", "train_frac")),
    "adult": Spec("tabular", "adult", adult.locate, adult.build, adult.sources,
                  lambda p: adult.materialise(p, onehot=False)),
    "adult_onehot": Spec("tabular", "adult", lambda r: adult.locate(r, "adult_onehot"), adult.build, adult.sources,
                         lambda p: adult.materialise(p, onehot=True)),
}
DATASETS = tuple(SPECS)


def dataset_root(root) -> Path:
    return Path(root).expanduser() if root is not None else data_root()


def load_dataset(name: str, root=None, device="cpu", *, cache_dir=None, **options) -> FedDataset:
    """Load dataset ``name`` (one of :data:`DATASETS`) from ``root`` (default :func:`data_root`).

    The first call converts the original files into a tensor cache under ``cache_dir``
    (default :func:`cache_root`); later calls load the cache. ``options`` are dataset specific
    (Shakespeare: ``min_samples_per_role``, ``max_samples_per_role``, ``train_frac``).
    """
    check_choice("dataset", name, DATASETS)
    spec = SPECS[name]
    bad = sorted(set(options) - set(spec.options))
    if bad:
        raise FedlibError(f"dataset {name!r} has no option(s) {', '.join(bad)}",
                          f"valid options: {', '.join(spec.options) or 'none'}")
    root = dataset_root(root)
    source, layout = spec.locate(root)
    cdir = Path(cache_dir) if cache_dir is not None else cache_root(root)
    t0 = time.perf_counter()
    payload, path, built = load_or_build(spec.cache_name, source, spec.sources(source, layout),
                                         {"layout": layout}, lambda: spec.build(source, layout),
                                         cdir)
    t1 = time.perf_counter()
    fields = spec.finish(payload, **options)
    meta = dict(fields["meta"])
    meta.update(source=str(source), layout=meta.get("layout", layout), cache=str(path),
                converted=built, load_seconds=round(time.perf_counter() - t0, 3),
                cache_seconds=round(t1 - t0, 3))
    ds = FedDataset(name=name, kind=spec.kind, train_x=fields["train_x"],
                    train_y=fields["train_y"].long(), test_x=fields["test_x"],
                    test_y=fields["test_y"].long(), num_classes=int(fields["num_classes"]),
                    meta=meta, mean=tuple(fields["mean"]), std=tuple(fields["std"]))
    return ds if torch.device(device) == torch.device("cpu") else ds.to(device)


def _stats(values) -> dict:
    values = [int(v) for v in values]
    if not values:
        return {}
    return {"min": min(values), "median": statistics.median(values),
            "mean": round(statistics.fmean(values), 1), "max": max(values)}


def dataset_info(name: str, root=None, *, cache_dir=None, **options) -> dict:
    """Summary of a dataset: split sizes, classes, balance, roles / attributes where present."""
    ds = load_dataset(name, root, cache_dir=cache_dir, **options)
    counts = ds.class_counts(train=True)
    present = counts[counts > 0]
    info = {
        "name": name, "kind": ds.kind, "num_train": ds.num_train, "num_test": ds.num_test,
        "num_classes": ds.num_classes, "input_shape": list(ds.input_shape),
        "balanced": bool(len(present) == ds.num_classes and int(present.max()) == int(present.min())),
        "train_class_counts": counts.tolist(),
        "test_class_counts": ds.class_counts(train=False).tolist(),
        "source": ds.meta["source"], "layout": ds.meta["layout"], "cache": ds.meta["cache"],
    }
    if ds.kind == "image":
        info["mean"], info["std"] = list(ds.mean), list(ds.std)
    if "classes" in ds.meta and ds.kind != "text":
        info["classes"] = list(ds.meta["classes"])
    if "roles" in ds.meta:
        tr = torch.bincount(ds.meta["train_role"], minlength=len(ds.meta["roles"]))
        te = torch.bincount(ds.meta["test_role"], minlength=len(ds.meta["roles"]))
        info["num_roles"] = len(ds.meta["roles"])
        info["num_plays"] = len(set(ds.meta["role_play"]))
        info["train_samples_per_role"] = _stats(tr.tolist())
        info["test_samples_per_role"] = _stats(te.tolist())
        info["min_samples_per_role"] = ds.meta["min_samples_per_role"]
        info["max_samples_per_role"] = ds.meta["max_samples_per_role"]
    if "attributes" in ds.meta:
        info["num_features"] = int(ds.input_shape[0])
        info["attributes"] = {
            a: {n: int((ds.meta[a] == i).sum()) for i, n in enumerate(names)}
            for a, names in ds.meta["attributes"].items()
        }
    return info
