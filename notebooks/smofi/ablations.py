# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # SMoFi ablations: the staleness rule, number of clients, architectures, optimizers
#
# *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on Heterogeneous Data* (AAAI 2026).
#
# **What the paper claims** (spec [`smofi.md`](../../docs/spec/smofi.md) §5; the ablation tables' numbers are not in the
# spec, so the `paper` column stays empty):
# - the staleness exponent α of s_α = (τ − |T_h| + 1)^α defaults to **−0.1** and needs manual tuning;
# - SMoFi's gains **grow with more clients** and with **deeper models**;
# - they **hold across SGDM, NAG, Adam and AdamW** and across **VGG, MobileNet, ResNet and DenseNet**.
#
# **What this notebook runs** (each family selectable with `ablations`), always FedAvg (= SFLV1)
# vs FedAvg + SMoFi on CIFAR-10, Dirichlet 0.1, through `fedlib.experiments.run`, on **paired
# seeds** (a seed fixes partition, selection, batches and initial model for every variant):
# - **staleness — the rule as its own table** (issues 12, 18). SMoFi's fusion mechanism (fuse the
#   surrogates' momenta every step) is `main_accuracy`'s claim; how clients that finished their
#   |T_j| steps early enter the fused buffer is a separate rule the text fixes only in part: decay
#   with s_α = (τ − |T_h| + 1)^α and "|J^n| momenta always take part", but neither the normaliser
#   (|J^n| or Σ weights) nor a data-share weighting of the active clients. Under Dirichlet 0.1 the
#   |T_j| span 1–27 steps at `cpu`: finished clients' decayed momenta stay in the sum divided by
#   |J^n|, which shrinks the fused step, and a 16-image client weighs as much as an 800-image one.
#   The variants, each a named option (`fedlib.split.smofi`):
#   - *decay, ÷|J^n|* — the paper's reading and fedlib's default (= `main_accuracy`'s SMoFi run);
#   - *decay, ÷Σ weights* — `options.renormalise=true` (a weighted mean, keeps m̄'s scale);
#   - *decay, data-share weights, ÷|J^n|* — `options.weighting=samples`: each signal weighted by
#     its client's share of the round's samples (the weights the round-end average uses);
#   - *drop, ÷|J^n|* — `options.stale=drop`: finished momenta leave the sum, the denominator stays
#     (the α → −∞ limit of the paper's rule);
#   - *drop, ÷Σ weights* — `options.stale=drop` + `renormalise=true`: the plain mean of the active
#     surrogates' momenta;
#   - at `smoke`/`paper` also other α with the paper's rule and the other reading of the staleness
#     index (`options.stale_index=from0`: first stale weight 1 instead of 2^α).
#   The |T_j| spread is printed per seed;
# - **optimizers**: SGDM (β 0.9), NAG (Nesterov 0.9), Adam and AdamW, lr `adam_lr` for the Adam
#   family [D: 0.001; the paper's value is not known]. SMoFi with Adam/AdamW fuses **both moments**
#   by default (fedlib decision, issue 12): fusing only the first moment while each surrogate keeps
#   its own second moment divides a non-zero fused m by a zero √v on dead-ReLU coordinates and
#   blows the parameters up; that rule stays available as `options.fuse_second_moment=false` and
#   is run once here (*Adam, first moment only*) to show it;
# - **clients**: N clients with N/2 selected per round, the training set fixed (not at `cpu`);
# - **architectures**: `vgg16`, `mobilenetv2`, `resnet18`, `densenet121` at their default cuts (and
#   `cnn`) — at the `cpu` profile not run (a CPU does not finish them).
#
# **Profiles**: `smoke` (CI: 256 CIFAR-10 images, 4 clients, 2 rounds — meaningless numbers);
# `cpu`: the SMoFi main table's Dirichlet 0.1 setting (`full`) — the small `cnn` cut after `conv1`,
# 4,000 CIFAR-10 training images, 10 of 10 clients, 15 rounds, test on 5,000 images every round —
# the staleness table on 3 seeds: 12 new runs (the FedAvg and paper-reading runs are
# `main_accuracy`'s), ≈ 120 s of CPU time each (measured for one such run, one thread), ≈ 12 min on
# two one-thread workers. The optimizer family (SGDM / Adam / AdamW, 1 seed, 5 more runs) runs with
# `-p ablations='["staleness","optimizers"]'` — left out of the `cpu` default for the compute budget;
# metric: mean of the last 5 rounds, with paired differences and 95% t-intervals; `paper` (spec §4: ResNet-18 cut after `layer1`, all data, 200 rounds, 3 seeds, all
# four architectures; a GPU).

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only smofi/ablations -p NAME=VALUE
profile = "auto"
ablations = None      # subset of staleness, optimizers, clients, architectures
alphas = None         # SMoFi staleness exponents with the paper's rule (decay, ÷|J^n|), all < 0
rules = None          # subset of the RULES names below (the staleness rule's variants, at α = −0.1)
client_counts = None  # values of split.clients
architectures = None  # fedlib.models names to run
optimizers = None     # subset of SGDM, NAG, Adam, AdamW
adam_lr = None        # local lr for Adam and AdamW
seeds = None          # list of run seeds (staleness, clients, architectures)
optimizer_seeds = None  # list of run seeds for the optimizer family
rounds = None         # rounds per run (None keeps the participation setting's)
model = None          # model of the non-architecture ablations
cut = None            # its cut point, None means the default cut of the model
max_test = None       # test-set subsample, None means all
last = None           # the final accuracy is the mean of this many last rounds
workers = None        # parallel runs as sweep processes, 1 means in this process

