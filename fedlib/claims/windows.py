"""The same paired comparison on other metric windows, recomputed from the ledger's histories.

A cell that names its runs (``Cell.pair``: config selectors of the method and base runs, dotted
keys such as ``("algorithm", "fedqs-sgd")``) is recomputed from the runs its report read
(``<report>.runs.json``, each run's ``history.csv`` in ``ledger/``), paired by seed, on every
window of :data:`WINDOWS`. The recomputed main window must equal the report's own number (to
0.01 points), else the runs are taken as not identified and no other window is given.

A FedQS row of a named reading selects that reading's runs: the reading's overrides
(``fedlib.safl.fedqs.readings.READINGS``) are added to the FedQS side's selector.
"""

from __future__ import annotations

import io
import json
import math
from functools import lru_cache
from pathlib import Path

from fedlib.claims.verdict import Interval

#: window name -> (how many of the last evaluated rounds, or "best")
WINDOWS = {"convergence (last 20)": 20, "final (last 10)": 10, "best": "best"}


@lru_cache(maxsize=None)
def _runs(root: str, report: str) -> tuple:
    from fedlib.experiments.results.ledger import Ledger

    path = Path(root) / "reports" / f"{report}.runs.json"
    if not path.is_file():
        return ()
    ledger = Ledger(Path(root) / "ledger")
    out = []
    for h in json.loads(path.read_text())["runs"]:
        if ledger.has(h):
            out.append((h, json.dumps(ledger.config(h)["config"], sort_keys=True)))
    return tuple(out)


def _get(cfg: dict, key: str):
    for part in key.split("."):
        if not isinstance(cfg, dict) or part not in cfg:
            return None
        cfg = cfg[part]
    return cfg


def _reading_selector(reading: str) -> tuple:
    from fedlib.safl.fedqs.readings import READINGS

    sel = [("options.fidelity", "paper")] if reading == "paper" else []
    for item in READINGS.get(reading, ()):
        key, value = item.split("=", 1)
        sel.append((key, {"true": True, "false": False}.get(value, value)))
    if reading != "paper" and not any(k == "options.momentum" for k, _ in sel):
        sel.append(("options.momentum", True))
    return tuple(sel)


def select(root: Path, report: str, selector: tuple, reading: str = "paper") -> dict:
    """{seed: hash} of the report's runs matching ``selector`` (and the reading, on FedQS runs)."""
    out = {}
    for h, text in _runs(str(root), report):
        cfg = json.loads(text)
        sel = selector
        if str(cfg.get("algorithm", "")).startswith("fedqs"):
            sel = selector + _reading_selector(reading)
        if all(_get(cfg, k) == v for k, v in sel):
            out.setdefault(int(cfg["seed"]), h)
    return out


@lru_cache(maxsize=None)
def _accuracy(root: str, h: str) -> tuple:
    import pandas as pd

    from fedlib.experiments.results.ledger import Ledger

    hist = pd.read_csv(io.BytesIO(Ledger(Path(root) / "ledger").read(h, ("history.csv",))["history.csv"]))
    return tuple(100.0 * hist["accuracy"].dropna().astype(float).to_numpy())


def window_value(acc: tuple, window: str) -> float:
    """One run's accuracy (points) on ``window`` (:data:`WINDOWS`), over its evaluated rounds."""
    k = WINDOWS[window]
    if not acc:
        return float("nan")
    if k == "best":
        return max(acc)
    tail = acc[-k:]
    return sum(tail) / len(tail)


def paired(values_a: dict, values_b: dict) -> Interval:
    """``a − b`` paired on the common keys, with a 95 % t-interval."""
    from scipy import stats

    keys = sorted(set(values_a) & set(values_b))
    d = [values_a[k] - values_b[k] for k in keys]
    n = len(d)
    if n < 2:
        return Interval(d[0] if d else float("nan"), n=n, diffs=tuple(d))
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, tuple(round(x, 3) for x in d))


def other_windows(root: Path, cell, reading: str, main: Interval | None) -> tuple[dict, str]:
    """({window: Interval} for every window of :data:`WINDOWS`, note). Empty with a note when the
    cell names no runs, a side has no runs, or the main window does not match the report."""
    if not cell.pair:
        return {}, ""
    method_sel, base_sel = cell.pair
    a, b = select(root, cell.report, method_sel, reading), select(root, cell.report, base_sel, reading)
    if len(set(a) & set(b)) < 2:
        return {}, "runs not found in the ledger for the other windows"
    out = {}
    for w in WINDOWS:
        va = {s: window_value(_accuracy(str(root), h), w) for s, h in a.items()}
        vb = {s: window_value(_accuracy(str(root), h), w) for s, h in b.items()}
        out[w] = paired(va, vb)
    if main is not None and cell.window in out and abs(out[cell.window].mean - main.mean) > 0.01:
        return {}, (f"recomputed {cell.window} {out[cell.window].mean:+.2f} ≠ report {main.mean:+.2f}: "
                    "runs not identified, other windows not shown")
    return out, ""
