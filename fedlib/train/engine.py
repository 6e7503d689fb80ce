"""``train_clients``: many clients' local runs in one call, with a choice of backend.

Every algorithm of both papers spends its time here — FedQS's and the SAFL baselines' local
training (spec ``fedqs.md`` §2) and SMoFi's surrogate training with its step-wise hook
(spec ``smofi.md`` §2). See ``fedlib/train/__init__.py`` for the contract.
"""

from __future__ import annotations

import torch
from torch import nn

from fedlib.core.errors import check, check_choice
from fedlib.train.allocator import tune_malloc
from fedlib.train.common import StateLayout, check_precision, resolve_starts
from fedlib.train.config import (ClientResult, ClientTask, check_corrections, is_int, validate_init_opt_state,
                                 validate_tasks)
from fedlib.train.loop import train_loop
from fedlib.train.stacked import train_stacked
from fedlib.train.stream import ClientStream, prepare_template

__all__ = ["BACKENDS", "train_clients", "choose_backend"]

BACKENDS = ("auto", "loop", "stacked")

_CONV = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)


def _recurrent(m: nn.Module) -> bool:
    name = type(m).__name__
    return isinstance(m, nn.RNNBase) or any(tag in name for tag in ("LSTM", "GRU", "RNN"))


def choose_backend(model: nn.Module, device: torch.device | str, num_clients: int) -> str:
    """The ``auto`` rule, from the measurements in ``benchmarks/README.md``.

    * one client: ``loop`` (nothing to batch);
    * CUDA: ``stacked`` (one kernel launch per operation for the whole group instead of one per
      client; kernel-launch overhead dominates small per-client work on a GPU);
    * CPU: ``stacked`` only for feed-forward models without convolutions (the FCN: per-operation
      overhead dominates its tiny matmuls and the optimizer/clip work, so batching wins);
      ``loop`` for models with convolutions (vmapped convolutions are slower than a loop of
      ordinary ones on CPU) and for recurrent models (``nn.RNNBase``, or a module whose class name
      contains LSTM/GRU/RNN such as fedlib's matmul LSTM: 80 sequential time steps of
      compute-bound matmuls at batch 50 — measured 2x slower stacked on 2 CPU cores).
    """
    device = torch.device(device)
    if num_clients <= 1:
        return "loop"
    if device.type == "cuda":
        return "stacked"
    if any(isinstance(m, _CONV) or _recurrent(m) for m in model.modules()):
        return "loop"
    return "stacked"


def dataset_device(dataset) -> torch.device:
    dev = getattr(dataset, "device", None)
    if dev is None and hasattr(dataset, "train_x"):
        dev = dataset.train_x.device
    return torch.device(dev if dev is not None else "cpu")


def train_clients(model: nn.Module, starts, dataset, tasks: list[ClientTask], *, seed: int, round: int = 0,
                  backend: str = "auto", hook=None, device=None) -> list[ClientResult]:
    """Train every task's client from its start state; results in ``tasks`` order.

    ``model``: the architecture (its own weights are used only when ``starts`` is ``None``).
    ``starts``: one state dict or a list (``ClientTask.start`` indexes it). ``dataset``: anything
    with ``num_train`` and ``batch(idx, train, generator, augment) -> (x, y)`` (a
    :class:`fedlib.data.FedDataset`). ``seed``/``round``: with the client id they seed each
    client's stream. ``backend``: ``"loop"``, ``"stacked"`` or ``"auto"`` (:func:`choose_backend`).
    ``hook(step, active, buffers)``: called after every lock-step (see buffers.py); it needs all
    tasks to use the same optimizer. ``device``: where to train (default: the dataset's device).

    Raises :class:`FedlibError` for invalid settings, indices or start indices, before any work.
    """
    check_choice("backend", backend, BACKENDS)
    check(isinstance(model, nn.Module), f"model must be an nn.Module, got {type(model).__name__}")
    check(is_int(seed), f"seed must be an int, got {seed!r}")
    check(is_int(round) and round >= 0,
          f"round must be an int >= 0, got {round!r}")
    num_train = int(dataset.num_train)
    n_starts = 1 if starts is None or isinstance(starts, dict) else (len(starts) if isinstance(starts, (list, tuple))
                                                                       else 0)
    check(n_starts > 0, "starts must be a state dict or a non-empty list of state dicts",
          "pass model.state_dict() or [state_0, state_1, ...]")
    validate_tasks(tasks, num_train, n_starts)
    if hook is not None:
        check(callable(hook), f"hook must be callable, got {type(hook).__name__}")
        kinds = {t.config.optimizer for t in tasks}
        check(len(kinds) == 1, f"a hook needs one optimizer for the whole group, got {sorted(kinds)}",
              "train groups with different optimizers in separate calls")
        precisions = {t.config.precision for t in tasks}
        check(len(precisions) == 1, f"a hook needs one local precision for the whole group, got {sorted(precisions)}",
              "train groups with different precisions in separate calls")
    data_device = dataset_device(dataset)
    device = torch.device(device) if device is not None else data_device
    for precision in sorted({t.config.precision for t in tasks}):
        check_precision(precision, device)
    layout = StateLayout.of(model)
    check_corrections(tasks)
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters() if n in set(layout.params)}
    for t in tasks:
        validate_init_opt_state(t, shapes)
    start_states = resolve_starts(model, starts, layout, device)
    template = prepare_template(model, device)

    if device.type == "cpu":
        tune_malloc()  # speed only (allocator.py)
    if backend == "auto":
        backend = choose_backend(model, device, len(tasks))
    float_dtype = next((v.dtype for v in start_states[0].values() if v.is_floating_point()), None)
    streams = [ClientStream(t, seed, round, data_device, float_dtype) for t in tasks]
    if backend == "loop":
        return train_loop(template, start_states, dataset, tasks, streams, layout, device, hook)
    by_opt: dict[tuple[str, str], list[int]] = {}
    for i, t in enumerate(tasks):
        by_opt.setdefault((t.config.optimizer, t.config.precision), []).append(i)
    if len(by_opt) == 1:
        return train_stacked(template, start_states, dataset, tasks, streams, layout, device, hook)
    # different optimizers keep different state, different precisions run different arithmetic:
    # one stack each (a client's result is independent of its group mates, so this changes nothing
    # but the grouping)
    out: list[ClientResult | None] = [None] * len(tasks)
    for members in by_opt.values():
        res = train_stacked(template, start_states, dataset, [tasks[i] for i in members],
                            [streams[i] for i in members], layout, device, None)
        for i, r in zip(members, res):
            out[i] = r
    return out  # type: ignore[return-value]
