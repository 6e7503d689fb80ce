# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # FedQS Table 5 — ablation: similarity function, momentum, feedback
#
# **Paper claim** (Li et al., NeurIPS 2025, §5.5, Table 5; numbers from the prose; CV tasks, averaged
# over x = 0.1 / 0.5 / 1): the similarity function of Mod① (cosine CF, the default; Euclidean ED; Manhattan MD: comparable),
# momentum (Mod②) and feedback (Mod③) — printed below from the claims layer:
#
# Spec: [`docs/spec/fedqs.md`](../../docs/spec/fedqs.md) — every "spec §" in this notebook refers to it.

# %%
from fedlib.reporting import show_paper_claims

show_paper_claims("fedqs-t5-manhattan", "fedqs-t5-cosine-stable", "fedqs-t5-momentum-acc", "fedqs-t5-momentum-rounds",
                  "fedqs-t5-feedback")

# %% [markdown]
# **This notebook** runs FedQS-Avg and FedQS-SGD with `options.similarity` = cosine / euclidean /
# manhattan / angle (the official code's mean per-layer angle, spec §3), `options.momentum=false` and
# `options.feedback=false`, and full FedQS under the official code's two readings (spec "Readings",
# `fedlib.safl.fedqs.readings`): `code-main` (the code's rules, momentum 0: its main scripts) and
# `code-momentum` (the code's rules with its momentum rule). Under the code's rules the momentum claim
# reads as code-main − code-momentum (the same rules without and with momentum). The rule-by-rule
# companion, `table5_code_rules`, says which of the code's rules moves FedQS. Distances are turned into "larger = more similar" by 1/(1+d)
# (`fedlib.safl.fedqs`). Metrics: convergence accuracy (last 20 rounds), rounds to 95% of it (a target
# never reached is censored at T, not dropped), and the paper's **number of oscillations with threshold
# 15**: the rounds whose test accuracy drops by more than 15 percentage points from the previous
# evaluated round (the paper's tables say only "threshold 15"; the definition is its reference [21], the
# authors' SAFL-gap study, `ret/draw.ipynb`; `fedlib.experiments.metrics.oscillations`). A 15-point drop
# is rare for a small CNN in 50 rounds, so the table also shows drops of more than 5 points — not the
# paper's threshold, descriptive only.
#
# Each variant is read against full FedQS as a **paired difference over the seeds** (same seed ⇒ same
# partition, delays and initial model) with a 95% t-interval, in convergence accuracy, oscillations and
# rounds to 95%, and each claim gets one verdict from resolved differences only: *reproduced* = every
# difference it rests on (FedQS-Avg and FedQS-SGD) excludes 0 on the paper's side, *partial* = some do (none
# against), *mixed* = some do and one is against, *against* = none does and one excludes 0 the other way,
# *unresolved* = none excludes 0.
#
# **The SAFL regime** (stated in the settings below): the official code's — `safl.upload=overwrite` (a
# client's newer update replaces its queued one, so staleness stays bounded) and, with N = 100, the
# official delay profile `official-100`; with fewer clients (smoke) delays are uniform 1:50.
#
# **Profiles**
# - `smoke`: Adult, 10 clients (uniform 1:50 delays), K = 3, 5 rounds, 2 seeds — seconds; numbers meaningless.
# - `cpu`: **CIFAR-10 x = 0.5 with the small CNN `cnn3`** (not ResNet-18; 100 clients, K = 10, the
#   full training set, `official-100` delays, **T = 50** rounds), **three paired seeds [0, 1, 2]**, the
#   three similarity functions of the paper (cosine = full FedQS, Euclidean, Manhattan), the two
#   module ablations (w/o momentum, w/o feedback) and the readings code-main / code-momentum (Table 2's
#   reading runs), for both variants: 42 runs, the six full-FedQS runs
#   are Table 2's x = 0.5 column, **24 new runs** of ~5 CPU-minutes (~60 min on two cores; split with
#   `-p 'variants=[cosine, euclidean, manhattan]'` and `-p 'variants=[cosine, w/o momentum, w/o feedback]'`).
#   `variants=[..., angle]` adds the official code's angle; `task="adult", rounds=400` runs the variants
#   on UCI Adult at the paper's scale. x = 0.5 only: a single column, not the paper's average over
#   x = 0.1 / 0.5 / 1.
# - `long` (a run of T = 400 takes hours on a CPU, so only the cells below): the `cpu` settings at the paper's **T = 400 rounds**, evaluated every 5th round and
#   every round of the last 20 (`eval_every=5, eval_last=20`; every metric reads the evaluated rounds
#   only: an oscillation is a drop between consecutive evaluated rounds, 5 rounds apart before round
#   381), **the without-feedback pair only** (FedQS-Avg and FedQS-SGD without Mod③ against full FedQS),
#   two paired seeds [0, 1]: 4 new runs — the full-FedQS runs are Table 2's x = 0.5 runs at `long`. The
#   other variants are not-run rows.
# - `paper`: ResNet-18 on CIFAR-10, x = 0.1 / 0.5 / 1 averaged — needs a GPU.

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only fedqs/table5_ablation -p NAME=VALUE
profile = "auto"   # smoke | cpu | paper | long | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
task = None        # adult | cifar10
alphas = None      # CIFAR-10 Dirichlet x values averaged over, e.g. [0.1, 0.5, 1.0]
variants = None    # subset of VARIANTS below
seeds = None       # e.g. [0, 1, 2]
rounds = None      # T; None keeps the profile default
workers = None     # >1: run the missing cells in a local process pool first (fedlib.experiments.sweep)

