"""``fedlib bench engine``: the loop and stacked backends on the same clients, in one run.

    fedlib bench engine --model {fcn,lstm,cnn,cnn3,resnet18} --clients N [--steps S] [--batch-size B]
                        [--threads T] [--repeats R] [--device D] [--memory] [--baseline torch]
                        [--precision {fp32,bf16}] [--backend {loop,stacked,both}] [--json]

Every backend trains the same N clients (FedQS-style local training: SGD, per-client lr and
momentum, clip 20, batch 50, augmentation on for images) for S lock-steps on synthetic data of
the model's real input shape (Adult: 11 features; Shakespeare: 80 symbol ids; CIFAR: 3x32x32
uint8 images) — speed does not depend on the values. Runs are interleaved (loop, stacked, loop,
stacked, ...) after a warm-up, and the median of R repeats is reported, so a load spike on a
shared machine hits both alike. Printed: samples/s of each backend, the ratio stacked/loop, the
``auto`` choice and how much slower than the faster backend it is, device, threads, torch
version. ``--baseline torch`` also times, interleaved with the backends, a plain PyTorch loop as a user would
write it (:func:`plain_torch_train`: NCHW, ``torch.optim.SGD``, tensors in memory, the same
clients, batches, augmentation and clipping) and prints fedlib's ``auto`` samples/s over it, plus
the cost of evaluating one image (forward only, :func:`fedlib.train.evaluate`) over the cost of
one training image. ``--memory``: peak memory of each backend for 100 FCN clients (CPU: sampled peak of the C heap
in use; CUDA: ``torch.cuda.max_memory_allocated``). A benchmark reports; no test
asserts a time. ``--precision bf16``: every backend is also timed with ``local.precision=bf16``
(bfloat16 autocast), interleaved with its fp32 run on the same clients, and the ratio of the
time per image bf16/fp32 is printed (below 1: bf16 is faster). ``--backend``: time only one
backend (e.g. ``loop`` for the conv nets, whose ``auto`` choice on CPU it is).
"""

from __future__ import annotations

import json
import platform
import statistics
import time

import torch

from fedlib.core.errors import check
from fedlib.core.utils import set_threads

BENCH_MODELS = ("fcn", "lstm", "cnn", "cnn3", "resnet18")
DEFAULT_STEPS = {"fcn": 50, "lstm": 3, "cnn": 5, "cnn3": 5, "resnet18": 2}

__all__ = ["register", "measure", "measure_memory", "synthetic_dataset", "bench_tasks", "plain_torch_train"]


def synthetic_dataset(model: str, n: int, device="cpu", seed: int = 0):
    """A :class:`fedlib.data.FedDataset` of random samples shaped like the model's real data."""
    from fedlib.data.base import FedDataset

    g = torch.Generator().manual_seed(seed)
    if model == "fcn":
        x, y, k, kind = torch.randn(n, 11, generator=g), torch.randint(0, 2, (n,), generator=g), 2, "tabular"
    elif model == "lstm":
        x, y, k, kind = (torch.randint(0, 80, (n, 80), generator=g), torch.randint(0, 80, (n,), generator=g), 80,
                         "text")
    else:
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y, k, kind = torch.randint(0, 10, (n,), generator=g), 10, "image"
    m = min(n, 256)
    return FedDataset(f"synthetic-{model}", kind, x, y, x[:m].clone(), y[:m].clone(), k).to(device)


def bench_tasks(clients: int, steps: int, batch_size: int, precision: str = "fp32"):
    """``clients`` clients of ``steps * batch_size`` samples each, FedQS-like settings."""
    from fedlib.train import ClientTask, LocalConfig

    n = steps * batch_size
    return [ClientTask(c, torch.arange(c * n, (c + 1) * n),
                       LocalConfig(lr=0.01 * (1 + c / clients), momentum=0.1 + 0.4 * c / clients,
                                   batch_size=batch_size, steps=steps, clip_norm=20.0, precision=precision))
            for c in range(clients)]


