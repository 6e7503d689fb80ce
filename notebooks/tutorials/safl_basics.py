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
# # How semi-asynchronous federated learning works
#
# A tutorial on the semi-asynchronous FL (SAFL) setting of FedQS (Li et al., NeurIPS 2025, §2 and
# the simulator of spec [`fedqs.md`](../../docs/spec/fedqs.md) §1), in three pictures:
#
# 1. **The virtual clock.** Every client *i* has an integer delay *r_i* (its "resource"; 1:50 in the
#    paper means the fastest client is 50× faster than the slowest). A client that starts at tick *t*
#    trains on the newest global model, uploads at *t + r_i* and starts again at *t + r_i + 1*. The
#    server keeps a FIFO buffer and, at the end of a tick holding ≥ K updates, aggregates the oldest K:
#    one **global round**. Nobody waits for stragglers, which is why SAFL is fast — and why updates
#    are *stale*: trained from an older global version than the one they are merged into.
# 2. **Staleness.** staleness = (round at aggregation) − (version trained from). We replay the
#    official code's 100 delays (K = 10, 400 rounds) under both upload semantics: `snapshot` (the
#    update as uploaded, fedlib's default) and `overwrite` (an artefact of the official code: the
#    buffer holds a file path the client overwrites when it restarts). The spec states that
#    `overwrite` makes ~77% of aggregated updates really the client's *next* update and drops the
#    mean staleness from ~9.8 to ~2.5 rounds.
# 3. **FedQS client types.** FedQS sorts every client at each training start by update speed *f*
#    (how often it was aggregated, relative to the mean) and similarity *s* (its last update vs. the
#    pseudo-global gradient) into four types — FSBC, FWBC, SWBC, SSBC — and adapts learning rate,
#    momentum and aggregation feedback per type. We run FedQS-Avg on UCI Adult and watch the types
#    evolve from the run's per-client records.
#
# This is a tutorial, not a paper table: no numbers are compared with the paper.
#
# Profiles: `smoke` (seconds, CI: a tiny Adult run of 10 clients, K = 3, 5 rounds), `cpu` (a few
# minutes: FedQS-Avg on Adult at the paper's scale, 100 clients, K = 10, 400 rounds), `paper` (same
# as `cpu`: everything here is already cheap).

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only tutorials/safl_basics -p NAME=VALUE
profile = "auto"       # smoke | cpu | paper | auto ($FEDLIB_PROFILE, else paper with a GPU, else cpu)
timeline_clients = None  # clients drawn in the timeline (small, so the picture stays readable)
timeline_k = None        # updates per aggregation in the timeline
timeline_ratio = None    # delays uniform in [1, ratio] for the timeline
timeline_rounds = None   # aggregations drawn
replay_rounds = None     # rounds replayed for the staleness histograms: official-100 delays, K 10
preset = None            # the FedQS run whose client types are plotted
clients = None           # N of that run
k = None                 # K of that run
rounds = None            # rounds of that run
max_train = None         # subsample of the Adult training set ; None means all of it
seed = None

# %%
# NBVAL_CHECK_OUTPUT
import os

from fedlib.reporting import apply_knobs, resolve_profile, show_settings

profile = resolve_profile(profile)
SETTINGS = {
    "smoke": dict(timeline_clients=6, timeline_k=3, timeline_ratio=6, timeline_rounds=6, replay_rounds=60,
                  preset="fedqs-avg-adult-gender", clients=10, k=3, rounds=5, max_train=2000, seed=0),
    "cpu": dict(timeline_clients=8, timeline_k=3, timeline_ratio=8, timeline_rounds=10, replay_rounds=400,
                preset="fedqs-avg-adult-gender", clients=100, k=10, rounds=400, max_train=None, seed=0),
    "paper": dict(timeline_clients=8, timeline_k=3, timeline_ratio=8, timeline_rounds=10, replay_rounds=400,
                  preset="fedqs-avg-adult-gender", clients=100, k=10, rounds=400, max_train=None, seed=0),
}
settings = apply_knobs(SETTINGS[profile], globals())  # knobs set above override the profile
S = settings
show_settings(settings, profile)

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
from matplotlib.ticker import MaxNLocator

from fedlib.experiments import RunConfig, run
from fedlib.reporting import results_store, save_figure
from fedlib.safl.delays import make_delays
from fedlib.safl.schedule import Clock, replay

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
sns.set_theme(style="whitegrid", context="notebook")
STORE = results_store()  # $FEDLIB_RESULTS, else <project>/results
GROUP = "tutorials"

