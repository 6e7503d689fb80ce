"""``fedlib reproduce``: execute every table notebook with papermill into ``reports/<profile>/``.

Each notebook is run with ``-p profile <profile>``; runs inside it come from the result store, so a
re-run reuses finished experiments. The checkout's results ledger (``ledger/``, issue 28) is imported
into the store first (``--recompute`` skips that), each executed report records the hashes of the runs
it read (``<report>.runs.json``) and adds them to the ledger, so a computation spread over several
sittings accumulates in the repository. A notebook that finished with an unchanged source and whose
runs all stand in the ledger is skipped (``--force`` re-runs it), so an interrupted batch resumes
where it stopped. Afterwards
``reports/<profile>/README.md`` indexes every notebook: paper vs measured, and how long it took.
A notebook run with extra parameters (``-p 'tasks=[cifar10-x0.5]'``) is a *variant*: its report
files carry the parameters in their names (:func:`variant_of`), beside the full report.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from fedlib import __version__
from fedlib.core.errors import FedlibError
from fedlib.core.progress import PROGRESS_ENV
from fedlib.reporting import markdown_table, project_root, resolve_profile
from fedlib.reporting.paths import VARIANT_ENV
from fedlib.core.utils import atomic_write_bytes

INDEX_JSON = "index.json"


def find_notebooks(root: Path, only: list[str] | None = None) -> list[Path]:
    """All ``notebooks/**.ipynb`` (checkpoints excluded), filtered by name or path fragments."""
    folder = root / "notebooks"
    if not folder.is_dir():
        raise FedlibError(f"no notebooks/ folder under {root}", "run fedlib reproduce from the fedlib checkout")
    books = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if only:
        chosen = [p for p in books if any(o in str(p.relative_to(folder)) for o in only)]
        if not chosen:
            names = ", ".join(str(p.relative_to(folder)) for p in books)
            raise FedlibError(f"no notebook matches {only}", f"choose from: {names}")
        books = chosen
    return books


def variant_of(params: dict | None) -> str:
    """The file-name tag of a run with extra parameters: ``{"tasks": ["cifar10-x0.5"]}`` ->
    ``".tasks-cifar10-x0.5"``; ``""`` without parameters (the full report)."""
    import re

    def flat(value) -> str:
        return "+".join(map(flat, value)) if isinstance(value, (list, tuple)) else str(value)

    tag = "".join(f".{key}-{flat(value)}" for key, value in sorted((params or {}).items()))
    return re.sub(r"[^A-Za-z0-9._+-]", "-", tag)


def report_rel(rel: str, params: dict | None) -> str:
    """Where the executed notebook ``rel`` (relative to ``notebooks/``) lands in ``reports/<profile>/``."""
    book = Path(rel)
    return str(book.with_name(book.stem + variant_of(params) + book.suffix))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _load_index(out: Path) -> dict:
    try:
        return json.loads((out / INDEX_JSON).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def execute(book: Path, root: Path, out: Path, profile: str, kernel: str = "python3",
            params: dict | None = None) -> float:
    """Run one notebook with papermill; return its wall time in seconds."""
    import papermill as pm

    rel = str(book.relative_to(root / "notebooks"))
    target = out / report_rel(rel, params)
    target.parent.mkdir(parents=True, exist_ok=True)
    # the kernel inherits these: where reports go, their names' variant tag, plain-text progress
    env = {"FEDLIB_REPORT_DIR": str(out), VARIANT_ENV: variant_of(params),
           PROGRESS_ENV: os.environ.get(PROGRESS_ENV) or "text"}
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    start = time.perf_counter()
    try:
        pm.execute_notebook(
            str(book), str(target), parameters={**(params or {}), "profile": profile}, kernel_name=kernel, language="python",
            cwd=str(root), progress_bar=False, log_output=False,
        )
    finally:
        for key, value in before.items():
            if not value:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return time.perf_counter() - start


def runs_file(out: Path, rel: str) -> Path:
    """``<report>.runs.json`` beside an executed notebook: the hashes of the runs it read."""
    return out / Path(rel).with_suffix(".runs.json")


def _ledger_problem(out: Path, rel: str) -> str | None:
    """Why the runs a report read do not stand in the results ledger as today's code would make
    them (None when they all do). The smoke profile keeps no ledger."""
    from fedlib.experiments.ledger import Ledger, current_hash

    if out.name == "smoke":
        return None
    try:
        hashes = json.loads(runs_file(out, rel).read_text())["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return "no record of the runs it read (executed before the results ledger)"
    ledger = Ledger(out.parent.parent / "ledger")
    missing = [h for h in hashes if not ledger.has(h)]
    if missing:
        return f"{len(missing)} of the {len(hashes)} runs it read are not in the results ledger"
    moved = [h for h in hashes if current_hash(ledger.config(h)) != h]
    if moved:
        return (f"{len(moved)} of the {len(hashes)} runs it read were made under a config that today's "
                "code hashes differently")
    return None


def status_of(out: Path, rel: str, entry: dict) -> str:
    """An index entry's status as the README shows it: ``done`` becomes ``stale`` when the notebook
    in ``notebooks/`` has changed since that report was executed (its source hash differs), or when
    a run it read is missing from the results ledger or was made under another config hash than
    today's code gives it (issue 28), so a reader never takes an old report for the current code's."""
    book = out.parent.parent / "notebooks" / entry.get("notebook", rel)
    if entry["status"] != "done":
        return entry["status"]
    if book.exists() and entry.get("key", {}).get("source") != _sha(book):
        return "stale: executed from an earlier source of the notebook"
    problem = _ledger_problem(out, rel)
    return f"stale: {problem}" if problem else "done"


def write_index(out: Path, profile: str, index: dict) -> Path:
    """``reports/<profile>/README.md``: per notebook, status (``stale`` where the notebook changed
    since; :func:`status_of`), time and its paper-vs-measured table."""
    lines = [
        f"# fedlib reports — profile `{profile}`",
        "",
        "Generated by `fedlib reproduce`. Every measured number below comes from the executed notebook "
        "next to it, at this profile. A reduced profile is not the paper's setting: compare trends, "
        "not digits. *minutes* is the notebook's wall time in its batch; runs it shares with a notebook "
        "executed before it were read from the result store, so such a notebook shows little time.",
        "",
        "| notebook (extra parameters) | status | minutes | finished (UTC) |",
        "|---|---|---|---|",
    ]
    statuses = {rel: status_of(out, rel, entry) for rel, entry in index.items()}
    for rel, entry in sorted(index.items()):
        mins = f"{entry.get('seconds', float('nan')) / 60:.1f}" if "seconds" in entry else ""
        extra = entry.get("key", {}).get("params")
        shown = f"{entry.get('notebook', rel)} ({', '.join(f'{k}={v}' for k, v in extra.items())})" if extra else rel
        lines.append(f"| [{shown}]({rel}) | {statuses[rel]} | {mins} | {entry.get('finished', '')} |")
    for rel, entry in sorted(index.items()):
        table = out / Path(rel).parent / (Path(rel).stem + ".comparison.csv")
        lines += ["", f"## {rel}", ""]
        status = statuses[rel]
        if status.startswith("stale"):
            lines += [f"**Stale** ({status[len('stale: '):]}): this report was executed "
                      f"({entry.get('finished', '')}) before; its numbers are that execution's. Re-run "
                      f"`fedlib reproduce --profile {profile} --only {entry.get('notebook', rel)}"
                      f"{_param_flags(entry)}` for the current one.", ""]
        if entry["status"] != "done":
            lines.append(f"Not finished: {entry.get('error', entry['status'])}")
        elif table.exists():
            lines.append(markdown_table(pd.read_csv(table).astype(object).fillna("")))
        else:
            lines.append("(this notebook wrote no paper-vs-measured table)")
    lines += not_run_section(profile)
    path = out / "README.md"
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode())
    return path


def _import_ledger(root: Path, profile: str) -> None:
    """Install the checkout's ledger runs into the result store before any notebook runs, so a
    fresh clone re-renders the reports without training what the ledger holds (issue 28)."""
    from fedlib.experiments.ledger import Ledger, import_runs
    from fedlib.reporting.runs import results_store

    ledger = Ledger(root / "ledger")
    if profile == "smoke" or not ledger.root.is_dir():
        return
    rep = import_runs(ledger, results_store())
    print(rep.line(), file=sys.stderr)
    for h, why in rep.refused:
        print(f"fedlib: refused ledger entry {h[:12]}: {why} (the run will be recomputed)", file=sys.stderr)


def _record_runs(root: Path, out: Path, rel: str, log: Path, profile: str) -> None:
    """Write ``<report>.runs.json`` from the notebook's runs log and, below the smoke profile's
    throwaway numbers, add those runs to the checkout's ledger (so they can be committed as they
    finish)."""
    from fedlib.experiments.ledger import Ledger, export_runs
    from fedlib.reporting.runs import results_store

    hashes = sorted(set(log.read_text().split())) if log.exists() else []
    target = runs_file(out, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, (json.dumps({"report": rel, "runs": hashes}, indent=1) + "\n").encode())
    if profile != "smoke" and hashes:
        export_runs(results_store(), Ledger(root / "ledger"), hashes)


def not_run_section(profile: str) -> list[str]:
    """The index's last section: every paper table, row or panel no notebook runs at ``profile``, with
    the reason (:func:`fedlib.reporting.coverage.not_run`); rows a notebook leaves out itself are
    ``not run`` rows of its own table above."""
    from fedlib.reporting.coverage import not_run

    rows = not_run(profile)
    if not rows:
        return []
    return ["", "## Not run at this profile", "",
            "Paper tables, rows and panels that no notebook runs at this profile, and why. Rows a notebook "
            "leaves out itself appear in its own table above with *measured* `not run`.", "",
            markdown_table(pd.DataFrame([{"paper": r["paper"], "table / row": r["item"],
                                          "status": "not run", "reason": r["reason"]} for r in rows]))]


def reproduce(profile: str = "auto", only: list[str] | None = None, force: bool = False,
              root: Path | None = None, keep_going: bool = True, params: dict | None = None,
              recompute: bool = False) -> dict:
    """Execute the notebooks (see the module docstring). The checkout's results ledger is imported
    into the result store first unless ``recompute``; each executed report records the runs it read
    (``<report>.runs.json``) and, except at smoke, adds them to the ledger."""
    import tempfile

    from fedlib.core.progress import progress_bar
    from fedlib.experiments.runner import RUNS_LOG_ENV

    profile = resolve_profile(profile)
    root = Path(root or project_root())
    out = root / "reports" / profile
    out.mkdir(parents=True, exist_ok=True)
    if not recompute:
        _import_ledger(root, profile)
    index = _load_index(out)
    books = find_notebooks(root, only)
    bar = progress_bar(books, desc=f"reproduce [{profile}]", unit="notebook")
    for book in bar:
        source = str(book.relative_to(root / "notebooks"))
        rel = report_rel(source, params)
        bar.set_postfix_str(rel)
        key = {"source": _sha(book), "fedlib": __version__, "params": params or {}}
        entry = index.get(rel, {})
        if not force and entry.get("status") == "done" and entry.get("key") == key and (out / rel).exists() \
                and status_of(out, rel, entry) == "done":
            continue
        log = Path(tempfile.mkstemp(prefix="fedlib-runs-", suffix=".log")[1])
        os.environ[RUNS_LOG_ENV] = str(log)
        try:
            seconds = execute(book, root, out, profile, params=params)
            _record_runs(root, out, rel, log, profile)
            index[rel] = {"status": "done", "seconds": round(seconds, 1), "key": key, "notebook": source,
                          "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")}
        except Exception as err:  # noqa: BLE001 — a failing notebook must not stop the batch
            index[rel] = {"status": "failed", "key": key, "notebook": source,
                          "error": f"{type(err).__name__}: {err}"[:500]}
            print(f"fedlib reproduce: {rel} failed: {index[rel]['error']}", file=sys.stderr)
            if not keep_going:
                raise
        finally:
            os.environ.pop(RUNS_LOG_ENV, None)
            log.unlink(missing_ok=True)
        index = _record(out, rel, index[rel])
        write_index(out, profile, index)
    index = _load_index(out)
    write_index(out, profile, index)
    return index


def _param_flags(entry: dict) -> str:
    """`` -p 'KEY=VALUE'`` for each extra parameter an index entry ran with (YAML/JSON values)."""
    return "".join(f" -p '{k}={json.dumps(v)}'" for k, v in entry.get("key", {}).get("params", {}).items())


def _record(out: Path, rel: str, entry: dict) -> dict:
    """Merge one notebook's entry into the index on disk (under a lock: two batches may share it)."""
    import fcntl

    with open(out / ".index.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        index = _load_index(out)
        index[rel] = entry
        atomic_write_bytes(out / INDEX_JSON, json.dumps(index, indent=1, sort_keys=True).encode())
    return index


def parse_params(items: list[str]) -> dict:
    """``["tasks=[adult]", "seeds=3"]`` -> ``{"tasks": ["adult"], "seeds": 3}`` (values parsed as YAML)."""
    import yaml

    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FedlibError(f"bad notebook parameter {item!r}", "write it as KEY=VALUE, e.g. -p 'tasks=[adult]'")
        try:
            params[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as err:
            raise FedlibError(f"cannot parse notebook parameter {item!r} "
                              f"({str(err).splitlines()[0]})",
                              "write a YAML value, e.g. -p 'tasks=[adult]' (brackets closed)") from None
    return params


def register(subparsers) -> None:
    p = subparsers.add_parser("reproduce", help="execute the paper-table notebooks into reports/<profile>/")
    p.add_argument("--profile", default="auto", help="smoke | cpu | paper | auto (paper with a GPU, else cpu)")
    p.add_argument("--only", nargs="*", help="notebook names or path fragments, e.g. fedqs/table2")
    p.add_argument("--force", action="store_true", help="re-execute notebooks that already finished")
    p.add_argument("--recompute", action="store_true",
                   help="do not import the results ledger first: train every run the store lacks")
    p.add_argument("--list", action="store_true", help="list the notebooks and exit")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="extra notebook parameter (YAML value), e.g. -p 'tasks=[adult]'")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    root = project_root()
    params = parse_params(args.param)  # a bad -p is reported before anything runs
    if args.list:
        for book in find_notebooks(root, args.only):
            print(book.relative_to(root))
        return 0
    index = reproduce(args.profile, args.only, args.force, root, params=params, recompute=args.recompute)
    failed = [k for k, v in index.items() if v["status"] != "done"]
    print(f"{len(index) - len(failed)} notebooks done, {len(failed)} failed; "
          f"index: reports/{resolve_profile(args.profile)}/README.md")
    return 1 if failed else 0
