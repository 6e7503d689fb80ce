"""Split-FL method names and options: a base method times an optional add-on (spec §3).

A split-FL *method* is a base method (how each selected client trains locally:
:mod:`fedlib.split.bases` — fedavg, fedprox, fednar, fednag) times an optional add-on (what the
server does on top: :mod:`fedlib.split.addons` — smofi, fedavgm, slowmo). This module turns a
name such as ``"fedprox+smofi"`` into those two objects: :func:`parse_method` splits the name,
:func:`options_class` gives the name's flat options dataclass (the base's and the add-on's
fields), :func:`make_method` and :func:`make_addon` build the objects from an options instance.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any

from fedlib.core.errors import FedlibError
from fedlib.split.addons import (FedAvgM, FedAvgMOptions, ServerAddon, SlowMo, SlowMoOptions,
                                 SMoFi)
from fedlib.split.bases import (BaseMethod, FedAvg, FedNAG, FedNAGOptions, FedNAR, FedNAROptions,
                                FedProx, FedProxOptions)
from fedlib.split.smofi import SMoFiOptions

__all__ = ["BASES", "ADDONS", "BASE_OPTIONS", "ADDON_OPTIONS", "options_class", "combine_options",
           "parse_method", "option_values", "make_method", "make_addon", "options_part"]

BASES = ("fedavg", "fedprox", "fednar", "fednag")
ADDONS = ("smofi", "fedavgm", "slowmo")

BASE_OPTIONS: dict[str, type | None] = {"fedavg": None, "fedprox": FedProxOptions,
                                        "fednar": FedNAROptions, "fednag": FedNAGOptions}
ADDON_OPTIONS: dict[str, type] = {"smofi": SMoFiOptions, "fedavgm": FedAvgMOptions,
                                  "slowmo": SlowMoOptions}

_COMBINED: dict[tuple[str, str | None], type] = {}


def _part(cls: type, options) -> Any:
    """The ``cls`` options dataclass holding ``options``' values of ``cls``'s fields: the part the
    combined options' validation built (issue 45: built and checked once) while those values are
    unchanged, else a new, checked one."""
    values = {f.name: getattr(options, f.name) for f in dataclasses.fields(cls)}
    built = getattr(options, "__dict__", {}).get("_parts", {}).get(cls)
    if built is not None and all(type(getattr(built, k)) is type(v) and getattr(built, k) == v
                                 for k, v in values.items()):
        return built
    return cls(**values)


def options_class(base: str, addon: str | None) -> type:
    """One flat options dataclass with the fields of the base's and the add-on's options.

    Its ``__post_init__`` runs both parts' validation. Cached, so the same name gives the same
    class (the registry and configs can compare them).
    """
    key = (base, addon)
    if key in _COMBINED:
        return _COMBINED[key]
    parts = [c for c in (BASE_OPTIONS[base], ADDON_OPTIONS.get(addon) if addon else None) if c]
    _COMBINED[key] = combine_options(base, addon, parts)
    return _COMBINED[key]


def combine_options(base: str, addon: str | None, parts: list) -> type:
    """One flat options dataclass with the fields of the option classes ``parts`` (the base's, then
    the add-on's); its ``__post_init__`` runs each part's validation (:func:`options_class`)."""
    names = [f.name for cls in parts for f in dataclasses.fields(cls)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FedlibError(f"split method {base}+{addon}: the base and the add-on both have the option(s) "
                          f"{', '.join(dup)}", "rename the add-on's option(s)")
    fields = []
    for cls in parts:
        for f in dataclasses.fields(cls):
            fields.append((f.name, f.type, field(default=f.default)))

    def __post_init__(self):  # each part validates and normalises its own fields (e.g. SMoFi's alpha)
        built = {}
        for cls in parts:
            part = built[cls] = cls(**{f.name: getattr(self, f.name) for f in dataclasses.fields(cls)})
            for f in dataclasses.fields(cls):
                setattr(self, f.name, getattr(part, f.name))
        self.__dict__["_parts"] = built  # beside the fields: make_method / make_addon reuse them

    name = "".join(p.capitalize() for p in (base, addon) if p) + "Options"
    cls = dataclasses.make_dataclass(name, fields, namespace={"__post_init__": __post_init__,
                                                              "__module__": __name__})
    cls.__doc__ = "Options of " + " + ".join(p for p in (base, addon) if p) + ": " + (
        "; ".join(f"{f[0]}={f[2].default!r}" for f in fields) or "none") + "."
    return cls


def parse_method(name: str) -> tuple[str, str | None]:
    """``"fedprox+smofi"`` -> ``("fedprox", "smofi")``; ``"fedavgm"`` -> ``("fedavg", "fedavgm")``;
    aliases ``sflv1``/``sflv2`` -> FedAvg, ``smofi`` -> FedAvg + SMoFi."""
    key = str(name).lower().strip()
    aliases = {"sflv1": "fedavg", "sflv2": "fedavg", "smofi": "fedavg+smofi",
               "fedavgm": "fedavg+fedavgm", "slowmo": "fedavg+slowmo"}
    key = aliases.get(key, key)
    base, _, addon = key.partition("+")
    if base not in BASES or (addon and addon not in ADDONS) or "+" in addon:
        raise FedlibError(f"unknown split-FL method {name!r}",
                          f"use a base ({', '.join(BASES)}) optionally '+' an add-on "
                          f"({', '.join(ADDONS)}), e.g. fedprox+smofi")
    if base == "fednag" and addon:
        raise FedlibError(f"{name!r}: FedNAG averages its own momentum and takes no add-on",
                          "use fednag alone, or fedavg+" + addon)
    return base, (addon or None)


def option_values(options: Any) -> dict:
    """The options object as a plain dict ({} for None)."""
    if options is None:
        return {}
    if dataclasses.is_dataclass(options):
        return dataclasses.asdict(options)
    return dict(options)


_BASE_CLASSES: dict[str, type[BaseMethod]] = {"fedavg": FedAvg, "fedprox": FedProx,
                                              "fednar": FedNAR, "fednag": FedNAG}
_ADDON_CLASSES: dict[str, type[ServerAddon]] = {"smofi": SMoFi, "fedavgm": FedAvgM, "slowmo": SlowMo}


def make_method(base: str, options) -> BaseMethod:
    """The base-method object of ``base`` (a name of :data:`BASES`) with ``options`` — an
    instance of :func:`options_class` (any add-on's fields in it are ignored)."""
    if base not in _BASE_CLASSES:
        raise FedlibError(f"unknown base method {base!r}", f"use one of: {', '.join(BASES)}")
    opts_cls = BASE_OPTIONS[base]
    return _BASE_CLASSES[base](_part(opts_cls, options)) if opts_cls else _BASE_CLASSES[base]()


def make_addon(addon: str | None, options) -> ServerAddon:
    """The add-on object of ``addon`` (a name of :data:`ADDONS`, or None for no add-on) with
    ``options`` — an instance of :func:`options_class`."""
    if addon is None:
        return ServerAddon()
    if addon not in ADDONS:
        raise FedlibError(f"unknown split-FL add-on {addon!r}", f"use one of: {', '.join(ADDONS)}")
    return _ADDON_CLASSES[addon].from_options(_part(ADDON_OPTIONS[addon], options))


def options_part(cls: type, options):
    """The ``cls`` options dataclass holding ``options``' values of its fields (a combined options instance)."""
    return _part(cls, options)