def plain_torch_train(model: str, start: dict, ds, tasks, seed: int = 0) -> None:
    """The baseline: each client trained by a plain PyTorch loop, as a user would write it.

    A fresh ``build_model`` per client loaded with ``start``, NCHW inputs, ``torch.optim.SGD``
    (the task's lr and momentum), cross-entropy, ``clip_grad_norm_``; the client's batches drawn
    from its shuffled indices, images augmented with the same crop + flip as fedlib's datasets
    (``FedDataset.batch``). No fedlib engine code is used.
    """
    from fedlib.models import build_model

    g = torch.Generator().manual_seed(seed)
    for t in tasks:
        cfg = t.config
        net = build_model(model, ds.num_classes, seed=0).to(ds.device)
        net.load_state_dict(start)
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=cfg.momentum)
        order = t.indices[torch.randperm(len(t.indices), generator=g)]
        for step in range(cfg.num_steps(len(t.indices))):
            idx = order[(step * cfg.batch_size) % len(order):][:cfg.batch_size]
            x, y = ds.batch(idx, train=True, generator=g, augment=True)
            loss = torch.nn.functional.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip_norm)
            opt.step()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(model: str = "fcn", clients: int = 10, steps: int | None = None, batch_size: int = 50,
            threads: int | None = 1, repeats: int = 3, device: str = "cpu",
            backends=("loop", "stacked"), baseline: str | None = None, precision: str = "fp32") -> dict:
    """Time ``backends`` (and, with ``baseline="torch"``, :func:`plain_torch_train`) on the same
    clients, interleaved, median of ``repeats``; a result dict. ``precision="bf16"``: each backend
    also in bf16 (key ``"<backend>+bf16"``), and ``bf16_over_fp32`` the time ratios."""
    from fedlib.models import build_model
    from fedlib.train import choose_backend, train_clients

    check(model in BENCH_MODELS, f"unknown benchmark model {model!r}", f"use one of {', '.join(BENCH_MODELS)}")
    check(clients >= 1 and repeats >= 1 and batch_size >= 1, "clients, repeats and batch size must be >= 1")
    threads = set_threads(threads)
    steps = steps or DEFAULT_STEPS[model]
    dev = torch.device(device)
    ds = synthetic_dataset(model, clients * steps * batch_size, dev)
    net = build_model(model, ds.num_classes, seed=0).to(dev)
    start = net.state_dict()
    tasks = bench_tasks(clients, steps, batch_size)
    warm = bench_tasks(clients, 1, batch_size)
    check(baseline in (None, "torch"), f"unknown baseline {baseline!r}", "use --baseline torch")
    check(precision in ("fp32", "bf16"), f"unknown precision {precision!r}", "use --precision fp32 or bf16")
    runners = {b: (lambda b=b: train_clients(net, start, ds, tasks, seed=0, backend=b)) for b in backends}
    if precision == "bf16":
        tasks16, warm16 = bench_tasks(clients, steps, batch_size, "bf16"), bench_tasks(clients, 1, batch_size, "bf16")
        for b in backends:
            runners[f"{b}+bf16"] = lambda b=b: train_clients(net, start, ds, tasks16, seed=0, backend=b)
            train_clients(net, start, ds, warm16, seed=0, backend=b)
    if baseline == "torch":
        runners["torch"] = lambda: plain_torch_train(model, start, ds, tasks)
    for b in backends:  # lazy initialisation, allocator warm-up
        train_clients(net, start, ds, warm, seed=0, backend=b)
    if baseline == "torch":
        plain_torch_train(model, start, ds, warm)
    times: dict[str, list[float]] = {b: [] for b in runners}
    eval_times: list[float] = []
    for _ in range(repeats):
        for b, fn in runners.items():
            _sync(dev)
            t0 = time.perf_counter()
            fn()
            _sync(dev)
            times[b].append(time.perf_counter() - t0)
        if baseline == "torch":
            from fedlib.train import evaluate

            _sync(dev)
            t0 = time.perf_counter()
            evaluate(net, start, ds, split="train")
            _sync(dev)
            eval_times.append(time.perf_counter() - t0)
    samples = clients * steps * batch_size
    med = {b: statistics.median(v) for b, v in times.items()}
    auto = choose_backend(net, dev, clients)
    out = {
        "model": model, "clients": clients, "steps": steps, "batch_size": batch_size, "repeats": repeats,
        "device": str(dev), "device_name": _device_name(dev), "threads": threads, "torch": torch.__version__,
        "seconds": med, "seconds_all": times,
        "samples_per_s": {b: samples / t for b, t in med.items()},
        "auto": auto,
    }
    if precision == "bf16":  # time per image bf16 / fp32, same clients, interleaved
        from fedlib.train.common import cpu_has_native_bf16

        out["bf16_over_fp32"] = {b: med[f"{b}+bf16"] / med[b] for b in backends}
        out["cpu_native_bf16"] = cpu_has_native_bf16() if dev.type == "cpu" else None
    if "loop" in med and "stacked" in med:
        out["stacked_over_loop"] = med["loop"] / med["stacked"]
        best = min(med[b] for b in backends)
        out["auto_slowdown"] = med[auto] / best - 1.0 if auto in med else None
    if baseline == "torch" and auto in med:
        out["fedlib_over_torch"] = med["torch"] / med[auto]
        per_train_image = med[auto] / samples
        per_eval_image = statistics.median(eval_times) / int(ds.num_train)
        out["eval_image_over_train_image"] = per_eval_image / per_train_image
    return out


