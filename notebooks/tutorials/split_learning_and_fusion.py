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
# # Split learning and step-wise momentum fusion (SMoFi), from scratch
#
# A teaching notebook for *SMoFi: Step-wise Momentum Fusion for Split Federated Learning on
# Heterogeneous Data* (Yang, Zhu, Wang, Yang — AAAI 2026, arXiv 2511.09828).
#
# **What the paper claims** (spec [`smofi.md`](../../docs/spec/smofi.md) §5): plugging SMoFi into split FL on Dirichlet(0.1)
# label skew lifts FedAvg (= SFLV1) on CIFAR-10, CIFAR-100 and Tiny-ImageNet, and makes it converge
# several times faster — the paper's numbers, printed below from the claims layer `fedlib.claims`.
# This tutorial does not reproduce those numbers (see `notebooks/smofi/`); it shows *why* the
# mechanism can help.

# %%
from fedlib.reporting import PAPER_ACCURACY, show_paper_claims

show_paper_claims("smofi-up-to-7", "smofi-speedup-10x", "smofi-speedup-cifar10", table=PAPER_ACCURACY)

# %% [markdown]
# **What this notebook does**
#
# 1. Cuts a model into a client part and a server part and looks at what crosses the cut
#    ("smashed data" going up, its gradient coming back).
# 2. Shows numerically that one split step — client forward, server forward + backward, client
#    backward — gives the same loss and the same gradients as one whole-model step, and that
#    several SGD-with-momentum steps on the two parts track whole-model training.
# 3. Runs one SFLV1 round on Dirichlet-skewed CIFAR-10 clients, where the server keeps one
#    *surrogate* copy of its part (and one optimizer) per client, and records the surrogates'
#    momentum through the engine's lock-step hook `hook(step, active, buffers)` — once without
#    fusion (SFLV1) and once with `fedlib.split.SMoFiHook` (SMoFi). We draw how aligned the
#    surrogates' momentum directions are (cosine similarity vs step) and a 2-D PCA projection of
#    their trajectories, and the staleness weight s_α of clients that finished early.
# 4. Trains a few rounds of both (data-size-weighted averaging of both parts at round end) and
#    plots test accuracy.
#
# **Profiles**: `smoke` (seconds, CI: a few hundred images, 4 clients, numbers mean nothing);
# `cpu` (a few minutes on 2 cores: 5,000 CIFAR-10 images on 10 clients, Dirichlet 0.1, the small
# `cnn`, a few rounds); `paper` (the spec §4 setting for one round's momentum picture: ResNet-18
# cut after `layer1`, 20 clients with 10 per round on all 50,000 images — a GPU is advisable).
# The reduced profiles are not the paper's setting; the tables below name the profile.

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only tutorials/split_learning_and_fusion -p NAME=VALUE
profile = "auto"
model_name = None       # fedlib.models name: cnn at smoke and cpu, resnet18 at paper
cut = None              # cut point, None means the default cut of the model
n_clients = None        # clients selected in the round
max_train = None        # CIFAR-10 training images used, a seeded subsample
dirichlet_alpha = None  # label skew of the client partition
batch_size = None       # local batch size
lr = None               # local learning rate
momentum = None         # SGD momentum beta
alpha = None            # SMoFi staleness exponent, negative
rounds = None           # rounds of the small SFLV1-vs-SMoFi run in part 4
identity_steps = None   # SGDM steps in the split-vs-whole comparison
max_test = None         # test images for the accuracy curve
sketch_dim = None       # size of the random sketch of the server momentum used for the 2-D PCA
seed = 0                # seed of the model, data subsample and client streams

# %%
# NBVAL_CHECK_OUTPUT
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
import yaml
from tqdm.auto import tqdm

from fedlib.reporting import resolve_profile, save_figure, show_settings

torch.set_num_threads(1)  # small models on a busy CPU run fastest single-threaded
profile = resolve_profile(profile)
SETTINGS = {
    "smoke": dict(model_name="cnn", cut=None, n_clients=4, max_train=256, dirichlet_alpha=0.1,
                  batch_size=16, lr=0.01, momentum=0.9, alpha=-0.1, rounds=1, identity_steps=3,
                  max_test=200, sketch_dim=512),
    "cpu": dict(model_name="cnn", cut=None, n_clients=10, max_train=5000, dirichlet_alpha=0.1,
                batch_size=32, lr=0.01, momentum=0.9, alpha=-0.1, rounds=4, identity_steps=20,
                max_test=2000, sketch_dim=512),
    "paper": dict(model_name="resnet18", cut="layer1", n_clients=10, max_train=None,
                  dirichlet_alpha=0.1, batch_size=32, lr=0.01, momentum=0.9, alpha=-0.1, rounds=10,
                  identity_steps=20, max_test=None, sketch_dim=512),
}
settings = dict(SETTINGS[profile])
for _k in settings:  # a knob set in the parameters cell overrides the profile default
    _v = globals().get(_k)
    if _v is not None:
        settings[_k] = yaml.safe_load(_v) if isinstance(_v, str) and not isinstance(settings[_k], str) else _v