# %%
# NBVAL_CHECK_OUTPUT
from fedlib.reporting import apply_knobs, resolve_profile, show_settings
from fedlib.reporting.fedqs import cadence
from fedlib.safl.fedqs.readings import reading_overrides

profile = resolve_profile(profile)
VARIANTS = {  # name: FedQS option overrides
    "cosine": [], "euclidean": ["options.similarity=euclidean"], "manhattan": ["options.similarity=manhattan"],
    "angle": ["options.similarity=angle"], "w/o momentum": ["options.momentum=false"],
    "w/o feedback": ["options.feedback=false"],
    **{r: list(reading_overrides(r)) for r in ("code-main", "code-momentum")},  # full FedQS under the code's readings
}
SETTINGS = {
    "smoke": dict(task="adult", alphas=[0.5], variants=list(VARIANTS), seeds=[0, 1], rounds=5, workers=1,
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", alphas=[0.5], variants=["cosine", "euclidean", "manhattan", "w/o momentum",
                                                     "w/o feedback", "code-main", "code-momentum"], seeds=[0, 1, 2],
                rounds=50, workers=2, reduce=[]),
    "paper": dict(task="cifar10", alphas=[0.1, 0.5, 1.0], variants=list(VARIANTS), seeds=[0, 1, 2], rounds=400,
                  workers=1, reduce=[]),
    # the cpu settings at T = 400 with the long cadence (full FedQS = Table 2's long runs), w/o feedback only
    "long": dict(task="cifar10", alphas=[0.5], variants=["cosine", "w/o feedback"], seeds=[0, 1], rounds=400,
                 workers=2, reduce=cadence("long")),
}
LISTS = {'alphas', 'seeds', 'variants'}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
S = settings
from fedlib.reporting.fedqs import SINGLE_TASKS, task_regime  # noqa: E402

show_settings({**settings, "SAFL regime": task_regime(SINGLE_TASKS[S["task"]], S["reduce"])}, profile)

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from fedlib.experiments.metrics import oscillations
from fedlib.reporting.display import show_table
from fedlib.reporting import (runs_caption, cadence_words, censor, check_names, comparison, full_table, not_run_table, run_all,
                              save_comparison, save_figure, save_not_run, show_forest, show_gap_curves)
from fedlib.reporting.costs import cost_note, cost_table
from fedlib.claims import FEDQS_PAPER as P  # the paper's numbers
from fedlib.reporting.fedqs import (paired_evidence, Study, accuracy_curves, alpha_variants, claim_row, interval_note, paired_gap_curves,
                                   paired_rows, run_metrics, settings_row)

sns.set_theme(style="whitegrid", context="notebook")
GROUP = "fedqs"
check_names(S["variants"], VARIANTS, "ablation variant")
METHODS = {"fedqs-avg": "FedQS-Avg", "fedqs-sgd": "FedQS-SGD"}
# CIFAR-10 below `paper`: Table 1's small CNN cnn3, as Table 2 at cpu (a CPU cannot train ResNet-18)
study = Study(S["task"], profile, S["rounds"], S["reduce"])
paper_scale, reduce = study.paper_scale, study.reductions
data_variants = alpha_variants(S["task"], S["alphas"])
cells, cfgs = [], []
for method in METHODS:
    for variant in S["variants"]:
        for data in data_variants:
            for seed in S["seeds"]:
                cfgs.append(study.config(method, [*VARIANTS[variant], *data], seed))
                cells.append((METHODS[method], variant, data[0] if data else "", seed))
print(f"{len(cfgs)} runs on {S['task']}")
EVALUATION = cadence_words(cfgs[0])  # which rounds carry an accuracy; every metric reads those only
print("evaluation:", EVALUATION)

