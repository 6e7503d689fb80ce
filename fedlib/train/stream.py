"""A client's random stream: batch order, augmentation and dropout, the same in every backend.

Each client owns one ``torch.Generator`` seeded from ``(seed, "local-train", client_id, round)``
(:func:`fedlib.core.utils.generator`). It is consumed in a fixed order per step — at the start of an
epoch the permutation of the client's indices, then whatever ``dataset.batch`` draws for the
augmentation, then the dropout masks — so a client's batches, crops, flips and dropped units
depend only on (seed, client, round, its config), never on the backend or on its group mates.

Dropout (engine decision, documented in ``fedlib/train/__init__.py``): ``torch.func.vmap`` cannot
draw per-client random numbers from per-client generators, so the engine trains a private copy of
the model in which every ``nn.Dropout`` is replaced by :class:`MaskDropout`. Its masks are drawn
here, from the client's generator, and handed to the forward pass through :func:`use_masks` (in
the stacked backend as one more vmapped input). Inverted dropout as ``nn.Dropout``: kept units
are scaled by 1/(1 − p). Outside the engine (``eval()`` or no masks supplied) it is the identity
in eval mode and raises in train mode rather than silently using the global RNG.
"""

from __future__ import annotations

import copy
import math
import threading
import weakref
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from fedlib.core.errors import FedlibError
from fedlib.train.config import ClientTask, batches_per_epoch
from fedlib.core.utils import generator

__all__ = ["ClientStream", "MaskDropout", "prepare_template", "dropout_specs", "use_masks"]


# ----------------------------------------------------------------------------------- dropout
class _MaskContext(threading.local):
    def __init__(self):
        self.masks = None  # list of tensors, consumed in call order
        self.pos = 0
        self.specs = None  # list of (p, shape, dtype) when probing


_CTX = _MaskContext()


class MaskDropout(nn.Module):
    """``nn.Dropout`` whose masks come from the engine (see the module docstring)."""

    def __init__(self, p: float):
        super().__init__()
        self.p = float(p)

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        if _CTX.specs is not None:  # probing shapes
            _CTX.specs.append((self.p, tuple(x.shape), x.dtype))
            return x
        if _CTX.masks is None:
            raise RuntimeError("MaskDropout in train mode needs masks from the training engine")
        m = _CTX.masks[_CTX.pos]
        _CTX.pos += 1
        return x * m

    def extra_repr(self) -> str:
        return f"p={self.p}"


@contextmanager
def use_masks(masks):
    """Let the :class:`MaskDropout` modules of one forward pass consume ``masks`` in call order."""
    old = (_CTX.masks, _CTX.pos)
    _CTX.masks, _CTX.pos = list(masks), 0
    try:
        yield
    finally:
        _CTX.masks, _CTX.pos = old