# %% [markdown]
# ## 1. The virtual clock of a small run
#
# `fedlib.safl.schedule.Clock` is the simulator's clock without any training: each tick it starts
# the idle clients, collects uploads into the FIFO buffer and, if the buffer holds ≥ K updates,
# aggregates the oldest K. We drive it by hand and record every local training.

# %%
delays = make_delays("uniform", S["timeline_clients"], S["timeline_ratio"], seed=S["seed"])
clock = Clock(delays, S["timeline_k"])
rows, aggregated, aggs = [], {}, []  # every local training / which round took it / every aggregation
while clock.round < S["timeline_rounds"]:
    ev = clock.begin_tick()  # starts first (from the newest global), then uploads into the buffer
    rows += [{"id": tr.id, "client": tr.client, "start": tr.start, "upload": tr.upload, "version": tr.version}
             for tr in ev.starts]
    if clock.ready():  # >= K buffered: aggregate the oldest K (one global round)
        agg = clock.aggregate()
        aggs.append({"round": agg.round + 1, "tick": agg.tick, "clients": [tr.client for tr in agg.uploaded]})
        for tr in agg.uploaded:
            aggregated[tr.id] = {"aggregated_in": agg.round + 1, "staleness": agg.round - tr.version}
    clock.end_tick()
last_tick = clock.tick - 1
trainings = pd.DataFrame(rows).join(pd.DataFrame.from_dict(aggregated, orient="index"), on="id")
aggs = pd.DataFrame(aggs)
print("delays r_i:", delays.tolist())
aggs

# %%
# Tick t is the cell [t, t+1). A training occupies its start tick to its upload tick; the upload
# enters the buffer at the end of the upload tick, and an aggregation happens at the end of a tick.
n_tl = S["timeline_clients"]
fig, ax = plt.subplots(figsize=(12, 0.55 * n_tl + 1.8))
cmap = plt.get_cmap("viridis", max(S["timeline_rounds"], 2))
for tr in trainings.itertuples():
    ax.broken_barh([(tr.start + 0.05, tr.upload - tr.start + 0.9)], (tr.client - 0.32, 0.64),
                   facecolors=cmap(tr.version), alpha=0.8, edgecolor="k", linewidth=0.4)
    if tr.upload <= last_tick:
        done = not np.isnan(tr.aggregated_in)
        ax.plot(tr.upload + 0.95, tr.client, marker="^", color="crimson" if done else "grey", ms=7, zorder=3)
        if done:
            ax.text(tr.upload + 1.0, tr.client + 0.22, f"R{int(tr.aggregated_in)} τ={int(tr.staleness)}",
                    fontsize=7, color="crimson",
                    bbox=dict(boxstyle="round,pad=0.05", fc="white", ec="none", alpha=0.7))
for a in aggs.itertuples():
    ax.axvline(a.tick + 1, color="black", ls="--", lw=0.8)
    ax.text(a.tick + 1, n_tl - 0.45, f"R{a.round}", ha="center", va="bottom", fontsize=8,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
ax.set_yticks(range(n_tl))
ax.set_yticklabels([f"client {c} (r={d})" for c, d in enumerate(delays.tolist())])
ax.set_ylim(-0.6, n_tl)
right = max(last_tick + 1, int(trainings["upload"].max()) + 1) + 1.5  # every bar ends inside the plot
ax.axvspan(last_tick + 1, right, color="0.93", zorder=0)  # trainings still running at the last round
ax.set_xlim(0, right)
ax.set_xlabel("virtual time (ticks)")
ax.set_title(f"SAFL timeline: N={n_tl} clients, K={S['timeline_k']}, delays uniform in [1, {S['timeline_ratio']}]")
sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(-0.5, S["timeline_rounds"] - 0.5))
fig.colorbar(sm, ax=ax, label="global version trained from", ticks=range(S["timeline_rounds"]))
save_figure(fig, "safl_basics_timeline", profile, GROUP)
plt.show()

# %% [markdown]
# Bars: local trainings, coloured by the global version they started from. ▲: uploads (red: the
# upload was aggregated in round R with staleness τ; grey: still in the buffer). Dashed lines: the
# aggregations (at most one per tick, so a full buffer may wait a tick). Shaded: after the last
# aggregation drawn; the trainings still running there end at their scheduled upload tick.
#
# Reading the picture: fast clients (small r) upload many times and fill the buffer, so most rounds
# are made of fast clients' updates; a slow client's update arrives many rounds after the version it
# started from (large τ). In synchronous FL the server would instead wait for the slowest of the K
# sampled clients every round.

# %% [markdown]
# ## 2. Staleness: `snapshot` vs `overwrite`
#
# `fedlib.safl.schedule.replay` runs the clock for many rounds without training and returns, per
# aggregated update, its staleness under both upload semantics. We use the official code's 100
# delays (`official-100`, spec §8), K = 10.

