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
# # Your own strategy: a new SAFL aggregation rule and a new split-FL add-on
#
# A tutorial for practitioners who want to try *their* idea inside fedlib, with only its public
# API (every import below is a public name; nothing in `fedlib/` is edited). Three parts:
#
# 1. **A new semi-asynchronous (SAFL) strategy** — FedAvg whose K buffered models are weighted by
#    (1 + staleness)^−a, the polynomial staleness discount of FedAsync — as a `Strategy` subclass
#    (`aggregate` is the whole algorithm), registered with one call (`fedlib.plugins.register`),
#    checked against its identity case with the conformance kit (`fedlib.testing`) and run beside FedAvg on
#    UCI Adult through the same simulator, clock and result store as FedQS and its baselines
#    (spec [`fedqs.md`](../../docs/spec/fedqs.md) §1 for the clock and the buffer, §5–§6 for the
#    baselines' contract).
# 2. **A new split-FL add-on** — a server-side hook like SMoFi's momentum fusion
#    (spec [`smofi.md`](../../docs/spec/smofi.md) §2): after every lock-step, each active server
#    surrogate's momentum is pulled towards the surrogates' mean by a factor λ. A `ServerAddon`
#    subclass, registered with the same call, run beside SFLV1 and SMoFi on split CIFAR-10.
# 3. **Reading the results back** from the result store (`ResultStore.get`, `ResultStore.list`)
#    into one table.
#
# This is a tutorial, not a paper table: no numbers are compared with the papers, and at `smoke`
# the accuracies are those of a few rounds on a few hundred images — they show the plumbing works,
# not which method is better.
#
# Profiles: `smoke` (seconds, CI: Adult with 10 clients / K = 3, 12 rounds; CIFAR-10 with 600
# images, 6 clients / 3 per round, 4 rounds), `cpu` (the same scale on 3 seeds: a tutorial teaches the
# API, it judges no claim), `paper` (Adult at the paper's scale — 100 clients, K = 10, 400 rounds,
# 3 seeds; the split part at SMoFi's setting, ResNet-18 on all of CIFAR-10, 200 rounds — needs a GPU).

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only tutorials/your_own_strategy -p NAME=VALUE
profile = "auto"     # smoke | cpu | paper | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
a = None             # staleness exponent of the new SAFL strategy: weight (1 + staleness)^-a
safl_preset = None   # the SAFL task preset both strategies run on
safl_rounds = None   # global rounds of the SAFL runs; None means the preset's
seeds = None         # seeds of the SAFL runs
mix = None           # lambda of the new split-FL add-on: m_j <- (1 - lambda) m_j + lambda * mean
split_preset = None  # the split-FL task preset SFLV1, SMoFi and the add-on run on
split_rounds = None  # rounds of the split runs; None means the preset's

# %%
# NBVAL_CHECK_OUTPUT
import os

from fedlib.reporting import apply_knobs, resolve_profile, show_settings

profile = resolve_profile(profile)
SETTINGS = {
    "smoke": dict(a=0.5, safl_preset="fedavg-adult-gender-smoke", safl_rounds=12, seeds=[0],
                  mix=0.5, split_preset="sflv1-cifar10-smoke", split_rounds=4),
    # a tutorial, not a claim: the cpu report runs the smoke scale on three seeds (seconds each)
    "cpu": dict(a=0.5, safl_preset="fedavg-adult-gender-smoke", safl_rounds=12, seeds=[0, 1, 2],
                mix=0.5, split_preset="sflv1-cifar10-smoke", split_rounds=4),
    "paper": dict(a=0.5, safl_preset="fedavg-adult-gender", safl_rounds=None, seeds=[0, 1, 2],
                  mix=0.5, split_preset="sflv1-cifar10", split_rounds=None),
}
settings = apply_knobs(SETTINGS[profile], globals(), lists=("seeds",))  # knobs set above override the profile
S = settings
show_settings(settings, profile)

# %%
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator
import seaborn as sns
import torch

from fedlib.core.errors import check
from fedlib.experiments import RunConfig, run
from fedlib.reporting import results_store, save_figure

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
sns.set_theme(style="whitegrid", context="notebook")
# a store of this tutorial's own, beside the project's: a run of an algorithm registered in a notebook can
# be read back only where that registration ran, so it stays out of the store the reports (and ledger/) share
STORE = results_store(Path(tempfile.gettempdir()) / "fedlib-your-own-strategy")
GROUP = "tutorials"
T0 = time.perf_counter()

