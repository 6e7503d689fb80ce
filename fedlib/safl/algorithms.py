"""Every SAFL algorithm as an :class:`~fedlib.core.protocols.AlgorithmSpec` (``CATALOG``).

The experiment layer (``fedlib.experiments.config.registry``) registers ``CATALOG`` under ``paradigm="safl"``
the first time the paradigm is asked for; this package imports nothing above ``fedlib.train``. Each
algorithm is one
:class:`~fedlib.safl.strategy.Strategy` class; its trainer factory builds, from a validated
:class:`~fedlib.experiments.config.RunConfig`:

* the dataset (``cfg.data``; ``FEDLIB_DATA``/``FEDLIB_CACHE``), moved to ``cfg.device``;
  ``data.normalize`` sets the input normalisation of image and tabular data;
* the partition over ``safl.clients`` clients (seeded by ``cfg.seed``; Shakespeare ``role``:
  one client per sampled role, ``data.roles`` must be unset or equal ``safl.clients``), each
  client's samples optionally subsampled to a ``data.max_train`` share of the train set, then
  the per-client validation split (``data.validation``: none | holdout | per_class, removed from
  training — every algorithm of a task sees the same training samples);
* the test set: all test samples (Shakespeare: those of the sampled roles — no test text of
  unsampled roles, no train/test overlap), optionally a random ``data.max_test`` of them;
* the model (``fedlib.models.build_model``, initial weights from (seed, "safl-model"));
* the delays (``fedlib.safl.delays.make_delays(safl.delays, N, safl.ratio, seed)``), the
  strategy (the options instance the factory receives) and the :class:`~fedlib.safl.simulator.SAFLSimulator`.

FedQS itself (``fedqs-avg``, ``fedqs-sgd``) lives in :mod:`fedlib.safl.fedqs`, the baselines in
:mod:`fedlib.safl.baselines`.
"""

from __future__ import annotations

import dataclasses

import torch

from fedlib.core.errors import FedlibError, check
from fedlib.core.protocols import AlgorithmSpec
from fedlib.safl.baselines import BASELINES
from fedlib.safl.fedqs import STRATEGIES as FEDQS
from fedlib.safl.delays import make_delays
from fedlib.safl.simulator import SAFLSimulator, SimSettings
from fedlib.safl.strategy import Strategy
from fedlib.train.config import check_trainable
from fedlib.core.utils import derive_seed, generator, resolve_device

__all__ = ["CATALOG", "build_simulator", "describe", "prepare_task", "strategy_factory"]


def prepare_task(cfg):
    """(dataset, train_parts, val_parts, test_indices, model) for ``cfg`` (see module docstring)."""
    from fedlib.data import by_role_test, load_dataset, make_partition, validation_split
    from fedlib.models import build_model, model_kwargs

    d, n, seed = cfg.data, int(cfg.safl.clients), int(cfg.seed)
    ds = load_dataset(d.dataset)
    if ds.kind in ("image", "tabular"):
        ds.normalize = d.normalize
    if ds.kind == "tabular" and ds.normalize != "none":
        # normalise the (small) tabular tensors once instead of in every batch: the same
        # element-wise operations, so the same numbers
        xs = {k: ds.batch(torch.arange(n_), train=k == "train", augment=False)[0]
              for k, n_ in (("train", ds.num_train), ("test", ds.num_test))}
        ds = dataclasses.replace(ds, train_x=xs["train"], test_x=xs["test"], normalize="none")
    opts = {}
    if d.partition == "dirichlet":
        opts["alpha"] = float(d.alpha)
    elif d.partition == "shards":
        opts["shards_per_client"] = int(d.shards_per_client)
    elif d.partition == "role":
        check(d.roles is None or int(d.roles) == n,
              f"data.roles={d.roles} but safl.clients={n}: each sampled role is one client",
              "set data.roles equal to safl.clients (or leave it null)")
    parts = make_partition(d.partition, ds, n, seed, **opts)
    check(len(parts) == n, f"partition {d.partition!r} produced {len(parts)} clients, expected {n}")
    if d.max_train is not None and d.max_train < ds.num_train:
        keep = torch.zeros(ds.num_train, dtype=torch.bool)
        keep[torch.randperm(ds.num_train, generator=generator(seed, "safl-max-train"))[: int(d.max_train)]] = True
        parts = [p[keep[p]] for p in parts]
    val_parts = None
    if d.validation != "none":
        parts, val_parts = validation_split(parts, ds.train_y, mode=d.validation, frac=float(d.val_frac),
                                            seed=seed)
    test = None
    if d.partition == "role":
        test = torch.cat(by_role_test(ds.meta["test_role"], n, seed, ds.meta["train_role"]))
    if d.max_test is not None:
        pool = torch.arange(ds.num_test) if test is None else test
        if d.max_test < len(pool):
            pick = torch.randperm(len(pool), generator=generator(seed, "safl-max-test"))[: int(d.max_test)]
            test = pool[pick.sort().values]
    kw = {}
    accepted = model_kwargs(cfg.model.name)
    if "in_features" in accepted and ds.kind == "tabular":
        kw["in_features"] = int(ds.input_shape[0])
    if "in_channels" in accepted and ds.kind == "image":
        kw["in_channels"] = int(ds.input_shape[0])
    model = build_model(cfg.model.name, int(ds.num_classes), seed=derive_seed(seed, "safl-model"), **kw)
    return ds, parts, val_parts, test, model


