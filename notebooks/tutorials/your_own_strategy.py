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
# # Your own FL idea: a server rule, a split-FL add-on and a client-side rule
#
# A tutorial for practitioners who want to try *their* idea inside fedlib with its public API only
# (`fedlib.plugins`, `fedlib.testing` and two helpers of `fedlib.reporting`; nothing in `fedlib/` is
# edited). Each idea is one small class, registered with one call, then
#
# 1. **checked** by the conformance kit (`fedlib.testing`): the same seed twice gives the same run,
#    the options round-trip, the *identity case you name* holds (e.g. "a = 0 equals FedAvg", bit for
#    bit) and the stacked client engine agrees with the loop one;
# 2. **compared with its base on paired seeds** (same seed ⇒ same partition, delays and batches) with
#    a 95 % interval of the difference.
#
# The three ideas:
#
# * **a server rule** for semi-asynchronous FL (SAFL): FedAvg whose K buffered models are weighted by
#   (1 + staleness)^−a (spec [`fedqs.md`](../../docs/spec/fedqs.md) §1 for the clock and the buffer,
#   §5–§6 for the strategies' contract);
# * **a split-FL add-on**: after every lock-step each active server surrogate's momentum is pulled
#   towards the surrogates' mean by λ (a simpler cousin of SMoFi's fusion, spec
#   [`smofi.md`](../../docs/spec/smofi.md) §2);
# * **a client-side rule**: every client adds μ (w − w_global) to its gradients — FedProx written as a
#   plug-in; FedDyn- or SCAFFOLD-like terms are written the same way.
#
# A registered class's runs are stored under its config *and its code*: edit a method, register the
# class again, and the next run recomputes instead of returning the old result.
#
# This is a tutorial, not a paper table: at `smoke` the runs are a few rounds on a few hundred
# samples over two seeds — they show the workflow, not which method is better. The profile only sets
# the number of seeds (`smoke` 2, `cpu` 3, `paper` 5) at the same small scale.

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only tutorials/your_own_strategy -p NAME=VALUE
profile = "auto"  # smoke | cpu | paper | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
seeds = None      # the paired seeds; None means 2 (smoke), 3 (cpu) or 5 (paper)
a = 0.5           # staleness exponent of the server rule: weight (1 + staleness)^-a
mix = 0.5         # lambda of the split-FL add-on: m_j <- (1 - lambda) m_j + lambda * mean
mu = 0.1          # weight of the client-side rule's term mu (w - w_global)

# %%
# NBVAL_CHECK_OUTPUT
import tempfile
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
import torch

from fedlib.plugins import ResultStore, RunConfig, ServerAddon, Strategy, check, register, sweep, weighted_model_average
from fedlib.reporting import interval_text, paired_difference, resolve_profile, save_figure
from fedlib.testing import Identity, check_addon, check_strategy

profile = resolve_profile(profile)
SEEDS = list(seeds) if seeds else list(range({"smoke": 2, "cpu": 3, "paper": 5}[profile]))
torch.set_num_threads(1)
sns.set_theme(style="whitegrid", context="notebook")
# the tutorial's own store, in the system's temporary folder: its runs stay out of the store the reports share
STORE = ResultStore(Path(tempfile.gettempdir()) / "fedlib-your-own-strategy")
print(f"profile {profile}: seeds {SEEDS}")

# %% [markdown]
# Runs are typed configs: a task preset, then `replace(...)` with the algorithm, its options and the
# seed (sections as dicts, e.g. `local={"lr": 0.05}`); every value is checked when the config is built.
# The comparison helper runs every (method, seed) cell — on two worker processes, which rebuild the
# classes registered in this notebook — and gives a paired 95 % interval of method − base.

# %%
SAFL_TASK = RunConfig.from_preset("fedavg-adult-gender-smoke").replace(rounds=12)
SPLIT_TASK = RunConfig.from_preset("sflv1-cifar10-smoke").replace(rounds=4)