# %% [markdown]
# ## 1. A new SAFL strategy in a few dozen lines
#
# The SAFL simulator (`fedlib.safl.simulator`) owns the virtual clock, the FIFO buffer and local
# training; a strategy only decides what the K buffered updates become. The contract
# (`fedlib.safl.strategy`): `aggregate(global_state, updates, ctx)` receives the K `Update`s of the
# round — each with its trained model `state`, its `delta`, `num_samples`, `client_id` and
# `staleness` (current round − the version it trained from) — and returns the new global state.
# `Options` is a dataclass: its fields become `options.<name>` of the run config, checked once
# when the config is built; the strategy receives the instance as `self.options`. `client_rows()`
# (optional) hands per-client records to the run's `clients` table in the store. The class carries
# its own name, options and description (its docstring), so registering it is one call:
# `register(cls)` (or the `@plugin` decorator). The run's key in the result store covers the class's
# code as well as the config: edit `aggregate`, register again, and the next `run` recomputes.
#
# Our rule: w ← Σ_j p_j w_j with p_j ∝ (1 + τ_j)^−a, τ_j the staleness of update j. With a = 0
# it is FedAvg's plain mean; a larger a trusts stale updates less.

# %%
from fedlib.plugins import ServerAddon, Strategy, register, weighted_model_average
from fedlib.testing import Identity, check_addon, check_strategy


class StalenessWeightedAvg(Strategy):
    """FedAvg with the buffered models weighted by (1 + staleness)^-a"""

    name = "staleness-avg"

    @dataclass
    class Options:
        a: float = 0.5  # staleness exponent, >= 0 (0: FedAvg)

        def __post_init__(self):
            check(self.a >= 0, f"options.a must be >= 0, got {self.a}", "set options.a=0.5")

    def __init__(self, options=None):
        super().__init__(options)
        self.rows = []  # one record per aggregated update, for client_rows()

    def aggregate(self, global_state, updates, ctx):
        w = torch.tensor([(1.0 + u.staleness) ** -self.options.a for u in updates], dtype=torch.float64)
        w = w / w.sum()
        self.rows += [{"round": ctx.round + 1, "client": u.client_id, "staleness": u.staleness,
                       "weight": float(p)} for u, p in zip(updates, w)]
        return weighted_model_average([u.state for u in updates], w)

    def client_rows(self):
        rows, self.rows = self.rows, []
        return rows


# one call: the name is now runnable with every SAFL task preset (here and in a sweep's worker processes)
safl_entry = register(StalenessWeightedAvg)
# the conformance kit: same seed twice -> same history, the options round-trip, a = 0 equals FedAvg
# bit for bit, and the stacked client engine agrees with the loop one (a small two-round run each)
print(check_strategy(StalenessWeightedAvg, identity=Identity("a = 0 equals FedAvg", {"a": 0.0}, "fedavg")))

# %% [markdown]
# A run is a config: the task preset with `algorithm=` and `options.*=` overrides. `run(cfg)` trains
# it, or returns the stored result when the store already holds that config. We run FedAvg and
# the new strategy on the same task, delays and seeds — and the new strategy once more with a = 0,
# which must reproduce FedAvg exactly: a cheap test that the new code path is the one we think.

# %%
def safl_config(algorithm, seed, *options):
    extra = [] if S["safl_rounds"] is None else [f"rounds={S['safl_rounds']}"]
    return RunConfig.from_preset(S["safl_preset"]).with_overrides(
        [f"algorithm={algorithm}", f"seed={seed}", *extra, *options])


SAFL_RUNS = {  # label -> one config per seed
    "FedAvg": [safl_config("fedavg", s) for s in S["seeds"]],
    f"staleness-avg a={S['a']}": [safl_config("staleness-avg", s, f"options.a={S['a']}") for s in S["seeds"]],
}
safl_results = {label: [run(c, store=STORE) for c in cfgs] for label, cfgs in SAFL_RUNS.items()}
a0 = run(safl_config("staleness-avg", S["seeds"][0], "options.a=0"), store=STORE)
same = a0.history["accuracy"].equals(safl_results["FedAvg"][0].history["accuracy"])
print(f"staleness-avg with a=0 reproduces FedAvg's accuracy curve exactly: {same}")

# %%
curves = pd.concat([r.history.assign(method=label, seed=r.config["seed"])
                    for label, rs in safl_results.items() for r in rs], ignore_index=True)
