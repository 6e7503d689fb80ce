"""What the notebooks share: profiles, where reports go, paper-vs-measured tables.

A *profile* names the scale a notebook runs at:

- ``smoke``: seconds, for CI (nbval); numbers mean nothing, only that the pipeline works.
- ``cpu``: real data at a scale two CPU cores finish in minutes; reduced, never the paper.
- ``paper``: the paper's settings; needs a GPU for the vision and text tasks.

``auto`` resolves to ``$FEDLIB_PROFILE`` when set, else ``paper`` on a CUDA machine and ``cpu`` otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from fedlib.core.errors import check_choice

PROFILES = ("smoke", "cpu", "paper")
COMPARISON_COLUMNS = ["table", "setting", "metric", "paper", "measured", "profile", "note"]


def resolve_profile(profile: str = "auto") -> str:
    """``auto`` -> $FEDLIB_PROFILE, else ``paper`` with CUDA, else ``cpu``."""
    if profile == "auto":
        profile = os.environ.get("FEDLIB_PROFILE") or _hardware_profile()
    check_choice("profile", profile, PROFILES)
    return profile


def _hardware_profile() -> str:
    import torch

    return "paper" if torch.cuda.is_available() else "cpu"


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The checkout holding ``notebooks/`` (walking up from ``start`` or the working directory)."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "notebooks").is_dir() and (folder / "pyproject.toml").exists():
            return folder
    return here


def report_dir(profile: str, group: str = "") -> Path:
    """``$FEDLIB_REPORT_DIR`` (set by ``fedlib reproduce``) or ``<project>/reports/<profile>``."""
    root = Path(os.environ.get("FEDLIB_REPORT_DIR") or project_root() / "reports" / profile)
    out = root / group if group else root
    out.mkdir(parents=True, exist_ok=True)
    return out


def comparison(rows: list[dict], profile: str) -> pd.DataFrame:
    """Paper vs measured, one row per (table, setting, metric); ``paper`` may be missing (NaN)."""
    df = pd.DataFrame(rows)
    for col in COMPARISON_COLUMNS:
        if col not in df:
            df[col] = profile if col == "profile" else ("" if col in ("note", "setting") else float("nan"))
    return df[COMPARISON_COLUMNS + [c for c in df.columns if c not in COMPARISON_COLUMNS]]


def save_comparison(df: pd.DataFrame, name: str, profile: str, group: str = "") -> Path:
    """Write the notebook's paper-vs-measured table where ``fedlib reproduce`` collects it."""
    path = report_dir(profile, group) / f"{name}.comparison.csv"
    tmp = path.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path


def save_figure(fig, name: str, profile: str, group: str = "") -> Path:
    path = report_dir(profile, group) / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def markdown_table(df: pd.DataFrame, floatfmt: str = "{:.2f}") -> str:
    """A GitHub-flavoured markdown table (no tabulate dependency)."""

    def cell(v) -> str:
        if isinstance(v, float):
            return "" if v != v else floatfmt.format(v)
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def apply_knobs(defaults: dict, namespace: dict, lists=()) -> dict:
    """The profile's settings with every knob the parameters cell set (not ``None``) applied.

    A string given for a non-string setting is parsed as YAML (papermill passes ``-p tasks "[adult]"``
    as a string); a scalar given for a knob named in ``lists`` becomes a one-element list.
    """
    import yaml

    settings = dict(defaults)
    for key, default in defaults.items():
        value = namespace.get(key)
        if value is None:
            continue
        if isinstance(value, str) and not isinstance(default, str):
            value = yaml.safe_load(value)
        if key in lists and not isinstance(value, (list, tuple)):
            value = [value]
        settings[key] = value
    return settings


def show_settings(settings: dict, profile: str) -> pd.DataFrame:
    """The settings a notebook runs with, as a one-column table printed in every report."""
    return pd.DataFrame({"value": {k: repr(v) for k, v in {"profile": profile, **settings}.items()}})


