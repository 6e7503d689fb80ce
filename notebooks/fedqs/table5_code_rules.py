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
from fedlib.safl.fedqs.readings import REVERSE_STEPS, RULE_STEPS

profile = resolve_profile(profile)
CPU_STEPS = ["momentum off", "angle similarity", "angle + code momentum rule", "angle + distance test and G",
             "dividers at aggregation"]  # the steps computed at cpu (the rest: not-run rows with their price)
# FedQS-Avg at cpu: momentum and the two angle steps that moved FedQS-SGD most (the others: priced not-run rows)
CPU_AVG_STEPS = ["momentum off", "angle + code momentum rule", "angle + distance test and G"]
SETTINGS = {
    "smoke": dict(task="adult", methods=["fedqs-sgd"], steps=list(RULE_STEPS), reverse_steps=list(REVERSE_STEPS),
                  method_steps={}, seeds=[0, 1], rounds=5, workers=1,
                  reduce=["safl.clients=10", "safl.delays=uniform", "safl.k=3", "data.max_train=2000"]),
    "cpu": dict(task="cifar10", methods=["fedqs-sgd", "fedqs-avg"], steps=CPU_STEPS, reverse_steps=[],
                method_steps={"fedqs-avg": CPU_AVG_STEPS}, seeds=[0, 1, 2], rounds=50, workers=2,
                reduce=[]),
    "paper": dict(task="cifar10", methods=["fedqs-sgd", "fedqs-avg"], steps=list(RULE_STEPS),
                  reverse_steps=list(REVERSE_STEPS), method_steps={}, seeds=[0, 1, 2],
                  rounds=400, workers=1, reduce=[]),
}
LISTS = {'methods', 'steps', 'reverse_steps', 'seeds'}  # knobs that hold lists
settings = apply_knobs(SETTINGS[profile], globals(), LISTS)  # knobs set above override the profile
S = settings
from fedlib.reporting.fedqs import SINGLE_TASKS, task_regime  # noqa: E402

show_settings({**settings, "SAFL regime": task_regime(SINGLE_TASKS[S["task"]], S["reduce"])}, profile)

# %%
import pandas as pd
import seaborn as sns

from fedlib.reporting.display import show_table
from fedlib.reporting import (runs_caption, cadence_words, check_names, comparison, full_table, not_run_table, run_all,
                              save_comparison, save_not_run, show_forest)
from fedlib.reporting.costs import cost_note, cost_table
from fedlib.reporting.fedqs import paired_evidence, Study, alpha_variants, interval_note, run_metrics, settings_row
from fedlib.reporting.fedqs_rules import (CODE_ARM, FOUNDATION, FOUNDATION_ARM, PAPER_ARM, arm_overrides,
                                          check_steps, moving_rules, rule_arms, rule_diffs)
from fedlib.safl.fedqs.readings import READING_LABELS

sns.set_theme(style="whitegrid", context="notebook")
GROUP = "fedqs"
check_names(S["methods"], FOUNDATION, "FedQS variant", "methods")
check_names(list(S["method_steps"] or {}), S["methods"], "FedQS variant", "method_steps")
STEPS = {m: list((S["method_steps"] or {}).get(m, S["steps"])) for m in S["methods"]}  # the steps of each variant
ALL_STEPS = list(dict.fromkeys(s for m in S["methods"] for s in STEPS[m]))
for m in S["methods"]:
    check_steps(STEPS[m])
check_steps(S["reverse_steps"], reverse=True)
NAMES = {"fedqs-sgd": "FedQS-SGD", "fedqs-avg": "FedQS-Avg"}
study = Study(S["task"], profile, S["rounds"], S["reduce"])
data = alpha_variants(S["task"], [0.5])[0]  # CIFAR-10 x = 0.5, Table 2's column (Adult: its own split)
cells, cfgs = [], []
for method in S["methods"]:
    for arm in rule_arms(STEPS[method], S["reverse_steps"]):
        for seed in S["seeds"]:
            run_of = FOUNDATION[method] if arm == FOUNDATION_ARM else method
            overrides = [] if arm == FOUNDATION_ARM else list(arm_overrides(arm))
            cfgs.append(study.config(run_of, [*overrides, *data], seed))
            cells.append((NAMES[method], arm, seed))
print(f"{len(cfgs)} runs on {S['task']}: " + "; ".join(
    f"{NAMES[m]} {len(rule_arms(STEPS[m], S['reverse_steps']))} arms" for m in S["methods"]) + f" × {len(S['seeds'])} seeds")
EVALUATION = cadence_words(cfgs[0])

# %%
results = run_all(cfgs, "Table 5 code rules", S["workers"])
CAPTION = runs_caption(cfgs, profile)  # seeds, T, model and profile under every figure

# %%
runs = pd.DataFrame([{"method": m, "arm": arm, "seed": seed, "accuracy": 100 * r.summary["convergence_accuracy"],
                      **run_metrics(r)} for (m, arm, seed), r in zip(cells, results)])
runs.groupby(["method", "arm"], sort=False)[["accuracy", "final", "best"]].mean().round(2)

# %% [markdown]
# ## What each rule does, and FedQS − its foundation under it
#
# Left: each arm minus where its step starts — the paper reading, or code-main for a rule switched back
# (the rule's effect; blue: no direction claimed). Right: each
# FedQS arm minus the foundation (FedSGD / FedAvg; green: FedQS ahead, the paper's side; red: behind;
# grey: unresolved). Convergence accuracy, paired over the seeds, 95% t-interval.

