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
# # SMoFi ablations: the staleness rule, optimizers, number of clients, partial participation, architectures
#
# *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on Heterogeneous Data* (AAAI 2026).
#
# **What the paper claims** (spec [`smofi.md`](../../docs/spec/smofi.md) §5; the ablation tables' numbers are not in the
# spec, so the `paper` column stays empty):
# - the staleness exponent α of s_α = (τ − |T_h| + 1)^α defaults to **−0.1** and needs manual tuning;
# - SMoFi's gains **grow with more clients** and with **deeper models**;
# - they **hold across SGDM, NAG, Adam and AdamW** and across **VGG, MobileNet, ResNet and DenseNet**;
# - its motivation, the *momentum paradox*: under non-IID data momentum (SGDM) **raises the final accuracy but
#   slows convergence**.
#
# **What this notebook runs** (each family selectable with `ablations`), always FedAvg (= SFLV1)
# vs FedAvg + SMoFi on CIFAR-10, Dirichlet 0.1, through `fedlib.experiments.run`, on **paired
# seeds** (a seed fixes partition, selection, batches and initial model for every variant):
# - **staleness — the rule as its own table**. SMoFi's fusion mechanism (fuse the
#   surrogates' momenta every step) is `main_accuracy`'s claim; how clients that finished their
#   |T_j| steps early enter the fused buffer is a separate rule the text fixes only in part: decay
#   with s_α = (τ − |T_h| + 1)^α and "|J^n| momenta always take part", but neither the normaliser
#   (|J^n| or Σ weights) nor a data-share weighting of the active clients. Under Dirichlet 0.1 the
#   |T_j| span 1–27 steps at `cpu`: finished clients' decayed momenta stay in the sum divided by
#   |J^n|, which shrinks the fused step, and a 16-image client weighs as much as an 800-image one.
#   The variants are the named **readings** of the open rule (`fedlib.split.readings`, spec §2 "Readings"):
#   - `text` — decay, ÷|J^n|, uniform weights: the digest's formula as written, fedlib's default
#     (= `main_accuracy`'s SMoFi run);
#   - `text-weighted` — decay, ÷Σ weights (`options.renormalise=true`: a weighted mean, keeps m̄'s scale);
#   - `data-share` — decay, ÷|J^n|, each signal weighted by its client's share of the round's samples
#     (`options.weighting=samples`, the weights the round-end average uses);
#   - `drop-J` — finished momenta leave the sum, the denominator stays |J^n| (`options.stale=drop`);
#   - `fresh` — finished momenta dropped, the plain mean of the active surrogates' momenta
#     (`options.stale=drop` + `renormalise=true`);
#   - at `smoke`/`paper` also other α under `text` and the other reading of the staleness
#     index (`options.stale_index=from0`: first stale weight 1 instead of 2^α).
#   Every row names its reading; a verdict under `text` is a verdict on fedlib's reading of the paper.
#   At `long`, `fresh` (the one reading on the paper's side of FedAvg) also runs on FedProx and FedNAR
#   (`rule_bases`, each paired with `main_accuracy`'s base runs on the same seeds: the plug-in claim per reading),
#   and α is swept under `data-share` too (`reading_alphas`: the text-consistent reading nearest FedAvg), each α
#   against the same reading at −0.1. The |T_j| spread is printed per seed;
# - **optimizers**: SGDM (β 0.9), NAG (Nesterov 0.9), Adam and AdamW, lr `adam_lr` for the Adam
#   family [D: 0.001; the paper's value is not known]. SMoFi with Adam/AdamW fuses **both moments**
#   by default (a fedlib decision, not the paper's): fusing only the first moment while each surrogate keeps
#   its own second moment divides a non-zero fused m by a zero √v on dead-ReLU coordinates and
#   blows the parameters up; that rule stays available as `options.fuse_second_moment=false` and
#   is run once here (*Adam, first moment only*) to show it;
# - **clients**: N clients, a fraction `client_fraction` of them selected per round, the training
#   set fixed (at `cpu` N = 10, 20, 40, all selected: the same 4,000 images over more, smaller
#   clients; N = 10 is `main_accuracy`'s Dirichlet run). Besides SMoFi − FedAvg at each N, the
#   *growth* of the gain from the smallest to the largest N is a paired difference of differences
#   (the paper: gains grow with more clients);
# - **momentum** (the paradox, no SMoFi): FedAvg with SGDM (β 0.9, the main table's FedAvg run) against FedAvg
#   with plain SGD (`local.momentum=0`, the same lr), paired on the seeds: SGDM − SGD in final accuracy
#   (the paper: > 0) and in *early* accuracy, the mean over the evaluated rounds of the run's first third
#   (`early_accuracy`; the paper: slower convergence, < 0) — 3 new runs at `cpu`;
# - **participation**: partial participation as one row set — 10 of 20 clients per round, 5,000
#   images, 20 rounds, Dirichlet 0.1 (`main_accuracy`'s `partial` setting);
# - **architectures**: `vgg16`, `mobilenetv2`, `resnet18`, `densenet121` at their default cuts (and
#   `cnn`) — at the `cpu` profile not run (a CPU does not finish them): each is a *not run: reason*
#   row (`NOT_RUN`, `ablations.not_run.csv`, listed in the reports index), as is the depth claim.
#
# Every verdict names the paper's expected sign (SMoFi above FedAvg in every family; no direction
# for the staleness rule's variants against the paper's reading, which the paper does not compare).
#
# **Profiles**: `smoke` (CI: 256 CIFAR-10 images, 4 clients, 2 rounds — meaningless numbers);
# `cpu`: the SMoFi main table's Dirichlet 0.1 setting (`full`) — the small `cnn` cut after `conv1`,
# 4,000 CIFAR-10 training images, 10 of 10 clients, 15 rounds, test on 5,000 images every round —
# on **three paired seeds** for every family: staleness 12 runs (already stored), optimizers
# NAG / Adam / AdamW × FedAvg, SMoFi = 18 new runs (SGDM is `main_accuracy`'s), clients N = 20, 40
# × 2 methods = 12 new runs (N = 10 is `main_accuracy`'s), participation 6 new runs, momentum 3 new
# runs (FedAvg with plain SGD): **39 new runs** (57 distinct, 18 of them shared or stored). **Compute**:
# a run takes ≈ 1–3 min of one
# core (120 s of CPU time measured, one thread; the partial setting a little less: 2,500 images a
# round), so ≈ 30–55 min on two one-thread workers. The Adam first-moment-only run
# (`first_moment_only`) is left out at `cpu`. Metric: mean of the last 5 rounds, with paired
# differences and 95% t-intervals; `long` (hours on a CPU, never picked by `auto` or CI):
# the staleness family only, on `main_accuracy`'s `long` setting (all 50,000 CIFAR-10 images, 10 of 20
# clients per round, Dirichlet 0.1, `cnn3` cut after `conv1`, the 10,000 test images on the
# profile's cadence, mean of the last 10 rounds) — the *drop, ÷Σ weights* variant against the paper's
# rule at α = −0.1 and the α sweep with the paper's rule, α = −0.05, −0.5 and −1 against −0.1 (`LONG_ALPHAS`),
# three paired seeds (12 new runs: FedAvg and α = −0.1 are `main_accuracy`'s); a run that diverges (loss
# not finite) is kept as its outcome and named in the notes (`fedlib.experiments.run(diverged="record")`); `paper` (spec §4: ResNet-18 cut after `layer1`, all data, 200
# rounds, 3 seeds, all four architectures; a GPU).

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only smofi/ablations -p NAME=VALUE
profile = "auto"
ablations = None      # subset of staleness, optimizers, momentum, clients, participation, architectures
alphas = None         # SMoFi staleness exponents with the rule of the paper (decay, ÷|J^n|), all < 0
rules = None          # subset of the RULES names below (variants of the staleness rule, at α −0.1)
rule_seeds = None     # {rule: seeds} of the staleness rule variants (a rule not named runs `seeds`)
rule_bases = None     # {reading: bases} run under a reading besides FedAvg, on its rule_seeds: fedprox, fednar
reading_alphas = None  # {reading: α values} swept under a reading other than text, on its rule_seeds
client_counts = None  # values of split.clients
client_fraction = None  # share of the clients selected per round in the clients family (1.0: all)
architectures = None  # fedlib.models names to run
optimizers = None     # subset of SGDM, NAG, Adam, AdamW
adam_lr = None        # local lr for Adam and AdamW
first_moment_only = None  # also run SMoFi with Adam fusing the first moment only (True/False)
seeds = None          # list of run seeds (staleness, clients, architectures)
optimizer_seeds = None  # list of run seeds for the optimizer family
rounds = None         # rounds per run (None keeps that of the participation setting)
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

