"""Evaluation of one model state, or of many at once, on a dataset split or a subset of it.

Both papers evaluate the global model on the full test set every round (FedQS spec §7, SMoFi
spec §4): accuracy, loss and — for the fairness/skew analyses — per-class accuracy. FedQS Mod②
also scores the received global model on a client's validation samples (spec fedqs.md §3.3,
per-label accuracy): ``indices`` selects those samples. This module is fedlib's one evaluation
path: the SAFL simulator, FedQS and the split trainer all call :func:`evaluate`.

* Many states (e.g. every client's local model) are scored in one pass over the data: with the
  ``stacked`` backend one ``vmap``'d forward serves all states per batch (same rule as training,
  see :func:`fedlib.train.engine.choose_backend`).
* Inputs evaluated every round can be prepared once (:func:`prepare_batches`: fetched,
  normalised, moved to the device and put in the engine's memory format) and passed as
  ``batches=``; the numbers are the same as from the dataset.
* ``loss_sum`` says how the cross-entropy is summed: ``"sample"`` (default) adds every sample's
  loss in float64; ``"batch"`` adds each batch's float32 sum (``F.cross_entropy(...,
  reduction="sum")``) in float64 — the SAFL simulator's rule since its first stored runs, kept
  so their histories reproduce bit for bit. Accuracy and per-class accuracy are exact counts
  either way.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, vmap

from fedlib.core.errors import check, check_choice
from fedlib.train.common import StateLayout, resolve_starts
from fedlib.train.engine import BACKENDS, dataset_device, choose_backend
from fedlib.train.loop import fast_memory_format, to_format
from fedlib.train.stream import prepare_template

__all__ = ["EvalBatches", "EvalResult", "LOSS_SUMS", "evaluate", "eval_batch_size", "prepare_batches"]

LOSS_SUMS = ("sample", "batch")
SPLITS = ("test", "train")


def eval_batch_size(device) -> int:
    """Evaluation batch: 1,024 on CUDA; 128 on CPU, where the small CNN's forward is ~1.5-2x
    faster per image at 50-128 than at 1,024 (cache-resident activations; benchmarks/README.md)."""
    return 1024 if torch.device(device).type == "cuda" else 128


@dataclass
class EvalResult:
    """``accuracy`` (fraction in [0, 1]), mean cross-entropy ``loss``, ``per_class_accuracy``
    (``[num_classes]`` float tensor, NaN for classes absent from the samples), ``n`` samples."""

    accuracy: float
    loss: float
    per_class_accuracy: Tensor
    n: int


@dataclass(frozen=True)
class EvalBatches:
    """Model-ready ``(x, y)`` batches of a fixed sample set, from :func:`prepare_batches`: on
    ``device``, inputs in the model's float dtype and the engine's memory format. Valid for the
    model they were prepared for (same architecture and dtype)."""

    batches: tuple[tuple[Tensor, Tensor], ...]
    device: torch.device
    num_classes: int | None


def _split_size(dataset, split: str) -> int:
    n = getattr(dataset, f"num_{split}", None)
    if n is None:
        n = len(getattr(dataset, f"{split}_y"))
    return int(n)


def _sample_indices(dataset, split: str, indices) -> Tensor:
    """``indices`` as a 1-D LongTensor checked against the split size (all samples if None)."""
    n = _split_size(dataset, split)
    if indices is None:
        return torch.arange(n)
    idx = torch.as_tensor(indices, dtype=torch.long).cpu()
    check(idx.dim() == 1, f"indices must be a 1-D list of sample indices, got shape {tuple(idx.shape)}")
    check(idx.numel() == 0 or (int(idx.min()) >= 0 and int(idx.max()) < n),
          f"indices must lie in [0, {n}) (the {split} split has {n} samples)",
          "pass sample indices of the split you evaluate (split='train' for a client's validation part)")
    return idx


def _float_dtype(state: dict):
    """The dtype inputs are cast to: that of the first floating-point entry of a state."""
    return next((v.dtype for v in state.values() if v.is_floating_point()), None)


def _batches(dataset, split: str, idx: Tensor, batch_size: int, device: torch.device, float_dtype, fmt):
    """Model-ready ``(x, y)`` batches of ``idx`` (un-augmented), one at a time."""
    for lo in range(0, len(idx), batch_size):
        x, y = dataset.batch(idx[lo:lo + batch_size], train=split == "train", generator=None, augment=False)
        x = x.to(device, dtype=float_dtype if (float_dtype is not None and x.is_floating_point()) else None)
        yield to_format(x, fmt), y.to(device).reshape(-1)


def prepare_batches(model: nn.Module, dataset, split: str = "test", indices=None, batch_size: int | None = None,
                    device=None) -> EvalBatches:
    """The ``split`` samples ``indices`` (default: all) of ``dataset`` as :class:`EvalBatches`
    for ``model``, to pass to :func:`evaluate` as ``batches=`` every round (arguments as there)."""
    check(dataset is not None, "prepare_batches needs a dataset")
    check_choice("split", split, SPLITS)
    _check_batch_size(batch_size)
    device = torch.device(device) if device is not None else dataset_device(dataset)
    idx = _sample_indices(dataset, split, indices)
    batches = tuple(_batches(dataset, split, idx, batch_size or eval_batch_size(device), device,
                             _float_dtype(model.state_dict()), fast_memory_format(model, device)))
    k = getattr(dataset, "num_classes", None)
    return EvalBatches(batches, device, None if k is None else int(k))


def _check_batch_size(batch_size) -> None:
    check(batch_size is None or (isinstance(batch_size, int) and batch_size >= 1),
          f"batch_size must be an integer >= 1, got {batch_size!r}")


_EVAL_COPIES: "weakref.WeakKeyDictionary[nn.Module, nn.Module]" = weakref.WeakKeyDictionary()


def _eval_module(model: nn.Module, device: torch.device) -> nn.Module:
    """A private copy of ``model`` on ``device`` in eval mode and the engine's memory format,
    kept per training template (so it follows the template's cache; see ``prepare_template``)."""
    # built outside inference mode: the template is shared with training, which needs normal tensors
    with torch.inference_mode(False):
        template = prepare_template(model, device)
        module = _EVAL_COPIES.get(template)
        if module is None:
            module = copy.deepcopy(template).to(memory_format=fast_memory_format(template, device))
            module.eval()
            _EVAL_COPIES[template] = module
    return module


@torch.inference_mode()
def evaluate(model: nn.Module, state_or_states=None, dataset=None, split: str = "test", batch_size: int | None = None,
             device=None, backend: str = "auto", *, indices=None, batches: EvalBatches | None = None,
             loss_sum: str = "sample"):
    """Score ``model`` with one state (a state dict, or ``None`` for the model's own weights) →
    :class:`EvalResult`, or with a list of states → ``list[EvalResult]`` (same order).

    The model runs in eval mode (BN running statistics, no dropout) on a private copy; ``model``
    is not changed. Samples: ``split`` (``"test"`` or ``"train"``, un-augmented) of ``dataset``,
    only ``indices`` of it when given; or ``batches`` from :func:`prepare_batches` (then no
    ``dataset``, ``indices`` or ``batch_size``). ``device`` defaults to the data's device.
    ``batch_size`` defaults to :func:`eval_batch_size` (128 on CPU, 1,024 on CUDA).
    ``loss_sum``: ``"sample"`` | ``"batch"`` (module docstring).
    """
    check_choice("backend", backend, BACKENDS)
    check_choice("loss_sum", loss_sum, LOSS_SUMS)
    _check_batch_size(batch_size)
    if batches is None:
        check(dataset is not None, "evaluate needs a dataset (or batches from prepare_batches)")
        check_choice("split", split, SPLITS)
        device = torch.device(device) if device is not None else dataset_device(dataset)
    else:
        check(isinstance(batches, EvalBatches), f"batches must come from prepare_batches, got {type(batches).__name__}")
        check(dataset is None and indices is None and batch_size is None,
              "evaluate got prepared batches and also a dataset, indices or batch_size",
              "pass either batches=prepare_batches(...) or the dataset arguments")
        check(device is None or torch.device(device) == batches.device,
              f"batches were prepared on {batches.device}, not on {device}")
        device = batches.device
    many = isinstance(state_or_states, (list, tuple))
    states = list(state_or_states) if many else [state_or_states]
    check(len(states) > 0, "evaluate got an empty list of states")
    layout = StateLayout.of(model)
    states = [resolve_starts(model, s, layout, device)[0] for s in states]
    module = _eval_module(model, device)
    fmt = fast_memory_format(module, device)
    if batches is None:
        idx = _sample_indices(dataset, split, indices)
        data = _batches(dataset, split, idx, batch_size or eval_batch_size(device), device,
                        _float_dtype(states[0]), fmt)
        num_classes = getattr(dataset, "num_classes", None)
    else:
        data, num_classes = batches.batches, batches.num_classes
    if backend == "auto" and len(states) > 1:
        backend = choose_backend(model, device, len(states))
    forward = _forward(module, states, layout, backend, fmt)
    return _score(forward, data, len(states), num_classes, loss_sum, device, many)


def _forward(module: nn.Module, states: list[dict], layout: StateLayout, backend: str, fmt):
    """``x -> outputs [S, ...]`` of every state: the module with the state loaded (one state), a
    ``vmap``'d functional call (``stacked``) or one functional call per state (``loop``)."""
    if len(states) == 1:
        module.load_state_dict(states[0])
        return lambda x: module(x).unsqueeze(0)
    states = [{k: to_format(v, fmt) for k, v in s.items()} for s in states]
    if backend == "stacked":
        stacked = {k: torch.stack([s[k] for s in states]) for k in layout.keys}
        vmapped = vmap(lambda st, x: functional_call(module, st, (x,)), in_dims=(0, None))
        return lambda x: vmapped(stacked, x)
    return lambda x: torch.stack([functional_call(module, s, (x,)) for s in states])


def _score(forward, data, S: int, num_classes, loss_sum: str, device, many: bool):
    """Accuracy, loss and per-class accuracy of the ``S`` states over the ``(x, y)`` batches."""
    preds, labels, batch_sums = [], [], []
    sample_sum = torch.zeros(S, dtype=torch.float64, device=device)
    k = None
    for x, y in data:
        out = forward(x)
        k = out.shape[-1] if num_classes is None else int(num_classes)
        out = out.reshape(S, -1, out.shape[-1])
        if loss_sum == "sample":
            sample_sum += F.cross_entropy(out.transpose(1, 2), y.unsqueeze(0).expand(S, -1), reduction="none"
                                          ).double().sum(1)
        else:
            batch_sums.append(torch.stack([F.cross_entropy(out[s], y, reduction="sum") for s in range(S)]))
        preds.append(out.argmax(-1))
        labels.append(y)
    if k is None:  # no samples
        results = [EvalResult(float("nan"), float("nan"), torch.empty(0), 0) for _ in range(S)]
        return results if many else results[0]
    y = torch.cat(labels)
    hit = (torch.cat(preds, 1) == y.unsqueeze(0)).double()  # [S, n]
    counts = torch.zeros(k, dtype=torch.float64, device=device).index_add_(0, y, torch.ones_like(hit[0]))
    correct = torch.zeros(S, k, dtype=torch.float64, device=device).index_add_(1, y, hit)
    total = counts.sum()
    if loss_sum == "batch":
        per_batch = torch.stack(batch_sums).tolist()  # [batches][S], float32 values
        n = int(total)
        losses = []
        for s in range(S):
            acc = 0.0
            for row in per_batch:
                acc += row[s]
            losses.append(acc / n)
    else:
        losses = (sample_sum / total).tolist()
    results = []
    for s in range(S):
        per_class = torch.where(counts > 0, correct[s] / counts.clamp(min=1), torch.full_like(counts, float("nan")))
        results.append(EvalResult(float(correct[s].sum() / total), float(losses[s]), per_class.float().cpu(),
                                  int(total)))
    return results if many else results[0]
