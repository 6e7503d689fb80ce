"""Every split-FL algorithm (``paradigm: split``) as an :class:`~fedlib.core.protocols.AlgorithmSpec`
(``CATALOG``, registered by ``fedlib.experiments.config.registry``; spec §3).

Names: a base method, optionally ``+`` an add-on — ``fedavg``, ``fedprox``, ``fednar`` each alone
or with ``+smofi``, ``+fedavgm``, ``+slowmo`` — plus ``fednag``, and the aliases ``sflv1``
(= fedavg on SFLV1), ``sflv2`` (= fedavg on SFLV2, whatever ``split.framework`` says),
``smofi`` (= fedavg+smofi), ``fedavgm`` / ``slowmo`` (= fedavg+…). Each name's options dataclass
holds the base's and the add-on's options (:func:`fedlib.split.methods.options_class`).

Every spec's trainer is :func:`build_trainer`: (run config, options) -> :class:`~fedlib.split.sfl.SplitTrainer`.

Your own add-on (a :class:`~fedlib.split.addons.ServerAddon` subclass, e.g. in a notebook) is one
registration, the split-FL twin of :func:`fedlib.safl.algorithms.strategy_factory`::

    register_algorithm("split", "fedavg+mine", addon_factory(Mine), options=MineOptions)

:func:`addon_factory` builds the same trainer as :func:`build_trainer` — FedAvg as the base method,
``Mine.from_options(options)`` as the add-on (``Mine()`` when it has no options).
"""

from __future__ import annotations

import dataclasses

from fedlib.core.errors import check
from fedlib.core.protocols import AlgorithmSpec
from fedlib.core.utils import derive_seed, resolve_device
from fedlib.split.addons import ServerAddon
from fedlib.split.bases import BaseMethod
from fedlib.split.methods import ADDONS, make_addon, make_method, options_class, parse_method
from fedlib.split.sfl import SplitTrainer, check_setup, prepare_data
from fedlib.train.config import check_trainable

__all__ = ["CATALOG", "NAMES", "addon_factory", "addon_options", "build_trainer", "framework_of"]

_DESCRIPTIONS = {
    "fedavg": "FedAvg on split FL (SFLV1 by default: per-client server surrogates)",
    "fedprox": "FedProx (mu/2 ||W - W^n||^2) on split FL",
    "fednar": "FedNAR (L2 in the loss, co-clipping, per-round lr decay) on split FL",
    "fednag": "FedNAG: local Nesterov, weights and momentum averaged (SFLV1)",
    "smofi": "step-wise momentum fusion of the server surrogates (SMoFi, AAAI 2026)",
    "fedavgm": "server momentum on the round pseudo-gradient (FedAvgM)",
    "slowmo": "slow momentum (SlowMo)",
    "sflv1": "SFLV1 = FedAvg with per-client server surrogates",
    "sflv2": "SFLV2: one server part trained sequentially over the clients",
}

NAMES: list[str] = []
for _base in ("fedavg", "fedprox", "fednar"):
    NAMES.append(_base)
    NAMES.extend(f"{_base}+{_addon}" for _addon in ADDONS)
NAMES += ["fednag", "sflv1", "sflv2", "smofi", "fedavgm", "slowmo"]


def framework_of(algorithm: str, framework: str) -> str:
    """The framework a run trains on: ``split.framework``, except that the aliases ``sflv1`` and
    ``sflv2`` name their own."""
    name = str(algorithm).lower()
    return name if name in ("sflv1", "sflv2") else framework


def check_split_run(algorithm: str, split, model_name: str) -> None:
    """The checks of a split run's ``split`` section that depend on the framework it trains on."""
    framework = framework_of(algorithm, split.framework)
    check(split.sflv2_momentum == "carry" or framework == "sflv2",
          f"split.sflv2_momentum={split.sflv2_momentum!r} sets SFLV2's sequential server optimizer, "
          f"but this run trains on {framework.upper()}",
          "set split.framework=sflv2, or leave split.sflv2_momentum=carry")
    check(split.per_round <= split.clients,
          f"split.per_round={split.per_round} exceeds split.clients={split.clients}",
          "lower split.per_round or raise split.clients")
    if framework == "sflv2":
        from fedlib.split.splitpath import check_sflv2_model

        check_sflv2_model(model_name)


def _cut(model_cfg) -> str:
    """``model.cut``, or the model's default cut; a bad cut raises (listing the valid ones)
    before any data is loaded."""
    from fedlib.models import build_model, split_model

    name = model_cfg.name
    probe = build_model(name, 10, seed=0) if name != "lstm" else build_model(name, 80, seed=0)
    cut = model_cfg.cut if model_cfg.cut is not None else probe.default_cut
    split_model(probe, cut)
    return cut


def build_trainer(cfg, options, path: str = "auto", dataset=None, parts=None) -> SplitTrainer:
    """The :class:`SplitTrainer` of run config ``cfg`` (a ``RunConfig``, read by attribute) with
    ``options``, the method's options instance (what the config's resolution built).

    Checks the method name, the combination and the cut before loading any data;
    ``dataset``/``parts`` (both or neither) replace :func:`~fedlib.split.sfl.prepare_data`'s.
    The model is initialised from ``(cfg.seed, "model")``.
    """
    base, addon_name = parse_method(cfg.algorithm)
    framework = framework_of(cfg.algorithm, cfg.split.framework)
    check(isinstance(options, options_class(base, addon_name)),
          f"split method {cfg.algorithm!r} needs its options instance, got {type(options).__name__}",
          "build the trainer through fedlib.experiments.running.runner.build_trainer(cfg)")
    method, addon = make_method(base, options), make_addon(addon_name, options)
    return _assemble(cfg, method, addon, framework, path, dataset, parts)