_UNSUPPORTED_DROPOUT = (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
_TEMPLATES: "weakref.WeakKeyDictionary[nn.Module, dict]" = weakref.WeakKeyDictionary()


def prepare_template(model: nn.Module, device: torch.device) -> nn.Module:
    """A private copy of ``model`` on ``device`` with ``nn.Dropout`` → :class:`MaskDropout` (cached)."""
    per_model = _TEMPLATES.setdefault(model, {})
    # the cache is keyed by what the copy depends on, so a model changed in place is re-copied
    key = (str(device),
           tuple((n, p.requires_grad, tuple(p.shape), p.dtype) for n, p in model.named_parameters()),
           tuple((n, type(m).__name__, getattr(m, "p", None)) for n, m in model.named_modules()))
    if key in per_model:
        return per_model[key]
    per_model.clear()
    for name, mod in model.named_modules():
        if isinstance(mod, _UNSUPPORTED_DROPOUT) and mod.p > 0:
            raise FedlibError(f"module {name!r} is a {type(mod).__name__}, which the engine cannot seed per client",
                              "use nn.Dropout (elementwise), or p=0")
        if isinstance(mod, (nn.RNNBase,)) and getattr(mod, "dropout", 0) > 0:
            raise FedlibError(f"module {name!r} ({type(mod).__name__}) has internal dropout the engine cannot seed",
                              "use dropout=0 or fedlib's matmul LSTM")
    tmpl = copy.deepcopy(model).to(device)
    _replace_dropout(tmpl)
    per_model[key] = tmpl
    return tmpl


def _replace_dropout(module: nn.Module) -> None:
    for name, child in module.named_children():
        if type(child) is nn.Dropout:
            setattr(module, name, MaskDropout(child.p))
        else:
            _replace_dropout(child)


def has_dropout(template: nn.Module) -> bool:
    return any(isinstance(m, MaskDropout) and m.p > 0 for m in template.modules())


@torch.no_grad()
def dropout_specs(template: nn.Module, x: Tensor, cache: dict) -> list[tuple]:
    """``(p, shape, dtype)`` of every dropout call in one forward pass of ``x`` (one client's batch).

    Found by a forward pass with everything in eval mode except the dropout modules (so BN running
    statistics are untouched); cached per input shape/dtype in ``cache``.
    """
    key = (tuple(x.shape), x.dtype)
    if key in cache:
        return cache[key]
    was_training = template.training
    template.eval()
    drops = [m for m in template.modules() if isinstance(m, MaskDropout)]
    for m in drops:
        m.train()
    _CTX.specs = []
    try:
        template(x)
        specs = _CTX.specs
    finally:
        _CTX.specs = None
        template.train(was_training)
    cache[key] = specs
    return specs


def mask_word_count(shape) -> int:
    """How many 64-bit random words a dropout mask of ``shape`` takes (four decisions per word)."""
    return -(-math.prod(shape) // 4)


def fill_mask_words(out: Tensor, gen: torch.Generator) -> Tensor:
    """Fill the int64 tensor ``out`` with uniformly random 64-bit words from ``gen``."""
    return out.random_(-2 ** 63, None, generator=gen)


def mask_words(shape, gen: torch.Generator, device) -> Tensor:
    """The random 64-bit words one dropout mask of ``shape`` is made from (see :func:`words_to_mask`)."""
    return fill_mask_words(torch.empty(mask_word_count(shape), dtype=torch.int64, device=device), gen)


def words_to_mask(words: Tensor, shape, p: float, dtype: torch.dtype) -> Tensor:
    """Dropout multipliers (0 or 1/(1 − p)) of ``shape`` from ``words`` ``[..., w]`` → ``[..., *shape]``.

    Four Bernoulli(1 − p) keep decisions per uniformly random 64-bit word (one per 16-bit
    part): ~3x cheaper on CPU than ``bernoulli_``/``rand``, which call the Mersenne Twister once
    per element — mask generation is a large part of an FCN step. ``p`` is resolved to 1/65536
    (p = 0.3 drops with probability 0.300003). Elementwise, so converting a client-stacked
    ``[C, w]`` at once equals converting each client's row.
    """
    lead = words.shape[:-1]
    n = math.prod(shape)
    if p >= 1.0:  # nn.Dropout(p=1) drops everything
        return torch.zeros(*lead, *shape, dtype=dtype, device=words.device)
    keep = words.contiguous().view(torch.int16) >= (-32768 + round(p * 65536))  # [..., 4w]
    return keep[..., :n].to(dtype).mul_(1.0 / (1.0 - p)).view(*lead, *shape)


# ----------------------------------------------------------------------------------- stream
class ClientStream:
    """Step schedule and random draws of one client's local run (shared by every backend)."""

    def __init__(self, task: ClientTask, seed: int, round: int, data_device: torch.device,
                 float_dtype: torch.dtype | None = None):
        cfg = task.config
        self.float_dtype = float_dtype
        self.task = task
        self.config = cfg
        self.data_device = data_device
        self.indices = task.indices.to(device=data_device, dtype=torch.long)
        self.n = int(self.indices.numel())
        self.per_epoch = batches_per_epoch(self.n, cfg.batch_size, cfg.drop_last)
        self.steps = cfg.num_steps(self.n)
        self.gen = generator(int(seed), "local-train", int(task.client_id), int(round), device=data_device)
        self.taken = 0
        self._perm: Tensor | None = None

    @property
    def active(self) -> bool:
        return self.taken < self.steps

    def next_indices(self) -> Tensor:
        b = self.taken % self.per_epoch
        if b == 0:
            order = torch.randperm(self.n, generator=self.gen, device=self.data_device)
            self._perm = self.indices[order]
        bs = self.config.batch_size
        self.taken += 1
        return self._perm[b * bs:(b + 1) * bs]

    def next_batch(self, dataset, device: torch.device) -> tuple[Tensor, Tensor]:
        """The next training batch ``(x, y)`` on ``device`` (advances the step counter); floating
        inputs are cast to the model's floating dtype."""
        idx = self.next_indices()
        x, y = dataset.batch(idx, train=True, generator=self.gen, augment=self.config.augment)
        dt = self.float_dtype if (self.float_dtype is not None and x.is_floating_point()) else None
        return x.to(device, dtype=dt, non_blocking=True), y.to(device, non_blocking=True)

    def mask_words(self, specs) -> list[Tensor]:
        """The random words of one forward pass's dropout masks, drawn from this client's stream."""
        return [mask_words(shape, self.gen, self.data_device) for _, shape, _ in specs]

    def masks(self, specs, device: torch.device) -> list[Tensor]:
        """Dropout multipliers (0 or 1/(1 − p)) for one forward pass, drawn from this client's stream."""
        words = self.mask_words(specs)
        return [words_to_mask(w.to(device), shape, p, dtype) for w, (p, shape, dtype) in zip(words, specs)]
