"""fedlib vs Flower: the same synchronous FedAvg workload in Flower's simulation and in fedlib.

    FEDLIB_DATA=../shared/data OMP_NUM_THREADS=1 \\
        python benchmarks/bench_flower.py --workload adult|cifar10 [--rounds R] [--side both|flower|fedlib]
                                          [--cpus 2] [--json]

Needs the optional extra ``peers`` (``pip install -e '.[peers]'``: ``flwr[simulation]`` 1.42) for
the Flower side; the fedlib side and the configuration helpers need only fedlib. flwr is
imported only inside :func:`run_flower`, so ``tests/test_bench_flower_config.py`` (which checks
that both sides are configured alike) runs without it.

Workloads (issue 10, part 5):

* ``adult``   — preset ``fedavg-adult-gender`` (UCI Adult split by sex, FCN), 400 rounds;
* ``cifar10`` — preset ``fedavg-cifar10`` with ``model.name=cnn3`` (the small CNN), 10 rounds.

Both sides: N = 100 clients, K = 10 sampled uniformly per round, all training from the current
global model (fedlib ``safl.mode=sync``; Flower ``FedAvg(fraction_fit=0.1)``), E = 2 local
epochs, batch 50 with drop_last, SGD with the preset's lr/momentum, gradient-norm clipping 20,
cross-entropy, FedAvg weighted by client sample counts (Flower's ``FedAvg`` rule; fedlib
``options.weighting=samples``), the same initial model, evaluation of the global model on the
full test set after every round (Flower: a server-side ``evaluate_fn``, ``fraction_evaluate=0``).
Data and partition come from fedlib (:func:`fedlib.safl.algorithms.prepare_task`, the function the
simulator's trainer factory uses): same normalised tensors, same per-client training indices
(after fedlib's 20 % per-client validation holdout, which neither side trains on).

Flower side, written as a Flower user would: a ``NumPyClient`` with a plain PyTorch loop
(``DataLoader(shuffle=True, drop_last=True)``, ``torch.optim.SGD``, ``clip_grad_norm_``), CIFAR
augmentation with torchvision transforms (RandomCrop(32, padding=4) + RandomHorizontalFlip, per
sample), a ``ServerApp`` with ``flwr.server.strategy.FedAvg`` and a ``ClientApp``, started with
``flwr.simulation.run_simulation`` (Ray backend, 1 CPU per client actor, ``--cpus`` CPUs for Ray).
flwr 1.42 also still ships the older ``flwr.simulation.start_simulation`` (deprecated since 1.13);
both print a deprecation notice pointing at ``flwr run``.

Printed: wall seconds of each side (``wall``: the whole call, Flower's Ray start-up and fedlib's
data loading included; ``rounds``: from the first to the last round only), the ratio
Flower / fedlib, the final accuracy (last round) and the mean of the last 10 rounds.
Never asserted anywhere: a benchmark reports, tests check behaviour.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent))
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from fedlib.experiments.config import RunConfig  # noqa: E402

WORKLOADS = {
    "adult": {"preset": "fedavg-adult-gender", "rounds": 400, "set": []},
    "cifar10": {"preset": "fedavg-cifar10", "rounds": 10, "set": ["model.name=cnn3"]},
}
LAST = 10  # "last-10 mean"


# ---------------------------------------------------------------------------- configuration
def fedlib_config(name: str, rounds: int | None = None) -> RunConfig:
    """The fedlib RunConfig of workload ``name``: its preset in synchronous mode, sample-weighted
    FedAvg (Flower's rule), evaluation every round, on the CPU."""
    w = WORKLOADS[name]
    r = int(rounds or w["rounds"])
    return RunConfig.from_preset(w["preset"], list(w["set"]) + [
        "safl.mode=sync", f"rounds={r}", "eval_every=1", "options.weighting=samples",
        "device=cpu", "checkpoint_every=0"])


def flower_settings(cfg: RunConfig) -> dict:
    """What the Flower side is started with, derived from the fedlib config (all plain values)."""
    n, k = int(cfg.safl.clients), int(cfg.safl.k)
    lc = cfg.local
    return {
        "num_supernodes": n,
        "strategy": {"name": "FedAvg", "fraction_fit": k / n, "min_fit_clients": k,
                     "fraction_evaluate": 0.0, "min_evaluate_clients": 0, "min_available_clients": n},
        "num_rounds": int(cfg.rounds),
        "client": {"epochs": int(lc.epochs), "batch_size": int(lc.batch_size), "lr": float(lc.lr),
                   "momentum": float(lc.momentum), "clip_norm": lc.clip_norm, "drop_last": bool(lc.drop_last),
                   "augment": bool(lc.augment)},
        "client_resources": {"num_cpus": 1, "num_gpus": 0.0},
        "model": cfg.model.name,
    }


def flower_clients_per_round(fs: dict) -> int:
    """How many clients Flower's FedAvg samples per round (``FedAvg.num_fit_clients``: at least
    ``min_fit_clients``, else ``int(available * fraction_fit)``), all ``num_supernodes`` online."""
    s = fs["strategy"]
    return max(int(fs["num_supernodes"] * s["fraction_fit"]), int(s["min_fit_clients"]))


def workload_config(name: str, rounds: int | None = None) -> dict:
    """Both sides of workload ``name`` in the same terms (the unit test compares them)."""
    cfg = fedlib_config(name, rounds)
    fs = flower_settings(cfg)
    lc = cfg.local
    return {
        "workload": name,
        "fedlib": {"clients": int(cfg.safl.clients), "per_round": int(cfg.safl.k), "epochs": int(lc.epochs),
                   "batch": int(lc.batch_size), "lr": float(lc.lr), "momentum": float(lc.momentum),
                   "clip_norm": lc.clip_norm, "drop_last": bool(lc.drop_last), "rounds": int(cfg.rounds),
                   "partition_seed": int(cfg.seed), "model": cfg.model.name, "mode": cfg.safl.mode,
                   "weighting": (cfg.options or {}).get("weighting"), "eval_every": int(cfg.eval_every)},
        "flower": {"clients": fs["num_supernodes"], "per_round": flower_clients_per_round(fs),
                   "epochs": fs["client"]["epochs"], "batch": fs["client"]["batch_size"],
                   "lr": fs["client"]["lr"], "momentum": fs["client"]["momentum"],
                   "clip_norm": fs["client"]["clip_norm"], "drop_last": fs["client"]["drop_last"],
                   "rounds": fs["num_rounds"], "partition_seed": int(cfg.seed), "model": fs["model"],
                   "mode": "sync", "weighting": "samples", "eval_every": 1},
    }


# ---------------------------------------------------------------------------- shared data
@functools.lru_cache(maxsize=2)
def task(name: str):
    """(dataset, train_parts, model) of workload ``name`` built by fedlib — once per process
    (each Ray actor builds its own copy; the dataset files are read from ``$FEDLIB_DATA``)."""
    from fedlib.safl.algorithms import prepare_task  # noqa: PLC0415

    ds, parts, _val, test, model = prepare_task(fedlib_config(name))
    assert test is None, "both sides evaluate on the full test set"
    return ds, parts, model


def client_indices(name: str, cid: int) -> torch.Tensor:
    """The training indices of client ``cid`` (what Flower's client ``cid`` trains on)."""
    return task(name)[1][int(cid)]


def new_model(name: str) -> torch.nn.Module:
    """A fresh instance of the workload's architecture (fedlib's initial weights)."""
    import copy  # noqa: PLC0415

    return copy.deepcopy(task(name)[2])


def test_tensors(name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The normalised test set (inputs, labels) — what the server evaluates on."""
    ds = task(name)[0]
    return ds.batch(torch.arange(ds.num_test), train=False, augment=False)


class ClientData(torch.utils.data.Dataset):
    """A client's training samples as a plain PyTorch Dataset: tabular rows (already normalised
    by fedlib), or uint8 images through torchvision transforms (crop + flip + normalise 0.5)."""

    def __init__(self, name: str, cid: int, augment: bool = True):
        ds = task(name)[0]
        idx = client_indices(name, cid)
        self.x, self.y = ds.train_x[idx], ds.train_y[idx]
        self.transform = None
        if ds.kind == "image":
            from torchvision.transforms import v2  # noqa: PLC0415

            steps = [v2.RandomCrop(32, padding=ds.crop_padding), v2.RandomHorizontalFlip()] if augment else []
            assert ds.normalize == "half"
            self.transform = v2.Compose(steps + [v2.ToDtype(torch.float32, scale=True),
                                                 v2.Normalize([0.5] * 3, [0.5] * 3)])

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        x = self.x[i]
        return (self.transform(x) if self.transform is not None else x), self.y[i]


def evaluate(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of ``model`` on (x, y) — plain PyTorch."""
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(y), 1024):
            out = model(x[i:i + 1024])
            loss += float(torch.nn.functional.cross_entropy(out, y[i:i + 1024], reduction="sum"))
            correct += int((out.argmax(1) == y[i:i + 1024]).sum())
    return loss / len(y), correct / len(y)


