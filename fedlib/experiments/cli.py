"""``fedlib run | sweep | presets`` (registered by fedlib/cli.py; ``fedlib results`` and
``fedlib verify``: :mod:`fedlib.experiments.results.cli`).

    fedlib run --preset toy-smoke --set rounds=50 --set local.lr=0.2 [--results DIR]
    fedlib sweep --preset toy-smoke --seeds 0 1 2 --grid safl.k=2,4 --backend local|ray
    fedlib presets
"""

from __future__ import annotations

import argparse
import sys

from fedlib.core.errors import FedlibError, check
from fedlib.experiments.results.cli import open_store, print_json

__all__ = ["register"]


def _add_config_args(p: argparse.ArgumentParser, many: bool = False) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", nargs="+" if many else None, metavar="NAME",
                     help="preset name(s) from fedlib/presets (see `fedlib presets`)")
    src.add_argument("--config", nargs="+" if many else None, metavar="FILE",
                     help="YAML config file(s)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set safl.k=20 --set options.similarity=angle")
    p.add_argument("--results", metavar="DIR", default=None,
                   help="result store folder (default $FEDLIB_RESULTS or ./results)")


def _configs(args, many: bool = False):
    from fedlib.experiments.config import RunConfig

    if many:
        if args.preset:
            cfgs = [RunConfig.from_preset(n) for n in args.preset]
        elif args.config:
            cfgs = [RunConfig.from_yaml(f) for f in args.config]
        else:
            cfgs = [RunConfig().validated()]
        return [c.with_overrides(args.overrides) for c in cfgs]
    if args.preset:
        cfg = RunConfig.from_preset(args.preset)
    elif args.config:
        cfg = RunConfig.from_yaml(args.config)
    else:
        cfg = RunConfig().validated()
    return cfg.with_overrides(args.overrides)


# ---------------------------------------------------------------------------- commands
def cmd_run(args) -> int:
    from fedlib.experiments.running.runner import run

    import contextlib

    cfg = _configs(args)
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries only the JSON summary
        res = run(cfg, store=open_store(args), progress=not args.quiet, resume=not args.no_resume)
    summary = {k: v for k, v in res.summary.items() if k != "files"}
    summary["path"] = str(res.path)
    summary["cached"] = res.cached
    print_json(summary)
    return 0


def cmd_sweep(args) -> int:
    from fedlib.experiments.running.sweep import grid, parse_grid, sweep

    axes = parse_grid(args.grid)
    check(not ("seed" in axes and args.seeds is not None),
          "--grid seed=... and --seeds both set the seeds: --seeds would replace the grid's",
          "give the seeds once, e.g. --seeds 0 1 2")
    cfgs = [c for base in _configs(args, many=True) for c in grid(base, axes)]
    import contextlib

    with contextlib.redirect_stdout(sys.stderr):  # stdout carries only the cell table
        table = sweep(cfgs, seeds=args.seeds, backend=args.backend, workers=args.workers,
                      address=args.address, store=open_store(args), progress=not args.quiet)
    cols = [c for c in ("hash", "algorithm", "seed", "status", "final_accuracy",
                        "convergence_accuracy", "rounds_to_95", "error") if c in table.columns]
    if args.json:
        print_json(table[cols].to_dict(orient="records"))
    else:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(table[cols].to_string(index=False))
    return 1 if (table["status"] == "failed").any() else 0


def cmd_presets(args) -> int:
    from fedlib.experiments.config import list_presets, preset_description

    names = list_presets()
    if args.json:
        print_json({n: preset_description(n) for n in names})
        return 0
    width = max((len(n) for n in names), default=0)
    for n in names:
        print(f"{n:<{width}}  {preset_description(n)}")
    return 0


# ---------------------------------------------------------------------------- parsers
def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="run (or load, or resume) one configuration",
                              description="Run one configuration; print its JSON summary. "
                              "A finished result is loaded from the store; an interrupted run "
                              "resumes from its last checkpoint.")
    _add_config_args(p)
    p.add_argument("--no-resume", action="store_true",
                   help="ignore a stored result / checkpoint and recompute from round 0")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("sweep", help="run a grid of configs x seeds (local pool or Ray)",
                              description="Run configs x grid x seeds; finished cells are skipped.")
    _add_config_args(p, many=True)
    p.add_argument("--seeds", nargs="+", type=int, default=None, metavar="SEED",
                   help="seeds (default: the config's own seed)")
    p.add_argument("--grid", nargs="+", action="extend", default=[], metavar="KEY=V1,V2",
                   help="grid axes, e.g. --grid safl.k=5,10 options.similarity=cosine,angle")
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--workers", type=int, default=None,
                   help="parallel runs (default: one per CPU core)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (default: start a local Ray instance)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the cell table as JSON")
    p.set_defaults(func=cmd_sweep)

    p = subparsers.add_parser("presets", help="list the named presets",
                              description="List the named presets (a task, model and scale each), with one "
                                          "line saying what each is; use a name with `fedlib run --preset NAME`.")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_presets)


if __name__ == "__main__":  # python -m fedlib.experiments.cli ... (only these commands)
    parser = argparse.ArgumentParser(prog="fedlib")
    register(parser.add_subparsers(dest="command"))
    ns = parser.parse_args()
    if not getattr(ns, "func", None):
        parser.print_help()
        sys.exit(1)
    try:
        sys.exit(int(ns.func(ns) or 0))
    except FedlibError as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        sys.exit(2)
