"""``fedlib run | sweep | results | presets`` (registered by fedlib/cli.py).

    fedlib run --preset toy-smoke --set rounds=50 --set local.lr=0.2 [--results DIR]
    fedlib sweep --preset toy-smoke --seeds 0 1 2 --grid safl.k=2,4 --backend local|ray
    fedlib results list | show HASH | rm HASH... | rm --all | rehash [--dry-run] | export [HASH...] | import [PATH]
    fedlib presets
"""

from __future__ import annotations

import argparse
import json
import sys

from fedlib.core.errors import FedlibError, check

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


def _store(args):
    from fedlib.experiments.results.store import ResultStore

    return ResultStore(args.results)


def _print_json(obj) -> None:
    from fedlib.core.dataclass_io import json_clean

    print(json.dumps(json_clean(obj), indent=2, sort_keys=True))


# ---------------------------------------------------------------------------- commands
def cmd_run(args) -> int:
    from fedlib.experiments.running.runner import run

    import contextlib

    cfg = _configs(args)
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries only the JSON summary
        res = run(cfg, store=_store(args), progress=not args.quiet, resume=not args.no_resume)
    summary = {k: v for k, v in res.summary.items() if k != "files"}
    summary["path"] = str(res.path)
    summary["cached"] = res.cached
    _print_json(summary)
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
                      address=args.address, store=_store(args), progress=not args.quiet)
    cols = [c for c in ("hash", "algorithm", "seed", "status", "final_accuracy",
                        "convergence_accuracy", "rounds_to_95", "error") if c in table.columns]
    if args.json:
        _print_json(table[cols].to_dict(orient="records"))
    else:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(table[cols].to_string(index=False))
    return 1 if (table["status"] == "failed").any() else 0


def cmd_results(args) -> int:
    store = _store(args)
    if args.action in ("export", "import"):
        from fedlib.experiments.results import cli as ledger_cli

        return (ledger_cli.cmd_export if args.action == "export" else ledger_cli.cmd_import)(store, args)
    if args.action == "list":
        table = store.list()
        if args.json:
            _print_json(table.to_dict(orient="records"))
        elif table.empty:
            print(f"(no results in {store.root})")
        else:
            import pandas as pd

            with pd.option_context("display.width", 200, "display.max_columns", 20):
                print(table.drop(columns=["detail"]).to_string(index=False))
        return 0
    if args.action == "show":
        check(len(args.hashes) == 1, "results show takes exactly one HASH (prefix)")
        _print_json(store.show(args.hashes[0]))
        return 0
    if args.action == "rehash":
        from fedlib.experiments.results.rehash import rehash_store

        table = rehash_store(store, dry_run=args.dry_run)
        if args.json:
            _print_json(table.to_dict(orient="records"))
        else:
            counts = table["action"].str.split(":").str[0].value_counts().to_dict() if len(table) else {}
            print(table.to_string(index=False) if len(table) else f"(no results in {store.root})")
            print(("would move" if args.dry_run else "moved") + f" {counts.get('moved', 0)}; "
                  f"current {counts.get('current', 0)}; kept {counts.get('kept', 0)}")
        assumed = int((table["data"] == "assumed current").sum()) if len(table) else 0
        if assumed:
            from fedlib.data.paths import data_root

            print(f"assumed: {assumed} run(s) stored without a data fingerprint were computed on the "
                  f"same data as now under {data_root().resolve()} ($FEDLIB_DATA); their new hash "
                  "records that data's fingerprint. If they ran on other data, remove them instead.",
                  file=sys.stderr)
        return 0
    # rm
    check(bool(args.hashes) != bool(args.all), "results rm takes HASH prefix(es) or --all",
          "e.g. fedlib results rm 3fa2c1 or fedlib results rm --all")
    removed = []
    try:
        if args.all:
            removed = store.rm(all=True)
        else:
            for p in args.hashes:
                removed += store.rm(p, yes=args.yes)
    finally:
        for h in removed:
            print(f"removed {h}")
    if not removed:
        print(f"(nothing to remove in {store.root})")
    return 0


def cmd_presets(args) -> int:
    from fedlib.experiments.config import list_presets, preset_description

    names = list_presets()
    if args.json:
        _print_json({n: preset_description(n) for n in names})
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

    p = subparsers.add_parser("results", help="inspect and prune the result store")
    p.add_argument("action", choices=("list", "show", "rm", "rehash", "export", "import"),
                   help="rehash: move stored runs to the current config-hash scheme (after an upgrade); "
                        "export: finished runs into the results ledger (default: the runs the reports "
                        "read; HASH prefixes or --all for others); import [PATH]: ledger runs into the store")
    p.add_argument("hashes", nargs="*", metavar="HASH", help="hash prefix(es)")
    p.add_argument("--all", action="store_true", help="with rm: remove every result; with export: export every result")
    p.add_argument("--yes", action="store_true",
                   help="with rm: remove by a hash prefix shorter than 8 characters")
    p.add_argument("--ledger", metavar="DIR", default=None,
                   help="with export/import: the ledger folder (default $FEDLIB_LEDGER or ledger/ of the checkout)")
    p.add_argument("--dry-run", action="store_true", help="with rehash: only say what would move")
    p.add_argument("--results", metavar="DIR", default=None,
                   help="result store folder (default $FEDLIB_RESULTS or ./results)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_results)

    p = subparsers.add_parser("presets", help="list the named presets")
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
