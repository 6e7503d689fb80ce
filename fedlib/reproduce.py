"""``fedlib reproduce``: execute every table notebook with papermill into ``reports/<profile>/``.

Each notebook is run with ``-p profile <profile>``; runs inside it come from the result store, so a
re-run reuses finished experiments. The checkout's results ledger (``ledger/``) is imported into the
store first (``--recompute`` skips that and retrains every run the notebooks read, once each), each executed report records the hashes of the runs it read
(``<report>.runs.json``) and adds them to the ledger, so a computation spread over several sittings
accumulates in the repository. A notebook that finished with an unchanged source and whose runs all
stand in the ledger is skipped (unchanged: the notebook's study module in ``fedlib/studies`` and
its parameters cell, or the whole notebook where it has no study module, :func:`report_key`) (``--force`` re-runs it), so an interrupted batch resumes where it
stopped. The command ends with a summary (:func:`summary_text`): per notebook executed / re-rendered /
skipped, the runs read from the ledger / the store or trained, the time spent. Beside each report go its runs' per-round curves (``<report>.curves.csv``,
:mod:`fedlib.reporting.curves`), and no path of this machine stays in it
(:mod:`fedlib.reporting.machine_paths`). Afterwards ``reports/<profile>/README.md`` indexes every
notebook: paper vs measured, the paper's rows it does not run with the reason
(``<name>.not_run.csv``), and how long it took. A notebook run with extra parameters
(``-p 'tasks=[cifar10-x0.5]'``) is a *variant*: its report files carry the parameters in their names
(:func:`variant_of`), beside the full report. A profile only some notebooks define (``long``,
:data:`fedlib.reporting.profiles.PARTIAL_PROFILES`) runs and lists only the notebooks whose
``SETTINGS`` has an entry of that name (:func:`notebook_profiles`).
"""

from __future__ import annotations

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
from fedlib.reporting import PARTIAL_PROFILES, markdown_table, project_root, resolve_profile
from fedlib.reporting.machine_paths import relativise_report
from fedlib.reporting.curves import existing
from fedlib.reporting.notebook_params import check_params, notebook_parameters  # noqa: F401
from fedlib.reporting.paths import VARIANT_ENV
from fedlib.core.utils import atomic_write_bytes, check_output_file
from fedlib.reproduce_keys import notebook_profiles, report_key, source_key, study_module  # noqa: F401
from fedlib.reproduce_summary import SKIPPED_NOTE, outcome, read_runs_log, summary_text  # noqa: F401

INDEX_JSON = "index.json"


def find_notebooks(root: Path, only: list[str] | None = None) -> list[Path]:
    """All ``notebooks/**.ipynb`` (checkpoints excluded), filtered by name or path fragments."""
    folder = root / "notebooks"
    if not folder.is_dir():
        raise FedlibError(f"no notebooks/ folder under {root}", "run fedlib reproduce from the fedlib checkout")
    books = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if only is not None:
        blank = [o for o in only if not str(o).strip()]
        if not only or blank:
            raise FedlibError("--only needs notebook names (an empty name would select every notebook)",
                              "e.g. --only fedqs/table2 smofi/main_accuracy, or leave --only out for all")
    if only:
        chosen = [p for p in books if any(o in str(p.relative_to(folder)) for o in only)]
        if not chosen:
            names = ", ".join(str(p.relative_to(folder)) for p in books)
            raise FedlibError(f"no notebook matches {only}", f"choose from: {names}")
        books = chosen
    return books


def books_for(books: list[Path], profile: str, root: Path) -> list[Path]:
    """``books`` that run at ``profile``: all of them, except at a profile only some notebooks define
    (``long``), where only those with a ``SETTINGS`` entry of that name; FedlibError when none does."""
    if profile not in PARTIAL_PROFILES:
        return books
    have = [b for b in books if profile in (notebook_profiles(b) or ())]
    if not have:
        every = find_notebooks(root)
        names = ", ".join(str(b.relative_to(root / "notebooks")) for b in every if profile in (notebook_profiles(b) or ()))
        raise FedlibError(f"no selected notebook has a {profile!r} profile",
                          f"the {profile} profile runs only: {names or '(none)'}")
    return have


# parameters that change how a report is computed, not what it reports: a run with them is the full
# report (or the variant the other parameters name), not a variant of its own
EXECUTION_PARAMS = ("workers",)


def report_params(params: dict | None) -> dict:
    """``params`` without :data:`EXECUTION_PARAMS`: what names a report and keys its index entry."""
    return {k: v for k, v in (params or {}).items() if k not in EXECUTION_PARAMS}


