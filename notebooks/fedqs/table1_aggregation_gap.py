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
# # FedQS Table 1 — the gap between gradient and model aggregation
#
# **Paper claim** (Li et al., NeurIPS 2025, §2 "Key Observations", Table 1): two factors make gradient
# aggregation (FedSGD: the server adds the mean of the clients' updates Δ) and model aggregation
# (FedAvg: the server averages the clients' models) behave differently — stale updates (Factor 1,
# semi-asynchronous FL) and data heterogeneity (Factor 2, non-IID). Training ResNet-18 on CIFAR-10 with
# 100 clients, **with both factors (SAFL + non-IID) the accuracy gap between gradient and model
# aggregation reaches 11.52 points**; with either factor alone it is small. (The table's other cells
# are an image; the prose states only this number.)
#
# **This notebook** runs the 2 × 2 × 2 grid IID / non-IID × synchronous / semi-asynchronous × FedSGD /
# FedAvg and reports, per cell, the best test accuracy (the table reports the average best accuracy)
# and the gap FedSGD − FedAvg. Synchronous FL (spec §1): each round K clients are sampled uniformly and
# all train from the current global model; semi-asynchronous: K-buffered aggregation on the virtual
# clock with delays 1:50.
#
# **Profiles**
# - `smoke`: UCI Adult, 10 clients, K = 3, 5 rounds — seconds; numbers meaningless.
# - `cpu`: **CIFAR-10 with the small CNN of the FedQS authors' SAFL-gap study** (`cnn3`, their public
#   code's model [C]), the paper's system — 100 clients, K = 10, the full training set (80% of each
#   client's share; 20% is its validation holdout, as in every FedQS preset), delays 1:50, E = 2, B = 50,
#   lr 0.1 — but **T = 50 rounds** instead of 400 and the CNN instead of ResNet-18. Non-IID = Dirichlet
#   x = 0.1, the paper's most heterogeneous column (the paper does not say which x Table 1 uses; the
#   `paper` profile uses the same x). Two seeds for the semi-asynchronous cells (paired: the same seed
#   gives both methods the same partition, delays and initial model); one for the synchronous cells,
#   whose gap is zero by construction (see below). Runs go to two one-thread worker processes.
#   `task="adult"` runs UCI Adult at the paper's scale instead (every method lands within ~1.5 points
#   there: the majority class alone is 76%).
# - `paper`: ResNet-18 on CIFAR-10, 100 clients, K = 10, 400 rounds, non-IID = Dirichlet x = `alpha`
#   (0.1 by default: the paper does not say which x Table 1 uses; 0.1 is its most heterogeneous
#   column) — needs a GPU.
#
# Spec: [`docs/spec/fedqs.md`](../../docs/spec/fedqs.md) — every "spec §" in this notebook refers to it.

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only fedqs/table1_aggregation_gap -p NAME=VALUE
profile = "auto"   # smoke | cpu | paper | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
task = None        # "adult" (UCI Adult, FCN) | "cifar10" (CIFAR-10; ResNet-18 at paper scale, CNN when reduced)
alpha = None       # Dirichlet x of the non-IID CIFAR-10 split
seeds = None       # e.g. [0, 1, 2]
sync_seeds = None  # how many of `seeds` the synchronous cells use (their gap is zero by construction)
rounds = None      # T; None keeps the profile default
workers = None     # >1: run the missing cells in a local process pool first (fedlib.experiments.sweep)

# %%
# NBVAL_CHECK_OUTPUT
from fedlib.reporting import apply_knobs, resolve_profile, show_settings

