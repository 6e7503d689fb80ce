"""``fedlib results`` and ``fedlib verify``: the result store and the results ledger (issue 28).

    fedlib results list | show HASH | rm HASH... | rm --all | rehash [--dry-run]   the store
    fedlib results export [HASH ...] [--all] [--reports] [--ledger DIR]   store -> ledger
    fedlib results import [PATH]                                           ledger -> store
    fedlib verify [--sample N] [--only NOTEBOOK] [--profile P] [--seed S]  recompute ledger runs
    fedlib verify --changed-since REV          check the entries added, rewritten or deleted since REV

``verify`` recomputes ledger runs in a scratch store and prints, per run, ``identical`` or the first
round whose (non-timing) history differs and the largest accuracy difference, with the CPU type each
ran on. It exits 1 when a run made on this CPU type differs: one thread gives byte-identical
histories on one CPU type; another type differs at float level (README, "Reproducibility").
"""

from __future__ import annotations

import json
import math
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from fedlib.core.errors import check
from fedlib.experiments.results.drift_record import drift_bounds, load_drift_record, parse_drift_record
from fedlib.experiments.results.ledger import Ledger, export_runs, import_runs
from fedlib.experiments.results.verify_check import judge

__all__ = ["register", "cmd_results", "cmd_export", "cmd_import", "cmd_verify", "report_runs", "compare_histories"]

#: history / clients columns that measure the host, not the run (left out of every comparison)
HOST_TIME = re.compile(r"^time_|wall|seconds|_share$")


def report_runs(reports: Path, profile: str | None = None) -> dict[str, list[str]]:
    """{report (relative to ``reports/``): the hashes it read} from every ``*.runs.json`` that
    ``fedlib reproduce`` wrote beside the executed notebooks (``profile``: one folder only)."""
    roots = [reports / profile] if profile else [p for p in sorted(reports.iterdir()) if p.is_dir()] \
        if reports.is_dir() else []
    out = {}
    for root in roots:
        for f in sorted(root.rglob("*.runs.json")):
            try:
                out[str(f.relative_to(reports))] = list(json.loads(f.read_text())["runs"])
            except (OSError, ValueError, KeyError, TypeError):
                print(f"fedlib: warning: {f} is unreadable; its runs are not listed", file=sys.stderr)
    return out


def _reports_root() -> Path:
    from fedlib.experiments.results.ledger import default_ledger_root

    return default_ledger_root().parent / "reports"


def cmd_export(store, args) -> int:
    ledger = Ledger(args.ledger)
    if args.all:
        hashes = store.hashes()
    elif args.hashes:
        hashes = [store.resolve(p) for p in args.hashes]
    else:
        runs = report_runs(_reports_root())
        hashes = sorted({h for hs in runs.values() for h in hs})
        check(bool(runs), "no report lists its runs (no reports/<profile>/**/*.runs.json)",
              "name HASH prefixes, or --all, or execute the notebooks with fedlib reproduce first")
    out = export_runs(store, ledger, hashes)
    print(f"ledger {ledger.root}: {len(out['added'])} runs added, {len(out['present'])} already there, "
          f"{len(out['missing'])} not finished in {store.root}; {len(ledger.hashes())} entries, "
          f"{ledger.size() / 2**20:.1f} MiB")
    for h in out["missing"]:
        print(f"  not in the store (or unfinished): {h[:12]}")
    return 0


def cmd_import(store, args) -> int:
    check(len(args.hashes) <= 1, "results import takes at most one PATH (a ledger folder)")
    ledger = Ledger(args.hashes[0] if args.hashes else args.ledger)
    check(ledger.root.is_dir(), f"no ledger folder at {str(ledger.root)!r}",
          "give the path of a ledger (default: ledger/ of the checkout)")
    rep = import_runs(ledger, store)
    print(f"{rep.line()} (from {ledger.root} into {store.root})")
    if rep.swept:
        print(f"removed {len(rep.swept)} temporary folder(s) a killed import left in {store.root}", file=sys.stderr)
    for h, why in rep.older:
        print(f"fedlib: note: ledger entry {h[:12]}: {why}", file=sys.stderr)
    for h, why in rep.refused:
        print(f"fedlib: refused ledger entry {_short(h)}: {why}", file=sys.stderr)
    return 1 if rep.refused else 0


