"""Speed of the SAFL simulator's evaluation through ``fedlib.train.evaluate`` vs its former loop.

    python benchmarks/bench_eval.py [--repeats 7] [--calls 10] [--threads 1] [--json]

Issue 13 made ``fedlib.train.evaluate`` the one evaluation path. Before it, the simulator scored
the global model with its own loop (test inputs prepared once, weights loaded into a private
model, per-batch float32 loss sums) and FedQS's per-class validation with a second loop
(``evaluate_state``). This script times, in one run and interleaved (old, new, old, ...; median
of ``--repeats``), for two tasks of the SAFL presets:

* ``global``: the global model on the test samples — the former loop (``reference_global``,
  kept here only as the yardstick) vs ``evaluate(..., batches=prepare_batches(...),
  loss_sum="batch")``, what the simulator now calls every round;
* ``validation``: per-class accuracy on a client's validation samples — the former
  ``evaluate_state`` loop (``reference_validation``) vs ``evaluate(..., indices=...)``.

It prints the time per call of each and the ratio new / old (target: <= 1.05), and checks that
both give the same numbers. Never asserted in a test: a benchmark reports, tests check behaviour.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.experiments.config import RunConfig  # noqa: E402
from fedlib.experiments.running.runner import build_trainer  # noqa: E402
from fedlib.train.evaluate import eval_batch_size, evaluate, prepare_batches  # noqa: E402
from fedlib.train.loop import fast_memory_format, to_format  # noqa: E402

TASKS = {  # name -> (preset, overrides)
    "adult-fcn (16,281 test samples)": ("fedavg-adult-gender", []),
    "cifar10-cnn3 (1,000 test samples)": ("fedavg-cifar10", ["model.name=cnn3", "data.max_test=1000"]),
}
SMALL = ["safl.clients=10", "safl.k=3", "data.max_train=2000"]


def reference_global(model, dataset, indices, device):
    """The simulator's former global evaluation: returns ``score(state) -> (accuracy, loss)``."""
    m = copy.deepcopy(model)
    fmt = fast_memory_format(m, device)
    bs = eval_batch_size(device)
    batches = []
    for i in range(0, len(indices), bs):
        x, y = dataset.batch(indices[i:i + bs], train=False, generator=None, augment=False)
        batches.append((to_format(x.to(device), fmt), y.to(device)))
    m.to(memory_format=fmt)

    def score(state):
        m.load_state_dict(state)
        m.eval()
        correct, loss, count = 0, 0.0, 0
        with torch.inference_mode():
            for x, y in batches:
                out = m(x)
                if out.dim() > 2:
                    out, y = out.reshape(-1, out.shape[-1]), y.reshape(-1)
                loss += float(torch.nn.functional.cross_entropy(out, y, reduction="sum"))
                correct += int((out.argmax(1) == y).sum())
                count += int(y.numel())
        return correct / count, loss / count

    return score


def reference_validation(model, state, dataset, indices, batch_size=4096):
    """The former ``evaluate_state`` on a subset (train split): per-class accuracy."""
    model.load_state_dict(state)
    model.eval()
    c = dataset.num_classes
    correct = torch.zeros(c, dtype=torch.float64)
    total = torch.zeros(c, dtype=torch.float64)
    with torch.no_grad():
        for i in range(0, len(indices), batch_size):
            x, y = dataset.batch(indices[i:i + batch_size], train=True, generator=None, augment=False)
            out = model(x)
            pred = out.argmax(1)
            total += torch.bincount(y, minlength=c).double()[:c]
            correct += torch.bincount(y[pred == y], minlength=c).double()[:c]
    return torch.where(total > 0, correct / total.clamp(min=1), torch.full_like(total, math.nan)).float()


def timed(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def compare(old, new, repeats, calls):
    old(), new()  # warm-up
    a, b = [], []
    for _ in range(repeats):
        a.append(timed(old, calls))
        b.append(timed(new, calls))
    o, n = statistics.median(a), statistics.median(b)
    return {"old_ms": o * 1e3, "new_ms": n * 1e3, "ratio_new_over_old": n / o}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = []
    for task, (preset, over) in TASKS.items():
        sim = build_trainer(RunConfig.from_preset(preset).with_overrides(SMALL + over))
        ds, dev, state = sim.dataset, sim.device, sim.global_state
        test = torch.arange(ds.num_test) if sim.test_indices is None else sim.test_indices
        old_global = reference_global(sim.model, ds, test, dev)
        batches = prepare_batches(sim.model, ds, "test", sim.test_indices, device=dev)

        def new_global():
            r = evaluate(sim.model, state, batches=batches, loss_sum="batch")
            return r.accuracy, r.loss

        same = old_global(state) == new_global()
        rows.append({"task": task, "what": "global", "same_numbers": same,
                     **compare(lambda: old_global(state), new_global, args.repeats, args.calls)})
        val = sim.val_parts[0] if sim.val_parts is not None else sim.train_parts[0][:200]
        ref_model = copy.deepcopy(sim.model)

        def new_val():
            return evaluate(sim.model, state, ds, split="train", indices=val, batch_size=4096,
                            device=dev).per_class_accuracy

        same = torch.equal(reference_validation(ref_model, state, ds, val).nan_to_num(-1), new_val().nan_to_num(-1))
        rows.append({"task": f"{task.split(' ')[0]} ({len(val)} validation samples)", "what": "validation",
                     "same_numbers": same,
                     **compare(lambda: reference_validation(ref_model, state, ds, val), new_val,
                               args.repeats, args.calls * 10)})
    info = {"torch": torch.__version__, "threads": args.threads, "cpus": os.cpu_count(),
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    if args.json:
        print(json.dumps({"info": info, "rows": rows}, indent=1))
        return
    print(f"torch {info['torch']}, {args.threads} thread(s), load {info['load']:.2f}")
    print(f"{'task':42s} {'what':10s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}  same numbers")
    for r in rows:
        print(f"{r['task']:42s} {r['what']:10s} {r['old_ms']:9.3f} {r['new_ms']:9.3f} "
              f"{r['ratio_new_over_old']:8.3f}  {r['same_numbers']}")


if __name__ == "__main__":
    main()