weights = safl_results[f"staleness-avg a={S['a']}"][0].clients  # the strategy's client_rows()
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
sns.lineplot(data=curves, x="round", y="accuracy", hue="method", errorbar=("ci", 95), seed=0, ax=axes[0])
axes[0].set_title(f"SAFL, {SAFL_RUNS['FedAvg'][0].data.dataset}: test accuracy ({len(S['seeds'])} seed(s))")
k = SAFL_RUNS["FedAvg"][0].safl.k
sns.scatterplot(data=weights, x="staleness", y="weight", alpha=0.4, color=sns.color_palette()[1], ax=axes[1])
axes[1].axhline(1 / k, color="grey", ls="--", lw=1)  # FedAvg's weight, 1/K
axes[1].set_title(f"staleness-avg's weights, seed {S['seeds'][0]} (dashed: 1/K, K = {k})")
for ax in axes:
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
save_figure(fig, "your_own_strategy_safl", profile, GROUP)
plt.show()

# %% [markdown]
# Left: accuracy per round (the band: a 95% bootstrap interval over seeds, when there are several).
# Right: the weight each aggregated update received, by its staleness — read from the run's
# `clients` table, which the strategy filled through `client_rows()`. An update's weight depends on
# the staleness of the others in its round too; fresh updates weigh more than FedAvg's 1/K, stale
# ones less.

# %% [markdown]
# ## 2. A new split-FL add-on in a few dozen lines
#
# In split FL (SFLV1) every selected client trains its copy of the client part while the server
# trains one *surrogate* of its part per client, all in lock-step. An add-on
# (`fedlib.split.addons.ServerAddon`) is what the server does on top of the base method; its hooks:
# `prepare(server_names, local)` (once), `engine_hook` — a function `hook(step, active, buffers)`
# the training engine calls after every lock-step with every client's optimizer state —
# `start_round`, `update` (the server update of the round's average), `after_round`, and
# `state_dict` / `load_state_dict` for exact resume. Every hook has a harmless default.
#
# `buffers.get("momentum_buffer", name)` is the stacked `[clients, ...]` momentum of one
# parameter; `buffers.set(kind, name, value, mask)` writes rows back. SMoFi
# (`fedlib.split.smofi.SMoFiHook`) replaces each active surrogate's server-part momentum by a
# staleness-weighted mean over all the round's clients. Our simpler add-on *mixes*: after every
# lock-step, m_j ← (1 − λ) m_j + λ · mean_{active i} m_i for every active surrogate j. λ = 0 is
# SFLV1; λ = 1 is SMoFi with finished clients dropped and the mean taken over the active ones
# (`stale=drop`, `renormalise=true`).
#
# `register(cls)` registers an add-on as `fedavg+<name>` (FedAvg as the base method; `base=("fedavg",
# "fedprox")` adds it to other bases too, their options beside yours); the add-on receives its
# options instance as `self.options`, as a strategy does.

# %%
class MomentumMixing(ServerAddon):
    """FedAvg + the server surrogates' momentum mixed towards their mean after every lock-step"""

    name = "mix"

    @dataclass
    class Options:
        mix: float = 0.5  # lambda in [0, 1]

        def __post_init__(self):
            check(0 <= self.mix <= 1, f"options.mix must be in [0, 1], got {self.mix}", "set options.mix=0.5")

    def __init__(self, options=None):
        super().__init__(options)  # self.options: the Options instance of the run
        self.names = []

    def check_framework(self, framework):
        check(framework == "sflv1", "momentum mixing needs SFLV1's per-client server surrogates",
              "use split.framework=sflv1")

    def prepare(self, server_names, local):
        self.names = list(server_names)  # server-part parameters only: client parts are untouched

    @property
    def engine_hook(self):
        return self.mix_momentum

    def mix_momentum(self, step, active, buffers):
        if "momentum_buffer" not in buffers.kinds:  # plain SGD keeps no momentum: nothing to mix
            return
        lam = self.options.mix
        for n in self.names:
            m = buffers.get("momentum_buffer", n)
            on = torch.as_tensor(active, dtype=torch.bool, device=m.device)
            mean = m[on].mean(0, keepdim=True)
            buffers.set("momentum_buffer", n, (1 - lam) * m + lam * mean, mask=on)


split_entry, = register(MomentumMixing)  # -> "fedavg+mix"
print(check_addon(MomentumMixing, identity=Identity("λ = 0 equals FedAvg (SFLV1)", {"mix": 0.0}, "fedavg")))

# %%
def split_config(algorithm, *options):
    extra = [] if S["split_rounds"] is None else [f"rounds={S['split_rounds']}"]
    return RunConfig.from_preset(S["split_preset"]).with_overrides([f"algorithm={algorithm}", *extra, *options])