def variant_of(params: dict | None) -> str:
    """The file-name tag of a run with extra parameters: ``{"tasks": ["cifar10-x0.5"]}`` ->
    ``".tasks-cifar10-x0.5"``; ``""`` without parameters (the full report) or with only
    :data:`EXECUTION_PARAMS` (``workers=2`` computes the full report with two processes)."""
    import re

    def flat(value) -> str:
        return "+".join(map(flat, value)) if isinstance(value, (list, tuple)) else str(value)

    tag = "".join(f".{key}-{flat(value)}" for key, value in sorted(report_params(params).items()))
    return re.sub(r"[^A-Za-z0-9._+-]", "-", tag)


def report_rel(rel: str, params: dict | None) -> str:
    """Where the executed notebook ``rel`` (relative to ``notebooks/``) lands in ``reports/<profile>/``."""
    book = Path(rel)
    return str(book.with_name(book.stem + variant_of(params) + book.suffix))


def _load_index(out: Path) -> dict:
    """The index on disk; a damaged one (unreadable, not a mapping of entries) reads as empty, with
    one line saying so (issue 33: it is rewritten by the next notebook's entry, never a stuck state)."""
    try:
        index = json.loads((out / INDEX_JSON).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        print(f"fedlib reproduce: {out / INDEX_JSON} is unreadable ({err}); starting a new index",
              file=sys.stderr)
        return {}
    if not isinstance(index, dict):
        return {}
    return {k: v for k, v in index.items() if isinstance(v, dict) and isinstance(v.get("status"), str)}


def _failure(err: BaseException) -> str:
    """One line saying why a notebook failed: the cell's exception (papermill's ename: evalue)."""
    ename, evalue = getattr(err, "ename", None), getattr(err, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(err).__name__}: {err}"
    text = " ".join(text.split())
    return text if len(text) <= 2000 else text[:2000] + " ..."


# the kernel logs nothing below CRITICAL: no "TCP without encryption" warning per notebook (a local kernel), no
# "KeyboardInterrupt caught" when a busy kernel is shut down (a notebook's error reaches papermill, not the log)
QUIET_KERNEL = ["--IPKernelApp.log_level=CRITICAL"]


def absolute_path_env() -> dict:
    """The path variables that are set (``FEDLIB_DATA``, ``FEDLIB_RESULTS``, ...), each made absolute
    against this process's working directory: a kernel starts in another folder, where a relative
    value would point elsewhere."""
    from fedlib.core.paths import ENV, PATH_VARIABLES, absolute

    names = sorted(set(ENV.values()) | set(PATH_VARIABLES))
    return {name: str(absolute(os.environ[name])) for name in names if os.environ.get(name)}


def execute(book: Path, root: Path, out: Path, profile: str, kernel: str = "python3",
            params: dict | None = None) -> float:
    """Run one notebook with papermill; return its wall time in seconds."""
    import papermill as pm

    rel = str(book.relative_to(root / "notebooks"))
    target = out / report_rel(rel, params)
    target.parent.mkdir(parents=True, exist_ok=True)
    check_output_file(target, "report")  # papermill writes in place: never into a FIFO or a device
    # the kernel inherits these: where reports go, their names' variant tag, plain-text progress
    env = {**absolute_path_env(), "FEDLIB_REPORT_DIR": str(Path(out).resolve()), VARIANT_ENV: variant_of(params),
           PROGRESS_ENV: os.environ.get(PROGRESS_ENV) or "text"}
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    start = time.perf_counter()
    try:
        pm.execute_notebook(
            str(book), str(target), parameters={**(params or {}), "profile": profile}, kernel_name=kernel, language="python",
            cwd=str(root), progress_bar=False, log_output=False, extra_arguments=QUIET_KERNEL,
        )
    finally:
        for key, value in before.items():
            if not value:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if target.exists():  # papermill's input/output paths are this machine's: relative to the checkout
            relativise_report(target, root)
    return time.perf_counter() - start


def runs_file(out: Path, rel: str) -> Path:
    """``<report>.runs.json`` beside an executed notebook: the hashes of the runs it read."""
    return out / Path(rel).with_suffix(".runs.json")


def runs_read(out: Path, rel: str) -> list[str] | None:
    """The hashes a report's ``<report>.runs.json`` records (None when it has no readable record)."""
    try:
        return json.loads(runs_file(out, rel).read_text())["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ledger_problem(out: Path, rel: str) -> str | None:
    """Why the runs a report read do not stand in the results ledger as today's code would make
    them (None when they all do). The smoke profile keeps no ledger."""
    from fedlib.experiments.results.ledger import Ledger, current_hash

    if out.name == "smoke":
        return None
    hashes = runs_read(out, rel)
    if hashes is None:
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


def run_minutes(out: Path, rel: str) -> str:
    """The minutes the runs a report read took to train, summed over their ledger summaries (one
    thread each): what re-making the report costs, however little time its last execution took
    because its runs were stored. Empty when the report kept no record of its runs."""
    from fedlib.experiments.results.ledger import Ledger

    hashes = runs_read(out, rel)
    if hashes is None:
        return ""
    ledger = Ledger(out.parent.parent / "ledger")
    minutes = [m for m in (ledger.wall_minutes(h) for h in hashes if ledger.has(h)) if m is not None]
    if not minutes:
        return ""
    return f"{sum(minutes):.0f}" + ("" if len(minutes) == len(hashes) else f" ({len(minutes)} of {len(hashes)} runs)")


def _flow(value) -> str:
    """A parameter value as one writes it after ``-p KEY=`` (``[cifar10-x0.1, adult]``), not a repr."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


def status_of(out: Path, rel: str, entry: dict) -> str:
    """An index entry's status as the README shows it: ``done`` becomes ``stale`` when the notebook
    in ``notebooks/`` has changed since that report was executed (its source hash differs), or when
    a run it read is missing from the results ledger or was made under another config hash than
    today's code gives it (issue 28), so a reader never takes an old report for the current code's."""
    book = out.parent.parent / "notebooks" / entry.get("notebook", rel)
    if entry["status"] != "done":
        return entry["status"]
    if book.exists() and entry.get("key", {}).get("source") != report_key(book):
        what = "study (fedlib/studies) or parameters" if study_module(book) else "source of the notebook"
        return f"stale: executed from an earlier {what}"
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
        "not digits. *minutes* is the notebook's wall time in its last execution; runs it found in the "
        "result store or the results ledger were read, not trained, so such a notebook shows little time. "
        "*run minutes* is what training its runs took, summed over the runs' own records (one thread "
        "each; two worker processes halve the wall time).",
        "",
        "| notebook (extra parameters) | status | minutes | run minutes | finished (UTC) |",
        "|---|---|---|---|---|",
    ]
    statuses = {rel: status_of(out, rel, entry) for rel, entry in index.items()}
    for rel, entry in sorted(index.items()):
        mins = f"{entry.get('seconds', float('nan')) / 60:.1f}" if "seconds" in entry else ""
        extra = entry.get("key", {}).get("params")
        shown = f"{entry.get('notebook', rel)} ({', '.join(f'{k}={_flow(v)}' for k, v in extra.items())})" if extra else rel
        lines.append(f"| [{shown}]({rel}) | {statuses[rel]} | {mins} | {run_minutes(out, rel)} | "
                     f"{entry.get('finished', '')} |")
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
        curves = existing(out / Path(rel).with_suffix(".curves.csv"))
        if curves:
            link = Path(rel).parent / curves.name
            lines += ["", f"Per-round accuracy and loss of every run it read: [{curves.name}]({link.as_posix()})."]
        lines += _not_run_lines(out / Path(rel).parent / (Path(rel).stem + ".not_run.csv"), entry)
    lines += not_run_section(profile)
    path = out / "README.md"
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode())
    return path


def _import_ledger(root: Path, profile: str) -> None:
    """Install the checkout's ledger runs into the result store before any notebook runs, so a
    fresh clone re-renders the reports without training what the ledger holds (issue 28)."""
    from fedlib.experiments.results.ledger import Ledger, import_runs
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
    from fedlib.experiments.results.ledger import Ledger, export_runs
    from fedlib.reporting.runs import results_store

    hashes = sorted(read_runs_log(log))
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


def _not_run_lines(path: Path, entry: dict) -> list[str]:
    """The index's "not run: reason" rows of one notebook: the paper's rows it saved as not run
    (``<name>.not_run.csv``, :func:`fedlib.reporting.save_not_run`), when it finished and saved any."""
    if entry["status"] != "done" or not path.exists():
        return []
    df = pd.read_csv(path)
    if df.empty:
        return []
    df = df.astype(object).fillna("")
    df["measured"] = "not run: " + df.pop("reason").astype(str)
    cols = [c for c in ("table", "setting", "paper", "measured", "profile") if c in df] + \
        [c for c in df.columns if c not in ("table", "setting", "paper", "measured", "profile")]
    return ["", f"Rows of the paper not run at this profile ({len(df)}):", "", markdown_table(df[cols])]


def reproduce(profile: str = "auto", only: list[str] | None = None, force: bool = False,
              root: Path | None = None, keep_going: bool = True, params: dict | None = None,
              recompute: bool = False, outcomes: list | None = None) -> dict:
    """Execute the notebooks (see the module docstring). The checkout's results ledger is imported
    into the result store first unless ``recompute``; each executed report records the runs it read
    (``<report>.runs.json``) and, except at smoke, adds them to the ledger. ``recompute`` re-executes
    every selected notebook and trains every run they read once, replacing the store's copy
    (:data:`fedlib.experiments.running.runner.RECOMPUTE_ENV`). ``outcomes``, when given, receives one
    :func:`outcome` dict per notebook of the batch (:func:`summary_text`)."""
    import tempfile

    from fedlib.core.progress import progress_bar
    from fedlib.experiments.results.ledger import Ledger
    from fedlib.experiments.running.runner import RECOMPUTE_ENV, RUNS_LOG_ENV
    from fedlib.reproduce_watch import TrainingWatch

    profile = resolve_profile(profile)
    root = Path(root or project_root())
    out = root / "reports" / profile
    out.mkdir(parents=True, exist_ok=True)
    if not recompute:
        _import_ledger(root, profile)
    outcomes = [] if outcomes is None else outcomes
    ledger = Ledger(root / "ledger")
    index = _load_index(out)
    books = books_for(find_notebooks(root, only), profile, root)
    trained_log = Path(tempfile.mkstemp(prefix="fedlib-recompute-", suffix=".log")[1]) if recompute else None
    if trained_log is not None:
        os.environ[RECOMPUTE_ENV] = str(trained_log)
    bar = progress_bar(books, desc=f"reproduce [{profile}]", unit="notebook")
    try:
        for book in bar:
            source = str(book.relative_to(root / "notebooks"))
            rel = report_rel(source, params)
            bar.set_postfix_str(rel)
            key = {"source": report_key(book), "fedlib": __version__, "params": report_params(params)}
            entry = index.get(rel, {})
            if not (force or recompute) and entry.get("status") == "done" and entry.get("key") == key \
                    and (out / rel).exists() and status_of(out, rel, entry) == "done":
                outcomes.append(outcome(rel, "skipped"))
                continue
            log = Path(tempfile.mkstemp(prefix="fedlib-runs-", suffix=".log")[1])
            os.environ[RUNS_LOG_ENV] = str(log)
            seconds = 0.0
            try:
                with TrainingWatch(rel):
                    seconds = execute(book, root, out, profile, params=params)
                _record_runs(root, out, rel, log, profile)
                index[rel] = {"status": "done", "seconds": round(seconds, 1), "key": key, "notebook": source,
                              "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")}
            except Exception as err:  # noqa: BLE001 — a failing notebook must not stop the batch
                index[rel] = {"status": "failed", "key": key, "notebook": source, "error": _failure(err)}
                print(f"fedlib reproduce: {rel} failed: {index[rel]['error']}", file=sys.stderr)
                if not keep_going:
                    raise
            finally:
                os.environ.pop(RUNS_LOG_ENV, None)
                outcomes.append(outcome(rel, index.get(rel, {}).get("status", "failed"), read_runs_log(log),
                                        ledger, seconds))
                log.unlink(missing_ok=True)
            index = _record(out, rel, index[rel])
            write_index(out, profile, index)
    finally:
        if trained_log is not None:
            os.environ.pop(RECOMPUTE_ENV, None)
            trained_log.unlink(missing_ok=True)
    index = _load_index(out)
    write_curves(out, index, root, set(batch_entries(root, books, params)))
    write_index(out, profile, index)
    if profile != "smoke":
        _write_scoreboard(root)
    return index


def write_curves(out: Path, index: dict, root: Path, fresh: set) -> None:
    """``<report>.curves.csv`` (and ``.clients.csv``) of this batch's reports and of any report
    lacking one (:func:`fedlib.reporting.curves.write_all`); a failure is reported, not raised."""
    from fedlib.reporting.curves import write_all

    try:
        write_all(out, index, root, fresh)
    except Exception as err:  # noqa: BLE001 — the reports stand without them
        print(f"fedlib reproduce: curves files not written: {err}", file=sys.stderr)


def _write_scoreboard(root: Path) -> None:
    """Re-judge every claim from the executed reports (``reports/SCOREBOARD.md``/``.csv`` and the
    README's results section, :mod:`fedlib.claims.cli`); a failure is reported, not raised."""
    from fedlib.claims.cli import write

    try:
        changed = write(root)
        if changed:
            print(f"fedlib reproduce: scoreboard updated ({', '.join(p.name for p in changed)})")
    except Exception as err:  # noqa: BLE001 — the reports stand without it
        print(f"fedlib reproduce: scoreboard not written: {err}", file=sys.stderr)


def batch_entries(root: Path, books: list[Path], params: dict | None) -> list[str]:
    """The index keys (report paths) of this batch's notebooks."""
    return [report_rel(str(b.relative_to(root / "notebooks")), params) for b in books]


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
    """``["tasks=[adult]", "seeds=3"]`` -> ``{"tasks": ["adult"], "seeds": 3}`` (values parsed as YAML,
    without anchors or over-long integers: :func:`fedlib.core.yaml_safe.load_yaml`)."""
    import yaml

    from fedlib.core.yaml_safe import load_yaml

    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise FedlibError(f"bad notebook parameter {item!r}", "write it as KEY=VALUE, e.g. -p 'tasks=[adult]'")
        try:
            params[key.strip()] = load_yaml(value, f"notebook parameter {key.strip()!r}", plain=True)
        except yaml.YAMLError as err:
            raise FedlibError(f"cannot parse notebook parameter {item!r} "
                              f"({str(err).splitlines()[0]})",
                              "write a YAML value, e.g. -p 'tasks=[adult]' (brackets closed)") from None
    tag = variant_of(params)  # [issue 59] it names the report's files: refused before anything is recorded
    if len(tag.encode()) > MAX_VARIANT_BYTES:
        raise FedlibError(f"the -p values name a report variant of {len(tag.encode())} characters "
                          f"({tag[:40]}...); a file name holds at most {MAX_VARIANT_BYTES} of them here",
                          "run fewer or shorter values per call (e.g. one reading at a time)")
    return params


#: the longest variant tag (:func:`variant_of`) a report's file names may carry: the notebook's name,
#: a suffix (``.not_run.csv``) and a temporary file's prefix must still fit 255 bytes
MAX_VARIANT_BYTES = 150


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "reproduce", help="execute the paper-table notebooks into reports/<profile>/",
        description="Execute the paper-table notebooks into reports/<profile>/ (one executed notebook, its "
                    "CSV tables and an index README per profile). Runs come from the result store (after "
                    "importing the checkout's results ledger) when they are there and are trained otherwise. "
                    "A notebook whose report is current (same notebook source, its runs in the ledger) is "
                    "skipped: --force re-executes it, --recompute also retrains its runs. The command ends "
                    "with a summary: per notebook executed / re-rendered / skipped, runs read from the "
                    "ledger / the store / trained, and the time spent.")
    p.add_argument("--profile", default="auto",
                   help="smoke | cpu | paper | long | auto (paper with a GPU, else cpu; never long). long: the "
                        "FedQS CIFAR-10 tables at 400 rounds and the SMoFi CIFAR-10 tables on all the data (20 clients, "
                        "50 rounds), only the notebooks that define it (--only smofi/ or fedqs/ picks one paper)")
    p.add_argument("--only", nargs="*", help="notebook names or path fragments, e.g. fedqs/table2")
    p.add_argument("--force", action="store_true",
                   help="re-execute notebooks whose report is current (their runs are still read from the store)")
    p.add_argument("--recompute", action="store_true",
                   help="retrain every run the selected notebooks read, once each, replacing the result store's "
                        "copy; implies --force and skips the ledger import (the ledger keeps its copies)")
    p.add_argument("--list", action="store_true", help="list the notebooks and exit")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="extra notebook parameter (YAML value), e.g. -p 'tasks=[adult]'")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    root = project_root()
    params = parse_params(args.param)  # a bad -p is reported before anything runs
    profile = resolve_profile(args.profile)
    books = books_for(find_notebooks(root, args.only), profile, root)
    check_params(books, params)
    if args.list:
        for book in books:
            print(book.relative_to(root))
        return 0
    outcomes: list = []
    start = time.perf_counter()
    index = reproduce(profile, args.only, args.force, root, params=params, recompute=args.recompute,
                      outcomes=outcomes)
    # this batch's notebooks decide the exit status; a failure recorded earlier for another
    # notebook or variant is reported, not inherited (issue 33: it used to fail every later batch)
    mine = set(batch_entries(root, books, params))
    failed = [k for k in mine if index.get(k, {}).get("status") != "done"]
    earlier = sorted(k for k, v in index.items() if k not in mine and v.get("status") != "done")
    print(summary_text(outcomes, time.perf_counter() - start, profile))
    if earlier:
        print(f"fedlib reproduce: note: {len(earlier)} other report(s) in the index failed in an earlier "
              f"batch (not this one): {', '.join(earlier[:5])}{' ...' if len(earlier) > 5 else ''}; "
              "re-run them with --only", file=sys.stderr)
    return 1 if failed else 0
