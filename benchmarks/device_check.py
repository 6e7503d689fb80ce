"""The GPU checks of ``benchmarks/device_check.sh`` (issue 10), one section per check.

Run on a CUDA machine from the repository root (``FEDLIB_DATA`` pointing at the datasets):

    python benchmarks/device_check.py stacked-equals-loop
    python benchmarks/device_check.py fedqs-resnet18 --rounds 20
    python benchmarks/device_check.py resume

Each section prints one JSON line (``{"check": ..., "ok": ..., ...}``) and exits non-zero when
its check fails, so the shell script can report every check and go on.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

import torch


def _print(d: dict) -> int:
    print(json.dumps(d), flush=True)
    return 0 if d.get("ok", True) else 1


def _name(dev: torch.device) -> str:
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


def stacked_equals_loop(dev: torch.device) -> int:
    """Stacked == loop on CUDA for resnet18 (BatchNorm): 5 clients, 3 steps, float64, CPU tolerances."""
    from fedlib.data.base import FedDataset
    from fedlib.models import build_model
    from fedlib.train import ClientTask, LocalConfig, train_clients

    torch.backends.cudnn.deterministic = True
    g = torch.Generator().manual_seed(0)
    n = 5 * 3 * 4
    x = torch.randint(0, 256, (n, 3, 16, 16), dtype=torch.uint8, generator=g)
    y = torch.randint(0, 10, (n,), generator=g)
    ds = FedDataset("check", "image", x, y, x[:8].clone(), y[:8].clone(), 10).to(dev)
    model = build_model("resnet18", 10, seed=0).to(torch.float64)
    tasks = [ClientTask(c, torch.arange(c * 12, (c + 1) * 12),
                        LocalConfig(lr=0.05, momentum=0.9, nesterov=c % 2 == 1, batch_size=4, steps=3, clip_norm=0.5))
             for c in range(5)]
    loop = train_clients(model, None, ds, tasks, seed=1, backend="loop", device=dev)
    stacked = train_clients(model, None, ds, tasks, seed=1, backend="stacked", device=dev)
    worst, ok = 0.0, True
    for a, b in zip(loop, stacked):
        for k in a.state:
            if a.state[k].is_floating_point():
                diff = float((a.state[k] - b.state[k]).abs().max())
                worst = max(worst, diff)
                ok &= torch.allclose(a.state[k], b.state[k], rtol=1e-9, atol=1e-11)
            else:
                ok &= torch.equal(a.state[k], b.state[k])
    return _print({"check": "stacked-equals-loop", "model": "resnet18", "clients": 5, "steps": 3, "dtype": "float64",
                   "tolerance": "rtol 1e-9, atol 1e-11 (as tests/test_engine.py on CPU)", "max_abs_diff": worst,
                   "ok": bool(ok), "device": _name(dev)})


def fedqs_resnet18(rounds: int, dev: torch.device, model: str = "resnet18") -> int:
    """One FedQS-Avg CIFAR-10 ResNet-18 run at the paper's settings for ``rounds`` rounds, with the
    projected time of the paper's 400 rounds (4,103 local trainings, evaluation every round)."""
    from fedlib.experiments import ResultStore, RunConfig, run

    cfg = RunConfig.from_preset("fedqs-avg-cifar10").with_overrides(
        [f"rounds={rounds}", "profile=custom", f"device={dev.type}", f"model.name={model}"])
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = run(cfg, store=ResultStore(tmp), progress=False, threads=0)
        wall = time.perf_counter() - t0
    s = res.summary
    trainings = float(res.history["local_trainings"].iloc[-1])
    per_training = s["time_train"] / trainings
    per_eval = s["time_eval"] / rounds
    projected = 4103 * per_training + 400 * per_eval
    return _print({"check": "fedqs-resnet18", "rounds": rounds, "wall_s": round(wall, 1),
                   "time_train_s": round(s["time_train"], 1), "time_eval_s": round(s["time_eval"], 1),
                   "local_trainings": trainings, "s_per_training": round(per_training, 3),
                   "s_per_eval": round(per_eval, 3), "projected_400_rounds_min": round(projected / 60, 1),
                   "model": model, "final_accuracy": s.get("final_accuracy"), "device": _name(dev), "ok": True})


def resume(dev: torch.device) -> int:
    """CUDA RNG state survives a checkpoint, and a crashed CUDA run resumes to the same history."""
    from fedlib.experiments import ResultStore, RunConfig, run
    from fedlib.experiments.running.runner import build_trainer, rng_state, set_rng_state

    if dev.type == "cuda":
        torch.cuda.init()
    state = rng_state()
    a = torch.rand(4, device=dev)
    torch.rand(100, device=dev)
    set_rng_state(state)
    b = torch.rand(4, device=dev)
    rng_ok = torch.equal(a, b) and ("cuda" in state or dev.type != "cuda")

    cfg = RunConfig.from_preset("fedavg-cifar10").with_overrides(
        ["model.name=cnn3", "data.max_train=4000", "data.max_test=1000", "rounds=6", "checkpoint_every=2",
         "profile=custom", f"device={dev.type}"])

    def crash_at(at):
        def factory(c, options):
            tr = build_trainer(c)
            orig = tr.run_round

            def run_round():
                if tr.round + 1 == at:
                    raise RuntimeError("simulated crash")
                return orig()

            tr.run_round = run_round
            return tr
        return factory

    with tempfile.TemporaryDirectory() as tmp:
        ref = run(cfg, store=ResultStore(f"{tmp}/ref"), progress=False)
        store = ResultStore(f"{tmp}/crash")
        try:
            run(cfg, store=store, progress=False, trainer=crash_at(5))
        except RuntimeError:
            pass
        torch.rand(1000, device=dev)  # perturb the CUDA RNG between the two processes' worth of work
        res = run(cfg, store=store, progress=False)
        same = ref.history["accuracy"].equals(res.history["accuracy"]) and ref.history["loss"].equals(res.history["loss"])
    return _print({"check": "resume", "device": _name(dev), "rng_restored": bool(rng_ok), "resumed_from_round":
                   res.summary.get("resumed_from_round"), "history_identical": bool(same), "ok": bool(rng_ok and same)})


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("check", choices=["stacked-equals-loop", "fedqs-resnet18", "resume"])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--device", default="cuda", help="cuda (the check); cpu only to try the script itself")
    p.add_argument("--model", default="resnet18", help="fedqs-resnet18: the model (cnn3 to try it on a CPU)")
    a = p.parse_args(argv)
    dev = torch.device(a.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        return _print({"check": a.check, "ok": False, "error": "no CUDA device"})
    if a.check == "stacked-equals-loop":
        return stacked_equals_loop(dev)
    if a.check == "fedqs-resnet18":
        return fedqs_resnet18(a.rounds, dev, a.model)
    return resume(dev)


if __name__ == "__main__":
    sys.exit(main())
