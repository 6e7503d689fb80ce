"""Fingerprint a fixed set of small runs, to show a restructuring changed no behaviour.

Runs every ``*-smoke`` preset plus variants that reach the other code paths (FedQS ``official``
fidelity and its similarity/local-update options, ``sync`` and both upload regimes, the ``loop`` and
``stacked`` backends, SMoFi's staleness/normaliser/weighting options, FedProx/FedNAR bases) in a
fresh store, and writes per run: the config hash and sha256 of the history and clients tables
(wall-time columns left out) and of the summary's non-timing entries. Compare two outputs with
``--compare``:

    FEDLIB_DATA=../shared/data .venv/bin/python tools/golden_histories.py --out before.json
    # ... change the code ...
    FEDLIB_DATA=../shared/data .venv/bin/python tools/golden_histories.py --out after.json --compare before.json

``--only SUBSTR`` restricts to the runs whose name contains it. Two one-thread worker processes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

# host-time measurements, the work counts that differ with skip_unread (issue 34), files: csv checksums
HOST_TIME = re.compile(r"^time_|wall|seconds|_share$|^files$|^(trainings|steps)_(trained|skipped)$")


def _timing(name: str) -> bool:
    return bool(HOST_TIME.search(str(name)))

VARIANTS = {
    "fedqs-avg-adult-gender-smoke": [
        ["options.fidelity=official"], ["options.similarity=angle"], ["options.similarity=euclidean"],
        ["options.local_update=aggregated"], ["safl.upload=snapshot"], ["safl.mode=sync"],
        ["options.momentum=false"], ["options.feedback=false", "options.adapt_lr=false"],
    ],
    "fedqs-sgd-adult-gender-smoke": [
        ["options.fidelity=official"], ["safl.upload=snapshot"], ["safl.mode=sync"],
        ["options.similarity=manhattan"],
    ],
    "fedqs-avg-cifar10-smoke": [["backend=loop"], ["backend=stacked"], ["options.fidelity=official"]],
    "fedsgd-cifar10-smoke": [["backend=loop"], ["safl.mode=sync"], ["safl.upload=snapshot"], ["rounds=10"]],
    "fedavg-cifar10-smoke": [["backend=stacked"], ["rounds=10"]],
    # the loop backend, where unread trainings are skipped (issue 29 item 4; auto = stacked for the FCN)
    "fedavg-adult-gender-smoke": [["safl.mode=sync"], ["safl.upload=snapshot"], ["backend=loop"],
                                  ["backend=loop", "rounds=20"], ["backend=loop", "safl.scenario=random-time"]],
    "fedsgd-adult-gender-smoke": [["backend=loop"], ["backend=loop", "safl.upload=snapshot"]],
    "fedbuff-adult-gender-smoke": [["safl.mode=sync"]],
    "smofi-cifar10-smoke": [
        ["options.stale=drop"], ["options.renormalise=true"], ["options.weighting=samples"],
        ["options.carry_momentum=true"], ["options.stale_index=from0"], ["backend=loop"],
    ],
    "sflv2-cifar10-smoke": [["split.sflv2_momentum=reset"]],
}


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _table(df) -> str:
    keep = [c for c in df.columns if not _timing(c)]
    return _sha(df[keep].to_dict("records")) if len(df) else "empty"


def _jobs(only: str | None):
    from fedlib.experiments.config import list_presets

    jobs = [(p, []) for p in list_presets() if p.endswith("-smoke")]
    jobs += [(p, v) for p, vs in VARIANTS.items() for v in vs]
    return [(p, v) for p, v in jobs if not only or only in p + " ".join(v)]


def _one(job) -> tuple[str, dict]:
    import torch

    from fedlib.core.errors import FedlibError
    from fedlib.experiments import RunConfig, run

    torch.set_num_threads(1)
    preset, overrides = job
    name = " ".join([preset, *overrides])
    try:
        cfg = RunConfig.from_preset(preset, [*overrides, "checkpoint_every=0"])
        with tempfile.TemporaryDirectory() as store:
            res = run(cfg, store=store, progress=False)
    except FedlibError as e:  # an option this preset does not have: recorded, not fatal
        return name, {"error": str(e).splitlines()[0]}
    summary = {k: v for k, v in res.summary.items() if not _timing(k) and k != "fedlib"}
    return name, {"hash": res.config_hash[:16], "history": _table(res.history),
                  "clients": _table(res.clients), "summary": _sha(summary)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", help="an earlier output: list the runs that differ (exit 1 if any)")
    ap.add_argument("--only")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    jobs = _jobs(args.only)
    with ProcessPoolExecutor(args.workers) as pool:
        out = dict(pool.map(_one, jobs))
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
    print(f"{len(out)} runs -> {args.out} ({sum('error' in v for v in out.values())} rejected configs)")
    if not args.compare:
        return 0
    before = json.load(open(args.compare))
    differ = [k for k in sorted(set(before) | set(out)) if before.get(k) != out.get(k)]
    for k in differ:
        print(f"DIFFERS {k}: {before.get(k)} -> {out.get(k)}")
    print(f"{len(differ)} of {len(set(before) | set(out))} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