# %%
results = run_all(cfgs, "Table 5", S["workers"])
CAPTION = runs_caption(cfgs, profile)  # seeds, T, model and profile under every figure

# %%
rows = []
for (method, variant, data, seed), res in zip(cells, results):
    s = res.summary
    rows.append({"method": method, "variant": variant, "data": data, "seed": seed,
                 "accuracy": 100 * s["convergence_accuracy"],
                 "censored": s["rounds_to_95"] is None,  # never reached: censored at T, not dropped
                 "rounds_to_95": censor([s["rounds_to_95"]], S["rounds"])[0].iloc[0],
                 "oscillations": oscillations(res.history, 15.0),  # the paper's count, threshold 15 points
                 "drops > 5": oscillations(res.history, 5.0),  # descriptive only: not the paper's threshold
                 "pair": f"{data} seed {seed}", **run_metrics(res)})
runs = pd.DataFrame(rows)
table = runs.groupby(["variant", "method"], sort=False)[["accuracy", "rounds_to_95", "oscillations", "drops > 5"]].mean()
table.unstack("method").round(2)

# %%
curves = accuracy_curves(cells, results, ["method", "variant", "data", "seed"])  # evaluated rounds only
g = sns.relplot(data=curves, x="round", y="accuracy", hue="variant", hue_order=S["variants"], col="method",
                kind="line", errorbar=("ci", 95), seed=0, height=3.5, aspect=1.5)
g.set_titles("{col_name}")
g.figure.suptitle("Ablation: test accuracy per round", y=1.03)
save_figure(g.figure, "table5_ablation", profile, GROUP, caption=runs_caption(cfgs, profile))
plt.show()

# %% [markdown]
# ## When does a module matter? Variant − full FedQS against the round
#
# Per FedQS variant, each ablation minus full FedQS (cosine), same seed and x, at each evaluated round:
# the line is the mean over the pairs, the band their range, the dashed line 0. The shaded part is the
# every-round tail of the evaluation cadence (`eval_last`).

# %%
gap_curves = paired_gap_curves(curves.assign(pair=curves["data"] + " seed " + curves["seed"].astype(str)),
                               [(v, "cosine") for v in S["variants"] if v != "cosine"], by=["method"],
                               method_col="variant", pair_col="pair")
last = int(cfgs[0].eval_last) if cfgs else 0
show_gap_curves(gap_curves, "table5_ablation_gap_curves", profile, GROUP, caption=CAPTION, col="method", hue="comparison",
                tail_from=S["rounds"] - last + 1 if last else None,
                title=f"Table 5: variant − full FedQS per round (points), mean and range over {len(S['seeds'])} seeds")

# %% [markdown]
# ## Paired differences: variant − full FedQS
#
# Same seeds (and same x), 95% t-interval over the pairs. The paper's direction, per metric: accuracy —
# w/o momentum and w/o feedback lower, Manhattan slightly higher, Euclidean comparable (no direction);
# oscillations — cosine fewest, so Euclidean / Manhattan − cosine positive; rounds to 95% — w/o momentum
# more (the paper's percentage). The official code's angle: no claim. Green: resolved on the paper's side; red: against
# it; grey: unresolved; blue: no direction claimed.

# %%
SIGNS = {  # metric -> variant -> the paper's sign of (variant − cosine); 0: no direction claimed
    "accuracy": {"w/o momentum": -1, "w/o feedback": -1, "manhattan": 1, "euclidean": 0, "angle": 0},
    "oscillations": {"manhattan": 1, "euclidean": 1, "angle": 0, "w/o momentum": 0, "w/o feedback": 0},
    "rounds_to_95": {"w/o momentum": 1, "w/o feedback": 0, "manhattan": 0, "euclidean": 0, "angle": 0},
}
# the momentum claim under the code's rules: code-main (momentum 0) − code-momentum, the paper's sign per metric
CODE_MOMENTUM = {"accuracy": -1, "oscillations": 0, "rounds_to_95": 1}


def pairs_for(metric, signs):
    """(variant, baseline, sign) of ``metric``: each variant − cosine (a reading: no direction), and
    code-main − code-momentum where both ran."""
    pairs = [(v, "cosine", signs.get(v, 0)) for v in S["variants"] if v != "cosine"]
    if {"code-main", "code-momentum"} <= set(S["variants"]):
        pairs.append(("code-main", "code-momentum", CODE_MOMENTUM[metric]))
    return pairs


diffs = pd.concat([paired_rows(runs, pairs_for(metric, signs), by=["method"],
                               metrics=(metric,), method_col="variant", pair_col="pair")
                   for metric, signs in SIGNS.items()], ignore_index=True)
