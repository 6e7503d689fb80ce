"""``fedlib data info NAME [--json]`` and ``fedlib data fetch NAME [--root DIR]``."""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    from fedlib.data.registry import DATASETS

    p = subparsers.add_parser("data", help="inspect or download datasets",
                              description="The datasets under $FEDLIB_DATA (default ./data): `info NAME` shows a "
                                          "dataset's splits and classes, `fetch NAME` downloads its official files.")
    sub = p.add_subparsers(dest="data_command", metavar="ACTION")
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])

    info = sub.add_parser("info", help="split sizes, classes, roles/attributes of a dataset "
                          "(converts it to the tensor cache on first use)",
                          description="Split sizes, classes and roles/attributes of a dataset; the first use "
                                      "converts its files to the tensor cache ($FEDLIB_CACHE).")
    info.add_argument("name", choices=DATASETS, metavar="NAME", help=", ".join(DATASETS))
    info.add_argument("--root", help="data folder (default: $FEDLIB_DATA or ./data)")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=_info)

    fetch = sub.add_parser("fetch", help="download a dataset's official files",
                           description="Download a dataset's official files into the data folder "
                                       "($FEDLIB_DATA or --root), checked against their checksums where the publisher gives one.")
    fetch.add_argument("name", choices=DATASETS, metavar="NAME", help=", ".join(DATASETS))
    fetch.add_argument("--root", help="data folder (default: $FEDLIB_DATA or ./data)")
    fetch.add_argument("--force", action="store_true", help="download again even if present")
    fetch.set_defaults(func=_fetch)


def _info(args: argparse.Namespace) -> int:
    from fedlib.data.registry import dataset_info

    info = dataset_info(args.name, args.root)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(format_info(info))
    return 0


def format_info(info: dict) -> str:
    lines = [f"{info['name']} ({info['kind']}): {info['num_train']:,} train / "
             f"{info['num_test']:,} test, {info['num_classes']} classes"
             f"{' (balanced)' if info['balanced'] else ''}, input {tuple(info['input_shape'])}",
             f"  source: {info['source']} [{info['layout']}]", f"  cache:  {info['cache']}"]
    if "classes" in info and len(info["classes"]) <= 20:
        lines.append(f"  classes: {', '.join(map(str, info['classes']))}")
    if not info["balanced"] and info["num_classes"] <= 20:
        lines.append(f"  train class counts: {info['train_class_counts']}")
    if "mean" in info:
        lines.append(f"  channel mean {info['mean']} std {info['std']}")
    if "num_roles" in info:
        tr, te = info["train_samples_per_role"], info["test_samples_per_role"]
        lines.append(f"  {info['num_roles']} roles from {info['num_plays']} plays "
                     f"(roles with >= {info['min_samples_per_role']} samples, capped at "
                     f"{info['max_samples_per_role']} per role)")
        lines.append(f"  train samples/role: min {tr['min']}, median {tr['median']}, "
                     f"mean {tr['mean']}, max {tr['max']}")
        lines.append(f"  test samples/role:  min {te['min']}, median {te['median']}, "
                     f"mean {te['mean']}, max {te['max']}")
    if "attributes" in info:
        lines.append(f"  {info['num_features']} features")
        for a, counts in info["attributes"].items():
            lines.append(f"  {a}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    return "\n".join(lines)


def _fetch(args: argparse.Namespace) -> int:
    from fedlib.data.fetch import fetch

    path = fetch(args.name, args.root, force=args.force)
    print(f"fedlib: {args.name} is in {path}")
    return 0
