"""Models as an ordered sequence of named stages, so that split learning can cut them.

SMoFi §1 (SFLV1): the model ``W = [W_c, W_s]`` is cut at a layer; the client keeps the first
layers ``W_c`` and the server the rest ``W_s`` (classifier included). Every fedlib model is a
:class:`StagedModel` — an ``nn.Sequential`` of named top-level stages — and a cut point is the
name of the stage *after which* the model is cut.

Parameter names survive a split: the client part of ``resnet18`` cut after ``layer1`` holds
``stem.*`` and ``layer1.*``, exactly the keys these tensors have in the whole model, so
``{**client.state_dict(), **server.state_dict()} == model.state_dict()`` (same keys and values).
"""

from __future__ import annotations

import copy as _copy
from collections import OrderedDict

from torch import nn

from fedlib.core.errors import FedlibError


class StagedModel(nn.Sequential):
    """An ``nn.Sequential`` of named stages with an architecture name and a default cut.

    Attributes
    ----------
    arch:
        The architecture name (``"resnet18"``, ...; a split part gets ``"resnet18[:layer1]"`` or
        ``"resnet18[layer1:]"``). Shown by ``repr``.
    default_cut:
        The model's default split-learning cut point (``None`` for a split part).
    """

    def __init__(self, stages: "OrderedDict[str, nn.Module]", arch: str = "staged",
                 default_cut: str | None = None):
        super().__init__(stages)
        self.arch = arch
        self.default_cut = default_cut

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The stage names, in forward order."""
        return tuple(self._modules.keys())

    @property
    def stages(self) -> "OrderedDict[str, nn.Module]":
        """The stages as an ordered ``name -> module`` mapping (the modules themselves, not copies)."""
        return OrderedDict(self._modules.items())

    def __getitem__(self, idx):
        # nn.Sequential builds slices with type(self)(OrderedDict); keep our metadata instead.
        if isinstance(idx, slice):
            items = list(self._modules.items())[idx]
            return StagedModel(OrderedDict(items), arch=self.arch, default_cut=None)
        return super().__getitem__(idx)

    def _get_name(self) -> str:  # used by nn.Module.__repr__
        return f"StagedModel[{self.arch}]"


def _require_staged(model) -> StagedModel:
    if not isinstance(model, StagedModel):
        raise FedlibError(
            f"cannot cut a {type(model).__name__}: only fedlib staged models can be split",
            "build the model with fedlib.models.build_model(name, num_classes)",
        )
    return model


def cut_points(model: StagedModel) -> list[str]:
    """The valid cut names of ``model``: every stage but the last (the cut is *after* the stage)."""
    return list(_require_staged(model).stage_names[:-1])


def split_model(model: StagedModel, cut: str | None = None, *, copy: bool = False
                ) -> tuple[StagedModel, StagedModel]:
    """Cut ``model`` after stage ``cut`` into ``(client_part, server_part)``.

    ``cut=None`` uses ``model.default_cut``. With ``copy=False`` (default) both parts hold the
    *same* module and ``Parameter`` objects as ``model`` (training a part trains the model); with
    ``copy=True`` they are deep copies sharing no tensor with ``model`` or with each other.
    ``nn.Sequential(client, server)(x)`` computes exactly ``model(x)``.

    Raises :class:`FedlibError` for an unknown cut, listing the valid cut points.
    """
    model = _require_staged(model)
    if cut is None:
        cut = model.default_cut
        if cut is None:
            raise FedlibError(f"{model.arch} has no default cut point",
                              f"pass cut= one of: {', '.join(cut_points(model))}")
    valid = cut_points(model)
    if cut not in valid:
        raise FedlibError(f"unknown cut point {cut!r} for model {model.arch}",
                          f"use one of: {', '.join(valid) or '(none: the model has one stage)'}")
    if copy:
        model = _copy.deepcopy(model)
    items = list(model._modules.items())
    k = [name for name, _ in items].index(cut) + 1
    client = StagedModel(OrderedDict(items[:k]), arch=f"{model.arch}[:{cut}]")
    server = StagedModel(OrderedDict(items[k:]), arch=f"{model.arch}[{cut}:]")
    # The containers take the model's mode flag; the stages keep their own (not re-set recursively).
    client.training = server.training = model.training
    return client, server