from fedlib.claims.evidence import interval_note
from fedlib.reporting.stats import paired_evidence
from fedlib.reporting.display import show_table
from fedlib.reporting import (SMOFI_SCALE_KNOBS, comparison, curve_metrics, interval_text, not_run_table,
                              paired_difference, resolve_profile, run_or_load, save_comparison, save_figure,
                              save_not_run, settings_row, show_settings, signed_verdict, smofi_configs, smofi_settings)
from fedlib.reporting.stats import early_accuracy
from fedlib.reporting.smofi import (LONG_ALPHA_SWEEP, PAPER_ALPHA, diverged_note, planned_not_run, run_cost,
                                    smofi_partition)
from fedlib.core.errors import FedlibError
from fedlib.reporting.smofi_mechanism import fusion_profile, round_steps, show_fusion_mechanism
from fedlib.split.readings import DEFAULT_SMOFI_READING, SMOFI_READINGS, reading_options
from fedlib.split.sfl import prepare_data
from fedlib.split.smofi import step_count_spread
from fedlib.train.config import batches_per_epoch

profile = resolve_profile(profile)

FAMILIES = ["staleness", "optimizers", "momentum", "clients", "participation", "architectures"]
ALL_ARCHS = ["vgg16", "mobilenetv2", "resnet18", "densenet121"]
OPTIMIZERS = ["SGDM", "NAG", "Adam", "AdamW"]
PAPER_RULE = f"reading {DEFAULT_SMOFI_READING}"  # fedlib's default reading of the open rule: label of its α rows
LONG_ALPHAS = sorted({PAPER_ALPHA, *LONG_ALPHA_SWEEP}, reverse=True)  # the long profile's planned α sweep (issue 43)
# the staleness rule's variants other than the default reading (α = −0.1): the other named readings
# (fedlib.split.readings) and the step-index variant of `text` -> SMoFi options
RULES = {**{name: r.overrides for name, r in SMOFI_READINGS.items() if name != DEFAULT_SMOFI_READING},
         "text, index from 0": {"options.stale_index": "from0"}}