if len(diffs):
    diffs["measure"] = diffs["metric"].map({"accuracy": "convergence accuracy (points)",
                                            "oscillations": "oscillations, threshold 15 (count)",
                                            "rounds_to_95": "rounds to 95% (rounds)"})
show_forest(diffs, "table5_ablation_paired", profile, GROUP, caption=CAPTION, y="comparison", col="measure", row="method",
            xlabel="difference (variant − full FedQS)",
            title=f"Table 5: variant − full FedQS (cosine), {len(S['seeds'])} paired seeds, 95% t-intervals")
full_table(diffs.drop(columns=["measure", "baseline"], errors="ignore").round(2))

# %% [markdown]
# ## Paper vs measured
#
# Differences are variant − full FedQS (cosine, momentum and feedback on), in points; the rounds claim's percentage is
# 100 · (rounds(w/o momentum) / rounds(full) − 1), rounds to 95% of the convergence accuracy.

# %%
mean = runs.groupby(["variant", "method"])[["accuracy", "rounds_to_95", "oscillations", "drops > 5", "censored"]].agg(
    {"accuracy": "mean", "rounds_to_95": "mean", "oscillations": "mean", "drops > 5": "mean", "censored": "sum"})
if paper_scale and S["task"] == "cifar10":
    scale_note = "paper scale"
elif S["task"] == "adult":
    scale_note = f"{profile} profile: UCI Adult (FCN){' at the paper scale' if paper_scale else ', reduced'}, not the paper's CV task"
