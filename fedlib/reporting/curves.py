"""The raw data beside each executed report: ``<report>.curves.csv`` and, where the notebook reads
one, ``<report>.clients.csv``.

A report records the config hashes of the runs it read (``<report>.runs.json``); their histories
stand in the results ledger (``ledger/<h[:2]>/<h>/history.csv[.gz]``) and in the result store. The
curves file has one row per evaluated round of every such run, with a readable label of the run —
its method, what sets it apart from the report's other runs (the report's variant: a task, a
setting, an ablation), its seed and its config hash — so a reader can redraw every figure and
recompute every number without fedlib. ``fedlib reproduce`` writes them after each execution and,
for a report it skips, when its curves file is missing (a fresh clone re-rendering from the ledger
gets them too); ``python -m fedlib.reporting.curves cpu long`` writes them for the reports of those
profiles without executing anything.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

CURVES_SUFFIX = ".curves.csv"
#: a data file larger than this (bytes, as CSV) is written gzip-compressed, ``<report>.curves.csv.gz``
#: (pandas and most spreadsheet tools read it as is): the full Table 2 holds ~200 runs' curves
GZIP_ABOVE = 2_000_000
CLIENTS_SUFFIX = ".clients.csv"
#: reports (their notebook's path under ``notebooks/`` without ``.ipynb``) whose notebook reads the
#: per-client table of its runs (``RunResult.clients``): they get ``<report>.clients.csv`` too
CLIENT_TABLE_REPORTS = ("tutorials/safl_basics",)
#: the columns a curves file holds, in order (``round``, ``accuracy`` and ``loss`` from the history)
CURVE_COLUMNS = ("method", "variant", "dataset", "seed", "config_hash", "round", "accuracy", "loss")
# config fields never named in a variant: the method and seed have their own columns, the profile
# label is the report's, and these describe how a run was executed, not what it computed
_NOT_VARIANT = {"algorithm", "seed", "profile", "device", "backend", "checkpoint_every"}
# a few config fields in the words of the papers
_FIELD_WORDS = {"data.dataset": "data", "data.alpha": "Dirichlet α", "data.partition": "split",
                "options.alpha": "α", "safl.k": "K", "safl.clients": "N", "split.clients": "clients",
                "split.per_round": "per round", "model.name": "model", "local.optimizer": "optimizer"}


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in (d or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "."))
        else:
            out[name] = json.dumps(value) if isinstance(value, (list, tuple)) else value
    return out


def method_name(config: dict) -> str:
    """A run's method as the papers name it: ``FedQS-Avg``, ``FedAvg + SMoFi`` (the algorithm's
    registered name where neither catalogue knows it)."""
    from fedlib.reporting.fedqs import METHODS
    from fedlib.reporting.smofi import SMOFI_METHODS

    algo = str(config.get("algorithm", "?"))
    if config.get("paradigm") == "split":
        split_names = {v: k.lstrip("+ ") for k, v in SMOFI_METHODS.items()}
        name = split_names.get(algo, algo)
        return "FedAvg + " + name if algo.startswith("fedavg+") else name
    return METHODS.get(algo, (algo,))[0]


def _value_words(value) -> str:
    return "none" if value is None else str(value)


def _partition(flat: dict[str, dict], keys) -> set:
    """The groups of runs (frozensets of hashes) that ``keys`` tell apart, within each method."""
    groups: dict = {}
    for h, f in flat.items():
        groups.setdefault((f.get("algorithm"),) + tuple(json.dumps(f.get(k), default=str) for k in keys),
                          set()).add(h)
    return {frozenset(g) for g in groups.values()}


def _priority(key: str) -> tuple:
    """Fields a reader knows first: the data and its split, the method's options, the system."""
    order = ("data.dataset", "data.roles", "data.alpha", "data.partition", "options.", "safl.", "split.",
             "model.", "rounds", "local.")
    return next((i for i, p in enumerate(order) if key.startswith(p)), len(order)), key