def addon_options(addon_cls: type[ServerAddon], base: str = "fedavg") -> type | None:
    """The options dataclass of ``base`` + your add-on: the base's fields and ``addon_cls.Options``'
    (None when neither has any)."""
    from fedlib.split.methods import BASE_OPTIONS, combine_options

    own = addon_cls.Options if getattr(addon_cls, "Options", None) is not None \
        and dataclasses.fields(addon_cls.Options) else None
    parts = [c for c in (BASE_OPTIONS[base], own) if c]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else combine_options(base, addon_cls.name, parts)


def addon_factory(addon_cls: type[ServerAddon], base: str = "fedavg"):
    """The registry's trainer factory for your own add-on class ``addon_cls`` (a
    :class:`~fedlib.split.addons.ServerAddon` subclass): ``(cfg, options) -> SplitTrainer`` with
    ``base`` (a name of :data:`fedlib.split.methods.BASES` but fednag; default FedAvg) as the base
    method and ``addon_cls.from_options(...)`` as the add-on (``addon_cls()`` when it has no options),
    on ``split.framework``. ``options`` is :func:`addon_options`' instance (or, as before, an instance of
    the add-on's own options class). Prefer ``fedlib.plugins.register(addon_cls, base=...)``."""
    from fedlib.split.methods import BASE_OPTIONS, BASES, make_method, options_part

    check(isinstance(addon_cls, type) and issubclass(addon_cls, ServerAddon),
          f"addon_factory needs a ServerAddon subclass, got {addon_cls!r}",
          "subclass fedlib.split.addons.ServerAddon")
    check(base in BASES and base != "fednag", f"unknown base method {base!r} for an add-on",
          f"use one of: {', '.join(b for b in BASES if b != 'fednag')} (FedNAG takes no add-on)")
    own = getattr(addon_cls, "Options", None)

    def make(cfg, options, path: str = "auto", dataset=None, parts=None) -> SplitTrainer:
        if options is None:
            addon = addon_cls()
        elif own is not None and not isinstance(options, own) and dataclasses.fields(own):
            addon = addon_cls.from_options(options_part(own, options))
        elif own is None and BASE_OPTIONS[base] is not None:
            addon = addon_cls()  # the options are the base's alone
        else:
            addon = addon_cls.from_options(options)
        method = make_method(base, options)
        framework = framework_of(cfg.algorithm, cfg.split.framework)
        return _assemble(cfg, method, addon, framework, path, dataset, parts)

    make.__name__ = f"make_{addon_cls.__name__}"
    make.__doc__ = f"Build the split-FL trainer running {base} + {addon_cls.__name__} ({addon_cls.name})."
    make.__fedlib_class__ = addon_cls  # the code a user registration's fingerprint covers (issue 61)
    make.__fedlib_factory__ = (addon_factory, addon_cls, {"base": base})  # how a worker rebuilds it
    return make


def _assemble(cfg, method: BaseMethod, addon: ServerAddon, framework: str, path, dataset,
              parts) -> SplitTrainer:
    """The :class:`SplitTrainer` of ``cfg`` with the built ``method`` and ``addon`` objects:
    the combination, the cut and K <= N checked before any data is loaded."""
    from fedlib.models import build_model, model_kwargs

    check_setup(framework, method, addon, cfg.local, path)
    n, k = int(cfg.split.clients), int(cfg.split.per_round)
    check(k <= n, f"split.per_round={k} selected clients exceeds split.clients={n}",
          "lower split.per_round or raise split.clients")
    cut = _cut(cfg.model)
    device = resolve_device(cfg.device)
    if dataset is None:
        dataset, parts = prepare_data(cfg, device)
    check(parts is not None and len(parts) == n,
          f"{len(parts) if parts is not None else 0} client partitions for split.clients={n}")
    check_trainable(cfg.local, [len(p) for p in parts], "clients")
    kw = {}
    if "in_channels" in model_kwargs(cfg.model.name) and dataset.kind == "image":
        kw["in_channels"] = int(dataset.input_shape[0])
    model = build_model(cfg.model.name, int(dataset.num_classes),
                        seed=derive_seed(cfg.seed, "model"), **kw)
    return SplitTrainer(model, cut, dataset, parts, method=method, addon=addon, local=cfg.local,
                        rounds=int(cfg.rounds), per_round=k, seed=int(cfg.seed), device=device,
                        backend=cfg.backend, framework=framework, path=path,
                        eval_every=int(cfg.eval_every), model_name=cfg.model.name,
                        sflv2_momentum=getattr(cfg.split, "sflv2_momentum", "carry"),
                        eval_last=int(getattr(cfg, "eval_last", 0)))


def _description(name: str) -> str:
    base, addon = parse_method(name)
    return _DESCRIPTIONS.get(name) or " + ".join(
        _DESCRIPTIONS[p].split(" (")[0] if p == base else _DESCRIPTIONS[p] for p in (base, addon) if p)


CATALOG = [AlgorithmSpec(name, build_trainer, options_class(*parse_method(name)), _description(name))
           for name in NAMES]