def build_simulator(cfg, strategy: Strategy, skip_unread: bool = True) -> SAFLSimulator:
    """The simulator for ``cfg`` with ``strategy`` (everything validated before training);
    ``skip_unread``: :attr:`SimSettings.skip_unread`."""
    s = cfg.safl  # K <= N: checked by the config's validation and by the clock (schedule.check_k)
    delays = make_delays(s.delays, int(s.clients), int(s.ratio), int(cfg.seed))
    ds, parts, val_parts, test, model = prepare_task(cfg)
    check_trainable(cfg.local, [len(p) for p in parts], "clients")
    device = resolve_device(cfg.device)
    if device.type != "cpu":
        ds = ds.to(device)
    settings = SimSettings(k=int(s.k), rounds=int(cfg.rounds), seed=int(cfg.seed), mode=s.mode, upload=s.upload,
                           scenario=s.scenario, backend=cfg.backend, eval_every=int(cfg.eval_every),
                           eval_last=int(cfg.eval_last), skip_unread=skip_unread)
    return SAFLSimulator(model, ds, parts, strategy, settings, delays=delays, local=cfg.local,
                         val_parts=val_parts, test_indices=test, device=device)


def strategy_factory(cls: type[Strategy]):
    """The registry's trainer factory for strategy class ``cls``: ``(cfg, options) -> SAFLSimulator``
    (``options``: the instance the run's config resolution built; None for a strategy without options)."""

    def make(cfg, options) -> SAFLSimulator:
        return build_simulator(cfg, cls(options))

    make.__name__ = f"make_{cls.__name__}"
    make.__doc__ = f"Build the SAFL simulator running {cls.__name__} ({cls.name})."
    make.__fedlib_class__ = cls  # the code a user registration's fingerprint covers (issue 61)
    make.__fedlib_factory__ = (strategy_factory, cls, {})  # how a worker process rebuilds it
    return make


def _options_of(cls) -> type | None:
    opts = getattr(cls, "Options", None)
    if opts is None or not dataclasses.is_dataclass(opts) or not dataclasses.fields(opts):
        return None
    return opts


def _summary(cls) -> str:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())[:160]


def describe(cls) -> str:
    """A strategy's catalogue line: ``[aggregation]`` when the class declares one, then its docstring's
    first paragraph (or its ``description``)."""
    text = getattr(cls, "description", "") or _summary(cls)
    return f"[{cls.aggregation}] {text}" if getattr(cls, "aggregation", None) else text


CATALOG = [AlgorithmSpec(name, strategy_factory(cls), _options_of(cls), describe(cls))
           for name, cls in {**BASELINES, **FEDQS}.items()]
