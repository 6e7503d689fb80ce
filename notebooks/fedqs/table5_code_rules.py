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
# # FedQS Table 5's companion — which of the official code's rules moves FedQS
#
# **Why.** The paper's numbers came from the authors' code, whose FedQS rules differ from the paper's
# text in several places (spec §3-§5, tags [P] / [C]; "Readings"). Under the text's rules (the `paper`
# reading) FedQS-SGD is not ahead of FedSGD on CIFAR-10 at the `cpu` scale; under the code's (the
# `code-main` reading: its rules, momentum 0; `code-momentum`: its rules with its momentum rule) it is
# ahead (Table 2). If a rule of the code carries the advantage, the paper's text under-specifies FedQS.
#
# **This notebook** starts from the paper reading and switches **one code rule at a time**
# (`fedlib.safl.fedqs.readings.RULE_STEPS`; the distance-based rules need the angle similarity and are
# switched together with it; φ and the validation data coincide under both rule sets at N = 100, K = 10
# and have no step), and the reverse: from the `code-main` reading, **one rule switched back to the
# text's** (`REVERSE_STEPS`, the knob `reverse_steps`), read against code-main. Every arm — the paper reading, each step, the two code readings, and the FedQS
# variant's foundation (FedSGD / FedAvg) — runs on the same seeds, so each is read as a **paired
# difference over the seeds** with a 95% t-interval: *arm − paper reading* (what the rule does; no
# direction claimed) and *arm − foundation* (FedQS − FedSGD; the paper's side positive).
# Metric: convergence accuracy (mean of the last 20 rounds, the paper's), with the last 10 rounds and the
# best round beside it.
#
# **Profiles**
# - `smoke`: UCI Adult, 10 clients, K = 3, 5 rounds, 2 seeds, FedQS-SGD, every step both ways — seconds; numbers meaningless.
# - `cpu`: CIFAR-10 x = 0.5 with the small CNN `cnn3`, 100 clients, K = 10, T = 50 — the settings of
#   Table 2's x = 0.5 column, whose paper-reading, code-reading and FedSGD / FedAvg runs it shares —
#   FedQS-SGD and FedQS-Avg, three paired seeds, the steps in `steps` for FedQS-SGD and, for FedQS-Avg
#   (`method_steps`), momentum off and the two angle steps that moved FedQS-SGD most (the runs this machine
#   finished; the others are not-run rows with their price); no reverse step yet (each a priced not-run row).
# - `paper`: ResNet-18, T = 400, both variants, every step both ways — needs a GPU.
#
# Spec: [`docs/spec/fedqs.md`](../../docs/spec/fedqs.md) — every "spec §" in this notebook refers to it.

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only fedqs/table5_code_rules -p NAME=VALUE
profile = "auto"   # smoke | cpu | paper | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
task = None        # adult | cifar10
methods = None     # FedQS variants, e.g. ["fedqs-sgd", "fedqs-avg"]
steps = None       # rule steps (fedlib.safl.fedqs.readings.RULE_STEPS), each switched alone on the paper reading
reverse_steps = None  # reverse steps (REVERSE_STEPS), each switching one rule back to the text's on code-main
method_steps = None  # {variant: steps} where a FedQS variant runs other steps than `steps`
seeds = None       # e.g. [0, 1, 2]
rounds = None      # T; None keeps the profile default
workers = None     # >1: run the missing cells in a local process pool first (fedlib.experiments.sweep)

# %%
# NBVAL_CHECK_OUTPUT
from fedlib.reporting import apply_knobs, resolve_profile, show_settings
from fedlib.studies.fedqs.table5_code_rules import LISTS, SETTINGS, Table5CodeRules, shown

profile = resolve_profile(profile)
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
show_settings(shown(settings), profile)

# %%
import seaborn as sns

from fedlib.reporting import (comparison, full_table, not_run_table, run_all, runs_caption, save_comparison,
                              save_not_run, show_forest)
from fedlib.reporting.costs import cost_note, cost_table
from fedlib.reporting.display import show_table

sns.set_theme(style="whitegrid", context="notebook")
GROUP = "fedqs"
study = Table5CodeRules(profile, settings)  # the arms: per FedQS variant, its steps, the readings and the foundation
print(study.describe())

# %%
results = run_all(study.configs, "Table 5 code rules", settings["workers"])
CAPTION = runs_caption(study.configs, profile)  # seeds, T, model and profile under every figure

# %%
study.measure(results).round(2)  # one row per run in study.runs; here the mean per variant and arm

# %% [markdown]
# ## What each rule does, and FedQS − its foundation under it
#
# Left: each arm minus where its step starts — the paper reading, or code-main for a rule switched back
# (the rule's effect; blue: no direction claimed). Right: each
# FedQS arm minus the foundation (FedSGD / FedAvg; green: FedQS ahead, the paper's side; red: behind;
# grey: unresolved). Convergence accuracy, paired over the seeds, 95% t-interval.

# %%
show_forest(study.differences(), "table5_code_rules", profile, GROUP, caption=CAPTION, y="arm", col="panel",
            row="method", xlabel="difference (points)", title=study.title)
full_table(study.diffs.round(2))

# %% [markdown]
# ## Paper vs measured
#
# One row per arm and comparison, the interval over the seeds in the note; first, per FedQS variant, the
# rules whose effect excludes 0 — the rules that move FedQS at this scale.

# %%
df = comparison(study.comparison(), profile)
save_comparison(df, "table5_code_rules", profile, GROUP)
show_table(df, "Paper vs measured")

# %% [markdown]
# The steps this execution does not run, with what they would cost (the mean host minutes of this
# execution's FedQS runs, one thread each).

# %%
costs = cost_table(study.cells, results, ["method", "arm", "seed"])
not_run = not_run_table(study.not_run(costs), profile)
save_not_run(not_run, "table5_code_rules", profile, GROUP)
print(cost_note(costs))
not_run
