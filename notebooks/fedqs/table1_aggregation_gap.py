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
# FedAvg and reports, per cell, the **final** accuracy (mean of the last 10 rounds) and the **best**
# accuracy (the paper's table reports the average best accuracy), and the gap FedSGD − FedAvg as a
# **paired difference over the seeds with a 95% t-interval** (the same seed gives both methods the same
# partition, delays and initial model). Synchronous FL (spec §1): each round K clients are sampled
# uniformly and all train from the current global model; semi-asynchronous: K-buffered aggregation on
# the virtual clock.
#
# **The SAFL regime** (stated in the settings below): the official code's — `safl.upload=overwrite`
# (one buffered file per client: a client's newer update replaces its queued one, so staleness stays
# bounded) and, with N = 100, the official delay profile `official-100` (delays 1..50). One extra row
# pair runs the SAFL + non-IID cell under `safl.upload=snapshot` (every finished training queues its own
# update; the queue falls behind and staleness grows), same delays and seeds, so the table shows what
# the regime does. (Synchronous cells have no buffer: the upload setting does not apply.)
#
# **Profiles**
# - `smoke`: UCI Adult, 10 clients (so delays uniform 1:50: `official-100` holds 100 values), K = 3,
#   5 rounds, 2 seeds — seconds; numbers meaningless.
# - `cpu`: **CIFAR-10 with the small CNN of the FedQS authors' SAFL-gap study** (`cnn3`, their public
#   code's model [C]), the paper's system — 100 clients, K = 10, the full training set (80% of each
#   client's share; 20% is its validation holdout, as in every FedQS preset), `official-100` delays,
#   E = 2, B = 50, lr 0.1 — but **T = 50 rounds** instead of 400 and the CNN instead of ResNet-18.
#   Non-IID = Dirichlet x = 0.1, the paper's most heterogeneous column (the paper does not say which x
#   Table 1 uses; the `paper` profile uses the same x). **Three paired seeds [0, 1, 2] in every cell**
#   (10 cells × 3 = 30 runs, two one-thread worker processes). Synchronous FedSGD and FedAvg differ only
#   by floating-point rounding (w + mean Δ vs mean w from the same w; `tests/test_safl_sync.py` checks
#   they agree to rounding, not bit for bit), so both are run. `task="adult"` runs UCI Adult at the
#   paper's scale instead (every method lands within ~1.5 points there: the majority class alone is 76%).
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
snapshot_pair = None  # also run the SAFL + non-IID cell under safl.upload=snapshot (True / False)

# %%
# NBVAL_CHECK_OUTPUT
from fedlib.reporting import apply_knobs, resolve_profile, show_settings

profile = resolve_profile(profile)
SETTINGS = {
    "smoke": dict(task="adult", alpha=0.1, seeds=[0, 1], sync_seeds=2, rounds=5, workers=1, snapshot_pair=True,
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", alpha=0.1, seeds=[0, 1, 2], sync_seeds=3, rounds=50, workers=2, snapshot_pair=True,
                reduce=[]),
    "paper": dict(task="cifar10", alpha=0.1, seeds=[0, 1, 2], sync_seeds=3, rounds=400, workers=1,
                  snapshot_pair=True, reduce=[]),
}
LISTS = {'seeds'}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
S = settings
from fedlib.reporting.fedqs import SINGLE_TASKS, task_regime  # noqa: E402

show_settings({**settings, "SAFL regime": task_regime(SINGLE_TASKS[S["task"]], S["reduce"]),
               "snapshot pair": "safl.upload=snapshot" if S["snapshot_pair"] else "not run"}, profile)

# %%
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from fedlib.reporting import comparison, run_all, save_comparison, save_figure, show_paired
from fedlib.reporting.fedqs import FINAL_LAST, Study, interval_note, paired_rows, regimes, run_metrics

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
GRAD, MODEL = METHODS
SNAPSHOT = "semi-asynchronous, snapshot uploads"  # the extra row pair: only the upload semantics differ
cells, cfgs = [], []
for split, split_over in SPLITS.items():
    for mode_label, mode in MODES.items():
        for method_label, method in METHODS.items():
            for seed in (S["seeds"] if mode == "semi-async" else S["seeds"][:S["sync_seeds"]]):
                cells.append((split, mode_label, method_label, seed))
                cfgs.append(study.config(method, [*split_over, f"safl.mode={mode}"], seed))
if S["snapshot_pair"]:
    for method_label, method in METHODS.items():
        for seed in S["seeds"]:
            cells.append(("non-IID", SNAPSHOT, method_label, seed))
            cfgs.append(study.config(method, [*SPLITS["non-IID"], "safl.mode=semi-async", "safl.upload=snapshot"], seed))
print(f"{len(cfgs)} runs on {S['task']} ({'paper scale' if paper_scale else 'reduced'}); SAFL regimes: {regimes(cfgs)}")

# %%
results = run_all(cfgs, "Table 1", S["workers"])

# %%
rows = []
for (split, mode, method, seed), res in zip(cells, results):
    rows.append({"setting": f"{split} + {mode}", "data": split, "FL": mode, "aggregation": method, "seed": seed,
                 **run_metrics(res)})
runs = pd.DataFrame(rows)
SETTING_ORDER = list(dict.fromkeys(runs["setting"]))
MAIN = [s for s in SETTING_ORDER if SNAPSHOT not in s]  # the paper's four cells
SAFL_NONIID = "non-IID + semi-asynchronous"
table = runs.groupby(["setting", "aggregation"], sort=False)[["final", "best"]].agg(["mean", "std"])
table.round(2)

