"""The ``toy`` paradigm: a complete, tiny trainer that shows (and tests) the Trainer protocol.

Synchronous FedAvg of a logistic-regression model on synthetic, per-client shifted Gaussian data.
It runs in milliseconds per round on a CPU, so the runner, the result store, checkpoint/resume
and sweeps can be exercised without real data::

    fedlib run --preset toy-smoke --set rounds=50 --set local.lr=0.2

Read it as the template for a new paradigm or algorithm: everything random comes from
``torch.Generator`` objects derived from ``cfg.seed`` (``fedlib.core.utils.generator``), and
:meth:`ToyTrainer.state_dict` holds everything needed to resume bit-identically — model, counters
and the generator state.

Settings used: ``safl.clients`` (N), ``safl.k`` (clients per round), ``local.lr`` /
``local.epochs`` / ``local.batch_size`` (when the LocalConfig has them), ``rounds``,
``eval_every``, ``eval_last``, ``seed``, and the options below. The environment variable
``FEDLIB_TOY_SLEEP`` (seconds per round) slows it down without changing any result — used by
the kill-and-resume test.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass

import numpy as np
import torch

from fedlib.core.errors import FedlibError, check
from fedlib.core.protocols import AlgorithmSpec
from fedlib.core.utils import generator, is_eval_round
from fedlib.safl.schedule import check_k

__all__ = ["CATALOG", "ToyOptions", "ToyTrainer"]


# [D, issue 44] upper bounds of the toy's sizes, checked when its options are built (before any
# allocation): each client holds dim x samples_per_client float32 features
TOY_LIMITS = {"dim": 10_000, "samples_per_client": 1_000_000, "test_samples": 1_000_000}
TOY_MAX_FLOATS = 10_000_000      # per client, and for the test set (40 MiB)
TOY_MAX_TOTAL_FLOATS = 50_000_000  # every client together (200 MiB), checked with safl.clients
MAX_HETEROGENEITY = 100.0


@dataclass
class ToyOptions:
    dim: int = 5                    # feature dimension
    samples_per_client: int = 32
    test_samples: int = 256
    heterogeneity: float = 0.5      # scale of each client's feature shift (non-IID-ness)
    noise: float = 0.5              # label noise (logit scale)
    global_rng: bool = False        # also draw from the global torch/numpy/random RNGs
                                    # (demonstrates that the runner checkpoints those too)
    fail_at_round: int = 0          # raise at this round (0 = never): failure-handling demos

    def __post_init__(self):
        for key in ("dim", "samples_per_client", "test_samples"):
            check(getattr(self, key) >= 1, f"options.{key} must be >= 1, got {getattr(self, key)}")
            check(getattr(self, key) <= TOY_LIMITS[key], f"options.{key}={getattr(self, key)} exceeds the "
                  f"limit of {TOY_LIMITS[key]:,} (a toy run is meant to take milliseconds)",
                  f"use options.{key} <= {TOY_LIMITS[key]:,}")
        for key in ("samples_per_client", "test_samples"):
            floats = self.dim * getattr(self, key)
            check(floats <= TOY_MAX_FLOATS, f"options.dim x options.{key} = {floats:,} features exceed the "
                  f"limit of {TOY_MAX_FLOATS:,} per client (about {TOY_MAX_FLOATS * 4 // 2**20} MiB)",
                  f"lower options.dim or options.{key}")
        check(self.heterogeneity >= 0, f"options.heterogeneity must be >= 0, got {self.heterogeneity}")
        # [D, issue 44] beyond MAX_HETEROGENEITY the clients' shifted features saturate the logistic
        # model's sigmoid: every gradient rounds away and every round returns the same model
        # (heterogeneity=1000: accuracy and loss identical in every round)
        check(self.heterogeneity <= MAX_HETEROGENEITY, f"options.heterogeneity={self.heterogeneity:g} exceeds "
              f"{MAX_HETEROGENEITY:g}: the shifted features saturate the model, so no round can change it",
              f"use options.heterogeneity <= {MAX_HETEROGENEITY:g} (0.5 by default)")
        check(self.noise <= MAX_HETEROGENEITY, f"options.noise={self.noise:g} exceeds {MAX_HETEROGENEITY:g}: the "
              "labels would be pure noise", f"use options.noise <= {MAX_HETEROGENEITY:g} (0.5 by default)")
        check(self.noise >= 0, f"options.noise must be >= 0, got {self.noise}")
        check(self.fail_at_round >= 0, f"options.fail_at_round must be >= 0, got {self.fail_at_round}")


class ToyTrainer:
    """Synchronous FedAvg over ``safl.k`` of ``safl.clients`` clients per round."""

    def __init__(self, cfg, options: ToyOptions):
        self.cfg = cfg
        self.opt = options
        self.n_clients, self.k = cfg.safl.clients, cfg.safl.k
        check_k(self.k, self.n_clients)  # the SAFL rule and wording (fedlib.safl.schedule)
        total = self.n_clients * self.opt.dim * self.opt.samples_per_client
        check(total <= TOY_MAX_TOTAL_FLOATS,
              f"safl.clients x options.dim x options.samples_per_client = {total:,} features exceed the "
              f"limit of {TOY_MAX_TOTAL_FLOATS:,} (about {TOY_MAX_TOTAL_FLOATS * 4 // 2**20} MiB)",
              "lower safl.clients, options.dim or options.samples_per_client")
        self.lr = float(getattr(cfg.local, "lr", 0.1))
        self.epochs = int(getattr(cfg.local, "epochs", None) or 1)
        self.batch = int(getattr(cfg.local, "batch_size", 16))
        self.total_rounds = cfg.rounds
        d, n = self.opt.dim, self.opt.samples_per_client

        g = generator(cfg.seed, "toy", "truth")
        self.w_true = torch.randn(d, generator=g)
        self.x, self.y = [], []
        for c in range(self.n_clients):
            gc = generator(cfg.seed, "toy", "client", c)
            shift = self.opt.heterogeneity * torch.randn(d, generator=gc)
            x = torch.randn(n, d, generator=gc) + shift
            self.x.append(x)
            self.y.append(self._label(x, gc))
        gt = generator(cfg.seed, "toy", "test")
        self.x_test = torch.randn(self.opt.test_samples, d, generator=gt)
        self.y_test = self._label(self.x_test, gt)

        self.w = torch.zeros(d + 1)  # weights + bias
        self.round = 0
        self.counts = torch.zeros(self.n_clients, dtype=torch.long)
        self.gen = generator(cfg.seed, "toy", "train")  # client sampling + minibatch order
        self._last_clients: list[dict] = []

    def _label(self, x, g):
        logits = x @ self.w_true + self.opt.noise * torch.randn(len(x), generator=g)
        return (logits > 0).float()

    @staticmethod
    def _loss_grad(w, x, y):
        z = x @ w[:-1] + w[-1]
        p = torch.sigmoid(z)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
        err = (p - y) / len(y)
        return loss, torch.cat([x.T @ err, err.sum().reshape(1)])

    def run_round(self) -> dict:
        self.round += 1
        if self.opt.fail_at_round and self.round == self.opt.fail_at_round:
            raise RuntimeError(f"toy trainer: deliberate failure at round {self.round}")
        sleep = float(os.environ.get("FEDLIB_TOY_SLEEP", "0") or 0)
        if sleep > 0:
            time.sleep(sleep)
        chosen = torch.randperm(self.n_clients, generator=self.gen)[: self.k].tolist()
        models, self._last_clients = [], []
        for c in chosen:
            w = self.w.clone()
            x, y = self.x[c], self.y[c]
            for _ in range(self.epochs):
                order = torch.randperm(len(y), generator=self.gen)
                for i in range(0, len(y), self.batch):
                    idx = order[i:i + self.batch]
                    loss, grad = self._loss_grad(w, x[idx], y[idx])
                    w -= self.lr * grad
            models.append(w)
            self.counts[c] += 1
            self._last_clients.append({"round": self.round, "client": c, "samples": len(y),
                                       "loss": float(loss)})
        self.w = torch.stack(models).mean(0)
        if self.opt.global_rng:  # tiny perturbations from every global RNG (see ToyOptions)
            jitter = 1e-4 * (torch.rand(()).item() + float(np.random.rand()) + random.random())
            self.w = self.w + jitter
        row = {"round": self.round, "virtual_time": float(self.round)}
        if is_eval_round(self.round, self.total_rounds, self.cfg.eval_every, self.cfg.eval_last):
            with torch.no_grad():
                loss, _ = self._loss_grad(self.w, self.x_test, self.y_test)
                z = self.x_test @ self.w[:-1] + self.w[-1]
                acc = ((z > 0).float() == self.y_test).float().mean()
            row.update(accuracy=float(acc), loss=float(loss))
        else:
            row.update(accuracy=float("nan"), loss=float("nan"))
        return row

    def client_rows(self) -> list[dict]:
        return list(self._last_clients)

    def state_dict(self) -> dict:
        return {"w": self.w.clone(), "round": self.round, "counts": self.counts.clone(),
                "gen": self.gen.get_state(), "last_clients": list(self._last_clients)}

    def load_state_dict(self, state: dict) -> None:
        if state["w"].shape != self.w.shape:
            raise FedlibError("checkpoint does not match this toy configuration")
        self.w = state["w"].clone()
        self.round = int(state["round"])
        self.counts = state["counts"].clone()
        self.gen.set_state(state["gen"])
        self._last_clients = list(state["last_clients"])

    def summary(self) -> dict:
        return {"clients_seen": int((self.counts > 0).sum())}


CATALOG = [AlgorithmSpec("fedavg", ToyTrainer, ToyOptions,
                         "example: FedAvg of logistic regression on synthetic data (seconds)")]
