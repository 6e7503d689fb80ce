"""``fedlib reproduce``: execute every table notebook with papermill into ``reports/<profile>/``.

Each notebook is run with ``-p profile <profile>``; runs inside it come from the result store, so a
re-run reuses finished experiments. A notebook that finished with an unchanged source is skipped
(``--force`` re-runs it), so an interrupted batch resumes where it stopped. Afterwards
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


def status_of(out: Path, rel: str, entry: dict) -> str:
    """An index entry's status as the README shows it: ``done`` becomes ``stale`` when the notebook
    in ``notebooks/`` has changed since that report was executed (its source hash differs), so a
    reader never takes an old report for the current code's."""
    book = out.parent.parent / "notebooks" / entry.get("notebook", rel)
    if entry["status"] == "done" and book.exists() and entry.get("key", {}).get("source") != _sha(book):
        return "stale: executed from an earlier source of the notebook"
    return entry["status"]


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
    for rel, entry in sorted(index.items()):
        mins = f"{entry.get('seconds', float('nan')) / 60:.1f}" if "seconds" in entry else ""
        extra = entry.get("key", {}).get("params")
        shown = f"{entry.get('notebook', rel)} ({', '.join(f'{k}={v}' for k, v in extra.items())})" if extra else rel
        lines.append(f"| [{shown}]({rel}) | {status_of(out, rel, entry)} | {mins} | {entry.get('finished', '')} |")
    for rel, entry in sorted(index.items()):
        table = out / Path(rel).parent / (Path(rel).stem + ".comparison.csv")
        lines += ["", f"## {rel}", ""]
        if status_of(out, rel, entry).startswith("stale"):
            lines += [f"**Stale:** this report was executed ({entry.get('finished', '')}) from an earlier "
                      f"source of the notebook; its numbers are that version's. Re-run "
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
              root: Path | None = None, keep_going: bool = True, params: dict | None = None) -> dict:
    from fedlib.core.progress import progress_bar

    profile = resolve_profile(profile)
    root = Path(root or project_root())
    out = root / "reports" / profile
    out.mkdir(parents=True, exist_ok=True)
    index = _load_index(out)
    books = find_notebooks(root, only)
    bar = progress_bar(books, desc=f"reproduce [{profile}]", unit="notebook")
    for book in bar:
        source = str(book.relative_to(root / "notebooks"))
        rel = report_rel(source, params)
        bar.set_postfix_str(rel)
        key = {"source": _sha(book), "fedlib": __version__, "params": params or {}}
        entry = index.get(rel, {})
        if not force and entry.get("status") == "done" and entry.get("key") == key and (out / rel).exists():
            continue
        try:
            seconds = execute(book, root, out, profile, params=params)
            index[rel] = {"status": "done", "seconds": round(seconds, 1), "key": key, "notebook": source,
                          "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")}
        except Exception as err:  # noqa: BLE001 — a failing notebook must not stop the batch
            index[rel] = {"status": "failed", "key": key, "notebook": source,
                          "error": f"{type(err).__name__}: {err}"[:500]}
            print(f"fedlib reproduce: {rel} failed: {index[rel]['error']}", file=sys.stderr)
            if not keep_going:
                raise
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
    index = reproduce(args.profile, args.only, args.force, root, params=params)
    failed = [k for k, v in index.items() if v["status"] != "done"]
    print(f"{len(index) - len(failed)} notebooks done, {len(failed)} failed; "
          f"index: reports/{resolve_profile(args.profile)}/README.md")
    return 1 if failed else 0
