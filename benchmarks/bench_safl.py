"""SAFL benchmark: a full UCI Adult run at the paper's scale, and where its time goes.

    python benchmarks/bench_safl.py [--algorithms fedqs-avg fedavg] [--rounds 400] [--threads 1]
                                    [--set key=value ...] [--json]

Each algorithm runs its ``<algorithm>-adult-gender`` preset (100 clients, K = 10, 400 rounds,
E = 2, B = 50, uniform 1:50 delays) through the simulator, without the result store. The
simulator times four parts of every round (``SAFLSimulator.summary()``):

* ``train``     — ``fedlib.train.train_clients`` (local training of every start group),
* ``eval``      — evaluating the global model on the full test set after every round,
* ``strategy``  — the algorithm's own hooks (start / on_upload / ready / select / aggregate),
* ``bookkeeping`` — everything else: the clock, the buffer, versions, result bookkeeping.

Printed per algorithm: wall and CPU seconds, each part's share of the wall time, the ratio
bookkeeping / total (target < 10 %) and bookkeeping / train, final and convergence accuracy
(mean of the last 20 rounds), ticks and local trainings. CPU seconds (``time.process_time``)
are what the run would take on an otherwise idle core; on a shared machine wall time is longer.
Never asserted anywhere: a benchmark reports, tests check behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.experiments.config import RunConfig  # noqa: E402
from fedlib.experiments.metrics import convergence_accuracy  # noqa: E402
from fedlib.experiments.running.runner import build_trainer  # noqa: E402


def bench(algorithm: str, rounds: int, overrides: list[str]) -> dict:
    cfg = RunConfig.from_preset(f"{algorithm}-adult-gender").with_overrides([f"rounds={rounds}", *overrides])
    t0, c0 = time.perf_counter(), time.process_time()
    sim = build_trainer(cfg)
    setup = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    history = [sim.run_round() for _ in range(rounds)]
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    s = sim.summary()
    total = s["time_total"]
    parts = {"train": s["time_train"], "eval": s["time_eval"], "strategy": s["time_strategy"],
             "bookkeeping": s["time_bookkeeping"]}
    return {
        "algorithm": algorithm, "rounds": rounds, "config_hash": cfg.short_hash,
        "setup_s": round(setup, 2), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "setup_cpu_s": round(c1 - c0, 2),
        "parts_s": {k: round(v, 3) for k, v in parts.items()},
        "shares": {k: round(v / total, 4) for k, v in parts.items()},
        "bookkeeping_over_total": round(parts["bookkeeping"] / total, 4),
        "bookkeeping_over_train": round(parts["bookkeeping"] / parts["train"], 4),
        "final_accuracy": round(history[-1]["accuracy"], 4),
        "convergence_accuracy": round(convergence_accuracy(history), 4),
        "ticks": s["ticks"], "local_trainings": s["local_trainings"],
        "staleness_mean": round(s["staleness_mean_all"], 3),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithms", nargs="+", default=["fedqs-avg", "fedavg"])
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    env = {"torch": torch.__version__, "threads": torch.get_num_threads(), "cpu": platform.processor() or
           platform.machine(), "cores": os.cpu_count(), "load_avg_1min": round(os.getloadavg()[0], 2)}
    results = [bench(a, args.rounds, args.overrides) for a in args.algorithms]
    env["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps({"env": env, "results": results}, indent=2))
        return 0
    print(f"SAFL Adult benchmark — torch {env['torch']}, {env['threads']} thread(s), {env['cores']} cores, "
          f"load {env['load_avg_1min']} -> {env['load_avg_1min_after']}")
    for r in results:
        sh = r["shares"]
        print(f"\n{r['algorithm']}: {r['rounds']} rounds in {r['wall_s']} s wall / {r['cpu_s']} s CPU "
              f"(+ setup {r['setup_s']} s); {r['ticks']} ticks, {r['local_trainings']} local trainings")
        print(f"  accuracy final {r['final_accuracy']:.4f}, convergence (last 20) {r['convergence_accuracy']:.4f}")
        print("  time: " + ", ".join(f"{k} {r['parts_s'][k]:.2f} s ({sh[k]:.1%})" for k in sh))
        print(f"  bookkeeping / total = {r['bookkeeping_over_total']:.2%} (target < 10%), "
              f"bookkeeping / train = {r['bookkeeping_over_train']:.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