def get_weights(model: torch.nn.Module) -> list[np.ndarray]:
    return [v.detach().cpu().numpy() for v in model.state_dict().values()]


def set_weights(model: torch.nn.Module, weights: list[np.ndarray]) -> None:
    keys = list(model.state_dict().keys())
    model.load_state_dict({k: torch.from_numpy(np.asarray(w)) for k, w in zip(keys, weights)}, strict=True)


def train_local(model: torch.nn.Module, data, c: dict) -> float:
    """E epochs of plain SGD over a shuffled DataLoader; mean training loss."""
    loader = torch.utils.data.DataLoader(data, batch_size=c["batch_size"], shuffle=True, drop_last=c["drop_last"])
    opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=c["momentum"])
    model.train()
    total, steps = 0.0, 0
    for _ in range(c["epochs"]):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if c["clip_norm"]:
                torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_norm"])
            opt.step()
            total, steps = total + loss.item(), steps + 1
    return total / max(steps, 1)


# ---------------------------------------------------------------------------- Flower side
def make_client(name: str, cid: int):
    """The Flower client of partition ``cid`` (a NumPyClient, converted to a Client)."""
    from flwr.client import NumPyClient  # noqa: PLC0415

    torch.set_num_threads(1)
    c = flower_settings(fedlib_config(name))["client"]

    class TorchClient(NumPyClient):
        def __init__(self):
            self.model = new_model(name)
            self.data = ClientData(name, cid, augment=c["augment"])

        def get_parameters(self, config):
            return get_weights(self.model)

        def fit(self, parameters, config):
            set_weights(self.model, parameters)
            loss = train_local(self.model, self.data, c)
            return get_weights(self.model), len(self.data), {"train_loss": loss}

    return TorchClient().to_client()