def _device_name(dev: torch.device) -> str:
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return platform.processor() or platform.machine()


class _HeapSampler:
    """Peak of the C heap in use (glibc ``mallinfo2``: ``uordblks + hblkhd``), sampled by a thread.

    Torch's CPU tensors live on the C heap; freed-but-cached memory is not counted, unlike RSS.
    Torch operations release the GIL, so the sampler sees the heap during forward and backward.
    """

    def __init__(self):
        import ctypes

        class _MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                       "fsmblks", "uordblks", "fordblks", "keepcost")]

        self._libc = ctypes.CDLL("libc.so.6")
        self._libc.mallinfo2.restype = _MallInfo2
        self.peak = 0

    def used(self) -> int:
        m = self._libc.mallinfo2()
        return int(m.uordblks + m.hblkhd)

    def __enter__(self):
        import threading

        self.base = self.used()
        self.peak = self.base
        self._stop = threading.Event()

        def run():
            while not self._stop.is_set():
                self.peak = max(self.peak, self.used())
                time.sleep(0.0002)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.used())


def measure_memory(clients: int = 100, steps: int = 5, batch_size: int = 50, device: str = "cpu",
                   threads: int | None = 1) -> dict:
    """Peak extra memory (bytes) of each backend while training ``clients`` FCN clients (the
    results kept alive until the peak is read). CUDA: ``torch.cuda.max_memory_allocated``; CPU:
    the sampled peak of the C heap in use (:class:`_HeapSampler`, glibc only)."""
    from fedlib.models import build_model
    from fedlib.train import train_clients

    set_threads(threads)
    dev = torch.device(device)
    ds = synthetic_dataset("fcn", clients * steps * batch_size, dev)
    net = build_model("fcn", 2, seed=0).to(dev)
    tasks = bench_tasks(clients, steps, batch_size)
    out = {}
    for backend in ("loop", "stacked"):
        train_clients(net, None, ds, bench_tasks(2, 1, batch_size), seed=0, backend=backend)  # lazy init
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
            base = torch.cuda.memory_allocated(dev)
            torch.cuda.reset_peak_memory_stats(dev)
            res = train_clients(net, None, ds, tasks, seed=0, backend=backend)
            torch.cuda.synchronize(dev)
            out[backend] = torch.cuda.max_memory_allocated(dev) - base
        else:
            with _HeapSampler() as hs:
                res = train_clients(net, None, ds, tasks, seed=0, backend=backend)
            out[backend] = hs.peak - hs.base
        del res
    return {"memory_clients": clients, "memory_steps": steps, "peak_bytes": out,
            "memory_method": "torch.cuda.max_memory_allocated" if dev.type == "cuda"
            else "sampled peak of the C heap in use (glibc mallinfo2)"}


def _format(r: dict) -> str:
    lines = [f"fedlib bench engine: model={r['model']} clients={r['clients']} steps={r['steps']} "
             f"batch={r['batch_size']} repeats={r['repeats']} device={r['device']} ({r['device_name']}) "
             f"threads={r['threads']} torch={r['torch']}"]
    for b, t in r["seconds"].items():
        lines.append(f"  {b:8s} {r['samples_per_s'][b]:10.0f} samples/s   {t * 1e3 / r['steps']:8.2f} ms/lock-step")
    if "stacked_over_loop" in r:
        lines.append(f"  stacked/loop speed ratio: {r['stacked_over_loop']:.2f}x")
        lines.append(f"  auto -> {r['auto']} ({100 * r['auto_slowdown']:+.1f}% vs the faster backend)")
    if r.get("cpu_native_bf16") is not None:
        lines.append(f"  CPU computes bf16 natively (AMX-BF16 / AVX512-BF16): {r['cpu_native_bf16']}")
    for b, ratio in r.get("bf16_over_fp32", {}).items():
        lines.append(f"  {b}: bf16/fp32 time per image {ratio:.2f} (bf16 {1 / ratio:.2f}x the fp32 speed)")
    if "fedlib_over_torch" in r:
        lines.append(f"  fedlib ({r['auto']}) / plain PyTorch loop speed ratio: {r['fedlib_over_torch']:.2f}x")
        lines.append(f"  evaluation cost per image / training cost per image: "
                     f"{r['eval_image_over_train_image']:.2f}")
    if "peak_bytes" in r:
        for b, v in r["peak_bytes"].items():
            lines.append(f"  peak memory {b:8s} {v / 2**20:8.1f} MiB for {r['memory_clients']} FCN clients "
                         f"({r['memory_method']})")
    return "\n".join(lines)


