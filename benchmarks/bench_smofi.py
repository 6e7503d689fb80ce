"""SMoFi benchmark: the per-step cost of step-wise momentum fusion over plain SFLV1, and the
stacked surrogates (one ``torch.func`` stack) against a per-surrogate loop — in one run.

    python benchmarks/bench_smofi.py [--model cnn] [--clients 10] [--steps 20] [--batch 32]
                                     [--repeats 3] [--threads 1] [--device cpu] [--json]

SFLV1 local training is the engine's lock-step training of the whole model per selected client
(see fedlib/split/sfl.py); SMoFi adds :class:`fedlib.split.smofi.SMoFiHook` after every step,
fusing the server part's momentum buffers. Every configuration trains the same clients on the
same real CIFAR-10 batches (``$FEDLIB_DATA``; random images if absent, said in the output).
Timings are process CPU time on CPU (wall time on CUDA), interleave the variants (A B C D,
A B C D, ...) and report the median per repeat, so a load spike on a shared machine hits all of
them alike; the fusion's own time is also measured alone, as a share of an SFLV1 step. Printed: ms per lock-step of each
variant, the ratios SMoFi / SFLV1 (target < 1.10) per backend, and loop / stacked with SMoFi.
Never asserted anywhere: a benchmark reports, tests check behaviour.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.models import build_model, split_model  # noqa: E402
from fedlib.split.smofi import SMoFiHook  # noqa: E402
from fedlib.train import ClientTask, LocalConfig, train_clients  # noqa: E402


def _clock() -> float:
    """CPU time of this process on CPU (a shared machine's other load does not inflate it);
    wall time on CUDA (after synchronising)."""
    return time.perf_counter() if _CUDA else time.process_time()


_CUDA = False


def _dataset(n: int):
    try:
        from fedlib.data import load_dataset

        ds = load_dataset("cifar10")
        return ds, "real CIFAR-10"
    except Exception as err:  # noqa: BLE001 - the benchmark still runs without the data
        from fedlib.data import FedDataset

        g = torch.Generator().manual_seed(0)
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y = torch.randint(0, 10, (n,), generator=g)
        return FedDataset("random", "image", x, y, x[:100], y[:100], 10), f"random images ({err})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--cut", default=None)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--optimizer", default="sgd", choices=("sgd", "adam", "adamw"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backends", nargs="+", default=["loop", "stacked"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    global _CUDA
    _CUDA = device.type == "cuda"
    ds, source = _dataset(args.clients * args.steps * args.batch)
    ds = ds.to(device) if device.type != "cpu" else ds
    model = build_model(args.model, ds.num_classes, seed=0)
    _, server = split_model(model, args.cut, copy=True)
    server_names = [n for n, p in server.named_parameters() if p.requires_grad]
    local = LocalConfig(lr=0.01, momentum=0.9 if args.optimizer == "sgd" else 0.0,
                        weight_decay=5e-4, optimizer=args.optimizer, batch_size=args.batch,
                        steps=args.steps)
    per = args.steps * args.batch
    tasks = [ClientTask(c, torch.arange(c * per, (c + 1) * per) % ds.num_train, local)
             for c in range(args.clients)]
    start = model.state_dict()

    hook_ms: dict = {b: [] for b in args.backends}

    def once(backend: str, smofi: bool) -> float:
        hook = None
        if smofi:
            fusion = SMoFiHook(server_names, args.optimizer, momentum=local.momentum)
            fusion.start_round(args.clients)
            spent = [0.0]

            def hook(step, active, buffers):  # the fusion itself, timed on its own
                if device.type == "cuda":
                    torch.cuda.synchronize()
                t = _clock()
                fusion(step, active, buffers)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                spent[0] += _clock() - t
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = _clock()
        train_clients(model, start, ds, tasks, seed=0, round=0, backend=backend, hook=hook,
                      device=device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if smofi:
            hook_ms[backend].append(spent[0] / args.steps * 1e3)
        return (_clock() - t0) / args.steps * 1e3

    variants = [(b, s) for b in args.backends for s in (False, True)]
    for v in variants:  # warm-up (template copies, vmap tracing)
        once(*v)
    hook_ms = {b: [] for b in args.backends}
    times: dict = {v: [] for v in variants}
    for _ in range(args.repeats):
        for v in variants:
            times[v].append(once(*v))
    med = {v: statistics.median(t) for v, t in times.items()}
    out = {
        "model": args.model, "cut": args.cut or model.default_cut, "clients": args.clients,
        "steps": args.steps, "batch": args.batch, "optimizer": args.optimizer,
        "server_tensors": len(server_names),
        "server_params": sum(p.numel() for p in server.parameters()),
        "data": source, "device": str(device), "threads": torch.get_num_threads(),
        "torch": torch.__version__, "cpu": platform.processor() or platform.machine(),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "ms_per_step": {f"{b}/{'smofi' if s else 'sflv1'}": round(m, 3) for (b, s), m in med.items()},
        "smofi_over_sflv1": {b: round(med[(b, True)] / med[(b, False)], 4) for b in args.backends},
        # the fusion's own time per lock-step, over the SFLV1 step: robust to load on a shared CPU
        "fusion_ms_per_step": {b: round(statistics.median(hook_ms[b]), 3) for b in args.backends},
        "fusion_share_of_sflv1_step": {
            b: round(statistics.median(hook_ms[b]) / med[(b, False)], 4) for b in args.backends},
    }
    if {"loop", "stacked"} <= set(args.backends):
        out["loop_over_stacked_smofi"] = round(med[("loop", True)] / med[("stacked", True)], 4)
        out["loop_over_stacked_sflv1"] = round(med[("loop", False)] / med[("stacked", False)], 4)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"SMoFi benchmark: {args.model} cut after {out['cut']} ({out['server_tensors']} server "
          f"tensors, {out['server_params']:,} params), {args.clients} clients x {args.steps} steps "
          f"x batch {args.batch}, {args.optimizer}; {source}")
    print(f"device {device}, {out['threads']} thread(s), torch {torch.__version__}, "
          f"load avg {out['load_average']}")
    for k, v in out["ms_per_step"].items():
        print(f"  {k:<16} {v:10.2f} ms / lock-step ({'wall' if _CUDA else 'CPU'} time)")
    for b, r in out["smofi_over_sflv1"].items():
        f = out["fusion_share_of_sflv1_step"][b]
        print(f"  SMoFi / SFLV1 ({b}): {r:.3f}  ({(r - 1) * 100:+.1f}% per step; target < +10%); "
              f"the fusion alone: {out['fusion_ms_per_step'][b]:.2f} ms = {f * 100:.1f}% of an "
              "SFLV1 step")
    if "loop_over_stacked_smofi" in out:
        print(f"  per-surrogate loop / stacked surrogates, with SMoFi: {out['loop_over_stacked_smofi']:.3f}"
              f"  (SFLV1: {out['loop_over_stacked_sflv1']:.3f}; > 1 means stacked is faster)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
