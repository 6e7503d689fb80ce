"""What one run of the SMoFi ``long`` profile costs (issue 43), measured on a few rounds and priced.

    FEDLIB_DATA=/work/shared/data nice -n 10 python benchmarks/smofi_long_cost.py \
        [--models cnn cnn3] [--methods fedavg fedavg+smofi] [--rounds 2] [--seed 0] [--json PATH]

Each (model, method) builds the ``long`` profile's run exactly as the SMoFi notebooks do
(:func:`fedlib.reporting.smofi.smofi_config`: all 50,000 CIFAR-10 training images, 20 clients, 10 per
round, Dirichlet 0.1, batch 32, E = 1, SGD lr 0.01 / momentum 0.9 / weight decay 5e-4, the model cut
after ``conv1``), builds its trainer (:func:`fedlib.experiments.running.runner.build_trainer`; nothing is
written to a result store) and times ``--rounds`` rounds with one torch thread, the four trainers
interleaved round by round, in **process CPU time** (the machine is shared: other jobs inflate wall time, not CPU time). The same seed selects
the same clients in every (model, method), so FedAvg and FedAvg + SMoFi train the same images and
their ratio is SMoFi's overhead (one server-side surrogate and optimizer per selected client, the
momentum fused after every lock-step). One evaluation of the global model on the 10,000 test
images is timed alone and subtracted from the round, so the price of a run can use any cadence.

A round's cost scales with the images the selected clients hold (Dirichlet 0.1: unequal clients), so
the measured training time is divided by the images trained and projected at the expectation,
10/20 × 50,000 = 25,000 images a round. Printed and written (``--json``): per (model, method) the
CPU seconds per round (measured, and projected at 25,000 images), per evaluation, and per 100- and
200-round run at the profile's cadence; then the plan of issue 43 priced in core-hours.
A benchmark reports; no test asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.core.utils import eval_rounds  # noqa: E402
from fedlib.reporting.smofi import SMOFI_LONG_CADENCE, smofi_config  # noqa: E402

EXPECTED_IMAGES = 25_000  # 10 of 20 clients a round, 50,000 images: the expectation over the selection
# issue 43's plan, in runs of one method at one seed (the α = −0.1 SMoFi runs and the FedAvg = SFLV1 runs are
# the main table's, so the α sweep adds 3 values × 3 seeds and SFLV2 5 seeds)
PLAN = {"main table: 8 methods × 5 seeds (FedAvg, + FedAvgM, + SlowMo, + SMoFi, FedProx ± SMoFi, FedNAR ± SMoFi)":
        ("mix", 40),
        "α sweep −0.05, −0.5, −1 × 3 seeds (−0.1 is the main table's + SMoFi)": ("fedavg+smofi", 9),
        "staleness variant drop + ÷Σ × 3 seeds": ("fedavg+smofi", 3),
        "SFLV2 × 5 seeds (SFLV1 = the main table's FedAvg)": ("fedavg", 5)}


def cpu_info() -> dict:
    info = {"machine": platform.machine(), "python": platform.python_version(), "cores": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(l.split(":", 1)[1].strip() for l in text.splitlines() if l.startswith("model name"))
        flags = next(l.split(":", 1)[1].split() for l in text.splitlines() if l.startswith("flags"))
        info["isa"] = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
    except (OSError, StopIteration):
        pass
    try:
        info["load_average"] = os.getloadavg()
    except OSError:
        pass
    import torch

    info["torch"] = torch.__version__
    return info


def build(model: str, algorithm: str, rounds: int, seed: int):
    """The long profile's run of ``algorithm`` with ``model`` (as the notebooks build it), and its trainer."""
    from fedlib.experiments.running.runner import build_trainer

    cfg = smofi_config("long", "cifar10", algorithm, seed, "partial", label="custom", model=model, cut="conv1",
                       max_test=None, rounds=rounds, eval_every=1, eval_last=0)
    t0 = time.process_time()
    tr = build_trainer(cfg)
    return tr, time.process_time() - t0