# %% [markdown]
# ## The gap FedSGD − FedAvg, paired over seeds
#
# Per setting, FedSGD − FedAvg on the same seeds, for the final accuracy (mean of the last 10 rounds)
# and the best accuracy, with a 95% Student-t interval over the seeds. The paper's direction is claimed
# only for SAFL + non-IID (gradient aggregation ahead); for the other cells it says the gap is small, so
# their rows only say whether the interval excludes 0. The last rows are the regime's own effect on each
# method in the SAFL + non-IID cell (overwrite − snapshot, same seeds and delays).

# %%
gaps = paired_rows(runs, [(GRAD, MODEL, 1)], by=["setting"], method_col="aggregation")
gaps["comparison"] = gaps["setting"]
gaps.loc[gaps["setting"] != SAFL_NONIID, "verdict"] = paired_rows(
    runs[runs["setting"] != SAFL_NONIID], [(GRAD, MODEL, 0)], by=["setting"], method_col="aggregation")["verdict"].values
gaps["panel"] = "FedSGD − FedAvg"
regime_runs = runs[runs["setting"].isin([SAFL_NONIID, f"non-IID + {SNAPSHOT}"])].assign(
    regime=lambda d: d["setting"].map({SAFL_NONIID: "overwrite", f"non-IID + {SNAPSHOT}": "snapshot"}))
effect = paired_rows(regime_runs, [("overwrite", "snapshot", 0)], by=["aggregation"], method_col="regime")
if len(effect):
    effect["comparison"] = "SAFL + non-IID, " + effect["aggregation"] + ": overwrite − snapshot"
    effect["panel"] = "regime effect"
diffs = pd.concat([gaps, effect], ignore_index=True)
show_paired(diffs, "table1_aggregation_gap_paired", profile, GROUP, col="panel")
diffs[["comparison", "metric", "mean", "lo", "hi", "n", "per seed", "verdict"]].round(2)

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
# FedSGD's w + mean(Δ_i) equals FedAvg's mean(w_i) up to floating-point rounding (spec §1, unweighted
# means): the synchronous gap is zero by construction, and the two runs drift apart only through
# rounding. Staleness (semi-asynchronous FL) is what makes the two rules differ: stale updates start
# from different models.
#
# ## Paper vs measured
#
# Gap = FedSGD − FedAvg, in points, as the mean of the paired per-seed differences with its 95%
# interval. The paper states a number (11.52, best accuracy) only for SAFL + non-IID; for the other
# three cells it says the gap is small.

# %%
if paper_scale and S["task"] == "cifar10":
    scale_note = "paper scale (ResNet-18, CIFAR-10)"
elif S["task"] == "cifar10":
    scale_note = (f"{profile} profile: CIFAR-10 with the small CNN cnn3, Dirichlet x = {S['alpha']}, "
                  f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds")
else:
    scale_note = (f"{profile} profile: UCI Adult (FCN){' at the paper scale' if paper_scale else ', reduced'}, "
                  "not the paper's ResNet-18/CIFAR-10")
regime_note = f"SAFL regime {regimes([c for c in cfgs if c.safl.upload == 'overwrite']) or 'n/a'}"
out = []
for _, r in gaps.iterrows():
    both = r["setting"] == SAFL_NONIID
    out.append({"table": "Table 1", "setting": r["setting"], "metric": f"gap gradient − model, {r['metric']} (points)",
                "paper": 11.52 if both and r["metric"] == "best" else float("nan"), "measured": round(r["mean"], 2),
                "note": ("paper: the gap surges with both factors, gradient aggregation ahead; " if both
                         else "paper: small (number not stated); ") + interval_note(r) + "; " + scale_note})
for _, r in effect.iterrows():
    out.append({"table": "Table 1", "setting": r["comparison"], "metric": f"{r['metric']} accuracy difference (points)",
                "paper": float("nan"), "measured": round(r["mean"], 2),
                "note": "only the upload semantics differ (same delays, seeds); " + interval_note(r)})
for (setting, method), r in table.iterrows():  # the measured cells themselves
    out.append({"table": "Table 1", "setting": f"{setting}, {method}",
                "metric": f"final accuracy (%), mean of last {FINAL_LAST}", "paper": float("nan"),
                "measured": round(r[("final", "mean")], 2),
                "note": f"sd over seeds {r[('final', 'std')]:.2f}; best {r[('best', 'mean')]:.2f}; {scale_note}"})
main = gaps[(gaps["metric"] == "best") & gaps["setting"].isin(MAIN)].set_index("setting")
if SAFL_NONIID in main.index and len(main) == 4:
    g, lo = main.loc[SAFL_NONIID, "mean"], main.loc[SAFL_NONIID, "lo"]
    largest = abs(g) >= main.drop(SAFL_NONIID)["mean"].abs().max()
    resolved = lo > 0
    out.append({"table": "Table 1", "setting": "paper's direction", "metric": "reproduced?", "paper": float("nan"),
                "measured": "yes" if resolved and largest else ("partly" if resolved or largest else "no"),
                "note": f"SAFL + non-IID best-accuracy gap {g:.2f} points, 95% interval lower end {lo:.2f} "
                        f"({'excludes' if resolved else 'does not exclude'} 0); {'the largest' if largest else 'not the largest'} "
                        f"of the four mean gaps (paper: 11.52 points, the largest); {regime_note}; {scale_note}"})
df = comparison(out, profile)
save_comparison(df, "table1_aggregation_gap", profile, GROUP)
df