def variants(configs: dict[str, dict]) -> dict[str, str]:
    """Per config hash, what sets that run apart from the other runs of its method a report read
    (besides the seed): the fewest config fields (data first, then the method's options, the
    system, the model) that tell those runs apart, ``name=value`` joined by ``, `` (``""`` when a
    method's runs differ only by seed). A field that differs only between methods (one method's
    options) is the method's, not a variant."""
    flat = {h: _flat(c) for h, c in configs.items()}
    keys = sorted({k for f in flat.values() for k in f} - _NOT_VARIANT, key=_priority)
    full, chosen = _partition(flat, keys), []
    for key in keys:
        if _partition(flat, chosen) == full:
            break
        if len(_partition(flat, chosen + [key])) > len(_partition(flat, chosen)):
            chosen.append(key)
    return {h: ", ".join(f"{_FIELD_WORDS.get(k, k)}={_value_words(f.get(k))}" for k in chosen)
            for h, f in flat.items()}


def _read_run(h: str, ledger, store) -> tuple[dict, pd.DataFrame, pd.DataFrame] | None:
    """(config, history, clients) of run ``h`` from the ledger, else the store (None: neither)."""
    if ledger is not None and ledger.has(h):
        files = ledger.read(h, ("config.json", "history.csv", "clients.csv"))
        config = json.loads(files["config.json"]).get("config", {})
        clients = files.get("clients.csv")
        return (config, pd.read_csv(io.BytesIO(files["history.csv"])),
                pd.read_csv(io.BytesIO(clients)) if clients else pd.DataFrame())
    result = store.get(h, warn=False) if store is not None else None
    if result is None:
        return None
    return result.config, result.history, result.clients


def _run_columns(h: str, config: dict, variant: str) -> dict:
    method, seed = method_name(config), config.get("seed", "")
    data = config.get("data", {}).get("dataset", "")
    return {"method": method, "variant": variant, "dataset": data, "seed": seed,
            "config_hash": h[:12]}


def report_data(hashes: list[str], ledger=None, store=None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(curves, clients, the hashes found nowhere) of the runs ``hashes``: one curves row per
    evaluated round (a round whose accuracy is recorded), the per-client rows of every run, each
    row led by the run's label columns (:data:`CURVE_COLUMNS`)."""
    runs, missing = {}, []
    for h in hashes:
        got = _read_run(h, ledger, store)
        if got is None:
            missing.append(h)
        else:
            runs[h] = got
    labels = variants({h: r[0] for h, r in runs.items()})
    curves, clients = [], []
    for h, (config, history, per_client) in runs.items():
        head = _run_columns(h, config, labels[h])
        hist = history[[c for c in ("round", "accuracy", "loss") if c in history]]
        hist = hist[hist["accuracy"].notna()] if "accuracy" in hist else hist
        curves.append(hist.assign(**head))
        if len(per_client):
            clients.append(per_client.assign(**head))
    order = list(CURVE_COLUMNS)
    curve_df = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=order)
    curve_df = curve_df[[c for c in order if c in curve_df]].sort_values(order[:5] + ["round"], kind="stable")
    client_df = pd.concat(clients, ignore_index=True) if clients else pd.DataFrame()
    if len(client_df):
        head = order[:5]
        client_df = client_df[head + [c for c in client_df if c not in head]]
    return curve_df.reset_index(drop=True), client_df, missing


def _gz(path: Path) -> Path:
    return path.with_name(path.name + ".gz")


def existing(path: Path) -> Path | None:
    """The data file ``path`` as written: itself, or its gzip-compressed ``path.gz``; None if neither."""
    return next((p for p in (path, _gz(path)) if p.exists()), None)


