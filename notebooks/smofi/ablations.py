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
# # SMoFi ablations: staleness α, number of clients, architectures, optimizers
#
# *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on Heterogeneous Data* (AAAI 2026).
#
# **What the paper claims** (spec `smofi.md` §5; the ablation tables' numbers are not in the
# spec, so the `paper` column stays empty):
# - the staleness exponent α of s_α = (τ − |T_h| + 1)^α defaults to **−0.1** and needs manual tuning;
# - SMoFi's gains **grow with more clients** and with **deeper models**;
# - they **hold across SGDM, NAG, Adam and AdamW** and across **VGG, MobileNet, ResNet and DenseNet**.
#
# **What this notebook runs** (each family selectable with `ablations`), always FedAvg (= SFLV1)
# vs FedAvg + SMoFi on CIFAR-10, Dirichlet 0.1, through `fedlib.experiments.run`:
# - **α**: −0.01, −0.1, −0.5, −1, and two ways of removing the staleness signal, which fedlib's
#   SMoFi has no switch for and which we approximate: *no decay* (α = −1e-6: finished clients'
#   final momentum keeps weight ≈ 1) and *finished clients dropped* (α = −50: weight 1 on the
#   first step after a client finished, < 1e-15 from the next step on);
# - **clients**: N clients with N/2 selected per round (`participation`), the training set fixed;
# - **architectures**: `vgg16`, `mobilenetv2`, `resnet18`, `densenet121` at their default cuts
#   (and `cnn`) — at the `cpu` profile only what a CPU finishes (the small `cnn`); the others are
#   listed as not run;
# - **optimizers**: SGDM (β 0.9), NAG (Nesterov 0.9), Adam and AdamW (SMoFi fuses `exp_avg`;
#   lr `adam_lr` [D: 0.001, the paper's value is not known]).
#
# **Profiles**: `smoke` (CI: 256 CIFAR-10 images, 4 clients, 2 rounds — meaningless numbers);
# `cpu` (≈ 8 min on 2 cores: the small `cnn` on 5,000 CIFAR-10 images, 20 clients / 10 per round,
# a 10-round budget, 1 seed; architectures other than `cnn` not run); `paper` (spec §4: ResNet-18
# cut after `layer1`, all data, 200 rounds, 3 seeds, all four architectures; a GPU).

# %% tags=["parameters"]
profile = "auto"
ablations = None      # subset of alpha, clients, architectures, optimizers
alphas = None         # SMoFi staleness exponents, all < 0
client_counts = None  # values of split.clients
participation = None  # fraction of clients selected per round
architectures = None  # fedlib.models names to run
optimizers = None     # subset of SGDM, NAG, Adam, AdamW
adam_lr = None        # local lr for Adam and AdamW
seeds = None          # list of run seeds
rounds = None         # rounds per run
model = None          # model of the non-architecture ablations
cut = None            # its cut point, None means the default cut of the model
max_train = None      # training-set subsample, None means all
max_test = None       # test-set subsample, None means all
clients = None        # split.clients of the non-client ablations
per_round = None      # split.per_round of the non-client ablations
workers = None        # parallel runs as sweep processes, 1 means in this process

# %%
# NBVAL_CHECK_OUTPUT
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from fedlib.experiments import ResultStore, RunConfig, run, sweep
from fedlib.reporting import (apply_knobs, comparison, project_root, resolve_profile,
                              save_comparison, save_figure, show_settings)

torch.set_num_threads(1)  # small models on a busy CPU run fastest single-threaded
profile = resolve_profile(profile)

