"""fedlib.data: datasets in their original layouts -> cached tensors -> client partitions.

    ds = load_dataset("cifar10")                 # FedDataset, uint8 images, converted once
    parts = make_partition("dirichlet", ds, n_clients=100, seed=0, alpha=0.1)
    x, y = ds.batch(parts[0][:64], train=True, generator=fedlib.core.utils.generator(0, 0, 0))

Datasets: see :data:`DATASETS`; roots: ``$FEDLIB_DATA`` (raw files), ``$FEDLIB_CACHE`` (tensors).
Downloads: ``fedlib.data.fetch.fetch(name, root)`` or ``fedlib data fetch NAME``.
"""

from fedlib.data.base import FedDataset, augment_images
from fedlib.data.partition import (
    KINDS as PARTITIONS,
    by_attribute,
    by_role,
    by_role_test,
    dirichlet,
    iid,
    make_partition,
    partition_summary,
    plot_partition,
    sample_roles,
    shards,
    validation_split,
)
from fedlib.data.paths import cache_root, data_root
from fedlib.data.registry import DATASETS, dataset_info, load_dataset

__all__ = [
    "DATASETS", "PARTITIONS", "FedDataset", "augment_images", "by_attribute", "by_role",
    "by_role_test", "cache_root", "data_root", "dataset_info", "dirichlet", "iid",
    "load_dataset", "make_partition", "partition_summary", "plot_partition", "sample_roles",
    "shards", "validation_split",
]
