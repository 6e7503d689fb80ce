"""Evaluation of one model state, or of many at once, on a dataset split in large batches.

Both papers evaluate the global model on the full test set every round (FedQS spec §7, SMoFi
spec §4): accuracy, loss and — for the fairness/skew analyses — per-class accuracy. Many states
(e.g. every client's local model) can be scored in one pass over the data: with the ``stacked``
backend one ``vmap``'d forward serves all states per batch (same rule as training, see
:func:`fedlib.train.engine.choose_backend`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, vmap

from fedlib.core.errors import check, check_choice
from fedlib.train.common import StateLayout, resolve_starts
from fedlib.train.engine import BACKENDS, _data_device, choose_backend
from fedlib.train.loop import fast_memory_format, to_format
from fedlib.train.stream import prepare_template

__all__ = ["EvalResult", "evaluate", "eval_batch_size"]


def eval_batch_size(device) -> int:
    """Evaluation batch: 1,024 on CUDA; 128 on CPU, where the small CNN's forward is ~1.5-2x
    faster per image at 50-128 than at 1,024 (cache-resident activations; benchmarks/README.md)."""
    return 1024 if torch.device(device).type == "cuda" else 128


@dataclass
class EvalResult:
    """``accuracy`` (fraction in [0, 1]), mean cross-entropy ``loss``, ``per_class_accuracy``
    (``[num_classes]`` float tensor, NaN for classes absent from the split), ``n`` samples."""

    accuracy: float
    loss: float
    per_class_accuracy: Tensor
    n: int


def _split_size(dataset, split: str) -> int:
    n = getattr(dataset, f"num_{split}", None)
    if n is None:
        n = len(getattr(dataset, f"{split}_y"))
    return int(n)


@torch.inference_mode()
def evaluate(model: nn.Module, state_or_states=None, dataset=None, split: str = "test", batch_size: int | None = None,
             device=None, backend: str = "auto"):
    """Score ``model`` with one state (a state dict, or ``None`` for the model's own weights) →
    :class:`EvalResult`, or with a list of states → ``list[EvalResult]`` (same order).

    The model runs in eval mode (BN running statistics, no dropout). ``split``: ``"test"`` or
    ``"train"`` (un-augmented). ``device`` defaults to the dataset's device. ``batch_size``
    defaults to :func:`eval_batch_size` (128 on CPU, 1,024 on CUDA).
    """
    check(dataset is not None, "evaluate needs a dataset")
    check_choice("split", split, ("test", "train"))
    check_choice("backend", backend, BACKENDS)
    check(batch_size is None or (isinstance(batch_size, int) and batch_size >= 1),
          f"batch_size must be an integer >= 1, got {batch_size!r}")
    many = isinstance(state_or_states, (list, tuple))
    states = list(state_or_states) if many else [state_or_states]
    check(len(states) > 0, "evaluate got an empty list of states")
    device = torch.device(device) if device is not None else _data_device(dataset)
    batch_size = batch_size or eval_batch_size(device)
    layout = StateLayout.of(model)
    states = [resolve_starts(model, s, layout, device)[0] for s in states]
    template = prepare_template(model, device)
    template.eval()
    fmt = fast_memory_format(template, device)
    states = [{k: to_format(v, fmt) for k, v in s.items()} for s in states]
    if backend == "auto":
        backend = choose_backend(model, device, len(states))

    float_dtype = next((v.dtype for v in states[0].values() if v.is_floating_point()), None)
    n = _split_size(dataset, split)
    num_classes = getattr(dataset, "num_classes", None)
    S = len(states)
    loss_sum = torch.zeros(S, dtype=torch.float64, device=device)
    correct = None
    counts = None
    if backend == "stacked" and S > 1:
        stacked = {k: torch.stack([s[k] for s in states]) for k in layout.keys}
        forward = vmap(lambda st, x: functional_call(template, st, (x,)), in_dims=(0, None))
    for lo in range(0, n, batch_size):
        idx = torch.arange(lo, min(lo + batch_size, n))
        x, y = dataset.batch(idx, train=split == "train", generator=None, augment=False)
        x = x.to(device, dtype=float_dtype if (float_dtype is not None and x.is_floating_point()) else None)
        y = y.to(device)
        x = to_format(x, fmt)
        if backend == "stacked" and S > 1:
            out = forward(stacked, x)  # [S, b, K]
        else:
            out = torch.stack([functional_call(template, s, (x,)) for s in states])
        k = out.shape[-1] if num_classes is None else int(num_classes)
        out = out.reshape(S, -1, out.shape[-1])
        yy = y.reshape(-1)
        if correct is None:
            correct = torch.zeros(S, k, dtype=torch.float64, device=device)
            counts = torch.zeros(k, dtype=torch.float64, device=device)
        loss_sum += F.cross_entropy(out.transpose(1, 2), yy.unsqueeze(0).expand(S, -1), reduction="none"
                                    ).double().sum(1)
        hit = (out.argmax(-1) == yy.unsqueeze(0)).double()  # [S, b]
        correct.index_add_(1, yy, hit)
        counts.index_add_(0, yy, torch.ones_like(yy, dtype=torch.float64))
    total = counts.sum() if counts is not None else torch.zeros(())
    results = []
    for s in range(S):
        if counts is None:
            results.append(EvalResult(float("nan"), float("nan"), torch.empty(0), 0))
            continue
        per_class = torch.where(counts > 0, correct[s] / counts.clamp(min=1), torch.full_like(counts, float("nan")))
        results.append(EvalResult(float(correct[s].sum() / total), float(loss_sum[s] / total),
                                  per_class.float().cpu(), int(total)))
    return results if many else results[0]