else:
    scale_note = (f"{profile} profile: CIFAR-10 x = {', '.join(str(a) for a in S['alphas'])} with {', '.join(reduce) if reduce else 'ResNet-18'}, "
                  f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds / x = 0.1, 0.5, 1 averaged")


def val(variant, method, col="accuracy"):
    return float(mean.loc[(variant, method), col]) if (variant, method) in mean.index else float("nan")


def part(variant, metric, baseline="cosine"):
    """The paired rows of ``variant`` − ``baseline`` in ``metric`` (both FedQS variants)."""
    return diffs[(diffs["comparison"] == f"{variant} − {baseline}") & (diffs["metric"] == metric)] if len(diffs) else diffs


out = [settings_row("Table 5", f"{scale_note}; {len(S['seeds'])} paired seeds {S['seeds']}; differences are variant − "
                    "full FedQS (cosine similarity, momentum and feedback on); accuracy = convergence accuracy (mean "
                    "of the last 20 evaluated rounds); oscillations = evaluated rounds whose accuracy drops > 15 points "
                    "from the previous evaluated round (the paper's threshold); rounds to 95% censored at T where never "
                    f"reached; {EVALUATION}; a verdict needs a 95% t-interval that excludes 0 on the paper's side")]
CLAIMS = [("manhattan", "accuracy", "Manhattan slightly more accurate than cosine"),
          ("w/o momentum", "accuracy", f"without momentum, accuracy drops (paper: {P['ablation_no_momentum']} points)"),
          ("w/o momentum", "rounds_to_95", f"without momentum, more rounds to converge (paper: +{P['ablation_no_momentum_rounds']:g}%)"),
          ("w/o feedback", "accuracy", f"without feedback, accuracy drops (paper: {P['ablation_no_feedback_avg']} Avg, "
                                       f"{P['ablation_no_feedback_sgd']} SGD)")]
for variant, metric, words in CLAIMS:
    sel = part(variant, metric)
    if len(sel):
        out.append(claim_row("Table 5", words, sel, label_col="method", note="reading paper"))
for metric, words in (("accuracy", "without momentum, accuracy drops"), ("rounds_to_95", "without momentum, more rounds")):
    sel = part("code-main", metric, "code-momentum")  # the same claim under the code's rules
    if len(sel):
        out.append(claim_row("Table 5", f"{words} · code reading (code-main − code-momentum)", sel, label_col="method",
                             note="reading code: the code's rules without (main scripts) and with (momentum scripts) momentum"))
osc = pd.concat([part(v, "oscillations") for v in ("euclidean", "manhattan")]) if len(diffs) else diffs
if len(osc):
    out.append(claim_row("Table 5", "cosine oscillates least (fewer 15-point drops than Euclidean, Manhattan)",
                         osc.assign(where=osc["comparison"] + ", " + osc["method"]), label_col="where",
                         note="a count of 0 in every run resolves nothing"))
if "cosine" in S["variants"]:
    if "w/o momentum" in S["variants"]:
        drop = np.mean([val("w/o momentum", m) - val("cosine", m) for m in METHODS.values()])
        more = np.mean([100 * (val("w/o momentum", m, "rounds_to_95") / val("cosine", m, "rounds_to_95") - 1)
                        for m in METHODS.values()])
        n_cens = int(sum(val(v, m, "censored") for v in ("w/o momentum", "cosine") for m in METHODS.values()))
        out.append({"table": "Table 5", "setting": "w/o momentum (mean of Avg, SGD)", "metric": "accuracy change (points)",
                    "paper": P["ablation_no_momentum"], "measured": drop, "note": "mean over seeds"})
        out.append({"table": "Table 5", "setting": "w/o momentum (mean of Avg, SGD)", "metric": "more rounds to 95% (%)",
                    "paper": P["ablation_no_momentum_rounds"], "measured": more,
                    "note": f"{n_cens} run(s) never reached 95%: censored at T" if n_cens else "every run reached 95%"})
    if "w/o feedback" in S["variants"]:
        for m, paper_value in (("FedQS-Avg", P["ablation_no_feedback_avg"]), ("FedQS-SGD", P["ablation_no_feedback_sgd"])):
            out.append({"table": "Table 5", "setting": f"w/o feedback, {m}", "metric": "accuracy change (points)",
                        "paper": paper_value, "measured": val("w/o feedback", m) - val("cosine", m),
                        "note": "mean over seeds"})
    for other in ("euclidean", "manhattan", "angle", "code-main", "code-momentum"):
        if other in S["variants"]:
            out.append({"table": "Table 5", "setting": f"{other} − cosine (mean of Avg, SGD)",
                        "metric": "accuracy difference (points)", "paper": float("nan"),
                        "measured": np.mean([val(other, m) - val("cosine", m) for m in METHODS.values()]),
                        "note": ("paper: slightly positive for Manhattan" if other == "manhattan" else
                                 "paper: comparable" if other == "euclidean" else
                                 "not in the paper (the official code's angle)" if other == "angle" else
                                 "full FedQS under the code's reading minus under the paper's: no direction claimed")})
for variant in S["variants"]:  # each variant's own numbers, the oscillation count among them
    for m in METHODS.values():
        if (variant, m) in mean.index:
            out.append({"table": "Table 5", "setting": f"{variant}, {m}", "metric": "oscillations (threshold 15), mean",
                        "paper": float("nan"), "measured": val(variant, m, "oscillations"),
                        "note": f"convergence accuracy {val(variant, m):.2f}; rounds to 95% "
                                f"{val(variant, m, 'rounds_to_95'):.1f}; drops > 5 points (not the paper's threshold) "
                                f"{val(variant, m, 'drops > 5'):.1f}"})
for _, r in diffs.iterrows() if len(diffs) else []:
    out.append({"table": "Table 5", "setting": f"{r['comparison']}, {r['method']}",
                "metric": f"paired difference, {r['measure']}", "paper": float("nan"),
                "measured": r["mean"], "evidence": paired_evidence(r), "note": interval_note(r)})
df = comparison(out, profile)
save_comparison(df, "table5_ablation", profile, GROUP)
show_table(df, "Paper vs measured")

# %% [markdown]
# The paper's ablation rows this execution does not run, with the reason (the `long` profile runs the
# without-feedback pair only).

# %%
PAPER_VARIANTS = ["cosine", "euclidean", "manhattan", "w/o momentum", "w/o feedback"]  # angle: not in the paper
NOT_RUN = [{"table": "Table 5", "setting": f"{v} (FedQS-Avg, FedQS-SGD)",
            "reason": f"not in `variants` of this execution ({profile} profile"
                      + (": T = 400 costs hours a run, so only the without-feedback pair; the cpu report has every "
                         "variant at T = 50)" if profile == "long" else ")")}
           for v in PAPER_VARIANTS if v not in S["variants"]]
not_run = not_run_table(NOT_RUN, profile)
save_not_run(not_run, "table5_ablation", profile, GROUP)
not_run

# %% [markdown]
# ## What these runs cost
#
# Host minutes of each run (one one-thread process: CPU-minutes on a quiet core;
# `fedlib.reporting.costs`), split into local training and evaluation, and two savings each measured
# on the run itself: the cost of evaluating every round over the run's cost (the skipped evaluations
# at the run's own time per evaluation), and the cost of also training the trainings no aggregation
# reads over the run's cost (the skipped local steps at its own time per step; NaN for runs stored
# before the simulator counted them; 1 for methods that never skip). Timings vary with the machine's
# load: they are what these runs took here, not a benchmark.

# %%
costs = cost_table(cells, results, ["method", "variant", "data", "seed"])
print(cost_note(costs))
costs.round(2)