FAMILIES = ["alpha", "clients", "architectures", "optimizers"]
ALL_ARCHS = ["vgg16", "mobilenetv2", "resnet18", "densenet121"]
OPTIMIZERS = ["SGDM", "NAG", "Adam", "AdamW"]
ALPHAS = [-0.01, -0.1, -0.5, -1.0, -1e-6, -50.0]
SETTINGS = {
    "smoke": dict(ablations=FAMILIES, alphas=[-0.1, -1e-6, -50.0], client_counts=[4, 8], participation=1.0,
                  architectures=["cnn"], optimizers=["SGDM", "Adam"], adam_lr=0.001, seeds=[0], rounds=2,
                  model="cnn", cut="conv1", max_train=256, max_test=100, clients=4, per_round=4,
                  workers=1),
    "cpu": dict(ablations=FAMILIES, alphas=ALPHAS, client_counts=[10, 20, 40], participation=0.5,
                architectures=["cnn"], optimizers=OPTIMIZERS, adam_lr=0.001, seeds=[0], rounds=10,
                model="cnn", cut="conv1", max_train=5000, max_test=1000, clients=20, per_round=10,
                workers=2),
    "paper": dict(ablations=FAMILIES, alphas=ALPHAS, client_counts=[10, 20, 50], participation=0.5,
                  architectures=ALL_ARCHS, optimizers=OPTIMIZERS, adam_lr=0.001, seeds=[0, 1, 2],
                  rounds=200, model="resnet18", cut="layer1", max_train=None, max_test=None,
                  clients=20, per_round=10, workers=1),
}
LISTS = {"ablations", "alphas", "client_counts", "architectures", "optimizers", "seeds"}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
S = settings
# runs keep the profile as their label only at the profile's own scale; changed knobs make them "custom"
SCALE_KNOBS = ("rounds", "model", "cut", "max_train", "max_test", "clients", "per_round", "adam_lr",
               "participation")
LABEL = profile if all(S[k] == SETTINGS[profile][k] for k in SCALE_KNOBS) else "custom"
show_settings({**settings, "run label": LABEL}, profile)

# %%
store = ResultStore(os.environ.get("FEDLIB_RESULTS") or project_root() / "results")
# the split-FL presets of each profile (fedlib/presets); every knob below is set explicitly on top
PRESET = {"smoke": "sflv1-cifar10-smoke", "cpu": "sflv1-cifar10-cpu", "paper": "sflv1-cifar10"}


def config(algorithm: str, seed: int, **extra) -> RunConfig:
    """CIFAR-10 run of ``algorithm`` at this profile (``extra``: more overrides)."""
    over = {"profile": LABEL, "seed": int(seed), "algorithm": algorithm, "options": {},
            "rounds": S["rounds"], "data.dataset": "cifar10",
            "data.max_train": S["max_train"], "data.max_test": S["max_test"],
            "model.name": S["model"], "model.cut": S["cut"],
            "split.clients": S["clients"], "split.per_round": S["per_round"],
            "local.batch_size": 32}
    over.update(extra)
    return RunConfig.from_preset(PRESET[profile]).with_overrides(over)


def execute(cfgs: list) -> list:
    """Run (or load) every config. With ``workers > 1`` and several runs missing, those run first
    in parallel (``sweep``: one single-threaded process each); a lone missing run runs here."""
    todo = {c.config_hash(): c for c in cfgs if store.get(c) is None}
    if S["workers"] > 1 and len(todo) > 1:
        sweep(list(todo.values()), workers=min(S["workers"], len(todo)), store=store)
    return [run(c, store=store, progress=True) for c in cfgs]


def alpha_label(a: float) -> str:
    if a > -1e-3:
        return f"no decay (α={a:g})"
    if a <= -10:
        return f"finished dropped (α={a:g})"
    return f"α={a:g}"


OPT_OVERRIDES = {
    "SGDM": {},
    "NAG": {"local.nesterov": True},
    "Adam": {"local.optimizer": "adam", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
    "AdamW": {"local.optimizer": "adamw", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
}

# (family, setting label, method, overrides) for every run of the chosen families
plan = []
if "alpha" in S["ablations"]:
    plan.append(("alpha", "FedAvg (no fusion)", "FedAvg", "fedavg", {}))
    for a in S["alphas"]:
        plan.append(("alpha", alpha_label(a), "SMoFi", "fedavg+smofi", {"options.alpha": float(a)}))
if "clients" in S["ablations"]:
    for n in S["client_counts"]:
        k = max(1, int(round(S["participation"] * n)))
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("clients", f"N={n}, {k} per round", method, algo,
                         {"split.clients": n, "split.per_round": k}))
arch_skipped = []
if "architectures" in S["ablations"]:
    for arch in S["architectures"]:
        arch_cut = S["cut"] if arch == S["model"] else None  # None = the model's default cut
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("architectures", arch, method, algo, {"model.name": arch, "model.cut": arch_cut}))
    arch_skipped = [a for a in ALL_ARCHS if a not in S["architectures"]]
if "optimizers" in S["ablations"]:
    for opt in S["optimizers"]:
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("optimizers", opt, method, algo, OPT_OVERRIDES[opt]))