def compare(task, methods, base):
    """Run ``methods`` ({label: (algorithm, options)}) on ``task`` for every seed; return the final
    accuracies (one row per run), the histories and the paired difference of each method with ``base``."""
    cfgs = {(label, s): task.replace(algorithm=alg, options=opts, seed=s)
            for label, (alg, opts) in methods.items() for s in SEEDS}
    sweep(list(cfgs.values()), workers=2, store=STORE, progress=False)
    runs = {key: STORE.get(cfg) for key, cfg in cfgs.items()}
    final = pd.DataFrame([{"method": label, "seed": s, "final accuracy": 100 * r.summary["final_accuracy"],
                           "code": (r.code or {}).get("made_by", "built-in")} for (label, s), r in runs.items()])
    curves = pd.concat([r.history.assign(method=label, seed=s) for (label, s), r in runs.items()], ignore_index=True)
    diffs = {label: paired_difference(final, "final accuracy", label, base) for label in methods if label != base}
    return final, curves, diffs


def say(diffs, base):
    """One line per method: the paired difference, its 95 % interval and what it resolves."""
    for label, d in diffs.items():
        if d["n"] < 2:
            word = "one pair cannot measure its own noise: add seeds"
        elif d["lo"] > 0 or d["hi"] < 0:
            word = f"resolved: {label} is {'better' if d['lo'] > 0 else 'worse'} than {base} here"
        else:
            word = "not resolved: the interval contains 0"
        print(f"{label} − {base}: {d['mean']:+.2f} points, 95% interval {interval_text(d['lo'], d['hi'])} "
              f"over {d['n']} seeds ({d['wins']} won) — {word}")


# %% [markdown]
# ## 1. A server rule: staleness-weighted FedAvg
#
# The SAFL simulator owns the virtual clock, the FIFO buffer and local training; a strategy decides
# what the K buffered updates become. `aggregate(global_state, updates, ctx)` receives the round's
# `Update`s — each with its trained model `state`, `delta`, `num_samples`, `client_id` and `staleness`
# (current round − the version it trained from) — and returns the new global state. The class
# declares its `name` and an `Options` dataclass (its fields become `options.<name>` of a run,
# checked when the config is built; the strategy reads `self.options`); its docstring is its
# description. Nothing else is required.
#
# Rule: w ← Σ_j p_j w_j with p_j ∝ (1 + τ_j)^−a. With a = 0 it is FedAvg's plain mean — the identity case.

# %%
class StalenessWeightedAvg(Strategy):
    """FedAvg with the buffered models weighted by (1 + staleness)^-a"""

    name = "staleness-avg"

    @dataclass
    class Options:
        a: float = 0.5  # staleness exponent, >= 0 (0: FedAvg)

        def __post_init__(self):
            check(self.a >= 0, f"options.a must be >= 0, got {self.a}", "set options.a=0.5")

    def aggregate(self, global_state, updates, ctx):
        w = torch.tensor([(1.0 + u.staleness) ** -self.options.a for u in updates], dtype=torch.float64)
        return weighted_model_average([u.state for u in updates], w / w.sum())


register(StalenessWeightedAvg)
print(check_strategy(StalenessWeightedAvg, identity=Identity("a = 0 equals FedAvg", {"a": 0.0}, "fedavg")))

# %%
safl_final, safl_curves, safl_diffs = compare(
    SAFL_TASK, {"FedAvg": ("fedavg", {}), f"staleness-avg a={a}": ("staleness-avg", {"a": a})}, "FedAvg")
say(safl_diffs, "FedAvg")

# %% [markdown]
# ## 2. A split-FL add-on: momentum mixing
#
# In split FL (SFLV1) every selected client trains its copy of the client part while the server
# trains one *surrogate* of its part per client, in lock-step. An add-on (`ServerAddon`) is what the
# server does on top of the base method; its hooks all have harmless defaults: `prepare(server_names,
# local)` (once), `engine_hook` — a function `hook(step, active, buffers)` the training engine calls
# after every lock-step with every client's optimizer state — `start_round`, `update`, `after_round`,
# `state_dict` / `load_state_dict`. `buffers.get("momentum_buffer", name)` is the stacked
# `[clients, ...]` momentum of one parameter; `buffers.set(kind, name, value, mask)` writes rows back.
#
# Our add-on: m_j ← (1 − λ) m_j + λ · mean_{active i} m_i for every active surrogate j. `register`
# makes it `fedavg+mix` (`base=("fedavg", "fedprox")` would add `fedprox+mix` too, its options beside
# FedProx's). λ = 0 is FedAvg (SFLV1) — the identity case.

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
        super().__init__(options)  # self.options: the run's Options instance
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


register(MomentumMixing)
print(check_addon(MomentumMixing, identity=Identity("λ = 0 equals FedAvg (SFLV1)", {"mix": 0.0}, "fedavg")))

