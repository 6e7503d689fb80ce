"""``fedlib split compare``: a split-FL run's summary plus its speed-up against a named baseline.

    fedlib split compare --preset smofi-cifar10-cpu --baseline sflv1-cifar10-cpu \
        [--set seed=1 ...] [--targets 0.3 0.35] [--results DIR]

Both presets get the same ``--set`` overrides, except ``options.*`` (algorithm options), which
only the method gets; finished runs are reused from the result store.
Prints one JSON object: the method's summary (as ``fedlib run``), then ``baseline``, ``target``
(the baseline's best accuracy), ``rounds_to_target``, ``baseline_rounds_to_target``,
``speedup`` and the same per extra target.
"""

from __future__ import annotations

import json

__all__ = ["register", "cmd_compare"]


def cmd_compare(args) -> int:
    from fedlib.experiments.store import ResultStore, _json_clean
    from fedlib.split.report import compare_presets

    out = compare_presets(args.preset, args.baseline, args.overrides, ResultStore(args.results),
                          args.targets, progress=not args.quiet)
    print(json.dumps(_json_clean(out), indent=2, sort_keys=True))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("split", help="split-FL tools (SMoFi): compare a run to a baseline")
    sub = p.add_subparsers(dest="split_command", metavar="ACTION", required=True)
    c = sub.add_parser("compare", help="summary + rounds-to-target and speed-up vs a baseline preset")
    c.add_argument("--preset", required=True, metavar="NAME", help="the method's preset")
    c.add_argument("--baseline", required=True, metavar="NAME", help="the baseline's preset")
    c.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override applied to both runs (options.* to the method only), e.g. --set rounds=20")
    c.add_argument("--targets", nargs="*", type=float, default=None, metavar="ACC",
                   help="extra target accuracies (fractions) besides the baseline's best")
    c.add_argument("--results", metavar="DIR", default=None,
                   help="result store folder (default $FEDLIB_RESULTS or ./results)")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    c.set_defaults(func=cmd_compare)


if __name__ == "__main__":  # usable before fedlib/cli.py lists this module
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m fedlib.split.cli")
    register(parser.add_subparsers(dest="command"))
    ns = parser.parse_args(["split", *sys.argv[1:]])
    raise SystemExit(ns.func(ns))
