"""Client partitions of a training set (spec §7): lists of train indices, one LongTensor per client.

Every partition is a pure function of its arguments and an integer ``seed``: random numbers come
from a NumPy ``Generator`` (PCG64) seeded with ``fedlib.core.utils.derive_seed("partition", kind, seed)``,
so the same call gives the same clients on any machine, in any process. Indices within a client
are returned sorted.

* :func:`iid` — a random permutation cut into near-equal parts.
* :func:`dirichlet` — the FedQS ``HeteroDiri`` scheme [C]: for each class ``k`` draw proportions
  ``p_k ~ Dir(alpha * 1_N)`` over the ``N`` clients and cut that class's (shuffled) indices at the
  cumulative counts ``cumsum(round(p_k * n_k))`` (clipped to ``n_k``; the last client gets the
  rest). Smaller ``alpha`` = more skew; clients may get no sample of a class (or none at all).
* :func:`shards` — sort by label, cut into ``N * s`` equal shards, deal ``s`` random shards each.
* :func:`by_role` / :func:`by_role_test` — Shakespeare: one client per sampled speaking role.
* :func:`by_attribute` — Adult by sex / by race: each client holds samples of one group only;
  clients are assigned to groups in proportion to group size (at least one each) and a group's
  samples are split among its clients with log-normal sizes ``LogNormal(0, sigma)`` (FedQS draws
  its client sizes from a log-normal too [C]; default ``sigma = 1``: the largest of 10 clients
  is typically ~5x the median).
* :func:`validation_split` — per-client validation sets (hold-out fraction, or the FedQS
  ``per_class`` scheme: up to 20 samples of each class the client holds).
"""

from __future__ import annotations

import numpy as np
import torch

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.core.utils import derive_seed

KINDS = ("iid", "dirichlet", "shards", "role", "sex", "race")
VALIDATION_MODES = ("holdout", "per_class")  # validation_split's modes


def _rng(kind: str, seed: int, *extra) -> np.random.Generator:
    return np.random.default_rng(derive_seed("partition", kind, int(seed), *extra))


def _np(labels) -> np.ndarray:
    if isinstance(labels, torch.Tensor):
        labels = labels.detach().cpu().numpy()
    return np.asarray(labels).astype(np.int64).reshape(-1)


def _out(parts) -> list[torch.Tensor]:
    return [torch.from_numpy(np.sort(np.asarray(p, dtype=np.int64))) for p in parts]


def _check_clients(n_clients: int, n_samples: int) -> None:
    check(isinstance(n_clients, (int, np.integer)) and n_clients >= 1,
          f"n_clients must be a positive integer, got {n_clients!r}")
    check(n_clients <= n_samples,
          f"n_clients={n_clients} is more than the {n_samples} samples to share",
          "use fewer clients (every client needs data)")


def _split_counts(n: int, weights: np.ndarray, min_each: int = 0) -> np.ndarray:
    """Integer counts summing to ``n`` proportional to ``weights`` (largest remainder), then
    topped up to ``min_each`` by taking from the largest counts (needs ``n >= k * min_each``)."""
    w = np.asarray(weights, dtype=np.float64)
    raw = w / w.sum() * n
    counts = np.floor(raw).astype(np.int64)
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    while counts.min() < min_each:
        counts[int(np.argmax(counts))] -= 1
        counts[int(np.argmin(counts))] += 1
    return counts


# ----------------------------------------------------------------------------- partitions
def iid(n_samples: int, n_clients: int, seed: int) -> list[torch.Tensor]:
    """Uniformly random, near-equal split of ``range(n_samples)``."""
    _check_clients(n_clients, n_samples)
    perm = _rng("iid", seed).permutation(n_samples)
    return _out(np.array_split(perm, n_clients))


def dirichlet(labels, n_clients: int, alpha: float, seed: int, min_size: int = 0,
              max_tries: int = 1000) -> list[torch.Tensor]:
    """FedQS Dirichlet label skew (spec §7): per class, ``Dir(alpha * 1_N)`` shares over clients.

    ``min_size > 0`` redraws (up to ``max_tries``) until every client has that many samples —
    not in the FedQS code (default 0 = exactly its scheme).
    """
    y = _np(labels)
    _check_clients(n_clients, len(y))
    check(float(alpha) > 0, f"Dirichlet alpha must be > 0, got {alpha!r}",
          "use e.g. alpha=0.1 (strong skew), 0.5 or 1")
    check(min_size * n_clients <= len(y), f"min_size={min_size} x {n_clients} clients exceeds "
          f"the {len(y)} samples")
    classes = np.unique(y)
    rng = _rng("dirichlet", seed)
    for _ in range(max_tries):
        parts = [[] for _ in range(n_clients)]
        props = rng.dirichlet(np.full(n_clients, float(alpha)), size=len(classes))
        for k, p in zip(classes, props):
            idx = rng.permutation(np.flatnonzero(y == k))
            cuts = np.minimum(np.cumsum(np.round(p * len(idx)).astype(np.int64))[:-1], len(idx))
            for c, chunk in enumerate(np.split(idx, cuts)):
                parts[c].append(chunk)
        parts = [np.concatenate(p) for p in parts]
        if min(len(p) for p in parts) >= min_size:
            return _out(parts)
    raise FedlibError(f"no Dirichlet(alpha={alpha}) draw in {max_tries} tries gave every client "
                      f"{min_size} samples", "lower min_size, raise alpha or use fewer clients")