SPLIT_RUNS = {
    "SFLV1": split_config("sflv1"),
    "SMoFi": split_config("smofi"),
    f"FedAvg + mixing λ={S['mix']}": split_config("fedavg+mix", f"options.mix={S['mix']}"),
}
split_results = {label: run(c, store=STORE) for label, c in SPLIT_RUNS.items()}
# lambda = 1 against SMoFi with the same fusion target: the same computation by another code path
full = run(split_config("fedavg+mix", "options.mix=1.0"), store=STORE)
drop = run(split_config("smofi", "options.stale=drop", "options.renormalise=true"), store=STORE)
gap = (full.history["accuracy"] - drop.history["accuracy"]).abs().max()
print(f"mixing with λ=1 vs SMoFi(stale=drop, renormalise=true): largest accuracy difference {gap:.2e}")

# %%
split_curves = pd.concat([r.history.assign(method=label) for label, r in split_results.items()],
                         ignore_index=True)
cfg0 = SPLIT_RUNS["SFLV1"]
fig, ax = plt.subplots(figsize=(7, 3.8))
sns.lineplot(data=split_curves, x="round", y="accuracy", hue="method", marker="o", ax=ax)
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
ax.set_title(f"split {cfg0.data.dataset}, {cfg0.model.name} cut after {cfg0.model.cut}: "
             f"{cfg0.split.per_round} of {cfg0.split.clients} clients per round")
save_figure(fig, "your_own_strategy_split", profile, GROUP)
plt.show()

# %% [markdown]
# ## 3. Reading the results back from the store
#
# Every `run` above wrote its history, per-client records and summary to the result store, keyed
# by the hash of its full config (`cfg.config_hash()`). Re-running this notebook trains nothing:
# `run` finds each config in the store. Any later session reads the same results without training
# — `ResultStore.get(cfg)` returns the `RunResult` (history, clients, summary, config),
# `ResultStore.list()` one row per stored run (also `fedlib results list` on the command line).
#
# For a registered class the key also covers its *code*: after editing `aggregate` or
# `mix_momentum` and registering the class again, `run` recomputes instead of handing back the old
# runs, and each stored run records which code made it (`res.code`: the fingerprint and the class).

# %%
ALL = [(label, c) for label, cfgs in SAFL_RUNS.items() for c in cfgs] + list(SPLIT_RUNS.items())
rows = []
for label, cfg in ALL:
    res = STORE.get(cfg)  # read back from disk, checksums verified
    rows.append({"method": label, "hash": res.config_hash[:12], "paradigm": res.config["paradigm"],
                 "code": (res.code or {}).get("made_by", "built-in"),
                 "algorithm": res.config["algorithm"], "options": res.config.get("options") or {},
                 "seed": res.config["seed"], "rounds": len(res.history),
                 "best accuracy": res.history["accuracy"].max(),
                 "final accuracy": res.summary["final_accuracy"]})
table = pd.DataFrame(rows)
listed = STORE.list().set_index("hash")  # the store's own index of every stored run
table["status"] = table["hash"].map(listed["status"])
table["profile"] = table["hash"].map(listed["profile"])
print(f"store: {STORE.root.name} in the system's temporary folder ({len(listed)} runs stored); the cells after the imports took "
      f"{time.perf_counter() - T0:.0f}s (a run found in the store is read, not trained)")
table.round(4)

# %%
# the same table, one line per method: mean over seeds
(table.groupby(["paradigm", "method"], sort=False)[["best accuracy", "final accuracy"]]
 .agg(["mean", "count"]).round(4))

# %% [markdown]
# **What you used** — all public: `fedlib.plugins` (`Strategy`, `ServerAddon`,
# `weighted_model_average`, `register`), `fedlib.testing` (`check_strategy`, `check_addon`,
# `Identity`), `fedlib.experiments` (`RunConfig`, `run`) and the store's `get` / `list`
# (`fedlib.reporting.results_store(path)`: here a store of the tutorial's own, in the system's
# temporary folder; without a path it is the store the reports share). One registration per
# algorithm; nothing in `fedlib/` was edited.
#
# A registration made in a notebook reaches the worker processes of `sweep(workers=2)` and
# `fedlib.reporting.run_all(workers=2)`: each worker rebuilds the class from its source. To test a
# new rule beyond the kit's identity case, check it against a hand-computed step, as
# `tests/test_addon_factory.py` does for the add-on above (λ = 1 equals SMoFi's active-only fusion).