settings["seed"] = seed
show_settings(settings, profile)

# %% [markdown]
# ## 1. Cut a model
#
# Every fedlib model is a `StagedModel`: an `nn.Sequential` of named stages. A cut point is the
# name of the stage *after which* the model is cut. The client keeps the first stages, the server
# the rest (classifier included). Parameter names survive the split.

# %%
from fedlib.data.registry import load_dataset
from fedlib.models import build_model, count_parameters, cut_points, split_model
from fedlib.core.utils import generator

S = settings
ds = load_dataset("cifar10")
model = build_model(S["model_name"], ds.num_classes, seed=S["seed"])
cut_at = S["cut"] or model.default_cut
client_part, server_part = split_model(model, cut_at, copy=True)
print(f"{S['model_name']}: stages {list(model.stage_names)}; valid cuts {cut_points(model)}")
print(f"cut after {cut_at!r}: client part {count_parameters(client_part):,} parameters, "
      f"server part {count_parameters(server_part):,} parameters")

x, y = ds.batch(torch.arange(S["batch_size"]), train=False)
smashed = client_part(x)
print(f"input {tuple(x.shape)} -> smashed data {tuple(smashed.shape)} "
      f"({smashed.numel() * 4 / 1024:.0f} KiB per batch in float32) -> logits {tuple(server_part(smashed).shape)}")

# %% [markdown]
# ## 2. Split training is whole-model training, numerically
#
# `fedlib.models.split.split_forward_backward` does what two machines would do: the client runs
# its part and sends the smashed activations and labels; the server treats them as a *leaf*
# tensor, computes the loss, back-propagates through its part and returns
# ∂loss/∂smashed; the client back-propagates that tensor through its part. No autograd graph
# crosses the cut — only tensors — yet the loss and every gradient equal those of one
# forward/backward of the whole model.

# %%
import copy

from fedlib.models.split import split_forward_backward

loss_fn = torch.nn.CrossEntropyLoss()
whole = copy.deepcopy(model).train()
c_part, s_part = split_model(copy.deepcopy(model).train(), cut_at, copy=False)

whole.zero_grad()
loss_whole = loss_fn(whole(x), y)
loss_whole.backward()
loss_split, received = split_forward_backward(c_part, s_part, x, y, loss_fn)

g_whole = {n: p.grad for n, p in whole.named_parameters()}
g_split = {n: p.grad for part in (c_part, s_part) for n, p in part.named_parameters()}
rows = [{"parameter": n, "side": "client" if n in dict(c_part.named_parameters()) else "server",
         "max |grad diff|": float((g_whole[n] - g_split[n]).abs().max()),
         "max |grad|": float(g_whole[n].abs().max())} for n in g_whole]
grad_table = pd.DataFrame(rows)
print(f"loss whole model {loss_whole.item():.6f}  split {loss_split.item():.6f}; "
      f"gradient sent back across the cut: shape {tuple(received.grad.shape)}")
print(f"largest gradient difference over all {len(rows)} tensors: {grad_table['max |grad diff|'].max():.2e}")
grad_table

# %% [markdown]
# Now a whole local epoch of SGD with momentum for one client, two ways: the **explicit split
# path** (`fedlib.split.splitpath.train_split_clients`: a client part and a server part, each
# with its own `torch.optim` optimizer, exchanging only smashed data and its gradient) and the
# **training engine** (`fedlib.train.train_clients`: the whole model, one optimizer), both drawing
# the same batches from the client's seeded stream. With the same optimizer settings on both
# sides this is the same computation (spec §1: SFLV1 with identical optimizers ≡ FedAvg on the
# whole model) — which is why fedlib's fast SFLV1 path may train whole models through the engine.
# On a CPU the two usually agree bit for bit (the same operations in the same order); elsewhere
# expect at most float32 rounding.

# %%
from fedlib.split.splitpath import ClientBatches, train_split_clients
from fedlib.train import ClientTask, LocalConfig, train_clients

local = LocalConfig(lr=S["lr"], momentum=S["momentum"], weight_decay=5e-4,
                    batch_size=S["batch_size"], epochs=1, drop_last=False)