# %%
rep = replay(make_delays("official-100"), k=10, rounds=S["replay_rounds"], seed=S["seed"], detail=True)
stale = pd.concat([
    pd.DataFrame({"staleness": [x for r in rep["staleness_snapshot"] for x in r], "upload": "snapshot"}),
    pd.DataFrame({"staleness": [x for r in rep["staleness_overwrite"] for x in r], "upload": "overwrite"}),
], ignore_index=True)
summary = pd.DataFrame({
    "ticks": [rep["ticks"]], "local trainings": [rep["local_trainings"]],
    "mean staleness (snapshot)": [rep["staleness_snapshot_mean"]],
    "mean staleness (overwrite)": [rep["staleness_overwrite_mean"]],
    "share of aggregated entries replaced (overwrite)": [rep["overwrite_replaced"]],
})
summary.T.rename(columns={0: f"official-100, K=10, {S['replay_rounds']} rounds"})

# %%
fig, ax = plt.subplots(figsize=(9, 3.8))
sns.histplot(data=stale, x="staleness", hue="upload", discrete=True, stat="probability", common_norm=False,
             element="step", ax=ax)
for name, color in (("snapshot", sns.color_palette()[0]), ("overwrite", sns.color_palette()[1])):
    ax.axvline(rep[f"staleness_{name}_mean"], color=color, ls="--", lw=1)
ax.set_title("Staleness of aggregated updates (dashed: means)")
save_figure(fig, "safl_basics_staleness", profile, GROUP)
plt.show()

# %% [markdown]
# With `overwrite`, a buffered entry is read only when it is aggregated, and by then a fast client
# has often restarted and overwritten its file with a newer update: the server aggregates fresher
# updates than the schedule says. fedlib defaults to `snapshot` (what the paper describes) and keeps
# `overwrite` as `safl.upload=overwrite` to reproduce the official code.

# %% [markdown]
# ## 3. The four FedQS client types, round by round
#
# FedQS-Avg on UCI Adult (non-IID by gender). At every training start, Mod② computes the client's
# update speed f_i = n(i)/mean n and its similarity s_i, compares them with the means f̄, s̄ and
# picks a type (spec §4):
#
# | type | condition | learning rate | momentum | feedback |
# |---|---|---|---|---|
# | FSBC fast, strongly biased | f > f̄, s < s̄ | unchanged | 0 | on |
# | FWBC fast, weakly biased | f > f̄, s ≥ s̄ | decreases | m_i | off |
# | SWBC straggling, weakly biased | f ≤ f̄, s ≥ s̄ | increases | m_i | off |
# | SSBC straggling, strongly biased | f ≤ f̄, s < s̄ | increases | m_i or 0 | situation 2 |
#
# Until both indicators exist the client is in `warmup` (no adaptation). The run's `clients` table
# (`RunResult.clients`) holds one row per training start: round, tick, client, type, lr, momentum,
# similarity, speed, feedback, ...

# %%
base = RunConfig.from_preset(S["preset"])
cfg = base.with_overrides([
    f"safl.clients={S['clients']}", f"safl.k={S['k']}", f"rounds={S['rounds']}", f"seed={S['seed']}",
    f"data.max_train={'null' if S['max_train'] is None else S['max_train']}",
    # the preset's official delay profile holds exactly 100 delays; other N draw uniform 1:50 delays
    *([] if S["clients"] == 100 else ["safl.delays=uniform"]),
])
# a run at the preset's (paper) scale is labelled so, and shared with the table notebooks
paper_scale = (cfg.safl.clients, cfg.safl.k, cfg.rounds, cfg.data.max_train) == \
    (base.safl.clients, base.safl.k, base.rounds, base.data.max_train)
cfg = cfg.replace(profile="paper" if paper_scale else profile)
res = run(cfg, store=STORE)
types = res.clients
print(f"{len(types)} training starts recorded; final accuracy {res.summary['final_accuracy']:.4f}")
# the simulator runs exactly the clock of section 1: replaying the run's delays predicts its staleness
pred = replay(make_delays(cfg.safl.delays, cfg.safl.clients, cfg.safl.ratio, seed=cfg.seed), k=cfg.safl.k,
              rounds=cfg.rounds)
print(f"mean staleness: {res.summary['staleness_mean_all']:.3f} in the run, "
      f"{pred['staleness_snapshot_mean']:.3f} in the replay of its schedule; "
      f"{res.summary['ticks']} ticks (replay: {pred['ticks']})")
types.head()