def run_flower(name: str, rounds: int, cpus: int = 2, verbose: bool = False) -> dict:
    """Run workload ``name`` for ``rounds`` rounds in Flower's simulation; accuracies and times."""
    from flwr.client import ClientApp  # noqa: PLC0415
    from flwr.common import Context, ndarrays_to_parameters  # noqa: PLC0415
    from flwr.server import ServerApp, ServerAppComponents, ServerConfig  # noqa: PLC0415
    from flwr.server.strategy import FedAvg  # noqa: PLC0415
    from flwr.simulation import run_simulation  # noqa: PLC0415

    fs = flower_settings(fedlib_config(name, rounds))
    xt, yt = test_tensors(name)
    server_model = new_model(name)
    log: list[dict] = []
    t_start = time.perf_counter()

    def evaluate_fn(server_round, parameters, config):
        set_weights(server_model, parameters)
        loss, acc = evaluate(server_model, xt, yt)
        log.append({"round": int(server_round), "accuracy": acc, "loss": loss, "t": time.perf_counter()})
        return loss, {"accuracy": acc}

    def server_fn(context: Context):
        s = fs["strategy"]
        strategy = FedAvg(fraction_fit=s["fraction_fit"], fraction_evaluate=s["fraction_evaluate"],
                          min_fit_clients=s["min_fit_clients"], min_evaluate_clients=s["min_evaluate_clients"],
                          min_available_clients=s["min_available_clients"], evaluate_fn=evaluate_fn,
                          initial_parameters=ndarrays_to_parameters(get_weights(new_model(name))))
        return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=fs["num_rounds"]))

    def client_fn(context: Context):
        return make_client(name, int(context.node_config["partition-id"]))

    run_simulation(server_app=ServerApp(server_fn=server_fn), client_app=ClientApp(client_fn=client_fn),
                   num_supernodes=fs["num_supernodes"],
                   backend_config={"client_resources": fs["client_resources"],
                                   "init_args": {"num_cpus": int(cpus), "num_gpus": 0,
                                                 "object_store_memory": 200 * 2**20}},
                   verbose_logging=verbose)
    wall = time.perf_counter() - t_start
    rows = [r for r in log if r["round"] >= 1]
    t0 = next(r["t"] for r in log if r["round"] == 0)
    out = _summary("flower", [r["accuracy"] for r in rows], wall, rows[-1]["t"] - t0 if rows else float("nan"))
    out["round_end_s"] = [r["t"] - t0 for r in rows]
    return out