CPU_RULES = [r for r in RULES if r in SMOFI_READINGS]  # the four other readings
RULE_BASES = {"fedprox": "FedProx", "fednar": "FedNAR"}  # the plug-in bases a reading can run on besides FedAvg
SETTINGS = {
    "smoke": dict(ablations=FAMILIES, alphas=[-0.1, -1.0], rules=list(RULES), rule_seeds={},
                  rule_bases={"fresh": ["fedprox"]}, reading_alphas={"data-share": [-1.0]}, client_counts=[4, 8],
                  client_fraction=0.5, architectures=["cnn"], optimizers=["SGDM", "Adam"], adam_lr=0.001,
                  first_moment_only=True, seeds=[0], optimizer_seeds=[0], rounds=None,
                  model="cnn", cut="conv1", max_test=100, last=1, workers=1),
    "cpu": dict(ablations=["staleness", "optimizers", "momentum", "clients", "participation"], alphas=[-0.1],
                rules=CPU_RULES, rule_seeds={}, rule_bases={}, reading_alphas={},
                client_counts=[10, 20, 40], client_fraction=1.0, architectures=["cnn"], optimizers=OPTIMIZERS,
                adam_lr=0.001, first_moment_only=False, seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None,
                model="cnn", cut="conv1", max_test=5000, last=5, workers=2),
    "paper": dict(ablations=FAMILIES, alphas=[-0.01, -0.1, -0.5, -1.0], rules=list(RULES), rule_seeds={},
                  rule_bases={}, reading_alphas={},
                  client_counts=[10, 20, 50], client_fraction=0.5,
                  architectures=ALL_ARCHS, optimizers=OPTIMIZERS, adam_lr=0.001, first_moment_only=True,
                  seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None, model="resnet18", cut="layer1",
                  max_test=None, last=10, workers=1),
    # the long profile: the staleness question on all of CIFAR-10, 10 of 20 clients, Dirichlet 0.1 (main_accuracy's
    # long runs: FedAvg and α = −0.1 are shared); never picked by `auto`
    # the readings screen (issue 55): every reading on three paired seeds, `fresh` on the main table's five and on
    # the three bases (FedProx and FedNAR runs are main_accuracy's), the α sweep under `data-share` (the text-consistent
    # reading least far from FedAvg) on three seeds (10–20 CPU-minutes a run on an AVX2 EPYC)
    "long": dict(ablations=["staleness"], alphas=[-0.05, -0.1, -0.5, -1.0], rules=CPU_RULES,
                 rule_seeds={"text-weighted": [0, 1, 2], "data-share": [0, 1, 2], "drop-J": [0, 1, 2],
                             "fresh": [0, 1, 2, 3, 4]},
                 rule_bases={"fresh": ["fedprox", "fednar"]}, reading_alphas={"data-share": [-0.05, -0.5, -1.0]},
                 client_counts=[20], client_fraction=0.5, architectures=["cnn"], optimizers=["SGDM"], adam_lr=0.001,
                 first_moment_only=False, seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None,
                 model="cnn3", cut="conv1", max_test=None, last=10, workers=2),
}
PART = {"smoke": "full", "cpu": "full", "paper": "partial", "long": "partial"}[profile]  # SMOFI_PARTICIPATION
PARTIAL = {"smoke": "partial", "cpu": "partial", "paper": "partial", "long": "partial"}[profile]  # participation family
LISTS = {"ablations", "alphas", "rules", "client_counts", "architectures", "optimizers", "seeds", "optimizer_seeds"}
# knobs set above override the profile; LABEL: the profile's name at its own scale, "custom" once a scale knob
# (or adam_lr) changes
S, _, LABEL = smofi_settings(SETTINGS, profile, globals(), LISTS, (*SMOFI_SCALE_KNOBS, "adam_lr"))
show_settings({**S, "participation setting": PART, "participation family's setting": PARTIAL, "run label": LABEL},
              profile)


