"""How far a run drifts on another CPU type (issue 28), with an instruction-set cap as the stand-in.

One thread gives byte-identical histories on one CPU type; another type runs other oneDNN / MKL /
ATen kernels. This script takes runs (from the result store, computed there if missing), copies them
into a scratch ledger and runs ``fedlib verify`` on that ledger in a child process whose kernels are
capped (default: AVX2 — ``ONEDNN_MAX_CPU_ISA``, ``MKL_ENABLE_INSTRUCTIONS``, ``ATEN_CPU_CAPABILITY``),
then prints, per run: the first round whose history differs, the largest accuracy difference and
the difference of the final accuracy (mean of the last 10 evaluated rounds), in points.

    FEDLIB_DATA=../shared/data python benchmarks/isa_drift.py \\
        --run fedsgd-cifar10-cpu:data.alpha=0.5 --run fedqs-avg-adult-gender --out drift.json

A cap only lowers what the machine may use: on an AVX2-only CPU ``--isa AVX2`` changes nothing (use
``--isa SSE41`` there). Crossing CPU vendors can differ in more ways than a cap shows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CAPS = {  # the three libraries' own switches for one instruction-set level
    "AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
    "SSE41": {"ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ATEN_CPU_CAPABILITY": "default"},
}


def _config(spec: str):
    from fedlib.experiments import RunConfig

    preset, _, rest = spec.partition(":")
    return RunConfig.from_preset(preset).with_overrides([o for o in rest.split(",") if o])


def _final(history, last: int = 10) -> float:
    acc = history["accuracy"].astype(float).dropna()
    return float(acc.tail(last).mean()) * 100 if len(acc) else math.nan


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, metavar="PRESET[:KEY=VAL,...]")
    ap.add_argument("--isa", default="AVX2", choices=sorted(CAPS))
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)

    from fedlib.experiments import ResultStore, run
    from fedlib.experiments.results.ledger import Ledger, export_runs
    from fedlib.experiments.results.provenance import cpu_type
    from fedlib.experiments.results.store import csv_to_frame
    from fedlib.experiments.results.cli import compare_histories

    store = ResultStore()
    rows = []
    with tempfile.TemporaryDirectory(prefix="isa-drift-") as tmp:
        ledger = Ledger(Path(tmp) / "ledger")
        refs = {}
        for spec in args.run:
            res = run(_config(spec), store=store, progress=False, threads=1)
            refs[res.config_hash] = (spec, res)
        export_runs(store, ledger, list(refs))
        env = {**os.environ, **CAPS[args.isa], "FEDLIB_RESULTS": str(Path(tmp) / "capped")}
        code = ("import sys, json; from fedlib.experiments import ResultStore, RunConfig, run;"
                "from fedlib.experiments.results.provenance import cpu_type;"
                "from fedlib.experiments.results.ledger import Ledger;"
                "L = Ledger(sys.argv[1]);"
                "[run(RunConfig.from_dict(L.config(h)['config']), progress=False, threads=1) for h in sys.argv[2:]];"
                "print(json.dumps(cpu_type()))")
        capped_cpu = json.loads(subprocess.run([sys.executable, "-c", code, str(ledger.root), *refs], env=env,
                                               check=True, capture_output=True, text=True).stdout.strip())
        capped = ResultStore(Path(tmp) / "capped")
        for h, (spec, ref) in refs.items():
            other = capped.get(h)
            c = compare_histories(ref.history, other.history)
            rows.append({"run": spec, "hash": h[:12], "rounds": len(ref.history),
                         "identical": c["identical"], "first_differing_round": c["first_round"],
                         "max_abs_accuracy_diff_points": c["max_acc_diff"],
                         "final_accuracy_diff_points": _final(other.history) - _final(ref.history),
                         "reference_cpu": cpu_type(), "capped_cpu": capped_cpu, "cap": CAPS[args.isa]})
            print(json.dumps(rows[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
