"""``fedlib safl schedule``: replay the semi-asynchronous clock without training (spec §1).

    fedlib safl schedule --delays official-100 --clients 100 --k 10 --rounds 400 --json
    fedlib safl schedule --delays uniform --ratio 20 --clients 50 --scenario dropout

Prints ticks, local trainings, uploads and the mean / max staleness of the aggregated updates
under the ``snapshot`` and ``overwrite`` upload semantics (both come from one replay: the timing
does not depend on the semantics).

- ``overwrite`` (the FedQS presets' default): the official code's buffer holds one file per client,
  so a client's newer update replaces its queued one. Staleness stays bounded.
- ``snapshot``: every finished training queues its own update, as uploaded. When clients upload
  faster than the server aggregates, the queue falls behind and staleness grows.
 The official code's figures (spec §1): ~446 ticks, ~4000
local trainings, mean staleness ~9.8 (snapshot) vs ~2.5 (overwrite).

It also prints the queue regime before anything is trained: uploads per tick against K (the
server aggregates at most K per tick), the backlog left in the buffer after each aggregation
(mean / max / final) and whether the buffer keeps up. With more than K uploads per tick the
backlog grows every tick (e.g. ``--clients 200 --ratio 50`` or ``--clients 100 --ratio 20``
with ``--k 10``): under ``snapshot`` the staleness grows with it, under ``overwrite`` almost every
aggregated entry holds a later training.
"""

from __future__ import annotations

import argparse
import json

from fedlib.safl.delays import PROFILES, make_delays
from fedlib.safl.schedule import SCENARIOS, UPLOADS, replay

# the two regimes in two sentences each (the README says the same)
REGIMES = {
    "overwrite": "the official code's buffer holds one file per client, so a client's newer update replaces "
                 "its queued one. Staleness stays bounded (the FedQS presets' default).",
    "snapshot": "every finished training queues its own update, as uploaded. When clients upload faster than "
                "the server aggregates, the queue falls behind and staleness grows.",
}

__all__ = ["register", "schedule_command"]


def register(subparsers) -> None:
    p = subparsers.add_parser("safl", help="semi-asynchronous FL tools (schedule replay)",
                              description="Semi-asynchronous FL tools.")
    sub = p.add_subparsers(dest="safl_command", metavar="SUBCOMMAND")
    s = sub.add_parser("schedule", help="replay the SAFL clock without training",
                       description=__doc__.splitlines()[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    s.add_argument("--delays", default="uniform", choices=PROFILES, help="delay profile")
    s.add_argument("--clients", type=int, default=100, help="number of clients N")
    s.add_argument("--k", type=int, default=10, help="updates per aggregation K")
    s.add_argument("--rounds", type=int, default=400, help="global rounds T")
    s.add_argument("--ratio", type=int, default=50, help="uniform delays in [1, ratio]")
    s.add_argument("--seed", type=int, default=0, help="seed of the uniform delays / scenarios")
    s.add_argument("--scenario", default="none", choices=SCENARIOS, help="dynamic scenario (Table 6)")
    s.add_argument("--upload", default="both", choices=(*UPLOADS, "both"),
                   help="which upload semantics to report")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=schedule_command)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def schedule_command(args) -> int:
    from fedlib.core.errors import check

    check(args.seed >= 0, f"--seed must be >= 0, got {args.seed}", "use e.g. --seed 0")
    for name in ("clients", "k", "rounds", "ratio"):
        check(getattr(args, name) >= 1, f"--{name} must be >= 1, got {getattr(args, name)}")
    # [D, issue 33] the replay ticks the clock one step at a time: bounded, not a silent hang
    for name, high in (("clients", 100_000), ("rounds", 100_000), ("ratio", 10_000)):
        check(getattr(args, name) <= high, f"--{name} {getattr(args, name)} exceeds the limit of {high:,}",
              f"use --{name} <= {high:,}")
    check(args.k <= args.clients, f"--k {args.k} exceeds --clients {args.clients}",
          "lower --k or raise --clients")
    delays = make_delays(args.delays, args.clients, args.ratio, args.seed)
    r = replay(delays, args.k, args.rounds, scenario=args.scenario, seed=args.seed)
    out = {k: r[k] for k in ("clients", "k", "rounds", "scenario", "ticks", "local_trainings", "uploads")}
    out.update({k: (round(r[k], 4) if isinstance(r[k], float) else r[k])
                for k in ("uploads_per_tick", "backlog_mean", "backlog_max", "backlog_final",
                          "buffer_keeps_up")})
    out["delays"] = args.delays if args.delays == "official-100" else f"uniform 1:{args.ratio} (seed {args.seed})"
    for sem in (UPLOADS if args.upload == "both" else (args.upload,)):
        out[sem] = {"staleness_mean": round(r[f"staleness_{sem}_mean"], 4),
                    "staleness_max": r[f"staleness_{sem}_max"],
                    "staleness_mean_code_convention": round(r[f"staleness_{sem}_code_mean"], 4)}
    if args.upload in ("overwrite", "both"):
        out["overwrite"]["replaced_by_later_training"] = round(r["overwrite_replaced"], 4)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"SAFL schedule: N={out['clients']} K={out['k']} T={out['rounds']} delays={out['delays']} "
          f"scenario={out['scenario']}")
    print(f"  ticks: {out['ticks']}   local trainings: {out['local_trainings']}   uploads: {out['uploads']}")
    verdict = "the buffer keeps up" if out["buffer_keeps_up"] else "the buffer CANNOT keep up"
    print(f"  queue: {out['uploads_per_tick']:.2f} uploads per tick vs K = {out['k']}: {verdict}; backlog "
          f"after each aggregation mean {out['backlog_mean']:.1f}  max {out['backlog_max']}  "
          f"final {out['backlog_final']}")
    for sem in (UPLOADS if args.upload == "both" else (args.upload,)):
        print(f"  {sem}: {REGIMES[sem]}")
    for sem in (UPLOADS if args.upload == "both" else (args.upload,)):
        o = out[sem]
        extra = f", {o['replaced_by_later_training']:.1%} of entries hold a later training" \
            if "replaced_by_later_training" in o else ""
        print(f"  {sem:9s} staleness mean {o['staleness_mean']:.3f}  max {o['staleness_max']}"
              f"  (official-code convention: mean {o['staleness_mean_code_convention']:.3f}){extra}")
    return 0