def shards(labels, n_clients: int, shards_per_client: int, seed: int) -> list[torch.Tensor]:
    """Label-sorted shards (McMahan et al.): ``n_clients * shards_per_client`` equal shards."""
    y = _np(labels)
    check(isinstance(shards_per_client, (int, np.integer)) and shards_per_client >= 1,
          f"shards_per_client must be a positive integer, got {shards_per_client!r}")
    _check_clients(n_clients * shards_per_client, len(y))
    rng = _rng("shards", seed)
    perm = rng.permutation(len(y))
    order = perm[np.argsort(y[perm], kind="stable")]  # by label, random within a label
    pieces = np.array_split(order, n_clients * shards_per_client)
    deal = rng.permutation(len(pieces)).reshape(n_clients, shards_per_client)
    return _out([np.concatenate([pieces[j] for j in row]) for row in deal])


def sample_roles(role_ids, n_roles_sampled: int, seed: int) -> torch.Tensor:
    """The role ids given to clients ``0..n-1`` (sampled without replacement from those present)."""
    roles = np.unique(_np(role_ids))
    check(isinstance(n_roles_sampled, (int, np.integer)) and n_roles_sampled >= 1,
          f"number of roles must be a positive integer, got {n_roles_sampled!r}")
    check(n_roles_sampled <= len(roles),
          f"asked for {n_roles_sampled} role clients but the data has {len(roles)} roles",
          f"use at most {len(roles)} clients")
    return torch.from_numpy(_rng("role", seed).choice(roles, n_roles_sampled, replace=False))


def _by_role(role_ids, chosen) -> list[torch.Tensor]:
    r = _np(role_ids)
    order = np.argsort(r, kind="stable")
    sorted_r = r[order]
    out = []
    for role in chosen.tolist():
        lo, hi = np.searchsorted(sorted_r, [role, role + 1])
        out.append(order[lo:hi])
    return _out(out)


def by_role(role_ids, n_roles_sampled: int, seed: int) -> list[torch.Tensor]:
    """Shakespeare train indices: client ``i`` = every sample of the ``i``-th sampled role."""
    return _by_role(role_ids, sample_roles(role_ids, n_roles_sampled, seed))


def by_role_test(test_role_ids, n_roles_sampled: int, seed: int, train_role_ids=None):
    """The test indices of the same clients as :func:`by_role` with the same arguments.

    Roles are sampled from ``train_role_ids`` when given (else from ``test_role_ids``; fedlib's
    Shakespeare has every role in both splits, so both give the same roles).
    """
    chosen = sample_roles(train_role_ids if train_role_ids is not None else test_role_ids,
                          n_roles_sampled, seed)
    return _by_role(test_role_ids, chosen)


def by_attribute(attr, n_clients: int, seed: int, sigma: float = 1.0,
                 kind: str = "attribute") -> list[torch.Tensor]:
    """One attribute group per client (Adult by sex or race), log-normal client sizes.

    Clients per group are proportional to the group's size with at least one each; within a
    group, sizes are ``LogNormal(0, sigma)`` shares (every client gets >= 1 sample). Client
    order is shuffled, so client ids do not encode the group. Every sample is used exactly once.
    """
    a = _np(attr)
    groups, sizes = np.unique(a, return_counts=True)
    _check_clients(n_clients, len(a))
    check(n_clients >= len(groups), f"{n_clients} clients cannot give each of the "
          f"{len(groups)} groups its own client", f"use at least {len(groups)} clients")
    check(float(sigma) >= 0, f"sigma must be >= 0, got {sigma!r}")
    rng = _rng(kind, seed)
    per_group = _split_counts(n_clients, sizes, min_each=1)
    per_group = np.minimum(per_group, sizes)  # a tiny group cannot feed more clients than samples
    while per_group.sum() < n_clients:  # give the surplus to the groups with most samples/client
        per_group[int(np.argmax(np.where(per_group < sizes, sizes / per_group, -1.0)))] += 1
    parts = []
    for g, size, k in zip(groups, sizes, per_group):
        idx = rng.permutation(np.flatnonzero(a == g))
        w = rng.lognormal(0.0, float(sigma), int(k))
        counts = _split_counts(int(size), w, min_each=1)
        parts += np.split(idx, np.cumsum(counts)[:-1])
    order = rng.permutation(len(parts))
    return _out([parts[i] for i in order])


