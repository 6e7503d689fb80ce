"""Sweeps: a grid of configs x seeds, run locally in a process pool or as Ray tasks (issue 4).

    cells = sweep([cfg_a, cfg_b], seeds=[0, 1, 2], backend="local")   # DataFrame, one row per cell
    grid(cfg, {"safl.k": [5, 10], "options.similarity": ["cosine", "angle"]})  # -> list of configs

* Idempotent: a cell whose result is already in the store is skipped (status ``cached``);
  an interrupted cell resumes from its checkpoint.
* A failing cell is reported (status ``failed`` + the error) and the others go on; a summary of
  the failures is printed at the end.
* ``backend="local"``: a ``concurrent.futures`` process pool (spawn context) of ``workers``
  processes (default: one per CPU, at most one per cell); each worker uses one torch thread
  (``$FEDLIB_THREADS`` overrides): on the 2-core build machines two one-thread processes finish
  two runs in about the time of one, while two threads in one process are ~10x slower for the
  small conv nets (``benchmarks/README.md``).
* ``backend="ray"``: one Ray task per cell (``num_cpus=1``) on a local Ray instance
  (``ray.init(num_cpus=workers or 2, include_dashboard=False)``) or on an existing cluster given
  by ``address`` (``"auto"`` or ``"ray://host:10001"``). Workers write to the same store root; on
  a cluster without a shared filesystem the driver writes each returned result into its own store.
  Ray is an optional extra (``pip install 'fedlib[ray]'``).

Seeds: each cell's randomness derives from its own ``cfg.seed`` only, never from worker order,
so every backend produces the same results.
"""

from __future__ import annotations

import itertools
import os
import sys
import traceback
from pathlib import Path

import pandas as pd

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.core.progress import progress_bar, progress_write
from fedlib.core.dataclass_io import parse_overrides
from fedlib.experiments.config import RunConfig
from fedlib.experiments.results.store import ResultStore, csv_to_frame, frame_to_csv
from fedlib.core.utils import default_threads

__all__ = ["sweep", "grid", "expand", "SWEEP_BACKENDS"]

SWEEP_BACKENDS = ("local", "ray")


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def grid(base: RunConfig, axes: dict) -> list[RunConfig]:
    """The cartesian product of ``axes`` ({"safl.k": [5, 10], ...}) applied to ``base``."""
    check(isinstance(base, RunConfig), f"grid() needs a RunConfig as base, got {type(base).__name__}",
          "e.g. grid(RunConfig.from_preset('toy-smoke'), {'safl.k': [2, 4]})")
    check(isinstance(axes, dict), f"grid axes must be a dict {{key: [values]}}, got {type(axes).__name__}")
    for key, values in axes.items():
        check(isinstance(values, (list, tuple, range)) and len(values) >= 1,
              f"grid axis {key!r} must be a non-empty list of values, got {values!r}",
              f"write e.g. {{{key!r}: [{values!r}]}}")
    keys = list(axes)
    combos = itertools.product(*(list(axes[k]) for k in keys)) if keys else [()]
    return [base.with_overrides(dict(zip(keys, values))) for values in combos]


def parse_grid(items: list[str]) -> dict:
    """``["safl.k=5,10", "options.similarity=cosine,angle"]`` -> {key: [values]} (YAML-parsed)."""
    axes = {}
    for item in items or []:
        check("=" in item, f"grid axis {item!r} is not of the form key=v1,v2,...")
        key, raw = item.split("=", 1)
        values = [v for _, v in parse_overrides([f"{key}={part}" for part in raw.split(",")])]
        check(len(values) >= 1, f"grid axis {key!r} has no values")
        check(key.strip() not in axes, f"grid axis {key.strip()!r} is given twice (the second would "
              "replace the first)", f"give its values once, e.g. --grid {key.strip()}=v1,v2,v3")
        axes[key.strip()] = values
    return axes


def expand(configs, seeds=None) -> list[RunConfig]:
    """configs x seeds as validated RunConfigs, duplicates (same hash) removed, order kept."""
    if isinstance(configs, (RunConfig, dict)):
        configs = [configs]
    check(isinstance(configs, (list, tuple)), f"configs must be a RunConfig or a list of them, "
          f"got {type(configs).__name__}")
    check(len(configs) >= 1, "sweep needs at least one config, got an empty list",
          "pass e.g. [RunConfig.from_preset('toy-smoke')] or grid(cfg, {...})")
    if seeds is not None:
        check(isinstance(seeds, (list, tuple, range)) and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds),
            f"seeds must be a list of integers >= 0, got {seeds!r}", "e.g. seeds=[0, 1, 2]")
    cells, seen, seedless = [], set(), {}
    for cfg in configs:
        cfg = cfg if isinstance(cfg, RunConfig) else RunConfig.from_dict(cfg)
        if seeds is not None and len(configs) > 1:
            key = cfg.replace(seed=0).config_hash()
            check(seedless.setdefault(key, cfg.seed) == cfg.seed,
                  "configs that differ only in their seed were given together with seeds=: the "
                  "seeds would replace theirs and the cells collapse into one",
                  "give the seeds once: either in the configs or as seeds=[...]")
        for s in (seeds if seeds is not None else [cfg.seed]):
            cell = cfg.replace(seed=int(s))
            h = cell.config_hash()
            if h not in seen:
                seen.add(h)
                cells.append(cell)
    return cells