# %%
# NBVAL_CHECK_OUTPUT
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from fedlib.reporting import (SMOFI_SCALE_KNOBS, comparison, curve_metrics, paired_difference, resolve_profile,
                              run_or_load, save_comparison, save_figure, show_settings, smofi_configs, smofi_settings,
                              verdict)
from fedlib.core.errors import FedlibError
from fedlib.split.sfl import prepare_data
from fedlib.split.smofi import step_count_spread
from fedlib.train.config import batches_per_epoch

profile = resolve_profile(profile)

FAMILIES = ["staleness", "optimizers", "clients", "architectures"]
ALL_ARCHS = ["vgg16", "mobilenetv2", "resnet18", "densenet121"]
OPTIMIZERS = ["SGDM", "NAG", "Adam", "AdamW"]
PAPER_RULE = "decay, ÷|J^n| (paper)"  # the paper's reading, fedlib's default: label of its α rows
# the staleness rule's variants other than the paper's reading (α = −0.1): name -> SMoFi options
RULES = {"decay, ÷Σ weights": {"options.renormalise": True},
         "decay, data-share weights, ÷|J^n|": {"options.weighting": "samples"},
         "drop, ÷|J^n|": {"options.stale": "drop"},
         "drop, ÷Σ weights": {"options.stale": "drop", "options.renormalise": True},
         "decay, ÷|J^n|, index from 0": {"options.stale_index": "from0"}}
ISSUE18_RULES = list(RULES)[:4]
SETTINGS = {
    "smoke": dict(ablations=FAMILIES, alphas=[-0.1, -1.0], rules=list(RULES), client_counts=[4, 8],
                  architectures=["cnn"],
                  optimizers=["SGDM", "Adam"], adam_lr=0.001, seeds=[0], optimizer_seeds=[0], rounds=None,
                  model="cnn", cut="conv1", max_test=100, last=1, workers=1),
    "cpu": dict(ablations=["staleness"], alphas=[-0.1], rules=ISSUE18_RULES, client_counts=[10, 20, 40],
                architectures=["cnn"], optimizers=["SGDM", "Adam", "AdamW"], adam_lr=0.001, seeds=[0, 1, 2],
                optimizer_seeds=[0], rounds=None, model="cnn", cut="conv1", max_test=5000, last=5, workers=2),
    "paper": dict(ablations=FAMILIES, alphas=[-0.01, -0.1, -0.5, -1.0], rules=list(RULES),
                  client_counts=[10, 20, 50],
                  architectures=ALL_ARCHS, optimizers=OPTIMIZERS, adam_lr=0.001, seeds=[0, 1, 2],
                  optimizer_seeds=[0, 1, 2], rounds=None, model="resnet18", cut="layer1", max_test=None, last=10,
                  workers=1),
}
PART = {"smoke": "full", "cpu": "full", "paper": "partial"}[profile]  # fedlib.reporting.SMOFI_PARTICIPATION
LISTS = {"ablations", "alphas", "rules", "client_counts", "architectures", "optimizers", "seeds", "optimizer_seeds"}
# knobs set above override the profile; LABEL: the profile's name at its own scale, "custom" once a scale knob
# (or adam_lr) changes
S, _, LABEL = smofi_settings(SETTINGS, profile, globals(), LISTS, (*SMOFI_SCALE_KNOBS, "adam_lr"))
show_settings({**S, "participation setting": PART, "run label": LABEL}, profile)


# %%
split_config = smofi_configs(profile, LABEL, S)  # split_config(dataset, algorithm, seed, participation, **overrides)


def config(algorithm: str, seed: int, **extra):
    """CIFAR-10 run of ``algorithm`` at this profile (``extra``: more overrides)."""
    return split_config("cifar10", algorithm, seed, PART, **extra)


