"""Split federated learning, SFLV1 and SFLV2, as one Trainer the runner drives (spec §1, §3, §4).

Round n (0-based inside, reported as ``round = n + 1``):

1. Select ``split.per_round`` of ``split.clients`` clients uniformly without replacement, from a
   generator seeded by ``(seed, "split-select", n)``.
2. Local training of every selected client from the global model W^n = [W_c, W_s] with the base
   method's local settings (:func:`fedlib.split.methods.local_config`), E epochs over its own data,
   so the |T_j| differ across clients.

   * **SFLV1** — per client a client part and a server surrogate with its own optimizer, all in
     lock-step. With the same optimizer on both parts this *is* per-client training of the whole
     model (spec §1), so the default ``path="engine"`` trains the whole model per client through
     :func:`fedlib.train.train_clients`; SMoFi's :class:`~fedlib.split.smofi.SMoFiHook` then
     fuses only the *server-part* optimizer buffers after every lock-step. ``path="split"`` runs
     the explicit split path (:mod:`fedlib.split.splitpath`: client parts and surrogates
     exchanging smashed data and its gradient); the tests show both give the same models.
   * **SFLV2** — one server part trained *sequentially* over the selected clients' smashed data
     in a seeded order ``(seed, "sflv2-order", n)``; always the explicit split path.

3. Aggregation: data-size-weighted average of the client states (both parts; BN statistics too;
   SFLV2: client parts averaged, the server part is the sequentially trained one), then the
   add-on's server update (FedAvgM / SlowMo; identity otherwise). FedNAG also averages the
   momentum buffers (same weights) and starts every client of the next round from them.
4. Evaluation of the global model on the (full, unless ``data.max_test``) test set every
   ``eval_every`` rounds and at the last round.

``virtual_time`` counts lock-steps: SFLV1 adds the round's longest |T_j| (clients and surrogates
run in parallel), SFLV2 adds Σ|T_j| (the server serves clients one after the other).

Everything random derives from ``cfg.seed`` (selection, SFLV2 order, the engine's per-client
streams, the model initialisation, the ``max_train``/``max_test`` subsamples), so
:meth:`SplitTrainer.state_dict` needs no RNG state: the round counter, the global model and the
add-on/momentum state resume a run bit-identically.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch
from torch import Tensor

from fedlib.core.errors import check, check_choice
from fedlib.split.methods import (local_config, make_addon, option_values, options_class,
                                  parse_method)
from fedlib.split.smofi import SMoFiHook, SMoFiOptions
from fedlib.core.utils import derive_seed, generator, resolve_device

__all__ = ["SplitTrainer", "prepare_data", "PATHS"]

PATHS = ("auto", "engine", "split")
from fedlib.core.state import State  # noqa: E402


# ------------------------------------------------------------------------------------------- data
def _subsample(n: int, k: int | None, *parts) -> Tensor | None:
    if k is None or k >= n:
        return None
    return torch.randperm(n, generator=generator(*parts)).narrow(0, 0, int(k)).sort().values


def prepare_data(cfg, device=None):
    """The run's dataset (``data.max_train``/``max_test`` seeded subsamples, ``data.normalize``)
    and its partition over ``split.clients`` clients → ``(dataset, parts)``."""
    from fedlib.data import load_dataset, make_partition

    d = cfg.data
    check(d.validation == "none",
          f"split FL evaluates the global model on the test set; data.validation={d.validation!r} "
          "is not used", "set data.validation=none")
    ds = load_dataset(d.dataset)
    ds.normalize = d.normalize
    tr = _subsample(ds.num_train, d.max_train, cfg.seed, "data", "max_train")
    te = _subsample(ds.num_test, d.max_test, cfg.seed, "data", "max_test")
    if tr is not None or te is not None:
        ds = dataclasses.replace(
            ds,
            train_x=ds.train_x[tr] if tr is not None else ds.train_x,
            train_y=ds.train_y[tr] if tr is not None else ds.train_y,
            test_x=ds.test_x[te] if te is not None else ds.test_x,
            test_y=ds.test_y[te] if te is not None else ds.test_y,
            meta={k: v for k, v in ds.meta.items() if not torch.is_tensor(v)})
    if device is not None and torch.device(device) != ds.device:
        ds = ds.to(device)
    opts = {}
    if d.partition == "dirichlet":
        opts["alpha"] = d.alpha
    elif d.partition == "shards":
        opts["shards_per_client"] = d.shards_per_client
    check(cfg.split.clients <= ds.num_train,
          f"split.clients={cfg.split.clients} exceeds the {ds.num_train} training samples")
    parts = make_partition(d.partition, ds, cfg.split.clients, cfg.seed, **opts)
    return ds, [p.to(torch.long) for p in parts]


# ------------------------------------------------------------------------------------------- trainer
def _engine_takes_initial_state() -> str | None:
    """The ``ClientTask`` field that seeds a client's optimizer state, if the engine has one."""
    from fedlib.train import ClientTask

    for name in ("init_opt_state", "opt_state", "optimizer_state"):
        if name in {f.name for f in dataclasses.fields(ClientTask)}:
            return name
    return None


