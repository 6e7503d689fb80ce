"""Skipping the trainings no aggregation reads (issue 29 item 4): the same run with and without.

    python benchmarks/bench_skip.py [--preset fedsgd-cifar10-cpu] [--rounds 20] [--threads 1]
                                    [--order off,on,on,off] [--set key=value ...] [--json]

Runs the preset several times in this process, back to back after an untimed warm-up
(``--order``, default off, on, on, off) — ``skip_unread=False`` (every
training trained) and ``skip_unread=True`` (the simulator's default) — without the result store,
and prints for each pass: wall and CPU seconds (``time.process_time``, what an idle core would take),
the engine's share (``time_train``), trainings started / trained / skipped; then the ratios
skip / no-skip of the mean times and whether all histories (every column but ``wall_time``) and global models
are identical. Also the clock-replay counts (``fedlib.safl.schedule.trainings_read``, no
training) for ``official-100`` delays, K = 10, at 50 and 400 rounds. Never asserted anywhere: a
benchmark reports, tests check behaviour (tests/test_safl_skip.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.experiments.config import RunConfig  # noqa: E402
from fedlib.safl.algorithms import build_simulator  # noqa: E402
from fedlib.safl.baselines import BASELINES  # noqa: E402
from fedlib.safl.delays import make_delays  # noqa: E402
from fedlib.safl.fedqs import STRATEGIES as FEDQS  # noqa: E402
from fedlib.safl.schedule import Clock, trainings_read  # noqa: E402
from fedlib.safl.simulator import SAFLSimulator  # noqa: E402


def replay_counts(rounds: int, delays="official-100", n: int = 100, k: int = 10) -> dict:
    """Trainings started by the last aggregation and those no aggregation reads (clock only)."""
    clock = Clock(make_delays(delays, n), k, "overwrite")
    read = trainings_read(clock, rounds)
    while clock.round < rounds:
        clock.begin_tick()
        if clock.ready():
            clock.aggregate()
        clock.end_tick()
    return {"rounds": rounds, "started": clock.n_trainings, "unread": clock.n_trainings - len(read),
            "unread_share": (clock.n_trainings - len(read)) / clock.n_trainings}


def one(cfg, skip: bool) -> tuple[dict, list[dict], dict]:
    cls = {**BASELINES, **FEDQS}[cfg.algorithm]  # what the registry's factory builds, with the switch
    sim: SAFLSimulator = build_simulator(cfg, cls(cfg.resolve(data_fingerprint=None).options), skip_unread=skip)
    t0, c0 = time.perf_counter(), time.process_time()
    rows = [sim.run_round() for _ in range(sim.total_rounds)]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    for r in rows:
        r.pop("wall_time")
    s = sim.summary()
    out = {"skip": skip, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "train_s": round(s["time_train"], 2),
           "eval_s": round(s["time_eval"], 2), "started": sim.clock.n_trainings,
           "trained": sim.clock.n_trainings - sim.trainings_skipped, "skipped": sim.trainings_skipped,
           "skipping_exact_here": sim._skip_is_exact()}
    return out, rows, sim.global_state


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="fedsgd-cifar10-cpu")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    ap.add_argument("--order", default="off,on,on,off",
                    help="passes, comma-separated: off = skip_unread=False, on = True (both orders: warm-up)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg = RunConfig.from_preset(args.preset).with_overrides([f"rounds={args.rounds}", "checkpoint_every=0", *args.set])
    # untimed warm-up (first-call costs: kernels, allocator) on a slice of the same task
    one(cfg.with_overrides(["rounds=1", "data.max_train=300", "data.max_test=100"]), False)
    runs = {False: [], True: []}
    for skip in [x == "on" for x in args.order.split(",")]:
        runs[skip].append(one(cfg, skip))
    ref_rows, ref_g = runs[False][0][1], runs[False][0][2]
    same = all(rows == ref_rows and all(torch.equal(g[k], ref_g[k]) for k in ref_g)
               for r in runs.values() for _, rows, g in r)
    off, on = ([o for o, _, _ in runs[skip]] for skip in (False, True))
    total = lambda rs, key: sum(r[key] for r in rs)  # noqa: E731
    res = {"preset": args.preset, "rounds": args.rounds, "threads": args.threads, "config_hash": cfg.short_hash,
           "order": args.order, "runs": off + on, "identical": same,
           **{f"{key[:-2]}_ratio": round(total(on, key) / len(on) / (total(off, key) / len(off)), 3)
              for key in ("wall_s", "cpu_s", "train_s")},
           "replay_official_100_k10": [replay_counts(50), replay_counts(400)]}
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{args.preset}, {args.rounds} rounds, {args.threads} thread(s), config {cfg.short_hash}")
    for r in off + on:
        print(f"  skip={str(r['skip']):5s}  wall {r['wall_s']:7.1f} s  cpu {r['cpu_s']:7.1f} s  train {r['train_s']:7.1f} s"
              f"  eval {r['eval_s']:6.1f} s  trainings started {r['started']}, trained {r['trained']}, "
              f"skipped {r['skipped']}")
    print(f"  skip / no-skip (means over passes): wall {res['wall_ratio']:.3f}  cpu {res['cpu_ratio']:.3f}  "
          f"train {res['train_ratio']:.3f};  histories and global models identical: {same}")
    for c in res["replay_official_100_k10"]:
        print(f"  clock replay (official-100, K = 10, {c['rounds']} rounds): {c['unread']} of {c['started']} "
              f"trainings never read ({c['unread_share']:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
