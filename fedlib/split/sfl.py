"""Split federated learning, SFLV1 and SFLV2, as one Trainer the runner drives (spec §1, §3, §4).

The trainer calls two objects and never tests a method's name: the *base method*
(:mod:`fedlib.split.bases`) and the *add-on* (:mod:`fedlib.split.addons`), each owning its hooks.
Round n (0-based inside, reported as ``round = n + 1``):

1. Select ``per_round`` of the ``len(parts)`` clients uniformly without replacement, from a
   generator seeded by ``(seed, "split-select", n)``.
2. Local training of every selected client from the global model W^n = [W_c, W_s] with the base
   method's round config (``method.local_config``), from the optimizer state
   ``method.initial_opt_state()`` or ``addon.initial_opt_state()`` (FedNAG's averaged momentum,
   SMoFi's carried fused momentum; fresh otherwise), E epochs over its own data, so the |T_j|
   differ across clients.

   * **SFLV1** — per client a client part and a server surrogate with its own optimizer, all in
     lock-step. With the same optimizer on both parts this *is* per-client training of the whole
     model (spec §1), so the default ``path="engine"`` trains the whole model per client through
     :func:`fedlib.train.train_clients`; the add-on's ``engine_hook`` (SMoFi's
     :class:`~fedlib.split.smofi.SMoFiHook`) then fuses only the *server-part* optimizer buffers
     after every lock-step. ``path="split"`` runs the explicit split path
     (:mod:`fedlib.split.splitpath`: client parts and surrogates exchanging smashed data and its
     gradient); the tests show both give the same models.
   * **SFLV2** — one server part trained *sequentially* over the selected clients' smashed data
     in a seeded order ``(seed, "sflv2-order", n)``; always the explicit split path. Its one
     server optimizer carries its momentum from one client to the next (``sflv2_momentum="carry"``,
     the default) or starts fresh for every client (``"reset"``) [D, issue 31].

3. Aggregation: data-size-weighted average of the client states (both parts; BN statistics too;
   SFLV2: client parts averaged, the server part is the sequentially trained one), then the
   add-on's server update ``addon.update`` (FedAvgM / SlowMo; identity otherwise); then
   ``method.after_aggregation`` (FedNAG averages the momentum buffers with the same weights) and
   ``addon.after_round`` (SMoFi keeps the last fused buffers under ``carry_momentum``).
4. Evaluation of the global model on the test set every ``eval_every`` rounds, every round of
   the last ``eval_last`` and at the last round (:func:`fedlib.core.utils.is_eval_round`).

``virtual_time`` counts lock-steps: SFLV1 adds the round's longest |T_j| (clients and surrogates
run in parallel), SFLV2 adds Σ|T_j| (the server serves clients one after the other).

Everything random derives from ``seed`` (selection, SFLV2 order, the engine's per-client streams;
through :func:`fedlib.split.algorithms.build_trainer` also the model initialisation and
:func:`prepare_data`'s subsamples), so :meth:`SplitTrainer.state_dict` needs no RNG state: the
round counter, the global model and the methods' state resume a run bit-identically.

Threads [D, issue 18]: on a CPU device every round's math (training, aggregation, evaluation) runs
on ONE intra-op thread (:func:`one_math_thread`), whatever ``FEDLIB_THREADS`` / torch's setting
says, so a result does not depend on the thread count (the runner's promise; the config hash
does not hold it). Measured culprits with two threads: MKL's sgemm splits the reduction
dimension across threads for small output dimensions (the 128→10 head's weight gradient,
[10, B] @ [B, 128], differs from the 8th digit), ``Tensor.sum()``/``mean()`` of large tensors
(FedProx's ‖W − W^n‖², 524k entries in ``cnn``'s fc1) and ``torch.dot``. One thread is the
rule fedlib runs under anyway (``default_threads`` = 1: on the 2-core machines the second core
serves a second process), so 1-thread results are unchanged. (``MKL_CBWR=AUTO,STRICT`` in the
environment before torch's first BLAS call also makes the BLAS part thread-independent, but it
changes some 1-thread results, e.g. [64, 2048] @ [2048, 10], and leaves ATen's reductions.)
"""

from __future__ import annotations

import dataclasses
import math
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor

from fedlib.core.errors import check, check_choice
from fedlib.core.state import State
from fedlib.core.utils import generator, is_eval_round, resolve_device
from fedlib.split.addons import ServerAddon
from fedlib.split.bases import BaseMethod
from fedlib.split.methods import option_values