class SplitTrainer:
    """SFLV1/SFLV2 × base method × add-on (see the module docstring and ``docs``).

    ``SplitTrainer(cfg)`` validates everything before any training: the method name, its options
    (SMoFi α < 0, ...), the cut point, ``split.per_round <= split.clients``, the combination
    (SMoFi and FedNAG need SFLV1's surrogates). ``path``: ``"auto"`` (engine for SFLV1 unless a
    feature needs the explicit path), ``"engine"`` or ``"split"``.
    """

    def __init__(self, cfg, path: str = "auto", dataset=None, parts=None):
        from fedlib.models import build_model, model_kwargs, split_model
        from fedlib.train import LocalConfig

        self.cfg = cfg
        check_choice("split path", path, PATHS)
        self.base, self.addon_name = parse_method(cfg.algorithm)
        self.framework = "sflv2" if str(cfg.algorithm).lower() == "sflv2" else cfg.split.framework
        if str(cfg.algorithm).lower() == "sflv1":
            self.framework = "sflv1"
        check_choice("split.framework", self.framework, ("sflv1", "sflv2"))
        check(self.addon_name != "smofi" or self.framework == "sflv1",
              "SMoFi fuses the momentum of SFLV1's per-client server surrogates; SFLV2 has a "
              "single server part", "use split.framework=sflv1 with SMoFi")
        check(self.base != "fednag" or self.framework == "sflv1",
              "FedNAG averages per-client momentum; it is defined on SFLV1",
              "use split.framework=sflv1 with fednag")
        n, k = int(cfg.split.clients), int(cfg.split.per_round)
        check(k <= n, f"split.per_round={k} selected clients exceeds split.clients={n}",
              "lower split.per_round or raise split.clients")
        check(k >= 1, f"split.per_round must be >= 1, got {k}")
        self.options = options_class(self.base, self.addon_name)(**dict(cfg.options or {}))
        local = cfg.local
        check(isinstance(local, LocalConfig),
              f"cfg.local must be a fedlib.train.LocalConfig, got {type(local).__name__}")
        local.validate()
        # the round-0 local config validates the base method's changes (FedNAG needs momentum)
        local_config(self.base, local, self.options, 0).validate()
        self.local = local
        self.device = resolve_device(cfg.device)
        self.backend = cfg.backend

        # model and cut (a bad cut raises before the data is loaded)
        name = cfg.model.name
        probe = build_model(name, 10, seed=0) if name != "lstm" else build_model(name, 80, seed=0)
        cut = cfg.model.cut if cfg.model.cut is not None else probe.default_cut
        split_model(probe, cut)  # FedlibError listing the valid cut points
        self.cut = cut

        if dataset is None:
            dataset, parts = prepare_data(cfg, self.device)
        check(parts is not None and len(parts) == n,
              f"{len(parts) if parts is not None else 0} client partitions for split.clients={n}")
        self.dataset, self.parts = dataset, list(parts)
        self.sizes = torch.tensor([len(p) for p in self.parts], dtype=torch.long)
        kw = {}
        if "in_channels" in model_kwargs(name) and dataset.kind == "image":
            kw["in_channels"] = int(dataset.input_shape[0])
        self.model = build_model(name, int(dataset.num_classes), seed=derive_seed(cfg.seed, "model"),
                                 **kw).to(self.device)
        client, server = split_model(self.model, cut, copy=True)
        self.client_part, self.server_part = client, server
        self.server_names = [n_ for n_, p in server.named_parameters() if p.requires_grad]
        self.client_names = [n_ for n_, p in client.named_parameters() if p.requires_grad]
        check(len(self.server_names) > 0, f"the server part after cut {cut!r} has no parameters",
              "cut the model earlier")
        self.trainable = self.client_names + self.server_names
        self.global_state: State = {k_: v.detach().clone() for k_, v in self.model.state_dict().items()}

        needs_init = (self.base == "fednag"
                      or (self.addon_name == "smofi" and self.options.carry_momentum))
        if path == "auto":
            path = "split" if self.framework == "sflv2" or (needs_init and
                                                              _engine_takes_initial_state() is None) \
                else "engine"
        if path == "engine":
            check(self.framework == "sflv1", "SFLV2 trains one server part sequentially: it runs "
                  "on the explicit split path", "use path='split' (or 'auto')")
            check(not needs_init or _engine_takes_initial_state() is not None,
                  "this engine cannot start clients from a given optimizer state (FedNAG, SMoFi "
                  "carry_momentum)", "use path='split' (or 'auto')")
        self.path = path

        self.addon = make_addon(self.addon_name, self.options)
        self.hook = None
        if self.addon_name == "smofi":
            smofi = SMoFiOptions(**{f.name: getattr(self.options, f.name)
                                    for f in dataclasses.fields(SMoFiOptions)})
            self.hook = SMoFiHook(self.server_names, local.optimizer, smofi,
                                  momentum=local.momentum if local.optimizer == "sgd" else None)
        self.total_rounds = int(cfg.rounds)
        self.round = 0
        self.virtual_time = 0.0
        self.carry: dict[str, dict[str, Tensor]] = {}   # SMoFi carried fused buffers
        self.nag: dict[str, dict[str, Tensor]] = {}     # FedNAG averaged momentum
        self._rows: list[dict] = []
        self._best = (-math.inf, 0)

    # ---------------------------------------------------------------------------------- helpers
    def selected(self, n: int) -> list[int]:
        """The clients of round ``n`` (0-based): uniform without replacement, seeded, sorted."""
        g = generator(self.cfg.seed, "split-select", int(n))
        perm = torch.randperm(int(self.cfg.split.clients), generator=g)
        return sorted(perm[: int(self.cfg.split.per_round)].tolist())

    def sflv2_order(self, n: int, k: int) -> list[int]:
        """The order (positions in the selected list) SFLV2's server serves round ``n``'s clients."""
        return torch.randperm(k, generator=generator(self.cfg.seed, "sflv2-order", int(n))).tolist()

    def _init_opt(self) -> dict | None:
        if self.base == "fednag" and self.nag:
            return self.nag
        if self.hook is not None and self.options.carry_momentum and self.carry:
            return self.carry
        return None

    def _train_sflv1(self, tasks, n) -> list[Any]:
        from fedlib.split.splitpath import ClientBatches, train_split_clients
        from fedlib.train import train_clients

        init = self._init_opt()
        if self.hook is not None:
            self.hook.start_round(len(tasks))
        if self.path == "engine":
            if init is not None:
                field = _engine_takes_initial_state()
                tasks = [dataclasses.replace(t, **{field: init}) for t in tasks]
            return train_clients(self.model, self.global_state, self.dataset, tasks,
                                 seed=int(self.cfg.seed), round=int(n), backend=self.backend,
                                 hook=self.hook, device=self.device)
        batches = [ClientBatches(t, self.dataset, int(self.cfg.seed), int(n), self.device)
                   for t in tasks]
        return train_split_clients(self.client_part, self.server_part, self.global_state, batches,
                                   tasks[0].config, hook=self.hook,
                                   init_opt=None if init is None else [init] * len(tasks))

    def _train_sflv2(self, tasks, n):
        from fedlib.split.splitpath import ClientBatches, train_sflv2_round

        batches = [ClientBatches(t, self.dataset, int(self.cfg.seed), int(n), self.device)
                   for t in tasks]
        order = self.sflv2_order(n, len(tasks))
        results, server_state = train_sflv2_round(self.client_part, self.server_part,
                                                  self.global_state, batches, order,
                                                  tasks[0].config)
        return results, server_state, order

    # ---------------------------------------------------------------------------------- protocol
    def run_round(self) -> dict:
        from fedlib.core.state import weighted_model_average
        from fedlib.train import ClientTask, evaluate

        n = self.round
        sel = self.selected(n)
        local = local_config(self.base, self.local, self.options, n)
        tasks = [ClientTask(c, self.parts[c], local) for c in sel]
        weights = self.sizes[sel].to(torch.float64)
        check(float(weights.sum()) > 0, f"round {n + 1}: the selected clients hold no samples")
        order = None
        if self.framework == "sflv1":
            results = self._train_sflv1(tasks, n)
            states = [r.state for r in results]
            averaged = weighted_model_average(states, weights)
        else:
            results, server_state, order = self._train_sflv2(tasks, n)
            averaged = weighted_model_average([r.state for r in results], weights)
            for k_ in server_state:
                averaged[k_] = server_state[k_].to(averaged[k_].dtype)
        steps = [int(r.steps) for r in results]
        new_state = self.addon.update(self.global_state, averaged, self.trainable, float(local.lr))
        self.global_state = {k_: v.detach().clone() for k_, v in new_state.items()}
        if self.base == "fednag":
            self.nag = self._average_momentum(results, weights)
        if self.hook is not None and self.options.carry_momentum:
            self.carry = {}
            for key, t in self.hook.fused_state().items():
                kind, name = key.split("/", 1)
                self.carry.setdefault(kind, {})[name] = t
        self.virtual_time += float(max(steps) if self.framework == "sflv1" else sum(steps))
        self.round = n + 1

        acc = loss = math.nan
        if self.round % int(self.cfg.eval_every) == 0 or self.round == self.total_rounds:
            ev = evaluate(self.model, self.global_state, self.dataset, split="test",
                          device=self.device)
            acc, loss = float(ev.accuracy), float(ev.loss)
            if acc > self._best[0]:
                self._best = (acc, self.round)
        losses = torch.tensor([float(r.loss) for r in results], dtype=torch.float64)
        ok = ~torch.isnan(losses)
        train_loss = float((losses[ok] * weights[ok]).sum() / weights[ok].sum()) if ok.any() \
            else math.nan
        pos = {j: i for i, j in enumerate(order)} if order is not None else {}
        self._rows = [{"round": self.round, "client": int(c), "samples": int(self.sizes[c]),
                       "steps": int(r.steps), "train_loss": float(r.loss), "lr": float(local.lr),
                       **({"order": pos[i]} if order is not None else {})}
                      for i, (c, r) in enumerate(zip(sel, results))]
        return {"round": self.round, "accuracy": acc, "loss": loss, "train_loss": train_loss,
                "virtual_time": self.virtual_time, "lr": float(local.lr),
                "steps_max": max(steps), "steps_min": min(steps), "selected": len(sel)}

    def _average_momentum(self, results, weights) -> dict:
        states = []
        for r in results:
            st = getattr(r, "opt_state", None) or {}
            states.append(st.get("momentum_buffer", {}))
        w = weights / weights.sum()
        out: dict[str, Tensor] = {}
        for name in self.trainable:
            rows = [(wi, s[name]) for wi, s in zip(w.tolist(), states) if name in s]
            if rows:
                tot = sum(wi for wi, _ in rows)
                out[name] = sum(wi * t.to(torch.float64) for wi, t in rows).div(tot).to(
                    self.global_state[name].dtype)
        return {"momentum_buffer": out} if out else {}

    def client_rows(self) -> list[dict]:
        return list(self._rows)

    def state_dict(self) -> dict:
        return {"round": self.round, "virtual_time": self.virtual_time,
                "global": {k: v.clone() for k, v in self.global_state.items()},
                "addon": self.addon.state_dict(),
                "carry": {k: {n: t.clone() for n, t in d.items()} for k, d in self.carry.items()},
                "nag": {k: {n: t.clone() for n, t in d.items()} for k, d in self.nag.items()},
                "best": [float(self._best[0]) if math.isfinite(self._best[0]) else -1.0,
                         int(self._best[1])]}

    def load_state_dict(self, state: dict) -> None:
        self.round = int(state["round"])
        self.virtual_time = float(state["virtual_time"])
        self.global_state = {k: v.clone().to(self.device) for k, v in state["global"].items()}
        self.addon.load_state_dict(state.get("addon", {}))
        self.carry = {k: dict(d) for k, d in state.get("carry", {}).items()}
        self.nag = {k: dict(d) for k, d in state.get("nag", {}).items()}
        b = state.get("best", [-1.0, 0])
        self._best = (float(b[0]) if int(b[1]) > 0 else -math.inf, int(b[1]))
        self._rows = []

    def summary(self) -> dict:
        from fedlib.models import count_parameters

        out = {"framework": self.framework, "base_method": self.base,
               "addon": self.addon_name or "none", "split_path": self.path, "cut": self.cut,
               "model": self.cfg.model.name,
               "client_part_params": count_parameters(self.client_part),
               "server_part_params": count_parameters(self.server_part),
               "clients": int(self.cfg.split.clients), "per_round": int(self.cfg.split.per_round),
               "best_round": int(self._best[1])}
        for k, v in option_values(self.options).items():
            out[f"option_{k}"] = v
        return out
