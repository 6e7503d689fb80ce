"""Does bf16 autocast change accuracy beyond the seed spread? (issue 17)

The paired check the issue asks for: Table 1's SAFL + non-IID cell at the cpu profile (CIFAR-10,
cnn3, Dirichlet x = 0.1, N = 100, K = 10, overwrite uploads, official-100 delays), FedSGD, the
same seeds in ``local.precision=fp32`` and ``bf16``; the bf16 − fp32 difference of the final
(mean of the last 10 rounds) and best accuracy with a 95% t-interval over the seeds, and the
wall-time ratio of the two precisions measured in the same batch.

    FEDLIB_DATA=../shared/data .venv/bin/python benchmarks/bf16_accuracy.py --rounds 20 --seeds 0 1 2

``--rounds`` below the notebook's 50 keeps it affordable where bf16 has no hardware support (an
AVX2-only CPU runs bf16 autocast several times slower than fp32); the output names the rounds.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from fedlib.reporting import run_all
from fedlib.reporting.fedqs import Study, paired_rows, run_metrics

CELL = ["data.partition=dirichlet", "data.alpha=0.1", "safl.mode=semi-async"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--method", default="fedsgd")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args(argv)

    study = Study("cifar10", "cpu", args.rounds)
    cells = [(p, s) for p in ("fp32", "bf16") for s in args.seeds]
    cfgs = [study.config(args.method, [*CELL, f"local.precision={p}"], s) for p, s in cells]
    results = run_all(cfgs, "bf16 check", args.workers)
    runs = pd.DataFrame([{"precision": p, "seed": s, **run_metrics(r), "seconds": r.summary.get("total_wall_time")}
                         for (p, s), r in zip(cells, results)])
    diffs = paired_rows(runs, [("bf16", "fp32", 0)], method_col="precision")
    seconds = runs.groupby("precision")["seconds"].sum()
    print(runs.round(3).to_string(index=False))
    print(diffs[["comparison", "metric", "mean", "lo", "hi", "n", "per seed", "verdict"]].round(3).to_string(index=False))
    ratio = seconds["bf16"] / seconds["fp32"] if seconds.get("fp32") else float("nan")
    print(f"wall time bf16 / fp32 (same batch, {args.rounds} rounds, {len(args.seeds)} seeds): {ratio:.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rounds": args.rounds, "seeds": args.seeds, "method": args.method,
                       "runs": runs.to_dict("records"), "diffs": diffs.astype({"per seed": str}).to_dict("records"),
                       "wall_ratio_bf16_over_fp32": ratio}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