# %%
split_config = smofi_configs(profile, LABEL, S)  # split_config(dataset, algorithm, seed, participation, **overrides)


def config(algorithm: str, seed: int, part: str = PART, **extra):
    """CIFAR-10 run of ``algorithm`` at this profile in setting ``part`` (``extra``: more overrides)."""
    return split_config("cifar10", algorithm, seed, part, **extra)


OPT_OVERRIDES = {
    "SGDM": {},
    "NAG": {"local.nesterov": True},
    "Adam": {"local.optimizer": "adam", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
    "AdamW": {"local.optimizer": "adamw", "local.momentum": 0.0, "local.lr": S["adam_lr"]},
}

# (family, setting label, method, algorithm, overrides, seeds[, participation]) for every run of the chosen families
plan = []
if "staleness" in S["ablations"]:
    # FedAvg on every seed a staleness row runs (`seeds`, and the readings' `rule_seeds`), so each row has its pair
    base_seeds = sorted({*S["seeds"], *(x for r in S["rules"] for x in (S["rule_seeds"] or {}).get(r, ()))})
    plan.append(("staleness", "FedAvg (no fusion)", "FedAvg", "fedavg", {}, base_seeds))
    for rule, bases in (S["rule_bases"] or {}).items():  # a reading on FedProx / FedNAR: their own no-fusion pair
        if rule not in SMOFI_READINGS or not set(bases) <= set(RULE_BASES):
            raise FedlibError(f"rule_bases: unknown reading or base in {rule!r}: {bases}",
                              f"readings {list(SMOFI_READINGS)}, bases {list(RULE_BASES)}")
        for b in bases:
            plan.append(("staleness", f"{RULE_BASES[b]} (no fusion)", RULE_BASES[b], b, {},
                         (S["rule_seeds"] or {}).get(rule, S["seeds"])))
    for a in S["alphas"]:
        plan.append(("staleness", f"{PAPER_RULE}, α={a:g}", "SMoFi", "fedavg+smofi", {"options.alpha": float(a)},
                     S["seeds"]))
    for rule in S["rules"]:
        if rule not in RULES:
            raise FedlibError(f"unknown staleness rule {rule!r}", f"use some of {list(RULES)}")
        label = f"reading {rule}" if rule in SMOFI_READINGS else rule
        plan.append(("staleness", f"{label}, α=-0.1", "SMoFi", "fedavg+smofi", {"options.alpha": -0.1, **RULES[rule]},
                     (S["rule_seeds"] or {}).get(rule, S["seeds"])))
        for b in (S["rule_bases"] or {}).get(rule, ()):
            plan.append(("staleness", f"{label}, α=-0.1", f"{RULE_BASES[b]} + SMoFi", f"{b}+smofi",
                         {"options.alpha": -0.1, **RULES[rule]}, (S["rule_seeds"] or {}).get(rule, S["seeds"])))
    for rule, values in (S["reading_alphas"] or {}).items():  # α swept under another reading than text
        for a in values:
            plan.append(("staleness", f"reading {rule}, α={a:g}", "SMoFi", "fedavg+smofi",
                         {**reading_options(rule), "options.alpha": float(a)}, (S["rule_seeds"] or {}).get(rule, S["seeds"])))
if "momentum" in S["ablations"]:  # the paradox: FedAvg with and without momentum (SGDM is the main table's FedAvg)
    plan.append(("momentum", "SGD (no momentum)", "FedAvg", "fedavg", {"local.momentum": 0.0}, S["seeds"]))
    plan.append(("momentum", "SGDM", "FedAvg", "fedavg", {}, S["seeds"]))
CLIENTS_OF = {}  # clients-family setting label -> N
if "clients" in S["ablations"]:
    P = config("fedavg", 0).split  # the setting's own clients: their runs are the other notebooks' (same hash)
    for n in S["client_counts"]:
        k = max(1, int(round(n * S["client_fraction"])))
        over = {} if (n, k) == (P.clients, P.per_round) else {"split.clients": n, "split.per_round": k}
        CLIENTS_OF[f"N={n}, {k} per round"] = n
        for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
            plan.append(("clients", f"N={n}, {k} per round", method, algo, over, S["seeds"]))
if "participation" in S["ablations"]:
    P = config("fedavg", 0, PARTIAL)
    for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
        plan.append(("participation", f"{P.split.per_round} of {P.split.clients} clients per round, {P.rounds} rounds",
                     method, algo, {}, S["seeds"], PARTIAL))
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
    if "Adam" in S["optimizers"] and S["first_moment_only"]:
        plan.append(("optimizers", "Adam", "SMoFi, first moment only", "fedavg+smofi",
                     {**OPT_OVERRIDES["Adam"], "options.fuse_second_moment": False}, S["optimizer_seeds"]))

cells = [(fam, label, method, seed, config(algo, seed, *(rest or (PART,)), **over))
         for fam, label, method, algo, over, seeds, *rest in plan for seed in seeds]
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
    rows.append({"family": fam, "setting": label, "method": method, "seed": seed, "run": cfg.config_hash(),
                 **curve_metrics(res.history, last=S["last"]), "early": early_accuracy(res.history),
                 "wall_s": float(res.summary.get("total_wall_time", np.nan)),
                 "diverged": res.summary.get("diverged_round", np.nan)})  # the round a run diverged at (kept, counted)
runs = pd.DataFrame(rows)  # "run": the config hash, named per seed in the evidence
runs.drop(columns="run").round(2)

# %%
fams = [f for f in FAMILIES if f in set(runs["family"])] if len(runs) else []
if fams:
    ncols = min(3, len(fams))  # at most three panels a row: readable at a notebook's width
    nrows = -(-len(fams) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.4 * nrows), squeeze=False)
    for ax in axes.flat[len(fams):]:
        ax.set_visible(False)
    for ax, fam in zip(axes.flat, fams):
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
# ## The mechanism: who feeds the fused momentum during a round
#
# Left: in round 1 of the first seed, how many of the selected surrogates are still taking steps (each client's
# |T_j| = ⌈n_j / B⌉ under Dirichlet 0.1). Middle: the share of the fused buffer's weight that comes from the
# finished clients' frozen final momenta, per reading (computed from the readings' coefficients, no training):
# under `text` most of a round's steps re-inject the frozen momenta into every active surrogate, while each active
# client's own signal keeps weight 1/|J^n|; `fresh` and `drop-J` never do. Right: the readings' accuracy curves
# (FedAvg, no fusion, beside them).

