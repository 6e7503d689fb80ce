"""Convergence speed-up of a split-FL run against a named baseline run (SMoFi spec §4), and
``fedlib split compare --preset smofi-cifar10-cpu --baseline sflv1-cifar10-cpu [--set k=v] [--targets ..]``.

Speed-up = rounds the baseline needs to reach a target accuracy / rounds the method needs
[D: target = the best accuracy the baseline reaches within its budget; other targets on request].
The metrics themselves are :func:`fedlib.experiments.metrics.rounds_to_target` and
:func:`~fedlib.experiments.metrics.speedup`; this module only pairs runs and tabulates.

    extra = speedup_summary(smofi_result.history, sflv1_result.history, baseline="sflv1-cifar10-cpu")
    table = comparison_table({"sflv1": r1, "smofi": r2}, baseline="sflv1")
"""

from __future__ import annotations

import json
import math
from typing import Mapping, Sequence

import pandas as pd

import fedlib.experiments.metrics as metrics

__all__ = ["speedup_summary", "comparison_table", "compare_presets", "register", "cmd_compare"]


def _history(r):
    return r.history if hasattr(r, "history") else r


def _best(history) -> float:
    acc = pd.to_numeric(pd.DataFrame(history)["accuracy"], errors="coerce").dropna()
    return float(acc.max()) if len(acc) else math.nan


def _num(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def speedup_summary(history, baseline_history, baseline: str = "baseline",
                    targets: Sequence[float] | None = None) -> dict:
    """Flat summary extras: the default target (baseline's best accuracy), rounds each run needs
    to reach it and the speed-up; then the same for every extra ``targets`` value."""
    base_best = _best(_history(baseline_history))
    out = {"baseline": baseline, "baseline_best_accuracy": _num(base_best)}
    items = [("", None)] + [(f"_{t:g}", float(t)) for t in (targets or [])]
    for suffix, t in items:
        target = base_best if t is None else t
        if math.isnan(target):
            continue
        out[f"target{suffix}"] = target
        out[f"rounds_to_target{suffix}"] = metrics.rounds_to_target(_history(history), target)
        out[f"baseline_rounds_to_target{suffix}"] = metrics.rounds_to_target(
            _history(baseline_history), target)
        out[f"speedup{suffix}"] = _num(metrics.speedup(_history(baseline_history), _history(history),
                                                       target))
    return out


def comparison_table(results: Mapping[str, object], baseline: str,
                     targets: Sequence[float] | None = None) -> pd.DataFrame:
    """One row per run: best/final accuracy, rounds to the target(s) and speed-up vs ``baseline``
    (a key of ``results``; values are RunResults or history frames)."""
    base = _history(results[baseline])
    rows = []
    for name, r in results.items():
        h = _history(r)
        s = metrics.summarize(h)
        row = {"run": name, "best_accuracy": s["best_accuracy"], "final_accuracy": s["final_accuracy"]}
        row.update({k: v for k, v in speedup_summary(h, base, baseline, targets).items()
                    if k != "baseline"})
        rows.append(row)
    return pd.DataFrame(rows)


def compare_presets(method: str, baseline: str, overrides=None, store=None,
                    targets: Sequence[float] | None = None, progress: bool = False) -> dict:
    """Run (or load from the result store) preset ``method`` and preset ``baseline`` with the same
    ``overrides`` and return the method's summary plus :func:`speedup_summary` against the
    baseline (and the baseline's config hash).

    ``options.*`` overrides (algorithm options) apply to the method only: the baseline keeps its
    own algorithm and options; every other override (scale, seed, data, local) applies to both.
    """
    from fedlib.core.dataclass_io import parse_overrides
    from fedlib.experiments.config import RunConfig
    from fedlib.experiments.running.runner import run

    pairs = parse_overrides(overrides)
    shared = {k: v for k, v in pairs if not k.startswith("options.")}
    cm = RunConfig.from_preset(method, dict(pairs) or None)
    cb = RunConfig.from_preset(baseline, shared or None)
    check_comparable(cm, cb, method, baseline)
    rb = run(cb, store=store, progress=progress)
    rm = run(cm, store=store, progress=progress)
    out = dict(rm.summary)
    out.update(speedup_summary(rm.history, rb.history, baseline, targets))
    out["baseline_config_hash"] = rb.config_hash
    return out


def check_comparable(cm, cb, method: str, baseline: str) -> None:
    """FedlibError unless the two configs are one experiment but for the algorithm: same paradigm,
    task (dataset, partition, model) and profile (issue 19: a split run against a SAFL Adult
    baseline, or a smoke run against a cpu one, is no comparison)."""
    from fedlib.core.errors import FedlibError

    keys = {"paradigm": lambda c: c.paradigm, "dataset": lambda c: c.data.dataset,
            "partition": lambda c: c.data.partition, "model": lambda c: c.model.name,
            "profile": lambda c: c.profile}
    diff = [f"{k} {f(cm)!r} vs {f(cb)!r}" for k, f in keys.items() if f(cm) != f(cb)]
    if diff:
        raise FedlibError(f"presets {method!r} and {baseline!r} are not the same experiment: "
                          + "; ".join(diff),
                          "compare presets of one paradigm, task and profile, e.g. --preset "
                          "smofi-cifar10-cpu --baseline sflv1-cifar10-cpu")


# ---------------------------------------------------------------- command line
def cmd_compare(args) -> int:
    from fedlib.core.dataclass_io import json_clean
    from fedlib.experiments.results.store import ResultStore

    out = compare_presets(args.preset, args.baseline, args.overrides, ResultStore(args.results),
                          args.targets, progress=not args.quiet)
    print(json.dumps(json_clean(out), indent=2, sort_keys=True))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("split", help="split-FL tools (SMoFi): compare a run to a baseline",
                              description="Split-FL tools (SMoFi): `compare` runs a method and a baseline preset "
                                          "and prints their summaries, rounds to a target accuracy and the speed-up.")
    sub = p.add_subparsers(dest="split_command", metavar="ACTION", required=True)
    c = sub.add_parser("compare", help="summary + rounds-to-target and speed-up vs a baseline preset",
                       description="Run (or load) a method's preset and a baseline preset under the same "
                                   "overrides; print both summaries, the rounds each takes to a target accuracy "
                                   "and the method's speed-up.")
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