profile = resolve_profile(profile)
SETTINGS = {
    "smoke": dict(task="adult", alpha=0.1, seeds=[0], sync_seeds=1, rounds=5, workers=1,
                  reduce=["safl.clients=10", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", alpha=0.1, seeds=[0, 1], sync_seeds=1, rounds=50, workers=2, reduce=[]),
    "paper": dict(task="cifar10", alpha=0.1, seeds=[0], sync_seeds=1, rounds=400, workers=1, reduce=[]),
}
LISTS = {'seeds'}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
S = settings
show_settings(settings, profile)

# %%
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from fedlib.reporting import comparison, run_all, save_comparison, save_figure
from fedlib.reporting.fedqs import Study

sns.set_theme(style="whitegrid", context="notebook")
GROUP = "fedqs"
# CIFAR-10 below `paper`: the SAFL-gap study's small CNN cnn3 (not the paper's Table 1 model)
study = Study(S["task"], profile, S["rounds"], S["reduce"])
paper_scale = study.paper_scale
# the two data splits of each task
SPLITS = {
    "IID": ["data.partition=iid"],
    "non-IID": ["data.partition=sex"] if S["task"] == "adult" else ["data.partition=dirichlet", f"data.alpha={S['alpha']}"],
}
MODES = {"synchronous": "sync", "semi-asynchronous": "semi-async"}
METHODS = {"FedSGD (gradient)": "fedsgd", "FedAvg (model)": "fedavg"}
cells, cfgs = [], []
for split, split_over in SPLITS.items():
    for mode_label, mode in MODES.items():
        for method_label, method in METHODS.items():
            for seed in (S["seeds"] if mode == "semi-async" else S["seeds"][:S["sync_seeds"]]):
                cells.append((split, mode_label, method_label, seed))
                cfgs.append(study.config(method, [*split_over, f"safl.mode={mode}"], seed))
print(f"{len(cfgs)} runs on {S['task']} ({'paper scale' if paper_scale else 'reduced'})")

# %%
results = run_all(cfgs, "Table 1", S["workers"])

# %%
rows = []
for (split, mode, method, seed), res in zip(cells, results):
    s = res.summary
    rows.append({"data": split, "FL": mode, "aggregation": method, "seed": seed,
                 "best accuracy": 100 * s["best_accuracy"], "convergence accuracy": 100 * s["convergence_accuracy"]})
runs = pd.DataFrame(rows)
table = runs.groupby(["data", "FL", "aggregation"], sort=False)[["best accuracy", "convergence accuracy"]].mean()
wide = table["best accuracy"].unstack("aggregation")
wide["gap (gradient − model)"] = wide["FedSGD (gradient)"] - wide["FedAvg (model)"]
conv = table["convergence accuracy"].unstack("aggregation")
wide["gap, convergence accuracy"] = conv["FedSGD (gradient)"] - conv["FedAvg (model)"]
# paired per seed: the same seed gives both methods the same partition, delays and initial model
per_seed = runs.pivot_table(index=["data", "FL", "seed"], columns="aggregation",
                            values=["best accuracy", "convergence accuracy"])
gaps = pd.DataFrame({
    "best-accuracy gap": per_seed["best accuracy"]["FedSGD (gradient)"] - per_seed["best accuracy"]["FedAvg (model)"],
    "convergence-accuracy gap": (per_seed["convergence accuracy"]["FedSGD (gradient)"]
                                 - per_seed["convergence accuracy"]["FedAvg (model)"])})
spread = gaps.groupby(level=["data", "FL"], sort=False).agg(["min", "max", "count"])
wide.round(2)

# %% [markdown]
# The gap of each seed (FedSGD − FedAvg on the same seed), and its range over the seeds: with two
# seeds a difference is resolved only when both seeds agree in sign and the range is small next to it.

# %%
gaps.round(2)

# %%
curves = []
for (split, mode, method, seed), res in zip(cells, results):
    h = res.history.dropna(subset=["accuracy"])
    curves.append(pd.DataFrame({"round": h["round"], "accuracy": 100 * h["accuracy"], "setting": f"{split}, {mode}",
                                "aggregation": method, "seed": seed}))
curves = pd.concat(curves, ignore_index=True)
g = sns.relplot(data=curves, x="round", y="accuracy", hue="aggregation", col="setting", col_wrap=2, kind="line",
                errorbar=("ci", 95), seed=0, height=3, aspect=1.6, facet_kws={"sharey": False})
g.set_titles("{col_name}")
g.figure.suptitle(f"Test accuracy, gradient vs model aggregation ({S['task']})", y=1.02)
save_figure(g.figure, "table1_aggregation_gap", profile, GROUP)
plt.show()

# %% [markdown]
# In **synchronous** FL the K clients of a round all start from the same global model w, so
# FedSGD's w + mean(Δ_i) equals FedAvg's mean(w_i): with fedlib's definitions (spec §1, unweighted
# means) the synchronous gap is zero by construction, up to floating-point rounding. Staleness
# (semi-asynchronous FL) is what makes the two rules differ: stale updates start from different
# models.
#
# ## Paper vs measured
#
# Gap = best accuracy of FedSGD − best accuracy of FedAvg, in points. The paper states the number only
# for SAFL + non-IID; for the other three cells it says the gap is small.

# %%
if paper_scale and S["task"] == "cifar10":
    scale_note = "paper scale (ResNet-18, CIFAR-10)"
elif S["task"] == "cifar10":
    scale_note = (f"{profile} profile: CIFAR-10 with the small CNN cnn3, Dirichlet x = {S['alpha']}, "
                  f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds")
else:
    scale_note = (f"{profile} profile: UCI Adult (FCN){' at the paper scale' if paper_scale else ', reduced'}, "
                  "not the paper's ResNet-18/CIFAR-10")
out = []
for (split, mode), row in wide.iterrows():
    both = split == "non-IID" and mode == "semi-asynchronous"
    sp = spread.loc[(split, mode)]
    lo, hi, n = sp[("best-accuracy gap", "min")], sp[("best-accuracy gap", "max")], int(sp[("best-accuracy gap", "count")])
    clo, chi = sp[("convergence-accuracy gap", "min")], sp[("convergence-accuracy gap", "max")]
    agree = "both seeds positive" if lo > 0 else ("both seeds negative" if hi < 0 else "the seeds disagree in sign")
    seeds_note = (f"{n} seeds, per-seed range [{lo:.2f}, {hi:.2f}] ({agree}); " if n > 1 else "1 seed; ")
    out.append({"table": "Table 1", "setting": f"{split} + {mode}", "metric": "gap gradient − model (points)",
                "paper": 11.52 if both else float("nan"), "measured": round(row["gap (gradient − model)"], 2),
                "note": ("paper: the gap surges with both factors, gradient aggregation ahead; " if both
                         else "paper: small (number not stated); ") + seeds_note
                + f"gap in convergence accuracy (mean of the last 20 rounds) {row['gap, convergence accuracy']:.2f}"
                + (f" [{clo:.2f}, {chi:.2f}]" if n > 1 else "") + "; " + scale_note})
gap_best = wide["gap (gradient − model)"]
if ("non-IID", "semi-asynchronous") in gap_best.index:
    others = gap_best.drop(("non-IID", "semi-asynchronous"))
    out.append({"table": "Table 1", "setting": "SAFL + non-IID vs largest single-factor gap",
                "metric": "|gap| difference (points)", "paper": float("nan"),
                "measured": round(abs(gap_best[("non-IID", "semi-asynchronous")]) - others.abs().max(), 2),
                "note": "paper: positive (both factors together widen the gap); " + scale_note})
for (split, mode, method), r in table.iterrows():  # the measured cells themselves
    out.append({"table": "Table 1", "setting": f"{split} + {mode}, {method}", "metric": "best accuracy (%)",
                "paper": float("nan"), "measured": round(r["best accuracy"], 2),
                "note": f"convergence accuracy {r['convergence accuracy']:.2f}; {scale_note}"})
safl_nonidd = ("non-IID", "semi-asynchronous")
if safl_nonidd in gap_best.index and len(gap_best) == 4:
    g = gap_best[safl_nonidd]
    lo = spread.loc[safl_nonidd][("best-accuracy gap", "min")]
    largest = abs(g) >= others.abs().max()
    words = (f"gradient aggregation ahead by {g:.2f} points (every seed ≥ {lo:.2f})" if lo > 0
             else f"gap {g:.2f} points, not positive on every seed (min {lo:.2f})")
    out.append({"table": "Table 1", "setting": "paper's direction", "metric": "reproduced?", "paper": float("nan"),
                "measured": "yes" if lo > 0 and largest else ("partly" if lo > 0 or largest else "no"),
                "note": f"SAFL + non-IID: {words}; {'the largest' if largest else 'not the largest'} of the four "
                        f"gaps (paper: 11.52 points, the largest); the synchronous gaps are zero by construction "
                        f"here; {scale_note}"})
df = comparison(out, profile)
save_comparison(df, "table1_aggregation_gap", profile, GROUP)
df