# ---------------------------------------------------------------------------- one cell
def _init_worker(threads: int, parent: int | None = None, plugins=None) -> None:
    """A pool worker's start: ``threads`` intra-op threads; with ``parent`` (the driver's pid), the
    worker ends when the driver does (:func:`die_with_parent`); ``plugins``: the driver's user
    registrations the cells need (:func:`~fedlib.experiments.config.plugins.worker_payload`, issue 61)."""
    if parent is not None:
        die_with_parent(parent)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    if plugins:
        from fedlib.experiments.config.plugins import restore

        restore(plugins)


def die_with_parent(parent: int) -> None:
    """Linux: have the kernel send this process SIGTERM when ``parent`` (the process that started it)
    dies, and leave now if it already has. A killed driver (``fedlib reproduce`` stopped, its notebook
    kernel gone) used to leave its pool workers training the queued cells, racing the next run for the
    same results. Elsewhere a no-op (the workers finish their queued cells)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: keep the old behaviour
        return
    if os.getppid() != parent:  # the driver died before prctl took effect
        os._exit(1)


def run_cell(cfg_dict: dict, root: str, threads: int | None = None, payload: bool = False,
             diverged: str = "raise", plugins=None):
    """Run one cell in this process; never raises (a failure comes back as status 'failed').

    Returns ``(status, hash, summary_or_error, files)``; ``files`` holds the CSV bytes of the
    result when ``payload`` (Ray: lets the driver store results from nodes without a shared disk);
    ``diverged``: what a diverged run does (:data:`fedlib.experiments.running.runner.DIVERGED`);
    ``plugins``: user registrations to restore first (Ray tasks; a pool's initializer restores them).
    """
    h = None
    try:
        if threads:
            _init_worker(threads, plugins=plugins)
        elif plugins:
            from fedlib.experiments.config.plugins import restore

            restore(plugins)
        from fedlib.experiments.running.runner import run

        cfg = RunConfig.from_dict(cfg_dict)
        h = cfg.config_hash()
        res = run(cfg, store=ResultStore(root), progress=False, threads=threads, diverged=diverged)
        files = None
        if payload:
            files = {"history": frame_to_csv(res.history), "clients": frame_to_csv(res.clients)}
        return ("cached" if res.cached else "done"), h, res.summary, files
    except BaseException as err:  # noqa: BLE001 - report it, keep the sweep going
        if isinstance(err, KeyboardInterrupt):
            raise
        tb = traceback.format_exc(limit=8)
        msg = f"{type(err).__name__}: {err}"
        return "failed", h, {"error": msg, "traceback": tb}, None


# ---------------------------------------------------------------------------- backends
def _plugins(todo) -> list:
    """The user registrations the cells of ``todo`` run, for the workers to rebuild (one FedlibError
    naming an algorithm that cannot travel, before any worker starts)."""
    from fedlib.experiments.config.plugins import worker_payload

    return worker_payload({(cfg.paradigm, cfg.algorithm) for cfg in todo})


def _local(todo, root, workers, on_done, diverged="raise"):
    from concurrent.futures import ProcessPoolExecutor, as_completed
    import multiprocessing as mp

    threads = default_threads() or 1
    ctx = mp.get_context("spawn")
    plugins = _plugins(todo)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(threads, os.getpid(), plugins)) as pool:
        futures = {pool.submit(run_cell, cfg.to_dict(), root, None, False, diverged): cfg for cfg in todo}
        for fut in as_completed(futures):
            cfg = futures[fut]
            try:
                out = fut.result()
            except BaseException as err:  # noqa: BLE001 - a worker process died
                if isinstance(err, KeyboardInterrupt):
                    raise
                hint = ("; if sweep() is called from a script, put the call under "
                        "`if __name__ == '__main__':` (the pool uses the spawn start method)")
                out = ("failed", cfg.config_hash(),
                       {"error": f"worker process died: {type(err).__name__}: {err}{hint}",
                        "traceback": ""}, None)
            on_done(cfg, out)


def _ray(todo, root, workers, address, store: ResultStore, on_done, diverged="raise"):
    try:
        import ray
    except ImportError:
        raise FedlibError("backend 'ray' needs Ray, which is not installed",
                          "pip install 'fedlib[ray]' (or use --backend local)") from None
    if not ray.is_initialized():
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            kw = dict(num_cpus=workers or 2, include_dashboard=False, ignore_reinit_error=True,
                      log_to_driver=False)
            try:
                ray.init(**kw)
            except Exception as err:  # noqa: BLE001 - a local start can time out on a busy machine
                print(f"[fedlib] starting a local Ray instance failed ({err}); retrying once",
                      file=sys.stderr)
                ray.shutdown()
                ray.init(**kw)
    remote = ray.remote(num_cpus=1, max_retries=0)(run_cell)
    plugins = _plugins(todo)
    refs = {remote.remote(cfg.to_dict(), root, 1, True, diverged, plugins): cfg for cfg in todo}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        cfg = refs[ready[0]]
        try:
            out = ray.get(ready[0])
        except Exception as err:  # noqa: BLE001 - the task or its worker died
            out = ("failed", cfg.config_hash(),
                   {"error": f"ray task failed: {type(err).__name__}: {err}", "traceback": ""},
                   None)
        status, h, summary, files = out
        if status in ("done", "cached") and files is not None and not store.has(h):
            # the worker ran on a node without our filesystem: store its result here
            store.write_result(cfg, csv_to_frame(files["history"]), csv_to_frame(files["clients"]),
                               summary)
        on_done(cfg, out)


# ---------------------------------------------------------------------------- sweep
def sweep(configs, seeds=None, backend: str = "local", workers: int | None = None,
          address: str | None = None, store: ResultStore | str | Path | None = None,
          progress: bool = True, diverged: str = "raise") -> pd.DataFrame:
    """Run every cell of ``configs x seeds`` that is not finished yet; see the module docstring.
    ``diverged``: ``"record"`` stores a diverged run as its outcome (``fedlib.experiments.run``).

    Returns a DataFrame with one row per cell: hash, seed, paradigm, algorithm, status
    (``cached`` | ``done`` | ``failed``), error, and the summary metrics.
    """
    from fedlib.experiments.running.runner import DIVERGED, as_store

    check_choice("sweep backend", backend, SWEEP_BACKENDS)
    check_choice("diverged", diverged, DIVERGED)
    if workers is not None:
        check(isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1,
              f"workers must be an integer >= 1, got {workers!r}")
    store = as_store(store)
    cells = expand(configs, seeds)
    store.check_writable()
    root = str(store.root.resolve())
    rows: dict[str, dict] = {}

    def record(cfg, out):
        status, h, info, _ = out
        h = h or cfg.config_hash()
        row = {"hash": h[:12], "seed": cfg.seed, "paradigm": cfg.paradigm,
               "algorithm": cfg.algorithm, "profile": cfg.profile, "status": status,
               "error": info.get("error") if status == "failed" else None}
        if status != "failed":
            row.update({k: v for k, v in info.items() if k not in row and k != "files"})
        else:
            row["traceback"] = info.get("traceback")
        rows[cfg.config_hash()] = row

    from fedlib.experiments.running.runner import must_recompute

    todo = []
    for cfg in cells:
        res = store.get(cfg)
        if res is not None and not must_recompute(res.config_hash):
            record(cfg, ("cached", res.config_hash, res.summary, None))
        else:
            todo.append(cfg)

    bar = progress_bar(total=len(cells), initial=len(cells) - len(todo), disable=not progress,
               unit="run", desc=f"sweep ({backend})", dynamic_ncols=True)
    failures = [0]

    def on_done(cfg, out):
        record(cfg, out)
        failures[0] += out[0] == "failed"
        bar.update(1)
        bar.set_postfix(failed=failures[0], refresh=False)

    try:
        if todo:
            n = min(len(todo), int(workers) if workers else cpu_count())
            if backend == "local":
                _local(todo, root, n, on_done, diverged)
            else:
                _ray(todo, root, workers, address, store, on_done, diverged)
    finally:
        bar.close()

    table = pd.DataFrame([rows[c.config_hash()] for c in cells if c.config_hash() in rows])
    failed = table[table["status"] == "failed"] if len(table) else table
    if progress:
        progress_write(f"[fedlib] sweep: {len(cells)} cells, "
                       f"{int((table['status'] == 'cached').sum())} cached, "
                       f"{int((table['status'] == 'done').sum())} run, {len(failed)} failed "
                       f"(store {store.root})")
        for _, r in failed.iterrows():
            print(f"  FAILED {r['hash']} {r['paradigm']}/{r['algorithm']} seed={r['seed']}: "
                  f"{r['error']}", file=sys.stderr)
    return table