# %%
stale_runs = [(label, seed, cfg) for fam, label, method, seed, cfg in cells
              if fam == "staleness" and method == "SMoFi" and label.startswith("reading ")
              and label.endswith(", α=-0.1")]  # every reading at α −0.1, on FedAvg
if stale_runs:
    seed0 = min(seed for _, seed, _ in stale_runs)
    steps, sizes = round_steps(config("fedavg+smofi", seed0))
    shown = [DEFAULT_SMOFI_READING] + [r for r in S["rules"] if r in SMOFI_READINGS]
    mech = fusion_profile(steps, sizes, shown)
    curves = [pd.DataFrame({"reading": label.split(",")[0].removeprefix("reading "), "seed": seed,
                            "round": done[cfg.config_hash()].history["round"],
                            "accuracy": 100 * pd.to_numeric(done[cfg.config_hash()].history["accuracy"],
                                                            errors="coerce")}).dropna()
              for label, seed, cfg in stale_runs]
    curves += [pd.DataFrame({"reading": "FedAvg (no fusion)", "seed": seed, "round": done[cfg.config_hash()].history["round"],
                             "accuracy": 100 * pd.to_numeric(done[cfg.config_hash()].history["accuracy"],
                                                             errors="coerce")}).dropna()
               for fam, label, method, seed, cfg in cells if fam == "staleness" and method == "FedAvg"]
    show_fusion_mechanism(mech, pd.concat(curves, ignore_index=True),
                          f"SMoFi's readings of the open rule ({profile} profile, seed {seed0}: |T_j| of round 1 = "
                          f"{sorted(steps)}; accuracy over {len({s for _, s, _ in stale_runs})} seed(s))",
                          "ablations_mechanism", profile)
    print(mech.groupby("reading", sort=False)[["frozen_share", "own_weight"]].mean().round(3)
          .rename(columns={"frozen_share": "mean share of frozen momenta over the round's steps",
                           "own_weight": "mean weight of an active client's own signal"}).to_string())