OPT_OVERRIDES = {
    "SGDM": {},
    "NAG": {"local.nesterov": True},
    "Adam": {"local.optimizer": "adam", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
    "AdamW": {"local.optimizer": "adamw", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
}

# (family, setting label, method, algorithm, overrides, seeds) for every run of the chosen families
plan = []
if "staleness" in S["ablations"]:
    plan.append(("staleness", "FedAvg (no fusion)", "FedAvg", "fedavg", {}, S["seeds"]))
    for a in S["alphas"]:
        plan.append(("staleness", f"{PAPER_RULE}, α={a:g}", "SMoFi", "fedavg+smofi", {"options.alpha": float(a)},
                     S["seeds"]))
    for rule in S["rules"]:
        if rule not in RULES:
            raise FedlibError(f"unknown staleness rule {rule!r}", f"use some of {list(RULES)}")
        plan.append(("staleness", f"{rule}, α=-0.1", "SMoFi", "fedavg+smofi", {"options.alpha": -0.1, **RULES[rule]},
                     S["seeds"]))
if "clients" in S["ablations"]:
    for n in S["client_counts"]:
        k = max(1, n // 2)
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("clients", f"N={n}, {k} per round", method, algo,
                         {"split.clients": n, "split.per_round": k}, S["seeds"]))
arch_skipped = []
if "architectures" in S["ablations"]:
    for arch in S["architectures"]:
        arch_cut = S["cut"] if arch == S["model"] else None  # None = the model's default cut
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("architectures", arch, method, algo, {"model.name": arch, "model.cut": arch_cut},
                         S["seeds"]))
arch_skipped = [a for a in ALL_ARCHS if a not in S["architectures"] or "architectures" not in S["ablations"]]
if "optimizers" in S["ablations"]:
    for opt in S["optimizers"]:
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("optimizers", opt, method, algo, OPT_OVERRIDES[opt], S["optimizer_seeds"]))
    if "Adam" in S["optimizers"]:
        plan.append(("optimizers", "Adam", "SMoFi, first moment only", "fedavg+smofi",
                     {**OPT_OVERRIDES["Adam"], "options.fuse_second_moment": False}, S["optimizer_seeds"]))

cells = [(fam, label, method, seed, config(algo, seed, **over))
         for fam, label, method, algo, over, seeds in plan for seed in seeds]
unique = {c.config_hash(): c for *_, c in cells}
print(f"{len(cells)} ablation cells, {len(unique)} distinct runs")

# %% [markdown]
# The spread of the clients' local step counts |T_j| = E · ⌈n_j / B⌉ per seed (Dirichlet 0.1 makes
# it wide): the staleness rule weighs a finished client's momentum for the max(|T|) − |T_j| steps the
# others still take; with equal |T_j| (main_accuracy's `shards` setting) every rule is the same.

# %%
spread = []
for seed in sorted({c[3] for c in cells}):
    cfg = config("fedavg+smofi", seed)
    _, parts = prepare_data(cfg)
    steps = [cfg.local.epochs * batches_per_epoch(len(p), cfg.local.batch_size, cfg.local.drop_last) for p in parts]
    spread.append({"seed": seed, **step_count_spread(steps), "steps per client": steps})
pd.DataFrame(spread)

# %%
import warnings

with warnings.catch_warnings(record=True) as caught:  # the first-moment-only run warns, by design
    warnings.simplefilter("always")
    done = {h: r for h, r in zip(unique, run_or_load(list(unique.values()), workers=S["workers"]))}
for w in {str(w.message) for w in caught if "first moment" in str(w.message).lower()}:
    print("warning:", w)
rows = []
for fam, label, method, seed, cfg in cells:
    res = done[cfg.config_hash()]
    rows.append({"family": fam, "setting": label, "method": method, "seed": seed,
                 **curve_metrics(res.history, last=S["last"])})
runs = pd.DataFrame(rows)
runs.round(2)

# %%
fams = [f for f in FAMILIES if f in set(runs["family"])] if len(runs) else []
if fams:
    fig, axes = plt.subplots(1, len(fams), figsize=(6.5 * len(fams), 4.4), squeeze=False)
    for ax, fam in zip(axes[0], fams):
        sub = runs[runs["family"] == fam].assign(variant=lambda t: t["setting"] + ", " + t["method"])
        order = list(dict.fromkeys(sub["variant"]))
        sns.pointplot(data=sub, y="variant", x="final", order=order, errorbar=("ci", 95), seed=0,
                      linestyle="none", ax=ax)
        sns.stripplot(data=sub, y="variant", x="final", order=order, color="grey", size=4, ax=ax)
        ax.set_title(f"{fam} ({profile} profile; dots = seeds)")
        ax.set_xlabel(f"final accuracy (%), mean of last {S['last']} rounds")
        ax.set_ylabel("")
    fig.tight_layout()
    save_figure(fig, "ablations", profile, "smofi")
    plt.show()