# %%
split_final, split_curves, split_diffs = compare(
    SPLIT_TASK, {"SFLV1": ("fedavg", {}), f"mixing λ={mix}": ("fedavg+mix", {"mix": mix})}, "SFLV1")
say(split_diffs, "SFLV1")

# %% [markdown]
# ## 3. A client-side rule: FedProx as a plug-in
#
# A strategy may also change how clients train: `correct_grads(params, grads, state)` is called by
# the training engine after every backward pass, for every client, with that client's trainable
# parameters and gradients (dicts of tensors by name) and the `state` that `correction_state(client,
# ctx)` returned when its training started; it returns the corrected gradients. Written with plain
# tensor operations it runs per client in the loop engine and vectorised (`torch.func.vmap`) in the
# stacked one — the kit's `backends` check compares the two. Here the state is the global model the
# client started from, and the rule adds μ (w − w_global): FedProx. A control variate (SCAFFOLD) or
# FedDyn's linear term would be kept per client by the strategy and returned by `correction_state`.

# %%
class ProxAvg(Strategy):
    """FedAvg whose clients add mu (w - w_global) to every gradient (FedProx as a client-side rule)"""

    name = "prox-avg"

    @dataclass
    class Options:
        mu: float = 0.1

        def __post_init__(self):
            check(self.mu >= 0, f"options.mu must be >= 0, got {self.mu}", "set options.mu=0.1")

    def correction_state(self, client_id, ctx):
        start = ctx.global_history(1)[-1]  # the global model this training starts from
        return {k: v for k, v in start.items() if v.is_floating_point()}

    def correct_grads(self, params, grads, state):
        return {k: g + self.options.mu * (params[k] - state[k]) for k, g in grads.items()}

    def aggregate(self, global_state, updates, ctx):
        w = torch.full((len(updates),), 1.0 / len(updates), dtype=torch.float64)  # FedAvg's mean
        return weighted_model_average([u.state for u in updates], w)


register(ProxAvg)
print(check_strategy(ProxAvg, identity=Identity("mu = 0 equals FedAvg", {"mu": 0.0}, "fedavg")))

# %%
prox_final, prox_curves, prox_diffs = compare(
    SAFL_TASK, {"FedAvg": ("fedavg", {}), f"prox-avg mu={mu}": ("prox-avg", {"mu": mu})}, "FedAvg")
say(prox_diffs, "FedAvg")

# %% [markdown]
# ## 4. The runs, read back from the store
#
# Every run above is in the store, keyed by its config and, for the three classes, their code
# (`code`: the class that made the run). Running this notebook again trains nothing; editing one of
# the classes recomputes that class's runs only.

# %%
curves = pd.concat([safl_curves, prox_curves.query("method != 'FedAvg'")], ignore_index=True)
for name, data, task in (("safl", curves, SAFL_TASK), ("split", split_curves, SPLIT_TASK)):
    fig, ax = plt.subplots(figsize=(7, 3.8))
    sns.lineplot(data=data, x="round", y="accuracy", hue="method", errorbar=("ci", 95), seed=0, marker="o", ax=ax)
    ax.set_title(f"{name} ({task.data.dataset}): test accuracy, band = 95% interval over {len(SEEDS)} seeds")
    save_figure(fig, f"your_own_strategy_{name}", profile, "tutorials")
    plt.show()

# %%
table = pd.concat([safl_final, split_final, prox_final.query("method != 'FedAvg'")], ignore_index=True)
table.groupby(["method", "code"], sort=False)["final accuracy"].agg(["mean", "std", "count"]).round(2)

# %% [markdown]
# **What you used**: `fedlib.plugins` (`Strategy`, `ServerAddon`, `register`, `weighted_model_average`,
# `RunConfig`, `sweep`, `ResultStore`, `check`), `fedlib.testing` (`check_strategy`, `check_addon`,
# `Identity`) and `fedlib.reporting`'s `paired_difference` / `interval_text` (and `save_figure`,
# `resolve_profile` for the reports). To go further than the kit's identity case, test a rule against
# a hand-computed step, as `tests/test_addon_factory.py` does for the add-on (λ = 1 equals SMoFi's
# active-only fusion) and `tests/test_client_correction.py` for the client rule (equal to the
# engine's own proximal term).