def validation_split(parts, labels, mode: str = "holdout", frac: float = 0.2, per_class: int = 20,
                     seed: int = 0, keep_in_train: bool = False):
    """Per-client validation sets: ``(train_parts, val_parts)``.

    ``"holdout"``: a random ``frac`` of each client's samples (at least 1 when the client has
    2 or more), removed from its training part. ``"per_class"``: up to ``per_class`` random
    samples of every class the client holds (the FedQS validation loaders, §4, use 20 per
    class); removed from training unless ``keep_in_train=True`` — the FedQS code keeps them in
    its training set.
    """
    check_choice("validation mode", mode, VALIDATION_MODES)
    check(0 <= frac < 1, f"frac must be in [0, 1), got {frac!r}")
    y = _np(labels)
    train_out, val_out = [], []
    for c, p in enumerate(parts):
        p = _np(p)
        rng = _rng("validation", seed, mode, c)
        if mode == "holdout":
            k = int(np.floor(frac * len(p)))
            if frac > 0 and k == 0 and len(p) >= 2:
                k = 1
            perm = rng.permutation(p)
            val = perm[:k]
        else:
            val = []
            for k in np.unique(y[p]):
                members = p[y[p] == k]
                val.append(rng.permutation(members)[:per_class])
            val = np.concatenate(val) if val else np.zeros(0, np.int64)
        train = p if keep_in_train else np.setdiff1d(p, val)
        train_out.append(train)
        val_out.append(val)
    return _out(train_out), _out(val_out)


# ----------------------------------------------------------------------------- summaries
def partition_summary(parts, labels, num_classes: int):
    """``pandas.DataFrame``: per client its size, number of classes and label histogram."""
    import pandas as pd

    y = _np(labels)
    hist = np.stack([np.bincount(y[_np(p)], minlength=num_classes)[:num_classes] for p in parts]) \
        if len(parts) else np.zeros((0, num_classes), np.int64)
    df = pd.DataFrame(hist, columns=[f"class_{k}" for k in range(num_classes)])
    df.insert(0, "n_classes", (hist > 0).sum(1))
    df.insert(0, "size", hist.sum(1))
    df.index.name = "client"
    return df


def plot_partition(parts, labels, num_classes: int, ax=None, max_clients: int = 100):
    """Heat-map of the label histogram (clients x classes); returns the matplotlib axes."""
    import matplotlib.pyplot as plt

    df = partition_summary(parts[:max_clients], labels, num_classes)
    hist = df[[f"class_{k}" for k in range(num_classes)]].to_numpy()
    if ax is None:
        _, ax = plt.subplots(figsize=(min(12, 2 + 0.4 * num_classes), min(10, 1.5 + 0.15 * len(df))))
    try:
        import seaborn as sns

        sns.heatmap(hist, ax=ax, cmap="viridis", cbar_kws={"label": "samples"})
    except ImportError:  # seaborn is a dependency, but keep plots working without it
        im = ax.imshow(hist, aspect="auto", cmap="viridis")
        ax.figure.colorbar(im, ax=ax, label="samples")
    ax.set_xlabel("class")
    ax.set_ylabel("client")
    ax.set_title(f"{len(df)} clients, sizes {int(df['size'].min())}-{int(df['size'].max())}")
    return ax


# ----------------------------------------------------------------------------- dispatcher
def make_partition(kind: str, dataset, n_clients: int, seed: int, **opts) -> list[torch.Tensor]:
    """Partition ``dataset`` (a :class:`~fedlib.data.FedDataset`) by ``kind`` (one of :data:`KINDS`).

    Options: ``dirichlet`` -> ``alpha`` (required), ``min_size``; ``shards`` ->
    ``shards_per_client`` (default 2); ``sex``/``race`` -> ``sigma`` (default 1.0);
    ``role`` -> none (Shakespeare: one client per sampled role; test indices of the same clients
    via :func:`by_role_test` with ``dataset.meta["test_role"]``).
    """
    check_choice("partition kind", kind, KINDS)
    allowed = {"iid": set(), "dirichlet": {"alpha", "min_size"}, "shards": {"shards_per_client"},
               "role": set(), "sex": {"sigma"}, "race": {"sigma"}}[kind]
    bad = sorted(set(opts) - allowed)
    if bad:
        raise FedlibError(f"partition {kind!r} has no option(s) {', '.join(bad)}",
                          f"valid options: {', '.join(sorted(allowed)) or 'none'}")
    y = dataset.train_y
    if kind == "iid":
        return iid(len(y), n_clients, seed)
    if kind == "dirichlet":
        check("alpha" in opts, "the dirichlet partition needs alpha", "pass alpha=0.1, 0.5 or 1")
        return dirichlet(y, n_clients, opts["alpha"], seed, min_size=opts.get("min_size", 0))
    if kind == "shards":
        return shards(y, n_clients, opts.get("shards_per_client", 2), seed)
    if kind == "role":
        check("train_role" in dataset.meta,
              f"partition 'role' needs speaking roles; dataset {dataset.name!r} has none",
              "use it with shakespeare")
        return by_role(dataset.meta["train_role"], n_clients, seed)
    check(kind in dataset.meta, f"partition {kind!r} needs the {kind} attribute; dataset "
          f"{dataset.name!r} has none", "use it with adult or adult_onehot")
    return by_attribute(dataset.meta[kind], n_clients, seed, sigma=opts.get("sigma", 1.0), kind=kind)