cells = [(fam, label, method, seed, config(algo, seed, **over))
         for fam, label, method, algo, over in plan for seed in S["seeds"]]
unique = {c.config_hash(): c for *_, c in cells}
print(f"{len(cells)} ablation cells, {len(unique)} distinct runs")

# %%
done = {h: r for h, r in zip(unique, execute(list(unique.values())))}
rows = []
for fam, label, method, seed, cfg in cells:
    res = done[cfg.config_hash()]
    acc = 100.0 * pd.to_numeric(res.history["accuracy"], errors="coerce")
    rows.append({"family": fam, "setting": label, "method": method, "seed": seed,
                 "best": float(acc.max()), "final": float(acc.dropna().iloc[-1]),
                 "wall_s_per_round": float(res.history["wall_time"].iloc[-1]) / len(res.history)})
runs = pd.DataFrame(rows)
runs

# %%
fams = [f for f in FAMILIES if f in set(runs["family"])] if len(runs) else []
if fams:
    fig, axes = plt.subplots(1, len(fams), figsize=(5.5 * len(fams), 4.2), squeeze=False)
    for ax, fam in zip(axes[0], fams):
        sub = runs[runs["family"] == fam]
        order = list(dict.fromkeys(sub["setting"]))
        sns.barplot(data=sub, x="setting", y="best", hue="method", order=order,
                    errorbar=("sd", 1), seed=0, ax=ax)
        ax.set_title(f"{fam} ({profile} profile)")
        ax.set_ylabel("best test accuracy (%)")
        ax.set_xlabel("")
        ax.tick_params(axis="x", rotation=35)
        for t in ax.get_xticklabels():
            t.set_horizontalalignment("right")
    fig.tight_layout()
    save_figure(fig, "ablations", profile, "smofi")
    plt.show()

# %%
CLAIMS = {"alpha": "paper: α = −0.1 by default, needs manual tuning (no numbers in the spec)",
          "clients": "paper: gains grow with more clients (no numbers in the spec)",
          "architectures": "paper: gains hold across VGG/MobileNet/ResNet/DenseNet, grow with depth",
          "optimizers": "paper: gains hold across SGDM/NAG/Adam/AdamW (no numbers in the spec)"}


def scale_note() -> str:
    if LABEL == "paper":
        return f"paper profile (spec §4), {len(S['seeds'])} seed(s)"
    data = f"{S['max_train']} training images" if S["max_train"] else "all training images"
    return (f"{profile} profile: {S['model']} on {data} of cifar10, {S['clients']} clients / "
            f"{S['per_round']} per round unless stated, {S['rounds']} rounds, {len(S['seeds'])} seed(s)"
            " — not the paper's setting")


out = []
mean = runs.groupby(["family", "setting", "method"], sort=False)["best"].mean() if len(runs) else pd.Series(dtype=float)
for (fam, label, method), val in mean.items():
    out.append({"table": f"ablation: {fam}", "setting": f"{label}, {method}", "metric": "top-1 accuracy (%)",
                "paper": np.nan, "measured": round(float(val), 2),
                "note": f"best of {S['rounds']} rounds; {CLAIMS[fam]}; " + scale_note()})
    if method == "SMoFi" and (fam, label, "FedAvg") in mean.index:
        out.append({"table": f"ablation: {fam}", "setting": f"{label}, SMoFi − FedAvg",
                    "metric": "gain (points)", "paper": np.nan,
                    "measured": round(float(val - mean[(fam, label, "FedAvg")]), 2),
                    "note": CLAIMS[fam] + "; " + scale_note()})
    if fam == "alpha" and method == "SMoFi":
        out.append({"table": "ablation: alpha", "setting": f"{label}, SMoFi − FedAvg",
                    "metric": "gain (points)", "paper": np.nan,
                    "measured": round(float(val - mean[("alpha", "FedAvg (no fusion)", "FedAvg")]), 2)
                    if ("alpha", "FedAvg (no fusion)", "FedAvg") in mean.index else "no FedAvg run",
                    "note": CLAIMS[fam] + "; " + scale_note()})
for arch in arch_skipped:
    out.append({"table": "ablation: architectures", "setting": arch, "metric": "top-1 accuracy (%)",
                "paper": np.nan, "measured": f"not run at the {profile} profile (needs a GPU: profile=paper)",
                "note": CLAIMS["architectures"]})
df = comparison(out, profile)
save_comparison(df, "ablations", profile, "smofi")
df