# %% [markdown]
# ## Paired differences: each SMoFi variant against FedAvg, and each staleness rule against the paper's reading, on the same seeds

# %%
diffs = []
for fam in fams:
    sub = runs[runs["family"] == fam]
    for label in dict.fromkeys(sub["setting"]):
        here = sub[sub["setting"] == label]
        base = here[here["method"] == "FedAvg"]
        if fam == "staleness":
            base = sub[sub["method"] == "FedAvg"]
        for method in [m for m in dict.fromkeys(here["method"]) if m != "FedAvg"]:
            pair = pd.concat([here[here["method"] == method], base]).assign(
                who=lambda t: np.where(t["method"] == "FedAvg", "base", "variant"))
            r = paired_difference(pair, "final", "variant", "base", method_col="who")
            diffs.append({"family": fam, "setting": label, "variant": method, "base": "FedAvg", "mean": r["mean"],
                          "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"], "verdict": verdict(r)})
# the staleness rule's variants against the paper's reading (decay, ÷|J^n|, α = −0.1) on the same seeds
PAPER_LABEL = f"{PAPER_RULE}, α=-0.1"
stale = runs[runs["family"] == "staleness"] if len(runs) else runs
if len(stale) and PAPER_LABEL in set(stale["setting"]):
    ref = stale[stale["setting"] == PAPER_LABEL].assign(who="base")
    for label in [x for x in dict.fromkeys(stale["setting"]) if x not in (PAPER_LABEL, "FedAvg (no fusion)")]:
        pair = pd.concat([stale[stale["setting"] == label].assign(who="variant"), ref])
        r = paired_difference(pair, "final", "variant", "base", method_col="who")
        diffs.append({"family": "staleness", "setting": label, "variant": "SMoFi", "base": "SMoFi, paper reading",
                      "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"],
                      "verdict": verdict(r)})
diffs = pd.DataFrame(diffs)
diffs.round(2)

# %%
CLAIMS = {"staleness": "paper: decay s_α with α = −0.1 by default (needs manual tuning), |J^n| momenta always "
                        "take part; normaliser and weighting not stated (no numbers in the spec)",
          "clients": "paper: gains grow with more clients (no numbers in the spec)",
          "architectures": "paper: gains hold across VGG/MobileNet/ResNet/DenseNet, grow with depth",
          "optimizers": "paper: gains hold across SGDM/NAG/Adam/AdamW (no numbers in the spec)"}


def scale_note() -> str:
    if LABEL == "paper":
        return f"paper profile (spec §4), {len(S['seeds'])} seed(s)"
    cfg = config("fedavg", 0)
    return (f"{profile} profile: {S['model']} on {cfg.data.max_train or 'all'} training images of cifar10, "
            f"{cfg.split.per_round} of {cfg.split.clients} clients per round unless stated, {cfg.rounds} rounds, "
            f"test on {S['max_test'] or 'all'} images — not the paper's setting")


out = []
mean = runs.groupby(["family", "setting", "method"], sort=False)["final"].agg(["mean", "std", "count"]) \
    if len(runs) else pd.DataFrame()
for (fam, label, method), r in mean.iterrows():
    out.append({"table": f"ablation: {fam}", "setting": f"{label}, {method}",
                "metric": f"final accuracy (%), mean of last {S['last']}", "paper": np.nan,
                "measured": round(float(r["mean"]), 2),
                "note": f"{int(r['count'])} seed(s), sd {r['std']:.2f}; {CLAIMS[fam]}; " + scale_note()})
for _, r in diffs.iterrows():
    out.append({"table": f"ablation: {r['family']}", "setting": f"{r['setting']}, {r['variant']} − {r['base']}",
                "metric": "paired gain in final accuracy (points)", "paper": np.nan, "measured": round(r["mean"], 2),
                "note": f"95% interval [{r['lo']:.2f}, {r['hi']:.2f}] over {r['n']} seeds, per seed {r['per seed']}; "
                        f"{r['verdict']}; {CLAIMS[r['family']]}"})
for arch in arch_skipped:
    out.append({"table": "ablation: architectures", "setting": arch, "metric": "top-1 accuracy (%)",
                "paper": np.nan, "measured": f"not run at the {profile} profile (needs a GPU: profile=paper)",
                "note": CLAIMS["architectures"]})
df = comparison(out, profile)
save_comparison(df, "ablations", profile, "smofi")
df