# %% [markdown]
# ## Paired differences: each SMoFi variant against FedAvg, and each staleness rule against the paper's reading, on the same seeds

# %%
diffs = []
for fam in fams:
    sub = runs[runs["family"] == fam]
    for label in dict.fromkeys(sub["setting"]):
        here = sub[sub["setting"] == label]
        base = here[here["method"] == "FedAvg"]
        if fam == "momentum":  # one method (FedAvg), two optimizers: paired below
            continue
        # a staleness row names its reading of the open rule (the α rows run `text`); the paper's metric is the
        # best accuracy, so the readings are compared on final, AUC and best
        reading = label.split(",")[0].removeprefix("reading ") if fam == "staleness" else ""
        for method in [m for m in dict.fromkeys(here["method"]) if m not in ("FedAvg", *RULE_BASES.values())]:
            base_name = method.removesuffix(" + SMoFi") if fam == "staleness" and method != "SMoFi" else "FedAvg"
            if fam == "staleness":
                base = sub[sub["method"] == base_name]
            pair = pd.concat([here[here["method"] == method], base]).assign(
                who=lambda t: np.where(t["method"] == base_name, "base", "variant"))
            for metric in (("final", "auc", "best") if fam == "staleness" else ("final",)):
                r = paired_difference(pair, metric, "variant", "base", method_col="who")
                # the paper: SMoFi above FedAvg in every family (the first-moment-only rule is fedlib's, no claim)
                sign = 0 if "first moment only" in method else 1
                diffs.append({"family": fam, "setting": label, "variant": method, "base": base_name, "metric": metric,
                              "reading": reading if reading in SMOFI_READINGS else "", "mean": r["mean"],
                              "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"],
                              "runs": r.get("runs", ()),
                              "verdict": signed_verdict(r, sign)})
# the gain's growth with the number of clients: (SMoFi − FedAvg at the largest N) − (the same at the smallest N),
# paired on the seeds (the paper: gains grow with more clients, so expected > 0)
if "clients" in fams and len(CLIENTS_OF) >= 2:
    sub = runs[runs["family"] == "clients"]
    gain = sub.pivot_table(index=["setting", "seed"], columns="method", values="final")
    gain = (gain["SMoFi"] - gain["FedAvg"]).rename("gain").reset_index()
    small, large = min(CLIENTS_OF, key=CLIENTS_OF.get), max(CLIENTS_OF, key=CLIENTS_OF.get)
    r = paired_difference(gain, "gain", large, small, method_col="setting")
    diffs.append({"family": "clients", "setting": f"gain at {large} − gain at {small}", "variant": "SMoFi − FedAvg",
                  "base": "the same at fewer clients", "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"],
                  "per seed": r["diffs"], "runs": r.get("runs", ()), "verdict": signed_verdict(r, 1)})