# ------------------------------------------------------------------ resolving a difference
def curve_metrics(history: pd.DataFrame, last: int = 5, target: float | None = None) -> dict:
    """Accuracy metrics of one run's history (accuracy in percent; rounds without an evaluation skipped).

    - ``final``: mean of the last ``last`` evaluated rounds (robust to the round-to-round swing);
    - ``auc``: area under the accuracy-vs-round curve divided by its length (trapezoid rule over
      the evaluated rounds): a mean accuracy over the run, which rewards converging sooner;
    - ``best``: the maximum (optimistic: best-of-N picks the luckiest round);
    - ``rounds_to_target``: first evaluated round with accuracy ≥ ``target`` (NaN if never / no target).
    """
    import numpy as np

    from fedlib.experiments.metrics import convergence_accuracy, rounds_to_target

    h = history.dropna(subset=["accuracy"])
    h = h.assign(accuracy=100.0 * h["accuracy"].astype(float))  # percent, as the notebooks report
    if h.empty:
        return {"final": float("nan"), "auc": float("nan"), "best": float("nan"), "rounds_to_target": float("nan")}
    rounds, acc = h["round"].to_numpy(dtype=float), h["accuracy"].to_numpy()
    span = rounds[-1] - rounds[0]
    trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 names it trapz
    auc = float(trapezoid(acc, rounds) / span) if span > 0 else float(acc[0])
    hit = rounds_to_target(h, target) if target is not None else None
    return {"final": convergence_accuracy(h, last), "auc": auc, "best": float(acc.max()),
            "rounds_to_target": float("nan") if hit is None else float(hit)}


def paired_difference(runs: pd.DataFrame, value: str, method: str, baseline: str, *,
                      method_col: str = "method", pair_col: str = "seed", level: float = 0.95) -> dict:
    """``method − baseline`` in column ``value``, paired on ``pair_col`` (same seed ⇒ same partition,
    selection and batches), with a Student-t confidence interval over the pairs.

    Returns ``{"mean", "lo", "hi", "n", "wins", "diffs"}``; with one pair the interval is NaN
    (one pair cannot measure its own noise).
    """
    import numpy as np
    from scipy import stats

    a = runs[runs[method_col] == method].set_index(pair_col)[value]
    b = runs[runs[method_col] == baseline].set_index(pair_col)[value]
    common = a.index.intersection(b.index)
    d = (a.loc[common] - b.loc[common]).astype(float).to_numpy()
    n = len(d)
    mean = float(d.mean()) if n else float("nan")
    if n >= 2:
        half = float(stats.t.ppf(0.5 + level / 2, n - 1) * d.std(ddof=1) / np.sqrt(n))
    else:
        half = float("nan")
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "n": n, "wins": int((d > 0).sum()),
            "diffs": [round(float(x), 3) for x in d]}


def verdict(diff: dict, expected_sign: int = 1) -> str:
    """In words: does a :func:`paired_difference` resolve the paper's direction (``expected_sign``)?"""
    if diff["n"] < 2 or diff["lo"] != diff["lo"]:
        return f"not resolved (only {diff['n']} pair)"
    lo, hi = diff["lo"], diff["hi"]
    if lo > 0 or hi < 0:
        sign = 1 if lo > 0 else -1
        return ("paper's direction reproduced" if sign == expected_sign else "opposite of the paper's direction") + \
            f" (interval excludes 0; {diff['wins']}/{diff['n']} pairs favour the method)"
    return f"not resolved: the interval contains 0 ({diff['wins']}/{diff['n']} pairs favour the method)"


# ------------------------------------------------------------------ running a notebook's runs
def run_or_load(cfgs: list, store=None, workers: int = 1, progress: bool = True) -> list:
    """The :class:`~fedlib.experiments.RunResult` of every config, in order: finished runs come
    from the store; with ``workers > 1`` the missing ones first run in a local process pool (one
    one-thread process per worker, ``fedlib.experiments.sweep``); a lone missing run runs here."""
    from fedlib.experiments import ResultStore, run, sweep

    store = store if isinstance(store, ResultStore) else ResultStore(store or os.environ.get("FEDLIB_RESULTS")
                                                                     or project_root() / "results")
    todo = {c.config_hash(): c for c in cfgs if store.get(c) is None}
    if workers > 1 and len(todo) > 1:
        sweep(list(todo.values()), workers=min(workers, len(todo)), store=store, progress=progress)
    return [run(c, store=store, progress=progress) for c in cfgs]


