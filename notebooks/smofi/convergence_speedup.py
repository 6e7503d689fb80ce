# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
# ---

# %% [markdown]
# # SMoFi: convergence speed-up — rounds to a target accuracy
#
# *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on Heterogeneous Data* (AAAI 2026).
#
# **What the paper claims** (spec `smofi.md` §5): SMoFi converges up to **10.25×** faster; on
# CIFAR-10 the speed-ups are **4.61×–5.54×**; on Tiny-ImageNet SMoFi reaches the target in
# **16 rounds** where SFLV1 needs **more than 400**.
#
# **Definition** (spec §4 [D]): speed-up = rounds the baseline needs to reach a target accuracy /
# rounds the method needs; target = the best accuracy the baseline reaches within the round
# budget. We also report the targets 90% and 80% of that best accuracy
# (`fedlib.experiments.metrics.rounds_to_target` / `speedup`).
#
# **What this notebook runs**: the pairs (base → base + SMoFi) for the FedAvg (= SFLV1), FedProx
# and FedNAR bases, and, for comparison, FedAvg → FedAvg + FedAvgM and FedAvg → FedAvg + SlowMo,
# on the datasets in `datasets` (Dirichlet 0.1). The runs are the same configurations as in
# `main_accuracy`, so whichever notebook runs first computes them and the other reuses them from
# the result store. A dataset missing on this machine is recorded as *needs download*.
#
# **Profiles**: `smoke` (CI: 256 CIFAR-10 images, 4 clients, 2 rounds — meaningless numbers);
# `cpu` (≈ 8 min on 2 cores, or ≈ 0 after `main_accuracy`: the small `cnn` on 5,000 CIFAR-10
# images, 20 clients / 10 per round, 20 rounds, 1 seed — a 20-round budget, not the paper's 200);
# `paper` (spec §4: ResNet-18, all data, 200 / 300 / 400 rounds, 3 seeds; a GPU).

# %% tags=["parameters"]
profile = "auto"
datasets = None    # subset of cifar10, cifar100, tinyimagenet
pairs = None       # subset of the PAIRS names below
targets = None     # target fractions of the baseline best accuracy, e.g. [1.0, 0.9, 0.8]
seeds = None       # list of run seeds
rounds = None      # rounds: an int for all datasets or a dict per dataset
model = None       # fedlib.models name
cut = None         # cut point, None means the default cut of the model
max_train = None   # training-set subsample, None means all
max_test = None    # test-set subsample, None means all
clients = None     # split.clients
per_round = None   # split.per_round
workers = None     # parallel runs as sweep processes, 1 means in this process

# %%
# NBVAL_CHECK_OUTPUT
import math
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from fedlib.data import load_dataset
from fedlib.errors import FedlibError
from fedlib.experiments import ResultStore, RunConfig, run, sweep
from fedlib.experiments.metrics import rounds_to_target, speedup
from fedlib.reporting import (apply_knobs, comparison, project_root, resolve_profile,
                              save_comparison, save_figure, show_settings)

torch.set_num_threads(1)  # small models on a busy CPU run fastest single-threaded
profile = resolve_profile(profile)

ALL_DATASETS = ["cifar10", "cifar100", "tinyimagenet"]
METHODS = {"FedAvg": "fedavg", "+ FedAvgM": "fedavg+fedavgm", "+ SlowMo": "fedavg+slowmo",
           "+ SMoFi": "fedavg+smofi", "FedProx": "fedprox", "FedProx + SMoFi": "fedprox+smofi",
           "FedNAR": "fednar", "FedNAR + SMoFi": "fednar+smofi"}
# name -> (baseline, method)
PAIRS = {"FedAvg + SMoFi": ("FedAvg", "+ SMoFi"),
         "FedProx + SMoFi": ("FedProx", "FedProx + SMoFi"),
         "FedNAR + SMoFi": ("FedNAR", "FedNAR + SMoFi"),
         "FedAvg + FedAvgM": ("FedAvg", "+ FedAvgM"),
         "FedAvg + SlowMo": ("FedAvg", "+ SlowMo")}