# the momentum paradox: SGDM − SGD for FedAvg, on the final accuracy (paper: > 0) and the early one (paper: < 0)
if "momentum" in fams:
    sub = runs[runs["family"] == "momentum"]
    for metric, sign in (("final", 1), ("early", -1)):
        r = paired_difference(sub, metric, "SGDM", "SGD (no momentum)", method_col="setting")
        diffs.append({"family": "momentum", "setting": "FedAvg", "variant": "SGDM", "base": "SGD (no momentum)",
                      "metric": metric, "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"],
                      "per seed": r["diffs"], "runs": r.get("runs", ()), "verdict": signed_verdict(r, sign)})
# the staleness rule's variants against the paper's reading (decay, ÷|J^n|, α = −0.1) on the same seeds
PAPER_LABEL = f"{PAPER_RULE}, α=-0.1"
stale = runs[runs["family"] == "staleness"] if len(runs) else runs
if len(stale) and PAPER_LABEL in set(stale["setting"]):
    stale = stale[stale["method"] == "SMoFi"]  # on the FedAvg base
    for label in [x for x in dict.fromkeys(stale["setting"]) if x != PAPER_LABEL]:
        # an α row against its own reading at α = −0.1; a reading at α = −0.1 against the paper's reading
        own = label.split(",")[0]
        ref_label = PAPER_LABEL if label.endswith("α=-0.1") or own not in {f"reading {r}" for r in SMOFI_READINGS} \
            else f"{own}, α=-0.1"
        if ref_label not in set(stale["setting"]):
            continue
        pair = pd.concat([stale[stale["setting"] == label].assign(who="variant"),
                          stale[stale["setting"] == ref_label].assign(who="base")])
        r = paired_difference(pair, "final", "variant", "base", method_col="who")
        diffs.append({"family": "staleness", "setting": label, "variant": "SMoFi", "base": f"SMoFi, {ref_label.split(',')[0]}",
                      "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"],
                      "runs": r.get("runs", ()),
                      "verdict": signed_verdict(r, 0)})  # the paper compares no variant of its rule
diffs = pd.DataFrame([{"metric": "final", "reading": "", **d} for d in diffs],  # final unless named
                     columns=["family", "setting", "variant", "base", "metric", "reading", "mean", "lo", "hi", "n",
                              "per seed", "runs", "verdict"])
diffs.drop(columns="runs").round(2)

# %%
CLAIMS = {"staleness": "paper: decay s_α with α = −0.1 by default (needs manual tuning), |J^n| momenta always "
                        "take part; normaliser and weighting not stated (no numbers in the spec)",
          "clients": "paper: gains grow with more clients (no numbers in the spec)",
          "participation": "paper: SMoFi above FedAvg with 10 of 20 clients per round (spec §4 setting; no "
                           "separate number in the spec)",
          "architectures": "paper: gains hold across VGG/MobileNet/ResNet/DenseNet, grow with depth",
          "optimizers": "paper: gains hold across SGDM/NAG/Adam/AdamW (no numbers in the spec)",
          "momentum": "paper (motivation): under non-IID data SGDM raises the final accuracy but slows convergence "
                      "(early accuracy: mean over the evaluated rounds of the run's first third; no numbers in the spec)"}


def scale_note() -> str:
    if LABEL == "paper":
        return f"paper profile (spec §4), {len(S['seeds'])} seed(s)"
    cfg = config("fedavg", 0)
    return (f"{profile} profile: {S['model']} on {cfg.data.max_train or 'all'} training images of cifar10 split by "
            f"{smofi_partition(profile, PART)}, "
            f"{cfg.split.per_round} of {cfg.split.clients} clients per round, {cfg.rounds} rounds unless stated "
            f"(participation: setting {PARTIAL!r}), test on {S['max_test'] or 'all'} images — not the paper's setting")


out = [settings_row("ablations", scale_note())]
mean = runs.groupby(["family", "setting", "method"], sort=False)["final"].agg(["mean", "std", "count"]) \
    if len(runs) else pd.DataFrame()
def diverged_in(fam: str, labels) -> str:
    """The note on runs of family ``fam`` with a setting in ``labels`` that diverged ("" if none)."""
    sub = runs[(runs["family"] == fam) & runs["setting"].isin(list(labels))]
    return diverged_note(sub, sub["method"].unique())