def measure(pairs, rounds: int, seed: int) -> list[dict]:
    """Time ``rounds`` rounds of every (model, algorithm) in ``pairs``, interleaved round by round (A B C D,
    A B C D, ...: a load spike of the shared machine hits all alike), then one evaluation of each."""
    import torch

    from fedlib.core.utils import set_threads
    from fedlib.train import evaluate

    set_threads(1)
    built = [build(m, a, rounds, seed) for m, a in pairs]
    per_round = [[] for _ in pairs]
    images = [[] for _ in pairs]
    for _ in range(rounds):
        for i, (tr, _) in enumerate(built):
            t0 = time.process_time()
            tr.run_round()
            per_round[i].append(time.process_time() - t0)
            images[i].append(sum(int(r["samples"]) for r in tr.client_rows()))
    out = []
    for (model, algo), (tr, setup), rt, im in zip(pairs, built, per_round, images):
        t0 = time.process_time()
        evaluate(tr.model, tr.global_state, tr.dataset, split="test", device=tr.device)
        ev = time.process_time() - t0
        per_image = (sum(rt) - len(rt) * ev) / sum(im)  # every measured round evaluated once
        out.append({"model": model, "algorithm": algo, "rounds": rounds, "seed": seed,
                    "threads": torch.get_num_threads(), "setup_cpu_s": round(setup, 2),
                    "round_cpu_s": [round(r, 2) for r in rt], "images": im, "eval_cpu_s": round(ev, 2),
                    "test_images": int(len(tr.dataset.test_y)),
                    "train_cpu_s_per_1k_images": round(1000 * per_image, 3),
                    "train_cpu_s_per_round_projected": round(per_image * EXPECTED_IMAGES, 2)})
    return out


def run_price(m: dict, T: int) -> float:
    """CPU seconds of a T-round run: T rounds of training at the expected images, the evaluated rounds of the
    profile's cadence, and the setup."""
    n_eval = len(eval_rounds(T, SMOFI_LONG_CADENCE["eval_every"], SMOFI_LONG_CADENCE["eval_last"]))
    return T * m["train_cpu_s_per_round_projected"] + n_eval * m["eval_cpu_s"] + m["setup_cpu_s"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["cnn", "cnn3"])
    ap.add_argument("--methods", nargs="+", default=["fedavg", "fedavg+smofi"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--price-only", default=None, metavar="JSON",
                    help="measure nothing: price again the runs of a JSON this script wrote (e.g. at another cadence)")
    args = ap.parse_args(argv)

    if args.price_only:
        out = json.loads(Path(args.price_only).read_text())
        out.update(cadence=SMOFI_LONG_CADENCE, price={})
        args.models = list(dict.fromkeys(m["model"] for m in out["runs"]))
    else:
        out = {"what": "SMoFi long profile, cost of one run (issue 43)", "machine": cpu_info(),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cadence": SMOFI_LONG_CADENCE,
               "expected_images_per_round": EXPECTED_IMAGES, "runs": [], "price": {}}
        out["runs"] = measure([(m, a) for m in args.models for a in args.methods], args.rounds, args.seed)
        if args.json:  # the measurement first: pricing it again needs no new measurement (--price-only)
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    for m in out["runs"]:
        print(f"{m['model']:5s} {m['algorithm']:14s} round CPU s {m['round_cpu_s']} on {m['images']} images; eval "
              f"{m['eval_cpu_s']} s; train {m['train_cpu_s_per_1k_images']} s / 1k images -> "
              f"{m['train_cpu_s_per_round_projected']} s / round at {EXPECTED_IMAGES}", flush=True)
    for model in args.models:
        by = {m["algorithm"]: m for m in out["runs"] if m["model"] == model}
        if not {"fedavg", "fedavg+smofi"} <= set(by):
            continue
        price = {"smofi_overhead": round(by["fedavg+smofi"]["train_cpu_s_per_1k_images"]
                                         / by["fedavg"]["train_cpu_s_per_1k_images"], 3)}
        for T in (50, 100, 200):
            run = {k: run_price(by[k], T) for k in ("fedavg", "fedavg+smofi")}
            run["mix"] = (run["fedavg"] + run["fedavg+smofi"]) / 2  # the main table: half its runs fuse
            price[f"T={T}"] = {"minutes_per_run": {k: round(v / 60, 1) for k, v in run.items()},
                               "plan_core_hours": {name: round(n * run[kind] / 3600, 2)
                                                   for name, (kind, n) in PLAN.items()}}
            price[f"T={T}"]["plan_core_hours"]["total"] = round(sum(price[f"T={T}"]["plan_core_hours"].values()), 2)
        # the rounds the main table (40 runs) affords in 8 core-hours
        per_round = (by["fedavg"]["train_cpu_s_per_round_projected"]
                     + by["fedavg+smofi"]["train_cpu_s_per_round_projected"]) / 2
        price["main_table_rounds_in_8_core_hours"] = int(8 * 3600 / 40 / (per_round * 1.05))  # +5%: eval, setup
        out["price"][model] = price
        print(model, json.dumps(price, indent=1, ensure_ascii=False))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