# %%
diffs = rule_diffs(runs, ALL_STEPS, reverse=S["reverse_steps"])
acc = diffs[diffs["metric"] == "accuracy"] if len(diffs) else diffs
if len(acc):
    acc = acc.assign(panel=acc["baseline"].map({PAPER_ARM: "arm − paper reading (the rule's effect)",
                                                CODE_ARM: "arm − code-main (a rule switched back)",
                                                FOUNDATION_ARM: "arm − foundation (FedQS's lead)"}))
show_forest(acc, "table5_code_rules", profile, GROUP, caption=CAPTION, y="arm", col="panel", row="method",
            xlabel="difference (points)",
            title=f"FedQS rule by rule: {study.label} profile, {S['task']}, T = {S['rounds']}, "
                  f"{len(S['seeds'])} paired seeds, 95% t-intervals")
full_table(diffs.round(2))

# %% [markdown]
# ## Paper vs measured
#
# One row per arm and comparison, the interval over the seeds in the note; first, per FedQS variant, the
# rules whose effect excludes 0 — the rules that move FedQS at this scale.

# %%
scale = ("paper scale" if study.paper_scale else
         f"{profile} profile: {S['task']}{' x = 0.5' if S['task'] == 'cifar10' else ''}"
         f"{' with ' + ', '.join(study.reductions) if study.reductions else ''}, "
         f"T = {S['rounds']} — not the paper's ResNet-18 / 400 rounds")
out = [settings_row("Table 5 (code rules)", f"{scale}; {len(S['seeds'])} paired seeds {S['seeds']}; each step switches one "
                    "code rule on the paper reading (fedlib.safl.fedqs.readings.RULE_STEPS), each reverse step one rule back to the "
                    "text's on code-main (REVERSE_STEPS); accuracy = convergence "
                    f"accuracy (mean of the last 20 evaluated rounds); {EVALUATION}; readings: "
                    + "; ".join(f"{r}: {w}" for r, w in READING_LABELS.items()))]
moving = moving_rules(diffs, [*ALL_STEPS, *S["reverse_steps"]])
for key, method in NAMES.items():
    if key not in S["methods"]:
        continue
    found = moving.get(method, [])
    out.append({"table": "Table 5 (code rules)", "setting": f"{method}: rules that move it (effect's interval excludes 0)",
                "metric": "rule steps", "paper": float("nan"),
                "measured": "; ".join(f"{s} {m:+.2f} [{lo:.2f}, {hi:.2f}]" for s, m, lo, hi in found) or "none",
                "note": f"of {len(STEPS[key])} steps run: {', '.join(STEPS[key])}; of {len(S['reverse_steps'])} "
                        f"reverse steps (from code-main): {', '.join(S['reverse_steps']) or 'none'}"})
for _, r in diffs.iterrows() if len(diffs) else []:
    steps_tags = {**RULE_STEPS, **REVERSE_STEPS}
    tag = steps_tags[r["arm"]][0] if r["arm"] in steps_tags else READING_LABELS.get(r["arm"], r["arm"])
    out.append({"table": "Table 5 (code rules)", "setting": f"{r['method']}: {r['comparison']}",
                "metric": f"paired difference, {r['metric']} (points)", "paper": float("nan"), "measured": r["mean"],
                "evidence": paired_evidence(r),
                "note": f"{interval_note(r)}; {tag}"})
df = comparison(out, profile)
save_comparison(df, "table5_code_rules", profile, GROUP)
show_table(df, "Paper vs measured")

# %% [markdown]
# The steps this execution does not run, with what they would cost (the mean host minutes of this
# execution's FedQS runs, one thread each).

# %%
costs = cost_table(cells, results, ["method", "arm", "seed"])
per_run = costs.loc[costs["arm"] != FOUNDATION_ARM, "minutes"].mean()
NOT_RUN = [{"table": "Table 5 (code rules)", "setting": f"{step} ({NAMES[m]})",
            "reason": f"not in `steps` / `method_steps` of this execution ({profile} profile); "
                      f"{len(S['seeds'])} runs ≈ {len(S['seeds']) * per_run:.0f} host minutes"}
           for step in RULE_STEPS for m in S["methods"] if step not in STEPS[m]]
NOT_RUN += [{"table": "Table 5 (code rules)", "setting": f"every step ({NAMES[m]})",
             "reason": f"not in `methods` of this execution ({profile} profile); "
                       f"{len(RULE_STEPS) * len(S['seeds'])} runs ≈ {len(RULE_STEPS) * len(S['seeds']) * per_run:.0f} host minutes"}
            for m in NAMES if m not in S["methods"]]
NOT_RUN += [{"table": "Table 5 (code rules)", "setting": f"{step} (from code-main; {', '.join(NAMES[m] for m in S['methods'])})",
             "reason": f"not in `reverse_steps` of this execution ({profile} profile); "
                       f"{len(S['seeds']) * len(S['methods'])} runs ≈ {len(S['seeds']) * len(S['methods']) * per_run:.0f} host minutes"}
            for step in REVERSE_STEPS if step not in S["reverse_steps"]]
not_run = not_run_table(NOT_RUN, profile)
save_not_run(not_run, "table5_code_rules", profile, GROUP)
print(cost_note(costs))
not_run