__all__ = ["SplitTrainer", "check_setup", "prepare_data", "one_math_thread", "PATHS", "FRAMEWORKS",
           "SFLV2_MOMENTUM", "STATE_KEYS"]

PATHS = ("auto", "engine", "split")
FRAMEWORKS = ("sflv1", "sflv2")
# SFLV2's server optimizer state from one client to the next within a round [D, issue 31]: "carry"
# (one optimizer for the whole round, fedlib's behaviour since SFLV2 exists) or "reset" (a fresh
# optimizer, momentum zero, for every client); the spec leaves it open
SFLV2_MOMENTUM = ("carry", "reset")
STATE_KEYS = ("addon", "carry", "nag")  # the methods' entries in SplitTrainer.state_dict()


# ------------------------------------------------------------------------------------------- data
def selected_clients(seed: int, n: int, clients: int, per_round: int) -> list[int]:
    """The clients of round ``n`` (0-based): ``per_round`` of ``clients``, uniform without replacement, seeded by
    ``(seed, "split-select", n)``, sorted."""
    g = generator(seed, "split-select", int(n))
    perm = torch.randperm(int(clients), generator=g)
    return sorted(perm[:per_round].tolist())


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


@contextmanager
def one_math_thread(device):
    """Run the block on one torch intra-op thread when ``device`` is a CPU (module docstring,
    "Threads" [D, issue 18]); the previous thread count is restored afterwards. No-op on an
    accelerator (the CPU threads only feed it there)."""
    before = torch.get_num_threads()
    pin = torch.device(device).type == "cpu" and before != 1
    if pin:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if pin:
            torch.set_num_threads(before)


# ------------------------------------------------------------------------------------------- trainer
def check_setup(framework: str, method: BaseMethod, addon: ServerAddon, local, path: str) -> str:
    """Validate a framework × base method × add-on × local settings × path combination (the
    base method's round-0 changes to ``local`` included: FedNAG needs momentum); returns the
    path to run (``"auto"``: the engine for SFLV1, the explicit split path for SFLV2)."""
    from fedlib.train import LocalConfig

    check_choice("split path", path, PATHS)
    check_choice("split.framework", framework, FRAMEWORKS)
    addon.check_framework(framework)
    method.check_framework(framework)
    check(isinstance(local, LocalConfig),
          f"local must be a fedlib.train.LocalConfig, got {type(local).__name__}")
    local.validate()
    method.local_config(local, 0).validate()
    if path == "auto":
        return "split" if framework == "sflv2" else "engine"
    check(path == "split" or framework == "sflv1", "SFLV2 trains one server part sequentially: "
          "it runs on the explicit split path", "use path='split' (or 'auto')")
    return path