# ---------------------------------------------------------------------------- fedlib side
def run_fedlib(name: str, rounds: int) -> dict:
    from fedlib.experiments.running.runner import run  # noqa: PLC0415

    cfg = fedlib_config(name, rounds)
    with tempfile.TemporaryDirectory() as store:
        t0 = time.perf_counter()
        res = run(cfg, store=store, progress=False, resume=False, threads=1)
        wall = time.perf_counter() - t0
    acc = res.history["accuracy"].tolist()
    out = _summary("fedlib", acc, wall, float(res.summary["total_wall_time"]))
    out["round_end_s"] = res.history["wall_time"].tolist()
    return out


def _summary(side: str, acc: list[float], wall: float, rounds_s: float) -> dict:
    return {"side": side, "rounds": len(acc), "wall_s": wall, "rounds_s": rounds_s,
            "final_acc": acc[-1] if acc else float("nan"),
            "last10_mean": float(np.mean(acc[-LAST:])) if acc else float("nan"), "accuracy": acc}


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workload", choices=sorted(WORKLOADS), default="adult")
    p.add_argument("--rounds", type=int, default=None, help="default: the workload's (adult 400, cifar10 10)")
    p.add_argument("--side", choices=["both", "flower", "fedlib"], default="both")
    p.add_argument("--cpus", type=int, default=2, help="CPUs given to Ray (1 per client actor)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--verbose", action="store_true", help="Flower's DEBUG log")
    a = p.parse_args(argv)
    rounds = int(a.rounds or WORKLOADS[a.workload]["rounds"])
    # the Ray actors inherit the environment: an absolute data path, one thread each
    if os.environ.get("FEDLIB_DATA"):
        os.environ["FEDLIB_DATA"] = str(Path(os.environ["FEDLIB_DATA"]).resolve())
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # on a loaded 2-core machine Ray's dashboard agent can take > 30 s to start, after which the
    # raylet aborts ("Timed out waiting for file .../metrics_agent_port"): allow it 5 minutes
    os.environ.setdefault("RAY_agent_register_timeout_ms", "300000")
    torch.set_num_threads(1)
    import flwr  # noqa: F401,PLC0415  (fail early when the extra is missing)

    out = {"workload": a.workload, "rounds": rounds, "config": workload_config(a.workload, rounds),
           "versions": {"torch": torch.__version__, "flwr": _flwr_version()},
           "load_before": os.getloadavg()}
    results = {}
    if a.side in ("both", "flower"):
        results["flower"] = run_flower(a.workload, rounds, cpus=a.cpus, verbose=a.verbose)
        out["load_mid"] = os.getloadavg()
    if a.side in ("both", "fedlib"):
        results["fedlib"] = run_fedlib(a.workload, rounds)
    out["load_after"] = os.getloadavg()
    out["results"] = results
    if "flower" in results and "fedlib" in results:
        out["ratio_wall"] = results["flower"]["wall_s"] / results["fedlib"]["wall_s"]
        out["ratio_rounds"] = results["flower"]["rounds_s"] / results["fedlib"]["rounds_s"]
    if a.json:
        print(json.dumps(out))
        return 0
    print(f"workload={a.workload} rounds={rounds} torch={torch.__version__} flwr={out['versions']['flwr']} "
          f"load before={out['load_before']} after={out['load_after']}")
    print(f"{'side':8} {'wall s':>9} {'rounds s':>9} {'final acc':>10} {'last-10':>8}")
    for s, r in results.items():
        print(f"{s:8} {r['wall_s']:9.1f} {r['rounds_s']:9.1f} {r['final_acc']:10.4f} {r['last10_mean']:8.4f}"
              f"  (round 1 ended at {r['round_end_s'][0]:.1f} s)")
    if "ratio_wall" in out:
        print(f"flower/fedlib wall {out['ratio_wall']:.2f}x, rounds only {out['ratio_rounds']:.2f}x")
    return 0


def _flwr_version() -> str:
    from importlib.metadata import version  # noqa: PLC0415

    return version("flwr")


if __name__ == "__main__":
    # run as the importable module ``bench_flower`` so that Ray pickles the client function by
    # reference (not the whole __main__ namespace by value)
    import bench_flower  # noqa: PLC0415

    sys.exit(bench_flower.main())