for (fam, label, method), r in mean.iterrows():
    notes = [f"{int(r['count'])} seed(s), sd {r['std']:.2f}", CLAIMS[fam], diverged_in(fam, [label])]
    out.append({"table": f"ablation: {fam}", "setting": f"{label}, {method}",
                "metric": f"final accuracy (%), mean of last {S['last']}", "paper": np.nan,
                "measured": round(float(r["mean"]), 2), "note": "; ".join(n for n in notes if n)})
for _, r in diffs.iterrows():
    out.append({"table": f"ablation: {r['family']}", "setting": f"{r['setting']}, {r['variant']} − {r['base']}",
                "metric": f"paired gain in {r['metric']} accuracy (points)", "paper": np.nan, "reading": r["reading"],
                "measured": round(r["mean"], 2), "evidence": paired_evidence(r),
                "note": "; ".join(n for n in (interval_note(paired_evidence(r)), r["verdict"], CLAIMS[r["family"]],
                                              diverged_in(r["family"], [r["setting"], PAPER_LABEL])) if n)})
NOT_RUN = []  # the paper's ablation rows not run here, with the reason (the reports index lists them)
if profile == "long" and "staleness" in S["ablations"]:  # the plan's α values this execution leaves out, priced
    minutes = runs["wall_s"].mean() / 60 if len(runs) else float("nan")
    for a in [a for a in LONG_ALPHAS if a not in S["alphas"]]:
        NOT_RUN.append(planned_not_run("ablation: staleness", f"{PAPER_RULE}, α={a:g}, SMoFi", "alphas",
                                       run_cost(len(S["seeds"]), minutes), note=CLAIMS["staleness"]))
    for rule, values in (S["reading_alphas"] or {}).items():  # the plan's α values not run under another reading
        for a in [a for a in LONG_ALPHAS if a not in values and a != PAPER_ALPHA]:
            seeds_r = (S["rule_seeds"] or {}).get(rule, S["seeds"])
            NOT_RUN.append(planned_not_run("ablation: staleness", f"reading {rule}, α={a:g}, SMoFi", "reading_alphas",
                                           run_cost(len(seeds_r), minutes), note=CLAIMS["staleness"],
                                           adds=f'reading_alphas={{"{rule}": [..., {a:g}]}}'))
    for rule in S["rules"]:  # a reading run on fewer seeds than the FedAvg pair
        left = [x for x in S["seeds"] if x not in (S["rule_seeds"] or {}).get(rule, S["seeds"])]
        if left:
            NOT_RUN.append(planned_not_run("ablation: staleness", f"reading {rule}, α=-0.1, SMoFi, seeds {left}",
                                           "rule_seeds", run_cost(len(left), minutes), note=CLAIMS["staleness"]))
for arch in arch_skipped:
    NOT_RUN.append({"table": "ablation: architectures", "setting": f"{arch}, FedAvg and SMoFi", "paper": np.nan,
                    "reason": f"not run at the {profile} profile: a CPU does not finish it (profile=paper, a GPU); "
                              + CLAIMS["architectures"]})
if arch_skipped:
    NOT_RUN.append({"table": "ablation: architectures", "setting": "gain vs model depth", "paper": np.nan,
                    "reason": "needs the four architectures above (profile=paper); paper: gains grow with depth"})
for fam in [f for f in FAMILIES if f not in S["ablations"] and f != "architectures"]:
    NOT_RUN.append({"table": f"ablation: {fam}", "setting": "every row", "paper": np.nan,
                    "reason": f"family not selected at this run (ablations={S['ablations']}); " + CLAIMS[fam]})
for opt in [o for o in OPTIMIZERS if "optimizers" in S["ablations"] and o not in S["optimizers"]]:
    NOT_RUN.append({"table": "ablation: optimizers", "setting": opt, "paper": np.nan,
                    "reason": f"not selected (optimizers={S['optimizers']}); " + CLAIMS["optimizers"]})
NOT_RUN.append({"table": "ablations", "setting": "cifar100, tinyimagenet", "paper": np.nan,
                "reason": "the ablations run on CIFAR-10 only here (the paper's datasets per ablation are not in the spec)"})
df = comparison(out, profile)
save_comparison(df, "ablations", profile, "smofi")
not_run = not_run_table(NOT_RUN, profile)
save_not_run(not_run, "ablations", profile, "smofi")
show_table(df, "Paper vs measured")

# %% [markdown]
# The paper's ablation rows this notebook did not run at this profile, and why (`ablations.not_run.csv`).

# %%
not_run