def _write_if_changed(path: Path, df: pd.DataFrame) -> Path | None:
    """Write ``df`` to ``path`` as CSV, or to ``path.gz`` when larger than :data:`GZIP_ABOVE` (the other
    form removed); the path written, None when the file already held the same table."""
    import gzip

    from fedlib.core.utils import atomic_write_bytes

    data = df.to_csv(index=False, float_format="%.6g", lineterminator="\n").encode()
    target, other = (_gz(path), path) if len(data) > GZIP_ABOVE else (path, _gz(path))
    if other.exists():
        other.unlink()
    if target.exists():
        held = target.read_bytes()
        if (gzip.decompress(held) if target.suffix == ".gz" else held) == data:
            return None
    atomic_write_bytes(target, gzip.compress(data, mtime=0) if target.suffix == ".gz" else data)
    return target


def data_paths(out: Path, rel: str) -> tuple[Path, Path]:
    """(``<report>.curves.csv``, ``<report>.clients.csv``) of report ``rel`` under ``out`` (either may be
    written as ``.csv.gz``: :func:`existing`)."""
    stem = out / Path(rel).with_suffix("")
    return stem.with_name(stem.name + CURVES_SUFFIX), stem.with_name(stem.name + CLIENTS_SUFFIX)


def reads_clients(notebook: str) -> bool:
    """Whether the notebook ``notebook`` (path under ``notebooks/``) reads its runs' per-client table."""
    return str(Path(notebook).with_suffix("")) in CLIENT_TABLE_REPORTS


def write_report_data(out: Path, rel: str, notebook: str | None = None, ledger=None, store=None) -> list[Path]:
    """Write the curves file (and the clients file where :func:`reads_clients`) of report ``rel``
    (relative to ``out``, the profile's report folder) from its ``<report>.runs.json``; the paths
    written (an unchanged file is left as it is). Nothing when the report recorded no runs; a run
    found in neither the ledger nor the store is named in one line on stderr and left out."""
    import sys

    try:
        hashes = json.loads((out / Path(rel).with_suffix(".runs.json")).read_text())["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not hashes:
        return []
    curves, clients, missing = report_data(hashes, ledger, store)
    if missing:
        print(f"fedlib reproduce: {rel}: {len(missing)} of its {len(hashes)} runs are in neither the ledger "
              f"nor the result store; its curves file leaves them out", file=sys.stderr)
    curves_path, clients_path = data_paths(out, rel)
    written = [p for p in [_write_if_changed(curves_path, curves)] if p]
    if reads_clients(notebook or rel) and len(clients):
        written += [p for p in [_write_if_changed(clients_path, clients)] if p]
    return written


def write_all(out: Path, index: dict, root: Path, fresh=None) -> list[Path]:
    """:func:`write_report_data` for the finished reports of ``index`` (the profile's index) whose
    curves file is missing, and for every one in ``fresh`` (all of them when None), the runs read
    from ``root``'s ledger and the result store; the paths written."""
    from fedlib.experiments.results.ledger import Ledger
    from fedlib.reporting.runs import results_store

    ledger, store, written = Ledger(root / "ledger"), results_store(), []
    for rel, entry in sorted(index.items()):
        if entry.get("status") == "done" and (fresh is None or rel in fresh or not existing(data_paths(out, rel)[0])):
            written += write_report_data(out, rel, entry.get("notebook", rel), ledger, store)
    return written


def main(argv=None) -> int:
    """``python -m fedlib.reporting.curves [PROFILE ...]``: (re)write the curves files of every
    finished report of ``reports/<PROFILE>/`` (default: every committed profile)."""
    import sys

    from fedlib.reporting.paths import project_root

    root = project_root()
    names = list(argv if argv is not None else sys.argv[1:]) or \
        sorted(p.name for p in (root / "reports").iterdir() if (p / "index.json").is_file() and p.name != "smoke")
    for name in names:
        out = root / "reports" / name
        for path in write_all(out, json.loads((out / "index.json").read_text()), root):
            print(path.relative_to(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