def _short(h: str) -> str:
    """A hash as its 12-character prefix; a path (a stray in the ledger) as it is."""
    return h[:12] if re.fullmatch(r"[0-9a-f]{64}", h) else h


# ------------------------------------------------------------------------------------------ verify
def _comparable(frame):
    return frame[[c for c in frame.columns if not HOST_TIME.search(str(c))]]


def _equal(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def compare_histories(old, new) -> dict:
    """``{"identical", "first_round", "max_acc_diff"}`` of two history frames (host-time columns left
    out): the first round whose row differs and the largest |accuracy difference| in points."""
    a, b = _comparable(old).reset_index(drop=True), _comparable(new).reset_index(drop=True)
    first = None
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        first = 0
    else:
        for i in range(len(a)):
            if not all(_equal(x, y) for x, y in zip(a.iloc[i].tolist(), b.iloc[i].tolist())):
                first = int(a["round"].iloc[i]) if "round" in a else i
                break
    diff = None
    if "accuracy" in a and "accuracy" in b and len(a) == len(b):
        d = (a["accuracy"].astype(float) - b["accuracy"].astype(float)).abs().dropna()
        diff = float(d.max()) * 100 if len(d) else 0.0
    return {"identical": first is None, "first_round": first, "max_acc_diff": diff}


def _candidates(ledger: Ledger, only: list[str] | None, profile: str | None) -> list[str]:
    have = set(ledger.hashes())
    if not only:
        return sorted(have)
    runs = report_runs(_reports_root(), profile)
    picked = {h for rel, hs in runs.items() if any(o in rel for o in only) for h in hs}
    check(bool(picked), f"no report matching {only} lists its runs",
          "see reports/<profile>/**/*.runs.json (written by fedlib reproduce)")
    return sorted(picked & have)


def added_since(ledger: Ledger, rev: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(hashes, strays) of the ledger entries added or rewritten since git revision ``rev``
    (:func:`fedlib.experiments.results.changes.changed_since`)."""
    from fedlib.experiments.results.changes import changed_since

    ch = changed_since(ledger, rev)
    return ch.recompute, ch.strays


#: where a checkout keeps its cross-CPU drift record (beside its ledger)
DRIFT_RECORD = Path("benchmarks") / "results" / "cross_cpu.json"


def _drift_record_path(args, ledger) -> Path | None:
    """``--record FILE``; by default the checkout's drift record beside the ledger, when it exists."""
    if args.no_record:
        return None
    if args.record:
        return Path(args.record)
    default = Path(ledger.root).resolve().parent / DRIFT_RECORD
    return default if default.is_file() else None


def record_drift(path: Path, measured: list[dict]) -> int:
    """Append ``measured`` (one dict per run recomputed on another CPU type) to the JSON list at ``path``;
    an entry of the same run, made-on and recomputed-on CPU replaces the older one. Returns how many."""
    from fedlib.core.utils import atomic_write_bytes, check_output_file

    check_output_file(path, "drift record")
    entries = load_drift_record(path)
    key = lambda e: (e.get("hash"), e.get("made_on"), e.get("recomputed_on"))  # noqa: E731
    new = {key(m) for m in measured}
    kept = [e for e in entries if e.get("hash") is None or key(e) not in new]
    text = "[\n" + ",\n".join(" " + json.dumps(e, ensure_ascii=False) for e in kept + measured) + "\n]\n"
    atomic_write_bytes(path, text.encode("utf-8"))
    return len(measured)


def _replay(ledger, h: str, cfg, scratch: str):
    """Ledger run ``h`` recomputed in the ``scratch`` store (one thread), as it was made: a run recorded
    as diverged (``summary["diverged_round"]``) is replayed with ``diverged="record"``. Returns the new
    result and the ledger's summary."""
    from fedlib.experiments.results.store import ResultStore
    from fedlib.experiments.running.runner import run

    summary = json.loads(ledger.read(h)["summary.json"])
    new = run(cfg, store=ResultStore(scratch), progress=False, threads=1,
              diverged="record" if "diverged_round" in summary else "raise")
    return new, summary


def _changed_pool(ledger: Ledger, rev: str) -> tuple[list[str], list[tuple[str, str]], dict]:
    """(entries to recompute, (entry, why) refused, drift bounds) of ``verify --changed-since REV``:
    every entry added, rewritten or deleted since ``rev`` is listed; a deleted entry a report reads
    and an entry failing the import's checks are refused; the drift bounds come from the drift record
    as it was at ``rev`` (a pull cannot widen what excuses its own entries)."""
    from fedlib.experiments.results.changes import changed_since, git_show

    ch = changed_since(ledger, rev)
    reads: dict[str, list[str]] = {}
    for rel, hs in report_runs(Path(ledger.root).parent / "reports").items():
        for h in hs:
            reads.setdefault(h, []).append(rel)
    refused, notes, pool = [], [], []
    for h in ch.recompute:  # the import's checks first: checksums, types, links, bombs, the config's hash
        ok, why = ledger.check(h)
        if not ok:
            refused.append((h[:12], why))
        else:
            pool.append(h)
        if h in ch.rewritten:
            notes.append(f"  rewritten {h[:12]} (an entry only ever gets added)"
                         + (f"; read by {', '.join(reads[h][:3])}" if h in reads else ""))
    for h in ch.deleted:
        if h in reads:
            refused.append((h[:12], f"deleted, but {', '.join(reads[h][:3])} reads it"))
        else:
            notes.append(f"  deleted {h[:12]} (no report reads it)")
    refused += ch.strays
    blob = git_show(ledger.root, rev, f"../{DRIFT_RECORD.as_posix()}")
    name = f"{DRIFT_RECORD.as_posix()} at {rev}"
    bounds = drift_bounds(parse_drift_record(blob, name)) if blob is not None else {}
    print(f"{len(ch.recompute) + len(ch.deleted) + len(ch.strays)} ledger entries changed since {rev} "
          f"({len(ch.added)} added, {len(ch.rewritten)} rewritten, {len(ch.deleted)} deleted): "
          f"{len(refused)} refused, {len(pool)} to recompute; drift excused on another CPU type: "
          + (", ".join(f"{f} {b['round']:.2f}" for f, b in sorted(bounds.items())) or "none measured")
          + f" ({name})")
    for line in notes:
        print(line)
    for rel, why in refused:
        print(f"  refused {rel}: {why}")
    return pool, refused, bounds


def _check_choices(args) -> None:
    """``--only`` with no names and ``--profile`` without ``--only`` (or unknown) are refused: each
    used to verify every run, silently."""
    check(args.only is None or len(args.only) > 0, "--only needs at least one report name",
          "e.g. --only fedqs/table1 (or leave --only out to verify every ledger run)")
    check(args.profile is None or args.only, f"--profile {args.profile} only chooses reports with --only",
          f"add --only NOTEBOOK, e.g. --only fedqs/table1 --profile {args.profile}")
    if args.profile is not None:
        from fedlib.core.profiles import REPORT_PROFILES as PROFILES

        check(args.profile in PROFILES, f"unknown profile {args.profile!r} for --profile",
              f"choose one of {', '.join(PROFILES)}")


def _measurement(h: str, cfg, c: dict, final, made_on: str, here: str) -> dict:
    """One drift-record entry: run ``h`` made on ``made_on``, recomputed ``here``."""
    from fedlib.experiments.results.provenance import drift_family

    return {"hash": h[:12], "run": f"{cfg.algorithm}, {cfg.data.dataset} {cfg.model.name}, "
            f"{cfg.rounds} rounds, seed {cfg.seed}", "family": drift_family(cfg),
            "rounds": cfg.rounds, "made_on": made_on, "recomputed_on": here,
            "largest_round_diff": round(float(c["max_acc_diff"]), 4),
            "final_diff": None if final is None else round(final, 4),
            "date": time.strftime("%Y-%m-%d"), "source": "fedlib verify"}


def cmd_verify(args) -> int:
    import pandas as pd

    from fedlib.experiments.config import RunConfig
    from fedlib.experiments.results.provenance import cpu_type, drift_family
    from fedlib.experiments.results.store import csv_to_frame

    _check_choices(args)
    ledger = Ledger(args.ledger)
    refused, bounds, strict = [], None, args.changed_since is not None
    record = _drift_record_path(args, ledger)
    if record is not None:  # a damaged record or a device is named before hours of recomputation
        from fedlib.core.utils import check_output_file

        check_output_file(record, "drift record (--record)")
        load_drift_record(record)
    if strict:
        check(not args.only, "--changed-since and --only both choose the runs", "give one of them")
        pool, refused, bounds = _changed_pool(ledger, args.changed_since)
        if not pool:
            return 1 if refused else 0
    else:
        pool = _candidates(ledger, args.only, args.profile)
    check(bool(pool), f"the ledger {str(ledger.root)!r} holds no run to verify",
          "export runs first (fedlib results export) or check --only / --ledger")
    check(args.sample is None or args.sample >= 1, f"--sample must be >= 1, got {args.sample}")
    chosen = sorted(random.Random(args.seed).sample(pool, min(args.sample, len(pool)))) if args.sample else pool
    here = cpu_type()
    print(f"verifying {len(chosen)} of {len(pool)} ledger runs on {here}")
    rows, bad, measured = [], 0, []
    with tempfile.TemporaryDirectory(prefix="fedlib-verify-") as scratch:
        for h in chosen:
            ok, why = (True, "") if strict else ledger.check(h)  # --changed-since checked them already
            if not ok:
                bad += 1
                rows.append({"run": h[:12], "result": f"refused: {why}"})
                print(f"  {h[:12]} refused: {why}", flush=True)
                continue
            entry = ledger.config(h)
            made_on = ledger.provenance(h).get("cpu", "unknown")
            cfg = RunConfig.from_dict(entry["config"])
            t0 = time.perf_counter()
            if cfg.data_fingerprint() != entry.get("data_fingerprint"):
                # --changed-since: an entry that cannot be recomputed here is not verified (exit 1)
                bad += strict
                rows.append({"run": h[:12], "result": "skipped: the dataset files differ from the run's"
                             + ("; not verified" if strict else ""), "made on": made_on})
                continue
            new, was_summary = _replay(ledger, h, cfg, scratch)
            c = compare_histories(csv_to_frame(ledger.read(h)["history.csv"]), new.history)
            was = was_summary.get("final_accuracy")
            now = new.summary.get("final_accuracy")
            final = (now - was) * 100 if isinstance(was, (int, float)) and isinstance(now, (int, float)) else None
            wrong, result = judge(made_on == here, c, was_summary, new.summary, drift_family(cfg), bounds, strict)
            bad += wrong
            if made_on != here and c["max_acc_diff"] is not None and drift_family(cfg) and not wrong:
                measured.append(_measurement(h, cfg, c, final, made_on, here))
            rows.append({"run": h[:12], "algorithm": cfg.algorithm, "rounds": cfg.rounds, "result": result,
                         "max |accuracy diff| (points)": c["max_acc_diff"], "final accuracy diff (points)": final,
                         "made on": made_on,
                         "minutes": round((time.perf_counter() - t0) / 60, 1)})
            print(f"  {h[:12]} {cfg.algorithm:<10} {result}; max |acc diff| "
                  f"{c['max_acc_diff'] if c['max_acc_diff'] is not None else float('nan'):.3f} points, final "
                  f"{final if final is not None else float('nan'):+.3f}; "
                  f"made on {made_on}", flush=True)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 60):
        print(pd.DataFrame(rows).to_string(index=False))
    if record is not None and measured:
        n = record_drift(record, measured)
        print(f"{n} cross-CPU comparison(s) recorded in {record}")
    print(f"{len(rows) - bad} consistent, {bad} differ " + ("beyond what their CPU type excuses" if strict else
                                                            "on the CPU type they were made on")
          + (f"; {len(refused)} changed entries refused" if refused else ""))
    return 1 if bad or refused else 0


def open_store(args):
    """The result store a command's ``--results`` names (every ``fedlib`` command that reads one)."""
    from fedlib.experiments.results.store import ResultStore

    return ResultStore(args.results)


def print_json(obj) -> None:
    """``obj`` as sorted, indented JSON on stdout (the commands' machine-readable output)."""
    from fedlib.core.dataclass_io import json_clean

    print(json.dumps(json_clean(obj), indent=2, sort_keys=True))


#: profile labels as ``results list`` shows them: ``custom`` is the label of a run whose scale a
#: notebook or the user changed, not a profile one can ask for
PROFILE_SHOWN = {"custom": "custom scale"}
#: the columns ``results list`` shows, with their headings
LIST_COLUMNS = {"hash": "hash", "status": "status", "paradigm": "paradigm", "algorithm": "algorithm",
                "dataset": "dataset", "model": "model", "profile": "profile", "seed": "seed", "rounds": "rounds",
                "done_rounds": "done", "final_accuracy": "final_acc", "convergence_accuracy": "conv_acc",
                "modified": "stored"}
DEFAULT_LIMIT = 40


def filter_runs(table, profile: str | None = None, algorithm: str | None = None,
                hashes: set[str] | None = None):
    """The rows of ``store.list()`` of one ``profile`` (``custom`` or ``custom scale`` for a run of a
    changed scale), one ``algorithm``, and among ``hashes`` (full hashes or prefixes; None: all)."""
    if profile:
        want = {k for k, v in PROFILE_SHOWN.items() if v == profile} or {profile}
        table = table[table["profile"].isin(want)]
    if algorithm:
        table = table[table["algorithm"] == algorithm]
    if hashes is not None:
        table = table[table["hash"].isin({h[:12] for h in hashes})]
    return table


def report_hashes(fragment: str) -> set[str]:
    """The hashes of the runs read by the reports whose path contains ``fragment``
    (``reports/<profile>/**/<report>.runs.json``, written by ``fedlib reproduce``)."""
    runs = report_runs(_reports_root())
    chosen = {name: hs for name, hs in runs.items() if fragment in name}
    check(bool(chosen), f"no report matches {fragment!r}",
          f"choose a fragment of: {', '.join(sorted(runs)) or '(no report lists its runs yet)'}")
    return {h for hs in chosen.values() for h in hs}


def cmd_list(store, args) -> int:
    """``fedlib results list [--profile P] [--algorithm A] [--report R] [--limit N] [--json]``."""
    import pandas as pd

    check(args.limit is None or args.limit >= 0, f"--limit must be 0 (all) or more, got {args.limit}")
    everything = store.list()
    hashes = report_hashes(args.report) if args.report else None
    table = filter_runs(everything, args.profile, args.algorithm, hashes)
    limit = args.limit if args.limit is not None else (0 if args.json else DEFAULT_LIMIT)
    shown = table.head(limit) if limit else table
    if args.json:
        print_json(shown.to_dict(orient="records"))
        return 0
    if table.empty:
        what = "" if len(table) == len(everything) else f" matching the filters (of {len(everything)})"
        print(f"(no results{what} in {store.root})")
        return 0
    shown = shown.assign(profile=shown["profile"].replace(PROFILE_SHOWN))[list(LIST_COLUMNS)]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(shown.rename(columns=LIST_COLUMNS).to_string(index=False))
    print(f"{len(shown)} of {len(table)} run(s)" + (f" matching the filters ({len(everything)} stored)"
                                                     if len(table) != len(everything) else "")
          + ("; --limit 0 shows all, --profile / --algorithm / --report narrow them" if len(shown) < len(table)
             else "") + f"; stored: when the run entered {store.root}")
    return 0


def cmd_results(args) -> int:
    store = open_store(args)
    if args.action in ("export", "import"):
        return (cmd_export if args.action == "export" else cmd_import)(store, args)
    if args.action == "list":
        return cmd_list(store, args)
    if args.action == "show":
        check(len(args.hashes) == 1, "results show takes exactly one HASH (prefix)")
        print_json(store.show(args.hashes[0]))
        return 0
    if args.action == "rehash":
        from fedlib.experiments.results.rehash import rehash_store

        table = rehash_store(store, dry_run=args.dry_run)
        if args.json:
            print_json(table.to_dict(orient="records"))
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


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "results", help="inspect and prune the result store",
        description="The result store (default $FEDLIB_RESULTS or ./results): list its runs (filtered by "
                    "--profile, --algorithm, --report; --limit rows), show one, remove some, move them to the "
                    "current config-hash scheme, or copy runs between the store and the results ledger.")
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
    p.add_argument("--profile", default=None,
                   help="with list: runs of this profile (smoke, cpu, paper; 'custom scale': a changed scale)")
    p.add_argument("--algorithm", default=None, help="with list: runs of this algorithm, e.g. fedqs-avg")
    p.add_argument("--report", default=None, metavar="NAME",
                   help="with list: runs read by the reports whose path contains NAME, e.g. cpu/fedqs/table3")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help=f"with list: show the first N runs (default {DEFAULT_LIMIT}; 0: all; --json: all)")
    p.set_defaults(func=cmd_results)

    p = subparsers.add_parser(
        "verify", help="recompute ledger runs in a scratch store and compare them",
        description="Recompute results-ledger runs in a scratch store (your result store is not touched) and "
                    "print, per run, 'identical' or the first round whose history differs and the largest "
                    "accuracy difference, with the CPU type each ran on. Exits 1 when a run made on this CPU "
                    "type differs (one thread gives identical histories on one CPU type).")
    p.add_argument("--sample", type=int, default=None, metavar="N", help="recompute N runs drawn at random")
    p.add_argument("--only", nargs="*", default=None, metavar="NOTEBOOK",
                   help="only runs read by these reports (name fragments, e.g. fedqs/table1)")
    p.add_argument("--profile", default=None, help="with --only: the reports' profile folder (default: all)")
    p.add_argument("--seed", type=int, default=0, help="which runs --sample draws")
    p.add_argument("--ledger", default=None, metavar="DIR", help="ledger folder (default: ledger/ of the checkout)")
    p.add_argument("--changed-since", default=None, metavar="REV",
                   help="check every ledger entry added, rewritten, renamed or deleted since git revision REV (what "
                        "a pull or a merge brought, e.g. --changed-since ORIG_HEAD or origin/main): the import's "
                        "checks, then each recomputed (history and summary; another CPU type is excused only "
                        "within the drift measured at REV; docs/LEDGER.md)")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="append each run recomputed on another CPU type to this drift record (default: the "
                        "checkout's benchmarks/results/cross_cpu.json beside the ledger, when it exists)")
    p.add_argument("--no-record", action="store_true", help="do not write the drift record")
    p.set_defaults(func=cmd_verify)