def dataset_missing(name: str) -> str | None:
    """``None`` if dataset ``name`` loads here, else the text a table records instead of a number."""
    from fedlib.data import load_dataset
    from fedlib.core.errors import FedlibError

    try:
        load_dataset(name)
    except FedlibError:
        return f"needs download: fedlib data fetch {name}"
    return None


# ------------------------------------------------------------------ the SMoFi notebooks' runs
SMOFI_PRESET = {"smoke": "sflv1-cifar10-smoke", "cpu": "sflv1-cifar10-cpu", "paper": "sflv1-cifar10"}
SMOFI_BATCH = {"cifar10": 32, "cifar100": 32, "tinyimagenet": 64}  # SMoFi spec §4 [D]
# participation settings per profile: clients, clients per round, training images, rounds per dataset
SMOFI_PARTICIPATION = {
    "smoke": {"full": dict(clients=4, per_round=4, max_train=256,
                           rounds={"cifar10": 2, "cifar100": 2, "tinyimagenet": 2})},
    "cpu": {"full": dict(clients=10, per_round=10, max_train=4000,
                         rounds={"cifar10": 15, "cifar100": 15, "tinyimagenet": 15}),
            "partial": dict(clients=20, per_round=10, max_train=5000,
                            rounds={"cifar10": 20, "cifar100": 20, "tinyimagenet": 20})},
    "paper": {"partial": dict(clients=20, per_round=10, max_train=None,
                              rounds={"cifar10": 200, "cifar100": 300, "tinyimagenet": 400})},
}


def smofi_config(profile: str, dataset: str, algorithm: str, seed: int, participation: str, *, label: str,
                 model: str, cut: str | None, max_test: int | None, rounds: int | None = None, **extra):
    """One SMoFi-notebook run: the profile's split preset with every knob set explicitly on top.

    ``participation`` names a :data:`SMOFI_PARTICIPATION` setting of ``profile``; ``rounds``
    overrides its round budget; ``extra`` holds more overrides (``{"options.alpha": -1.0}``). The
    notebooks build every run here, so a run they share (FedAvg, SMoFi at α = −0.1) is one
    stored result.
    """
    from fedlib.core.errors import FedlibError
    from fedlib.experiments import RunConfig

    settings = SMOFI_PARTICIPATION[profile]
    if participation not in settings:
        raise FedlibError(f"unknown participation setting {participation!r} at profile {profile!r}",
                          f"use one of {list(settings)}")
    P = settings[participation]
    over = {"profile": label, "seed": int(seed), "algorithm": algorithm, "options": {},
            "rounds": int(rounds or P["rounds"][dataset]), "eval_every": 1, "data.dataset": dataset,
            "data.max_train": P["max_train"], "data.max_test": max_test,
            "model.name": model, "model.cut": cut,
            "split.clients": P["clients"], "split.per_round": P["per_round"],
            "local.batch_size": SMOFI_BATCH[dataset]}
    over.update(extra)
    return RunConfig.from_preset(SMOFI_PRESET[profile]).with_overrides(over)


def paired_interval_plot(diffs: pd.DataFrame, label: str = "comparison", height: float = 2.8):
    """Point-and-interval plot of paired differences (rows of ``mean``/``lo``/``hi`` per ``label``),
    one panel per ``metric`` (rows) × ``participation`` (columns), a grey line at zero. Returns the
    seaborn ``FacetGrid``."""
    import seaborn as sns

    order = list(dict.fromkeys(diffs[label]))
    g = sns.catplot(data=diffs, y=label, x="mean", col="participation", row="metric", kind="point", order=order,
                    linestyle="none", height=height, aspect=2.0, sharex=False)
    for (metric, part), ax in g.axes_dict.items():
        sub = diffs[(diffs["metric"] == metric) & (diffs["participation"] == part)]
        for _, r in sub.iterrows():
            if r["lo"] == r["lo"]:  # a categorical axis puts the i-th label at y = i
                ax.plot([r["lo"], r["hi"]], [order.index(r[label])] * 2, color="C0")
        ax.axvline(0, color="grey", lw=1)
    g.set_axis_labels("difference (points), 95% t-interval over seeds", "")
    return g
