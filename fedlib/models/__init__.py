"""The model zoo. Models know nothing of federated learning.

Every model is a :class:`~fedlib.models.staged.StagedModel`: an ``nn.Sequential`` of named
top-level stages, so split learning (SMoFi §1) can cut it after any stage but the last.

==============  =====================================================  ==============  ===========
name            architecture                                           params (10 cl)  default cut
==============  =====================================================  ==============  ===========
``resnet18``    CIFAR ResNet-18 (FedQS §7 CV, SMoFi §4 default)        11,173,962      ``layer1``
``vgg16``       CIFAR VGG-16-BN (SMoFi §4)                             14,728,266      ``block1``
``mobilenetv2`` CIFAR MobileNetV2 (SMoFi §4)                           2,236,682       ``stage2``
``densenet121`` CIFAR DenseNet-121, growth 32 (SMoFi §4)               6,956,298       ``dense1``
``cnn``         small CPU-scale CNN, no normalisation (fedlib)         545,098         ``conv1``
``cnn3``        FedQS SAFL-gap study CNN [C], dropout 0.3; cpu profile  541,094         ``conv1``
``lstm``        Shakespeare char LSTM (FedQS §7 NLP), 80 classes       213,712         ``embed``
``fcn``         UCI Adult FCN (FedQS §7 RWD), 2 classes                7,002           ``fc1``
==============  =====================================================  ==============  ===========

The image models take ``in_channels`` (default 3) and 32×32 or 64×64 inputs (adaptive pooling).
All use only out-of-place operations and keep no Python-side state, so they work under
``torch.func.functional_call`` (BatchNorm running statistics are ordinary buffers).
"""

from __future__ import annotations

import functools
import inspect

import torch
from torch import nn

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.models.densenet import densenet121
from fedlib.models.lstm import LSTM, lstm
from fedlib.models.mobilenet import mobilenetv2
from fedlib.models.resnet import resnet18
from fedlib.models.small import cnn, cnn3, fcn
from fedlib.models.staged import StagedModel, cut_points as _cut_points, split_model
from fedlib.models.vgg import vgg16

_FACTORIES = {
    "resnet18": resnet18,
    "vgg16": vgg16,
    "mobilenetv2": mobilenetv2,
    "densenet121": densenet121,
    "cnn": cnn,
    "cnn3": cnn3,
    "lstm": lstm,
    "fcn": fcn,
}

MODELS: tuple[str, ...] = tuple(_FACTORIES)

__all__ = ["MODELS", "LSTM", "StagedModel", "build_model", "count_parameters", "cut_points",
           "default_cut", "dropout_layers", "dropouts", "model_kwargs", "split_model"]


def model_kwargs(name: str) -> dict:
    """The extra keyword arguments model ``name`` accepts, with their defaults."""
    check_choice("model", name, MODELS)
    sig = inspect.signature(_FACTORIES[name])
    return {k: p.default for k, p in sig.parameters.items() if k != "num_classes"}


def dropouts(module: nn.Module) -> tuple[str, ...]:
    """The active dropout layers of ``module`` as ``"fc1.2 (p=0.3)"``; () if none."""
    return tuple(f"{n} (p={m.p})" for n, m in module.named_modules()
                 if isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0)


@functools.lru_cache(maxsize=None)
def dropout_layers(name: str) -> tuple[str, ...]:
    """:func:`dropouts` of model ``name`` with its default options (built once per name). SFLV2's
    explicit split path draws no dropout masks, so its config check refuses such a model."""
    return dropouts(build_model(name, 10, seed=0))


def build_model(name: str, num_classes: int, *, seed: int | None = None, **kw) -> StagedModel:
    """Build model ``name`` with ``num_classes`` outputs.

    ``kw`` are the model's own options (see :func:`model_kwargs`; e.g. ``in_channels`` for the
    image models, ``in_features`` for ``fcn``). The initial weights come from the global torch
    RNG (deterministic after ``torch.manual_seed``), or, with ``seed=``, from that seed alone,
    leaving the global RNG state untouched.

    Raises :class:`FedlibError` for an unknown name (listing the valid ones), an unknown option
    (listing the accepted ones) or a non-positive ``num_classes``, before building anything.
    """
    check_choice("model", name, MODELS)
    accepted = model_kwargs(name)
    unknown = sorted(set(kw) - set(accepted))
    if unknown:
        raise FedlibError(f"model {name!r} has no option(s) {', '.join(unknown)}",
                          f"accepted options: {', '.join(accepted) or '(none)'}")
    check(isinstance(num_classes, int) and not isinstance(num_classes, bool) and num_classes >= 1,
          f"num_classes must be a positive integer, got {num_classes!r}")
    for key in ("in_channels", "in_features", "vocab_size", "embed_dim", "hidden", "num_layers",
                "width", "growth"):
        if key in kw:
            v = kw[key]
            check(isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                  f"model option {key} must be a positive integer, got {v!r}")
    if "dropout" in kw:
        check(isinstance(kw["dropout"], (int, float)) and 0.0 <= kw["dropout"] < 1.0,
              f"model option dropout must be in [0, 1), got {kw['dropout']!r}")
    if seed is None:
        return _FACTORIES[name](num_classes, **kw)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return _FACTORIES[name](num_classes, **kw)


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameter elements (each shared ``Parameter`` once; buffers not counted)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


@functools.lru_cache(maxsize=None)
def _cuts_of_name(name: str) -> tuple[tuple[str, ...], str]:
    # Stage names do not depend on the options; build once (seeded: the global RNG is untouched).
    m = build_model(name, 80 if name == "lstm" else 10, seed=0)
    return tuple(_cut_points(m)), m.default_cut


def cut_points(model) -> list[str]:
    """Valid cut names of a model (or of a model name): the cut is *after* that stage."""
    if isinstance(model, str):
        check_choice("model", model, MODELS)
        return list(_cuts_of_name(model)[0])
    return _cut_points(model)


def default_cut(model) -> str:
    """The default cut point of a model (or model name); SMoFi §4 [D] for ``resnet18``: ``layer1``."""
    if isinstance(model, str):
        check_choice("model", model, MODELS)
        return _cuts_of_name(model)[1]
    check(isinstance(model, StagedModel) and model.default_cut is not None,
          f"{getattr(model, 'arch', type(model).__name__)} has no default cut point",
          "pass an explicit cut")
    return model.default_cut