def _check_args(args) -> None:
    """One clear FedlibError per bad ``fedlib bench engine`` argument (issue 19)."""
    from fedlib.core.errors import check
    from fedlib.core.utils import check_device, check_threads

    for name in ("clients", "batch_size", "repeats"):
        v = getattr(args, name)
        check(v >= 1, f"--{name.replace('_', '-')} must be >= 1, got {v}",
              f"leave --{name.replace('_', '-')} out for its default")
    limits = {"clients": 100_000, "batch_size": 100_000, "repeats": 1_000}
    for name, high in limits.items():
        v = getattr(args, name)
        check(v <= high, f"--{name.replace('_', '-')} {v} exceeds the limit of {high:,} (the benchmark "
              "would not fit in memory)", f"use --{name.replace('_', '-')} <= {high:,}")
    check(args.steps is None or args.steps <= 100_000, f"--steps {args.steps} exceeds the limit of 100,000",
          "use --steps <= 100,000")
    check(args.clients * (args.steps or 1) * args.batch_size <= 50_000_000,
          f"--clients {args.clients} x --steps {args.steps or 1} x --batch-size {args.batch_size} samples "
          "exceed 50,000,000: the synthetic data set would not fit in memory",
          "lower --clients, --steps or --batch-size")
    check(args.steps is None or args.steps >= 1, f"--steps must be >= 1, got {args.steps}",
          "leave it out for the model's default")
    check_threads(args.threads, "--threads")
    check(args.device != "auto", "bench engine needs an explicit --device", "use --device cpu or cuda")
    check_device(args.device)


def _cmd_engine(args) -> int:
    _check_args(args)
    backends = ("loop", "stacked") if args.backend == "both" else (args.backend,)
    r = measure(args.model, args.clients, args.steps, args.batch_size, args.threads, args.repeats, args.device,
                backends=backends, baseline=args.baseline, precision=args.precision)
    if args.memory:
        r.update(measure_memory(100, 5, args.batch_size, args.device, args.threads))
    print(json.dumps(r, indent=2) if args.json else _format(r))
    return 0


def register(subparsers) -> None:
    """``fedlib bench engine`` (see the module docstring)."""
    p = subparsers.add_parser("bench", help="benchmarks (engine backends)",
                              description="Benchmarks: `engine` times the loop and stacked client-training "
                                          "backends on the same clients.")
    sub = p.add_subparsers(dest="bench_command", metavar="BENCH")
    e = sub.add_parser("engine", help="loop vs stacked client-training backends, same clients, one run",
                       description=__doc__.split("\n\n")[1] if __doc__ else None)
    e.add_argument("--model", choices=BENCH_MODELS, default="fcn")
    e.add_argument("--clients", type=int, default=10)
    e.add_argument("--steps", type=int, default=None, help="lock-steps per run (default: per model)")
    e.add_argument("--batch-size", type=int, default=50)
    e.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: leave as is)")
    e.add_argument("--repeats", type=int, default=3)
    e.add_argument("--device", default="cpu")
    e.add_argument("--memory", action="store_true", help="also peak memory of each backend, 100 FCN clients")
    e.add_argument("--baseline", choices=["torch"], default=None,
                   help="also time a plain PyTorch training loop on the same clients (and evaluation)")
    e.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: also time every backend with local.precision=bf16 and print bf16/fp32")
    e.add_argument("--backend", choices=["loop", "stacked", "both"], default="both",
                   help="the backend(s) to time (default both)")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=_cmd_engine)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
