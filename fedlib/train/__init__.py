"""The client-training engine: many clients' local runs in one call; evaluation.

    results = train_clients(model, starts, dataset, tasks, seed=run_seed, round=n,
                            backend="auto", hook=None)

``tasks``: one :class:`ClientTask` per client (id, sample indices, :class:`LocalConfig`, which
start state). Each :class:`ClientResult` holds the end state, the update ``delta = state −
start`` (parameters and buffers), the mean loss, the steps taken and the final optimizer state.

Semantics every backend shares
------------------------------
* **Randomness.** Client ``c`` in round ``r`` of run ``seed`` draws everything — each epoch's
  permutation of its indices, the augmentation of each batch, its dropout masks — from one
  generator seeded by ``(seed, "local-train", c, r)`` (:mod:`fedlib.train.stream`), so its result
  does not depend on the backend or on the other clients of the group.
* **Dropout.** ``nn.Dropout`` layers are replaced, in the engine's private copy of the model, by
  :class:`~fedlib.train.stream.MaskDropout`, whose masks are drawn from the client's generator
  (inverted dropout: kept units scaled by 1/(1−p), as ``nn.Dropout``). This is what makes
  ``loop == stacked`` hold with dropout on; ``torch.func.vmap(randomness="different")`` could not
  reproduce a per-client stream. Other dropout kinds (``Dropout2d``, ``nn.LSTM(dropout=…)``) are
  refused; functional ``F.dropout`` inside a model's ``forward`` is not supported.
* **Lock-step.** Steps τ = 0 … max_steps−1; at τ every client with τ < its steps takes one step;
  then ``hook(τ, active, buffers)`` (:class:`OptimizerBuffers`) may read and replace every
  client's optimizer state (SMoFi §2).
* **Optimizers** follow ``torch.optim`` exactly (SGD with momentum/Nesterov/weight decay,
  dampening 0, first step ``buf = grad``; Adam/AdamW with bias correction; fresh state each run).
* **Loss** = cross-entropy + ``prox_mu``/2‖w − w_start‖² + ``l2_in_loss``/2‖w‖²; the reported
  ``loss`` is the mean cross-entropy over the client's steps.

* **Carried optimizer state.** ``ClientTask.init_opt_state = {kind: {name: tensor}}`` starts a
  client from a given momentum / Adam moments instead of a fresh optimizer (FedNAG's averaged
  momentum, SMoFi's carried fused momentum); ``ClientResult.opt_state`` has the same form.

Backends
--------
``"loop"`` — reference: a plain module + ``torch.optim`` optimizer per client.
``"stacked"`` — every client at once on client-stacked state (:mod:`fedlib.train.stacked`):
``vmap(functional_call)`` in general; plain feed-forward models (the FCN) on batched matmuls
without ``vmap`` (:mod:`fedlib.train.direct`); per-client hyper-parameters as ``[C]`` tensors;
finished clients left out of the step (gather/scatter), so their state never changes.
``"auto"`` — :func:`choose_backend`: ``loop`` for one client, ``stacked`` on CUDA, on CPU ``loop``
for models with convolutions or recurrent layers and ``stacked`` otherwise (measured in
``benchmarks/README.md``; ``fedlib bench engine`` re-measures it). On CPU the engine raises
glibc's mmap/trim thresholds once per process (speed only, :mod:`fedlib.train.allocator`).
"""

from fedlib.train.buffers import OptimizerBuffers
from fedlib.train.config import OPTIMIZERS, ClientResult, ClientTask, LocalConfig
from fedlib.train.engine import BACKENDS, choose_backend, train_clients
from fedlib.train.evaluate import EvalResult, evaluate

__all__ = ["BACKENDS", "OPTIMIZERS", "ClientResult", "ClientTask", "EvalResult", "LocalConfig",
           "OptimizerBuffers", "choose_backend", "evaluate", "train_clients"]