few = torch.randperm(ds.num_train, generator=generator(S["seed"], "tutorial", "identity"))
task = ClientTask(client_id=0, indices=few[:S["identity_steps"] * S["batch_size"]], config=local)
start = model.state_dict()
via_split = train_split_clients(client_part, server_part, start,
                                [ClientBatches(task, ds, seed=S["seed"], round=0)], local)[0]
via_engine = train_clients(model, start, ds, [task], seed=S["seed"], round=0, backend="loop")[0]
diff = pd.DataFrame([{"tensor": k, "side": "client" if k in client_part.state_dict() else "server",
                      "max |weight diff|": float((v - via_split.state[k]).abs().max()),
                      "max |weight change|": float((v - start[k]).abs().max())}
                     for k, v in via_engine.state.items()])
print(f"{via_engine.steps} SGDM steps (split path {via_split.steps}); mean loss engine "
      f"{via_engine.loss:.5f}, split {via_split.loss:.5f}; largest weight difference "
      f"{diff['max |weight diff|'].max():.2e} (largest weight change {diff['max |weight change|'].max():.2e})")
diff

# %% [markdown]
# ## 3. SFLV1 surrogates and what momentum fusion does to them
#
# In SFLV1 every selected client j trains its own copy of the client part, and the server keeps
# one **surrogate** W_{s,j} of its part with its own optimizer per client. On Dirichlet(0.1)
# data each client sees only a few classes, so the surrogates' gradients — and their momentum
# buffers, which accumulate them — point in different directions. Clients also take different
# numbers of steps |T_j| (one epoch over different-sized local sets).
#
# SMoFi (spec §2) replaces, after every step τ, the momentum buffer of every active surrogate by
# the fused buffer
#
# m̄^{τ+1} = ( Σ_{j active} m_{s,j}^{τ+1} + Σ_{h finished} s_α(τ, h) · m_h^{final} ) / |J^n|,
# with s_α(τ, h) = (τ − |T_h| + 1)^α, α < 0,
#
# so each surrogate's next momentum is β·m̄ + its own gradient. The client side is untouched.
#
# The training engine (`fedlib.train.train_clients`) runs the selected clients in lock-step and
# calls `hook(τ, active, buffers)` after every step with every client's optimizer buffers;
# `fedlib.split.SMoFiHook` is such a hook and touches only the *server-part* parameter names — so
# the engine's per-client optimizer state of the server part *is* the surrogates' optimizer state
# (the whole-model path of part 2). We put a small recorder in front of it that reads each active
# surrogate's **own** momentum (before fusion overwrites it).

# %%
from fedlib.data.partition import dirichlet
from fedlib.split.smofi import SMoFiHook, SMoFiOptions, staleness_weight

n_train = ds.num_train if S["max_train"] is None else min(S["max_train"], ds.num_train)
pool = torch.randperm(ds.num_train, generator=generator(S["seed"], "tutorial", "subsample"))[:n_train]
parts = [pool[p] for p in dirichlet(ds.train_y[pool], S["n_clients"], S["dirichlet_alpha"], seed=S["seed"])]
label_counts = pd.DataFrame([torch.bincount(ds.train_y[p], minlength=10).tolist() for p in parts],
                            columns=ds.meta.get("classes", list(range(10))))
label_counts.index.name = "client"