class SplitTrainer:
    """SFLV1/SFLV2 × base method × add-on (see the module docstring).

    Everything is validated before any training: the combination and the local settings
    (:func:`check_setup`: SMoFi and FedNAG need SFLV1's surrogates, FedNAG needs momentum),
    ``per_round <= len(parts)``, the cut point. ``fedlib.split.algorithms.build_trainer``
    builds one from a run config.

    Parameters
    ----------
    model : the whole (unsplit) model, initialised; the trainer trains copies of it.
    cut : the stage after which ``model`` is cut into client and server parts (None: its
        ``default_cut``).
    dataset, parts : the run's dataset and one index tensor per client into its train split.
    method, addon : the base-method object (:mod:`fedlib.split.bases`) and the add-on object
        (:mod:`fedlib.split.addons`; ``ServerAddon()`` for none).
    local : the run's :class:`fedlib.train.LocalConfig` (before the base method's changes).
    rounds, per_round, seed, eval_every : rounds in the run, clients selected per round, the seed
        everything random derives from, evaluation period.
    eval_last : also evaluate every round of the last ``eval_last`` (0: ``eval_every`` alone).
    device, backend : where and with which engine backend clients train.
    framework : ``"sflv1"`` or ``"sflv2"``. path : ``"auto"``, ``"engine"`` or ``"split"``.
    sflv2_momentum : SFLV2's server optimizer across the round's clients, ``"carry"`` or
        ``"reset"`` (:data:`SFLV2_MOMENTUM`).
    model_name : the model's name for :meth:`summary`.
    """

    def __init__(self, model, cut: str | None, dataset, parts, *, method: BaseMethod,
                 addon: ServerAddon, local, rounds: int, per_round: int, seed: int = 0,
                 device="cpu", backend: str = "auto", framework: str = "sflv1",
                 path: str = "auto", eval_every: int = 1, model_name: str | None = None,
                 sflv2_momentum: str = "carry", eval_last: int = 0):
        from fedlib.models import split_model

        check_choice("sflv2_momentum", sflv2_momentum, SFLV2_MOMENTUM)
        check(sflv2_momentum == "carry" or framework == "sflv2",
              f"sflv2_momentum={sflv2_momentum!r} sets SFLV2's server optimizer; this trainer runs {framework}")
        self.sflv2_momentum = sflv2_momentum
        self.framework = framework
        self.method, self.addon = method, addon
        self.path = check_setup(framework, method, addon, local, path)
        n, k = len(parts), int(per_round)
        check(k <= n, f"split.per_round={k} selected clients exceeds split.clients={n}",
              "lower split.per_round or raise split.clients")
        check(k >= 1, f"split.per_round must be >= 1, got {k}")
        check(int(rounds) >= 1, f"rounds must be >= 1, got {rounds}")
        check(int(eval_every) >= 1, f"eval_every must be >= 1, got {eval_every}")
        check(int(eval_last) >= 0, f"eval_last must be >= 0, got {eval_last}")
        self.local = local
        self.per_round, self.seed, self.eval_every, self.eval_last = k, int(seed), int(eval_every), int(eval_last)
        self.device = resolve_device(device)
        from fedlib.train.common import check_precision

        check_precision(local.precision, self.device)  # bf16 on a device without it: clear error
        self.backend = backend

        self.dataset, self.parts = dataset, list(parts)
        self.sizes = torch.tensor([len(p) for p in self.parts], dtype=torch.long)
        self.model = model.to(self.device)
        self.model_name = model_name or type(model).__name__
        self.cut = cut if cut is not None else self.model.default_cut
        client, server = split_model(self.model, self.cut, copy=True)  # FedlibError for a bad cut
        self.client_part, self.server_part = client, server
        self.server_names = [n_ for n_, p in server.named_parameters() if p.requires_grad]
        self.client_names = [n_ for n_, p in client.named_parameters() if p.requires_grad]
        check(len(self.server_names) > 0, f"the server part after cut {cut!r} has no parameters",
              "cut the model earlier")
        self.trainable = self.client_names + self.server_names
        self.global_state: State = {k_: v.detach().clone() for k_, v in self.model.state_dict().items()}
        addon.prepare(self.server_names, local)

        self.total_rounds = int(rounds)
        self.round = 0
        self.virtual_time = 0.0
        self._rows: list[dict] = []
        self._best = (-math.inf, 0)

    # ---------------------------------------------------------------------------------- helpers
    def selected(self, n: int) -> list[int]:
        """The clients of round ``n`` (0-based): :func:`selected_clients`."""
        return selected_clients(self.seed, n, len(self.parts), self.per_round)

    def sflv2_order(self, n: int, k: int) -> list[int]:
        """The order (positions in the selected list) SFLV2's server serves round ``n``'s clients."""
        return torch.randperm(k, generator=generator(self.seed, "sflv2-order", int(n))).tolist()

    def initial_opt_state(self) -> dict | None:
        """The optimizer state the round's clients start from (FedNAG's averaged momentum,
        SMoFi's carried fused momentum), or None for fresh optimizers."""
        return self.method.initial_opt_state() or self.addon.initial_opt_state()

    def _train_sflv1(self, tasks, n) -> list[Any]:
        from fedlib.split.splitpath import ClientBatches, train_split_clients
        from fedlib.train import train_clients

        if self.path == "engine":
            return train_clients(self.model, self.global_state, self.dataset, tasks,
                                 seed=self.seed, round=int(n), backend=self.backend,
                                 hook=self.addon.engine_hook, device=self.device)
        batches = [ClientBatches(t, self.dataset, self.seed, int(n), self.device) for t in tasks]
        init = [t.init_opt_state for t in tasks]
        return train_split_clients(self.client_part, self.server_part, self.global_state, batches,
                                   tasks[0].config, hook=self.addon.engine_hook,
                                   init_opt=None if init[0] is None else init)

    def _train_sflv2(self, tasks, n):
        from fedlib.split.splitpath import ClientBatches, train_sflv2_round

        batches = [ClientBatches(t, self.dataset, self.seed, int(n), self.device) for t in tasks]
        order = self.sflv2_order(n, len(tasks))
        results, server_state = train_sflv2_round(self.client_part, self.server_part,
                                                  self.global_state, batches, order,
                                                  tasks[0].config, server_momentum=self.sflv2_momentum)
        return results, server_state, order

    # ---------------------------------------------------------------------------------- protocol
    def run_round(self) -> dict:
        """One round (module docstring, steps 1–4); its math on one CPU thread
        (:func:`one_math_thread`), so the row does not depend on the thread count."""
        with one_math_thread(self.device):
            return self._run_round()

    def _run_round(self) -> dict:
        from fedlib.core.state import weighted_model_average
        from fedlib.train import ClientTask, evaluate

        n = self.round
        sel = self.selected(n)
        local = self.method.local_config(self.local, n)
        init = self.initial_opt_state()
        tasks = [ClientTask(c, self.parts[c], local, init_opt_state=init) for c in sel]
        weights = self.sizes[sel].to(torch.float64)
        check(float(weights.sum()) > 0, f"round {n + 1}: the selected clients hold no samples")
        self.addon.start_round(len(tasks), weights)
        order = None
        if self.framework == "sflv1":
            results = self._train_sflv1(tasks, n)
            averaged = weighted_model_average([r.state for r in results], weights)
        else:
            results, server_state, order = self._train_sflv2(tasks, n)
            averaged = weighted_model_average([r.state for r in results], weights)
            for k_ in server_state:
                averaged[k_] = server_state[k_].to(averaged[k_].dtype)
        steps = [int(r.steps) for r in results]
        new_state = self.addon.update(self.global_state, averaged, self.trainable, float(local.lr))
        self.global_state = {k_: v.detach().clone() for k_, v in new_state.items()}
        self.method.after_aggregation(results, weights, self.global_state, self.trainable)
        self.addon.after_round()
        self.virtual_time += float(max(steps) if self.framework == "sflv1" else sum(steps))
        self.round = n + 1

        acc = loss = math.nan
        if is_eval_round(self.round, self.total_rounds, self.eval_every, self.eval_last):
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

    def client_rows(self) -> list[dict]:
        return list(self._rows)

    def state_dict(self) -> dict:
        """Round counter, virtual time, global model, best round, and the base method's and the
        add-on's state under their ``state_key`` (``"addon"``: FedAvgM/SlowMo, ``"carry"``:
        SMoFi, ``"nag"``: FedNAG; the others stay ``{}``)."""
        state = {"round": self.round, "virtual_time": self.virtual_time,
                 "global": {k: v.clone() for k, v in self.global_state.items()},
                 **{key: {} for key in STATE_KEYS},
                 "best": [float(self._best[0]) if math.isfinite(self._best[0]) else -1.0,
                          int(self._best[1])]}
        for part in (self.addon, self.method):
            if part.state_key is not None:
                state[part.state_key] = part.state_dict()
        return state

    def load_state_dict(self, state: dict) -> None:
        self.round = int(state["round"])
        self.virtual_time = float(state["virtual_time"])
        self.global_state = {k: v.clone().to(self.device) for k, v in state["global"].items()}
        for part in (self.addon, self.method):
            if part.state_key is not None:
                part.load_state_dict(state.get(part.state_key, {}))
        b = state.get("best", [-1.0, 0])
        self._best = (float(b[0]) if int(b[1]) > 0 else -math.inf, int(b[1]))
        self._rows = []

    def summary(self) -> dict:
        from fedlib.models import count_parameters

        out = {"framework": self.framework, "base_method": self.method.name,
               # only where set: a default run's summary stays what it was before the option existed
               **({"sflv2_momentum": self.sflv2_momentum} if self.sflv2_momentum != "carry" else {}),
               "addon": self.addon.name, "split_path": self.path, "cut": self.cut,
               "model": self.model_name,
               "client_part_params": count_parameters(self.client_part),
               "server_part_params": count_parameters(self.server_part),
               "clients": len(self.parts), "per_round": self.per_round,
               "best_round": int(self._best[1])}
        for k, v in {**option_values(self.method.options),
                     **option_values(self.addon.options)}.items():
            out[f"option_{k}"] = v
        return out
