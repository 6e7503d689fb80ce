"""Both cores: one run alone vs two runs side by side (two one-thread processes) vs one run on two
threads (issue 10). The same workload each time — ``fedlib bench engine``'s training of
``--clients`` clients of the small CNN (``cnn3``) for ``--steps`` lock-steps, repeated ``--repeats``
times in each process — and the wall time of each arrangement:

    python benchmarks/bench_cores.py [--model cnn3] [--clients 10] [--steps 5] [--repeats 3]

Printed: seconds alone (1 process, 1 thread), side by side (the slower of 2 simultaneous
processes, 1 thread each), and two threads (1 process, 2 threads), and the ratios to alone. The
goal of issue 10 is side by side ≤ 1.25x alone. Timings depend on what else the machine runs:
record the load average next to them. No test asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

WORKER = """
import json, sys, time
from fedlib.train.bench import measure
t0 = time.perf_counter()
r = measure(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), threads=int(sys.argv[4]), repeats=int(sys.argv[5]),
            backends=("loop",))
print(json.dumps({"wall_s": time.perf_counter() - t0, "samples_per_s": r["samples_per_s"]["loop"]}))
"""


def _launch(args, threads: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    return subprocess.Popen([sys.executable, "-c", WORKER, args.model, str(args.clients), str(args.steps),
                             str(threads), str(args.repeats)], stdout=subprocess.PIPE, text=True, env=env)


def _wait(procs) -> list[dict]:
    return [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="cnn3")
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    load0 = os.getloadavg()
    alone = _wait([_launch(args, 1)])[0]
    pair = _wait([_launch(args, 1), _launch(args, 1)])
    two_threads = _wait([_launch(args, 2)])[0]
    out = {"model": args.model, "clients": args.clients, "steps": args.steps, "repeats": args.repeats,
           "alone_samples_per_s": alone["samples_per_s"],
           "side_by_side_samples_per_s": [r["samples_per_s"] for r in pair],
           "two_threads_samples_per_s": two_threads["samples_per_s"],
           "side_by_side_over_alone": alone["samples_per_s"] / min(r["samples_per_s"] for r in pair),
           "two_threads_over_alone": alone["samples_per_s"] / two_threads["samples_per_s"],
           "load_before": [round(x, 2) for x in load0], "load_after": [round(x, 2) for x in os.getloadavg()],
           "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{args.model}, {args.clients} clients x {args.steps} steps, {args.repeats} repeats per process "
              f"(load {out['load_before']} -> {out['load_after']}, {out['cpus']} CPUs)")
        print(f"  alone (1 process, 1 thread)       {alone['samples_per_s']:8.0f} samples/s")
        print(f"  side by side (2 x 1 thread), each {', '.join(f'{r:.0f}' for r in out['side_by_side_samples_per_s'])}"
              f" samples/s -> time {out['side_by_side_over_alone']:.2f}x alone")
        print(f"  two threads in one process        {two_threads['samples_per_s']:8.0f} samples/s -> time "
              f"{out['two_threads_over_alone']:.2f}x alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