# %%
ORDER = ["warmup", "FSBC", "FWBC", "SWBC", "SSBC"]
PALETTE = dict(zip(ORDER, sns.color_palette("Set2", len(ORDER))))
width = max(1, S["rounds"] // 40)  # rounds per bin, so that each bin holds enough training starts
types["bin"] = (types["round"] // width) * width
counts = types.groupby(["bin", "type"]).size().unstack(fill_value=0).reindex(columns=ORDER, fill_value=0)
share = counts.div(counts.sum(axis=1), axis=0)
fig, axes = plt.subplots(1, 2, figsize=(13, 4))
axes[0].stackplot(share.index, share.T.values, labels=ORDER, colors=[PALETTE[t] for t in ORDER], alpha=0.9)
axes[0].set_xlabel("global round" + (f" (bins of {width})" if width > 1 else ""))
axes[0].set_ylabel("share of training starts")
axes[0].set_title("FedQS client types over the run")
axes[0].legend(loc="upper right", fontsize=8)
sns.lineplot(data=types[types["type"] != "warmup"], x="bin", y="lr", hue="type", hue_order=ORDER[1:],
             palette=PALETTE, errorbar=("pi", 50), ax=axes[1])
axes[1].set_xlabel(axes[0].get_xlabel())
for a in axes:
    a.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
axes[1].set_title("learning rate at training start, per type (median, 50% band)")
save_figure(fig, "safl_basics_types", profile, GROUP)
plt.show()

# %% [markdown]
# Left: the share of each type among the training starts. Right: the learning rate each type trains
# with — FedQS lowers it step by step for fast clients (FWBC; FSBC keeps its rate but clients move
# between the two) and raises it for stragglers (SWBC, SSBC), clipped to [0.001, 0.2] (spec §4).
#
# Why does `warmup` never disappear? A client needs a similarity s_i, i.e. a non-zero local update.
# With the Adult split, some clients hold fewer samples than one batch (B = 50, `drop_last`): they take
# no optimizer step (spec §2), their update is zero, and FedQS never classifies them. (Every client
# trains on all of its partition by default — FedQS's situation test reads the first ≤ 20 samples per
# class of that training data; the paper's 8:2 holdout, `data.validation=holdout`, would leave even
# fewer samples to train on.)
#
# The same records per client: rows are clients sorted by their delay r_i (fast at the top), columns
# are round bins, colour is the type the client had most often in that bin (white: the client did not
# start a training in that bin — slow clients start rarely). Fast clients are aggregated more than
# average (f > f̄: FSBC / FWBC), stragglers less (SWBC / SSBC); the similarity decides the "bias"
# half and can change from one start to the next.

# %%
delays_run = make_delays(cfg.safl.delays, S["clients"], cfg.safl.ratio, seed=S["seed"]).tolist()
code = {t: i for i, t in enumerate(ORDER)}
grid = (types.assign(code=types["type"].map(code))
        .groupby(["client", "bin"])["code"].agg(lambda c: c.value_counts().idxmax())
        .unstack("bin"))
grid = grid.reindex(sorted(grid.index, key=lambda c: (delays_run[c], c)))
fig, ax = plt.subplots(figsize=(12, max(3, 0.09 * len(grid) + 1.5)))
cmap = plt.matplotlib.colors.ListedColormap([PALETTE[t] for t in ORDER])
ax.imshow(grid.values, aspect="auto", interpolation="nearest", cmap=cmap, vmin=-0.5, vmax=len(ORDER) - 0.5,
          extent=(grid.columns.min() - width / 2, grid.columns.max() + width / 2, len(grid) - 0.5, -0.5))
step = max(1, len(grid) // 12)
ax.set_yticks(range(0, len(grid), step))
ax.set_yticklabels([f"c{c} r={delays_run[c]}" for c in grid.index[::step]], fontsize=7)
ax.set_xlabel(axes[0].get_xlabel())
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
ax.set_title("most frequent type per client and round bin (clients sorted by delay)")
ax.legend(handles=[plt.matplotlib.patches.Patch(color=PALETTE[t], label=t) for t in ORDER],
          loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
save_figure(fig, "safl_basics_types_by_client", profile, GROUP)
plt.show()

# %%
# How the type depends on speed: share of each type among the starts of fast / medium / slow clients.
types["speed group"] = pd.qcut([delays_run[c] for c in types["client"]], 3, labels=["fast", "medium", "slow"],
                               duplicates="drop") if len(set(delays_run)) >= 3 else "all"
(types[types["type"] != "warmup"].groupby("speed group", observed=True)["type"].value_counts(normalize=True)
 .unstack(fill_value=0).reindex(columns=ORDER[1:], fill_value=0).round(2))