SETTINGS = {
    "smoke": dict(datasets=["cifar10", "tinyimagenet"], pairs=list(PAIRS), targets=[1.0, 0.9, 0.8],
                  seeds=[0], rounds={"cifar10": 2, "cifar100": 2, "tinyimagenet": 2}, model="cnn",
                  cut="conv1", max_train=256, max_test=100, clients=4, per_round=4, workers=1),
    "cpu": dict(datasets=ALL_DATASETS, pairs=list(PAIRS), targets=[1.0, 0.9, 0.8], seeds=[0],
                rounds={"cifar10": 20, "cifar100": 20, "tinyimagenet": 20}, model="cnn", cut="conv1",
                max_train=5000, max_test=1000, clients=20, per_round=10, workers=2),
    "paper": dict(datasets=ALL_DATASETS, pairs=list(PAIRS), targets=[1.0, 0.9, 0.8],
                  seeds=[0, 1, 2], rounds={"cifar10": 200, "cifar100": 300, "tinyimagenet": 400},
                  model="resnet18", cut="layer1", max_train=None, max_test=None, clients=20,
                  per_round=10, workers=1),
}
LISTS = {"datasets", "pairs", "targets", "seeds"}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
if not isinstance(settings["rounds"], dict):
    settings["rounds"] = {d: int(settings["rounds"]) for d in ALL_DATASETS}
BATCH = {"cifar10": 32, "cifar100": 32, "tinyimagenet": 64}  # spec §4 [D]
S = settings
# runs keep the profile as their label only at the profile's own scale; changed knobs make them "custom"
SCALE_KNOBS = ("rounds", "model", "cut", "max_train", "max_test", "clients", "per_round")
LABEL = profile if all(S[k] == SETTINGS[profile][k] for k in SCALE_KNOBS) else "custom"
show_settings({**settings, "run label": LABEL}, profile)

# %%
store = ResultStore(os.environ.get("FEDLIB_RESULTS") or project_root() / "results")
# the split-FL presets of each profile (fedlib/presets); every knob below is set explicitly on top
PRESET = {"smoke": "sflv1-cifar10-smoke", "cpu": "sflv1-cifar10-cpu", "paper": "sflv1-cifar10"}


def config(dataset: str, algorithm: str, seed: int, **extra) -> RunConfig:
    """The run of ``algorithm`` on ``dataset`` at this profile (``extra``: more overrides)."""
    over = {"profile": LABEL, "seed": int(seed), "algorithm": algorithm, "options": {},
            "rounds": S["rounds"][dataset], "data.dataset": dataset,
            "data.max_train": S["max_train"], "data.max_test": S["max_test"],
            "model.name": S["model"], "model.cut": S["cut"],
            "split.clients": S["clients"], "split.per_round": S["per_round"],
            "local.batch_size": BATCH[dataset]}
    over.update(extra)
    return RunConfig.from_preset(PRESET[profile]).with_overrides(over)


def execute(cfgs: list) -> list:
    """Run (or load) every config. With ``workers > 1`` and several runs missing, those run first
    in parallel (``sweep``: one single-threaded process each); a lone missing run runs here."""
    todo = {c.config_hash(): c for c in cfgs if store.get(c) is None}
    if S["workers"] > 1 and len(todo) > 1:
        sweep(list(todo.values()), workers=min(S["workers"], len(todo)), store=store)
    return [run(c, store=store, progress=True) for c in cfgs]


def missing(dataset: str) -> str | None:
    """None if ``dataset`` loads here, else what the table records instead of a number."""
    try:
        load_dataset(dataset)
    except FedlibError:
        return f"needs download: fedlib data fetch {dataset}"
    return None


availability = {d: missing(d) for d in S["datasets"]}
print("availability:", {d: (m or "ok") for d, m in availability.items()})