fig, ax = plt.subplots(figsize=(7, 0.35 * S["n_clients"] + 1.2))
sns.heatmap(label_counts, annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
ax.set_title(f"Dirichlet({S['dirichlet_alpha']}) labels per client ({n_train} images)")
save_figure(fig, "split_learning_and_fusion_partition", profile, "tutorials")
plt.show()


# one epoch per client over its own samples: |T_j| = ceil(|D_j| / batch) differs between clients
tasks = [ClientTask(client_id=j, indices=parts[j], config=local) for j in range(S["n_clients"])]


server_names = [n for n, _ in server_part.named_parameters()]
n_server = sum(server_part.state_dict()[n].numel() for n in server_names)
# a count sketch (one random bucket and sign per coordinate): keeps inner products, hence angles,
# approximately, at the cost of one pass over the vector
_g = generator(S["seed"], "tutorial", "sketch")
sketch_bucket = torch.randint(0, S["sketch_dim"], (n_server,), generator=_g)
sketch_sign = torch.randint(0, 2, (n_server,), generator=_g).double().mul_(2).sub_(1)


class MomentumRecorder:
    """A lock-step hook that records each active surrogate's own server-part momentum.

    Full vectors are reduced on the fly: exact pairwise cosines, and a ``sketch_dim``-sized count
    sketch of each vector for the 2-D projection.
    """

    def __init__(self):
        self.rows, self.points = [], []

    def __call__(self, tau, active, buffers):
        flat = torch.cat([buffers.get("momentum_buffer", n).flatten(1) for n in server_names], 1)
        act = torch.nonzero(active).flatten().tolist()
        own = flat[act].double()
        unit = torch.nn.functional.normalize(own, dim=1)
        cos = unit @ unit.T
        for a in range(len(act)):
            for b in range(a + 1, len(act)):
                self.rows.append({"step": tau + 1, "pair": f"{act[a]}-{act[b]}", "cosine": float(cos[a, b])})
        sk = torch.zeros(len(act), S["sketch_dim"], dtype=torch.float64).index_add_(1, sketch_bucket, own * sketch_sign)
        for i, j in enumerate(act):
            self.points.append((tau + 1, j, sk[i]))


def one_round(fuse: bool, rnd: int = 0, start=None, record=True):
    """One SFLV1 round (with or without SMoFi); returns the client results and the recorder."""
    start = start if start is not None else model.state_dict()
    rec = MomentumRecorder() if record else None
    smofi = SMoFiHook(server_names, "sgd", SMoFiOptions(alpha=S["alpha"]), momentum=S["momentum"])
    smofi.start_round(S["n_clients"])

    def hook(tau, active, buffers):
        if rec is not None:
            rec(tau, active, buffers)   # each surrogate's own momentum, before fusion
        if fuse:
            smofi(tau, active, buffers)

    results = train_clients(model, start, ds, tasks, seed=S["seed"], round=rnd, hook=hook)
    return results, rec


t0 = time.perf_counter()
runs = {}
for fuse in tqdm([False, True], desc="one round, without / with fusion"):
    runs["SMoFi (fused)" if fuse else "SFLV1 (no fusion)"] = one_round(fuse)
steps = [r.steps for r in runs["SFLV1 (no fusion)"][0]]
print(f"local steps |T_j| per client: {steps}  ({time.perf_counter() - t0:.1f}s)")

# %% [markdown]
# **Cosine similarity between the surrogates' momentum** (every pair of active clients, per
# step; the band is a bootstrap 95% interval over pairs). Without fusion each surrogate's
# momentum is the running sum of *its own* skewed gradients, so the pairs stay far apart; with
# fusion every surrogate's momentum is β·m̄ + its gradient and the shared term pulls them into one
# direction.

# %%
cos = pd.concat([pd.DataFrame(rec.rows).assign(method=name) for name, (_, rec) in runs.items()],
                ignore_index=True)
fig, ax = plt.subplots(figsize=(7, 3.8))
sns.lineplot(data=cos, x="step", y="cosine", hue="method", errorbar=("ci", 95), seed=S["seed"], ax=ax)
ax.axhline(0, color="grey", lw=0.8)
ax.set_ylabel("cosine(m_i, m_j), active pairs")
n_active = pd.Series(np.bincount(np.concatenate([np.arange(s) for s in steps]))).rename_axis("step")
ax2 = ax.twinx()
ax2.step(n_active.index + 1, n_active.values, where="post", color="grey", lw=0.8, ls="--")
ax2.set_ylabel("active clients (dashed)")
ax.set_title("Server-part momentum of the surrogates: how aligned are they?")
save_figure(fig, "split_learning_and_fusion_cosine", profile, "tutorials")
plt.show()
cos.groupby("method")["cosine"].describe()[["count", "mean", "50%", "min", "max"]]

# %% [markdown]
# **2-D projection of the momentum directions.** Each surrogate's whole server-part momentum at
# every step, compressed by a fixed random count sketch (`sketch_dim` numbers; angles are kept
# approximately), scaled to unit length (its *direction*) and projected on the two principal
# components of all points of both runs together, so the two panels share axes. One colour per
# client, larger dots = later steps. Look at how much the clients' colours separate in each
# panel; the cosine plot above is the quantitative version of the same question.

# %%
pts = [(name, s, j, v) for name, (_, rec) in runs.items() for (s, j, v) in rec.points]
mat = torch.nn.functional.normalize(torch.stack([p[3] for p in pts]).double(), dim=1)  # directions
mat = mat - mat.mean(0)
_, _, v = torch.linalg.svd(mat, full_matrices=False)
xy = (mat @ v[:2].T).numpy()
proj = pd.DataFrame({"method": [p[0] for p in pts], "step": [p[1] for p in pts],
                     "client": [p[2] for p in pts], "pc1": xy[:, 0], "pc2": xy[:, 1]})
proj["client"] = proj["client"].astype(str)
g = sns.relplot(data=proj, x="pc1", y="pc2", hue="client", size="step", sizes=(6, 70), col="method",
                kind="scatter", palette="tab10", alpha=0.8, height=3.8, aspect=1.05)
g.figure.suptitle("Directions of the surrogates' server-part momentum (sketch + PCA of both runs)", y=1.03)
save_figure(g.figure, "split_learning_and_fusion_pca", profile, "tutorials")
plt.show()

# %% [markdown]
# **The staleness weight.** A client h that finished its |T_h| steps keeps contributing its final
# momentum, weighted by s_α(τ, h) = (τ − |T_h| + 1)^α (weight 1 the first step after it finished,
# then decaying polynomially); the denominator stays |J^n|. The paper's default is α = −0.1.

# %%
ages = np.arange(1, 61)
sw = pd.concat([pd.DataFrame({"age (steps since finished)": ages, "weight": staleness_weight(
    torch.tensor(ages - 1), torch.zeros(len(ages), dtype=torch.long), a).numpy(), "alpha": str(a)})
    for a in (-0.01, -0.1, -0.5, -1.0)])
fig, ax = plt.subplots(figsize=(6, 3.3))
sns.lineplot(data=sw, x="age (steps since finished)", y="weight", hue="alpha", ax=ax)
ax.set_title("s_α = (τ − |T_h| + 1)^α")
save_figure(fig, "split_learning_and_fusion_staleness", profile, "tutorials")
plt.show()

# %% [markdown]
# ## 4. A few rounds: SFLV1 vs SMoFi
#
# At round end the server averages the surrogates and the client parts (data-size weights) into
# the next global model. A few rounds at this tutorial's scale — a small illustration, not the
# paper's experiment (`notebooks/smofi/main_accuracy` runs the real comparison through
# `fedlib.experiments.run`).

# %%
n_test = ds.num_test if S["max_test"] is None else min(S["max_test"], ds.num_test)
# a seeded random subsample (the test set is stored class by class)
test_idx = torch.randperm(ds.num_test, generator=generator(S["seed"], "tutorial", "test"))[:n_test]


@torch.no_grad()
def accuracy(state) -> float:
    net = copy.deepcopy(model)
    net.load_state_dict(state)
    net.eval()
    correct = 0
    for i in range(0, n_test, 500):
        xb, yb = ds.batch(test_idx[i:i + 500], train=False)
        correct += int((net(xb).argmax(1) == yb).sum())
    return 100.0 * correct / n_test


def average(results) -> dict:
    w = torch.tensor([float(len(p)) for p in parts])
    w = w / w.sum()
    keys = results[0].state.keys()
    out = {}
    for k in keys:
        t = torch.stack([r.state[k] for r in results])
        avg = torch.tensordot(w.to(torch.float64), t.to(torch.float64), dims=1)
        out[k] = avg.round().to(t.dtype) if not t.is_floating_point() else avg.to(t.dtype)
    return out


curves = []
for name, fuse in (("SFLV1 (no fusion)", False), ("SMoFi (fused)", True)):
    state = {k: v.clone() for k, v in model.state_dict().items()}
    curves.append({"method": name, "round": 0, "accuracy": accuracy(state)})
    for rnd in tqdm(range(S["rounds"]), desc=name):
        results, _ = one_round(fuse, rnd, start=state, record=False)
        state = average(results)
        curves.append({"method": name, "round": rnd + 1, "accuracy": accuracy(state)})
curves = pd.DataFrame(curves)
fig, ax = plt.subplots(figsize=(6, 3.5))
sns.lineplot(data=curves, x="round", y="accuracy", hue="method", marker="o", ax=ax)
ax.set_ylabel(f"test accuracy (%), {n_test} images")
ax.set_title(f"{S['n_clients']} clients, Dirichlet({S['dirichlet_alpha']}), {profile} profile")
save_figure(fig, "split_learning_and_fusion_rounds", profile, "tutorials")
plt.show()
curves.pivot(index="round", columns="method", values="accuracy")

# %% [markdown]
# **Reading the results.** Part 2's differences are zero or float32 rounding, so split learning
# changes *where* computation happens, not what is computed. Part 3 is the whole
# idea of SMoFi: with heterogeneous clients the server-side surrogates' momentum directions
# diverge; fusing them step by step keeps the server part moving along one shared direction.
# Part 4's accuracies come from a handful of rounds at the profile named in the plot title —
# the table notebooks in `notebooks/smofi/` measure the paper's claims.
