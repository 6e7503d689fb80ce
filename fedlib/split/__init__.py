"""Split federated learning (SFLV1, SFLV2), SMoFi and the FL methods it plugs into.

- :mod:`fedlib.split.smofi` — the step-wise momentum fusion (spec §2): :func:`fuse_momentum`,
  :func:`staleness_weight`, :class:`SMoFiHook` for the engine's lock-step hook.
- :mod:`fedlib.split.bases` — base methods as objects (FedAvg, FedProx, FedNAR, FedNAG) (spec §3).
- :mod:`fedlib.split.addons` — add-ons as objects (SMoFi, FedAvgM, SlowMo; none) (spec §3).
- :mod:`fedlib.split.methods` — method names (``"fedprox+smofi"``), their options dataclasses and
  the objects they build (:func:`~fedlib.split.methods.make_method`,
  :func:`~fedlib.split.methods.make_addon`).
- :mod:`fedlib.split.splitpath` — the explicit split path (client parts + server surrogates
  exchanging smashed data), the reference for the identity tests and the SFLV2 implementation.
- :mod:`fedlib.split.sfl` — the :class:`SplitTrainer` the runner drives (Trainer protocol).
- :mod:`fedlib.split.algorithms` — ``CATALOG``: every ``split`` algorithm (registered by
  ``fedlib.experiments.config.registry``), each built by ``build_trainer(cfg, options)``.
"""

from fedlib.split.smofi import SMoFiHook, SMoFiOptions, fuse_momentum, staleness_weight

__all__ = ["SMoFiHook", "SMoFiOptions", "fuse_momentum", "staleness_weight"]