# %%
needed = sorted({m for p in S["pairs"] for m in PAIRS[p]}, key=list(METHODS).index)
plan = [(d, name, seed) for d in S["datasets"] if availability[d] is None
        for name in needed for seed in S["seeds"]]
results = execute([config(d, METHODS[name], seed) for d, name, seed in plan])
hist = {(d, name, seed): res.history for (d, name, seed), res in zip(plan, results)}
curves = pd.concat([pd.DataFrame({"dataset": d, "method": name, "seed": seed, "round": h["round"],
                                  "accuracy": 100.0 * pd.to_numeric(h["accuracy"], errors="coerce")})
                    for (d, name, seed), h in hist.items()], ignore_index=True) if hist else pd.DataFrame()

rows = []
for d in S["datasets"]:
    if availability[d] is not None:
        continue
    for pair in S["pairs"]:
        base, method = PAIRS[pair]
        for seed in S["seeds"]:
            hb, hm = hist[(d, base, seed)], hist[(d, method, seed)]
            best = float(pd.to_numeric(hb["accuracy"], errors="coerce").max())
            for f in S["targets"]:
                target = f * best
                rows.append({"dataset": d, "pair": pair, "seed": seed, "target_fraction": f,
                             "target_acc": 100.0 * target,
                             "baseline_rounds": rounds_to_target(hb, target),
                             "method_rounds": rounds_to_target(hm, target),
                             "speedup": speedup(hb, hm, target)})
speed = pd.DataFrame(rows, columns=["dataset", "pair", "seed", "target_fraction", "target_acc",
                                    "baseline_rounds", "method_rounds", "speedup"])
speed

# %%
if len(curves):
    ds_run = [d for d in S["datasets"] if d in set(curves["dataset"])]
    fig, axes = plt.subplots(1, len(ds_run), figsize=(6 * len(ds_run), 4), squeeze=False)
    for ax, d in zip(axes[0], ds_run):
        sub = curves[(curves["dataset"] == d) & curves["method"].isin(["FedAvg", "+ SMoFi", "+ FedAvgM", "+ SlowMo"])]
        sns.lineplot(data=sub, x="round", y="accuracy", hue="method", errorbar=("sd", 1), seed=0, ax=ax)
        tgt = speed[(speed["dataset"] == d) & (speed["pair"] == "FedAvg + SMoFi") & (speed["target_fraction"] == 1.0)]
        if len(tgt):
            ax.axhline(tgt["target_acc"].mean(), color="grey", ls="--", lw=1, label="target: FedAvg's best")
            ax.legend()
        ax.set_title(f"{d}: rounds to FedAvg's best accuracy ({profile} profile)")
        ax.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    save_figure(fig, "convergence_speedup_curves", profile, "smofi")
    plt.show()

    fig, ax = plt.subplots(figsize=(8, 3.8))
    plot = speed.assign(target=lambda t: (100 * t["target_fraction"]).astype(int).astype(str) + "% of base best",
                        speedup=lambda t: t["speedup"].fillna(0.0))
    sns.barplot(data=plot, x="pair", y="speedup", hue="target", errorbar=("sd", 1), seed=0, ax=ax)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("speed-up (×), 0 = target not reached")
    ax.set_title(f"Speed-up over the base method ({', '.join(ds_run)}, {profile} profile)")
    ax.tick_params(axis="x", rotation=20)
    save_figure(fig, "convergence_speedup_bars", profile, "smofi")
    plt.show()

# %%
def scale_note(dataset: str) -> str:
    if LABEL == "paper":
        return f"paper profile (spec §4), {len(S['seeds'])} seed(s)"
    data = f"{S['max_train']} training images" if S["max_train"] else "all training images"
    return (f"{profile} profile: {S['model']} on {data} of {dataset}, {S['clients']} clients / "
            f"{S['per_round']} per round, a {S['rounds'][dataset]}-round budget, "
            f"{len(S['seeds'])} seed(s) — not the paper's setting")


