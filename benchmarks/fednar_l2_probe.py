"""Why FedNAR sits at chance at the SMoFi ``long`` profile: a few rounds of FedAvg, FedNAR at its official
L2 (0.1), at 0.01 (the decay the FedNAR authors' logs train with under local momentum) and with L2 = the
run's weight decay (5e-4), on one seed (docs/spec/smofi.md §4 [D]: the long profile reads 0.01).

    FEDLIB_DATA=/work/shared/data OMP_NUM_THREADS=1 python benchmarks/fednar_l2_probe.py \
        [--rounds 4] [--seed 0] [--json benchmarks/results/fednar_l2_probe.json]

Each run is the ``long`` profile's run exactly as ``notebooks/smofi/main_accuracy`` builds it
(:func:`fedlib.reporting.smofi.smofi_configs`: all 50,000 CIFAR-10 images, 20 clients / 10 per round,
Dirichlet 0.1, ``cnn3`` cut after ``conv1``, SGD lr 0.01, momentum 0.9, weight decay 5e-4), cut to
``--rounds`` rounds evaluated every round on the 10,000 test images; the results go to a temporary store
(nothing enters the project's store). Printed and written: the test accuracy per round of each run.
"""

from __future__ import annotations

import argparse
import json
import tempfile

from fedlib.experiments import run
from fedlib.reporting.smofi import smofi_configs
from fedlib.split.bases import FedNAROptions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    config = smofi_configs("long", "custom", dict(model="cnn3", cut="conv1", max_test=None, rounds=None))

    def short(algorithm: str, **options):
        c = config("cifar10", algorithm, a.seed, "partial").replace(rounds=a.rounds, eval_every=1, eval_last=0)
        return c.replace(options={**c.options, **options}) if options else c

    runs = {"FedAvg": short("fedavg"), "FedNAR, L2 0.1 (official)": short("fednar", l2=FedNAROptions().l2),
            "FedNAR, L2 0.01": short("fednar", l2=0.01), "FedNAR, L2 5e-4 (= weight decay)": short("fednar", l2=5e-4)}
    out = {}
    with tempfile.TemporaryDirectory() as store:
        for name, cfg in runs.items():
            h = run(cfg, store=store, progress=False).history
            out[name] = [round(100 * float(x), 2) for x in h["accuracy"]]
            print(f"{name:34s} test accuracy (%) per round: {out[name]}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"setting": "SMoFi long, cifar10 partial (Dirichlet 0.1), seed " + str(a.seed),
                       "rounds": a.rounds, "test_accuracy_pct": out}, f, indent=1)


if __name__ == "__main__":
    main()