def summarise(values) -> tuple:
    """(mean of the finite values or a string when none, "k/n seeds")."""
    v = [float(x) for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return (round(float(np.mean(v)), 2) if v else None), f"{len(v)}/{len(values)} seed(s)"


def fmt(x) -> str:
    return "-" if x is None else f"{x:g}"


out = []
for d in S["datasets"]:
    if availability[d] is not None:
        for pair in S["pairs"]:
            out.append({"table": "speed-up", "setting": f"{d}, {pair} vs {PAIRS[pair][0]}",
                        "metric": "speed-up (×), target = base best", "paper": np.nan,
                        "measured": availability[d], "note": "dataset not on this machine: not run"})
        if d == "tinyimagenet":
            for who, paper, note in (("SMoFi", 16, ""), ("SFLV1 (FedAvg)", np.nan, "paper: > 400 rounds; ")):
                out.append({"table": "speed-up", "setting": f"tinyimagenet, {who}", "metric": "rounds to target",
                            "paper": paper, "measured": availability[d],
                            "note": note + "dataset not on this machine: not run"})
        continue
    smofi_speedups = []
    for pair in S["pairs"]:
        base, method = PAIRS[pair]
        for f in S["targets"]:
            sel = speed[(speed["dataset"] == d) & (speed["pair"] == pair) & (speed["target_fraction"] == f)]
            val, reached = summarise(sel["speedup"].tolist())
            if f == 1.0 and pair.endswith("SMoFi") and val is not None:
                smofi_speedups.append(val)
            rb, _ = summarise(sel["baseline_rounds"].tolist())
            rm, _ = summarise(sel["method_rounds"].tolist())
            out.append({"table": "speed-up", "setting": f"{d}, {pair} vs {base}",
                        "metric": f"speed-up (×), target = {int(100 * f)}% of base best",
                        "paper": np.nan,
                        "measured": val if val is not None else f"target not reached in {S['rounds'][d]} rounds",
                        "note": f"rounds {base} {fmt(rb)}, {pair} {fmt(rm)}; reached in "
                                f"{reached}; " + scale_note(d)})
    if d == "cifar10":
        for metric, paper, fn in (("smallest SMoFi speed-up over a base (×)", 4.61, min),
                                  ("largest SMoFi speed-up over a base (×)", 5.54, max)):
            out.append({"table": "speed-up", "setting": "cifar10, SMoFi over FedAvg / FedProx / FedNAR",
                        "metric": metric, "paper": paper,
                        "measured": round(fn(smofi_speedups), 2) if smofi_speedups else "not measured",
                        "note": "target = base best; " + scale_note(d)})
    if d == "tinyimagenet":
        sel = speed[(speed["dataset"] == d) & (speed["pair"] == "FedAvg + SMoFi") & (speed["target_fraction"] == 1.0)]
        for who, col, paper, note in (("SMoFi", "method_rounds", 16, ""),
                                      ("SFLV1 (FedAvg)", "baseline_rounds", np.nan, "paper: > 400 rounds; ")):
            val, reached = summarise(sel[col].tolist())
            out.append({"table": "speed-up", "setting": f"tinyimagenet, {who}", "metric": "rounds to target",
                        "paper": paper, "measured": val if val is not None else "not reached",
                        "note": note + f"target = SFLV1's best; {reached}; " + scale_note(d)})
all_smofi = speed[(speed["target_fraction"] == 1.0) & speed["pair"].str.endswith("SMoFi")]["speedup"] if len(speed) else pd.Series(dtype=float)
out.append({"table": "speed-up", "setting": "all datasets run, SMoFi over its base",
            "metric": "largest speed-up (×)", "paper": 10.25,
            "measured": round(float(all_smofi.max()), 2) if all_smofi.notna().any() else "not measured",
            "note": "datasets run: " + ", ".join(d for d in S["datasets"] if availability[d] is None)
                    + f"; {profile} profile"})
df = comparison(out, profile)
save_comparison(df, "convergence_speedup", profile, "smofi")
df
