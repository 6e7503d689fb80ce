"""One way to plug in your own algorithm (issue 61): a class, one call (public as :mod:`fedlib.plugins`).

The example is :mod:`fedlib.plugins`' docstring.

A class declares ``name``, an ``Options`` dataclass (optional) and a ``description`` (optional:
its docstring's first paragraph); both kinds take their options instance as ``cls(options)``.

* a :class:`Strategy` subclass registers as SAFL algorithm ``name``;
* a :class:`ServerAddon` subclass registers as split algorithm ``<base>+<name>`` for each base
  method in ``base`` (default ``"fedavg"``; ``base=("fedavg", "fedprox")`` registers both), its
  options the base's and the add-on's fields together.

Runs of a registered class are keyed by its code as well as its config: editing a method and
re-running recomputes (:mod:`fedlib.experiments.config.plugin_code`). Sweeps with several workers
rebuild the registration in each worker. :mod:`fedlib.testing` checks a class before you trust it.
"""

from __future__ import annotations

import dataclasses

from fedlib.core.errors import FedlibError, check
from fedlib.experiments.config.registry import user_entry
from fedlib.safl.strategy import Strategy
from fedlib.split.addons import ServerAddon

__all__ = ["register", "plugin", "worker_payload", "restore"]


def _description(cls) -> str:
    doc = getattr(cls, "description", "") or (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())[:160]


def _own_options(cls) -> type | None:
    opts = getattr(cls, "Options", None)
    if opts is None:
        return None
    check(isinstance(opts, type) and dataclasses.is_dataclass(opts),
          f"{cls.__name__}.Options must be a dataclass, got {opts!r}", "decorate it with @dataclass")
    return opts if dataclasses.fields(opts) else None


def register(cls, *, base="fedavg", code: str | None = "auto"):
    """Register plug-in class ``cls`` (see the module docstring); returns the registry entries.
    ``base``: the split base method(s) an add-on is registered on (ignored for a Strategy); ``code``:
    the code fingerprint (default: computed; a worker process receives its driver's)."""
    from fedlib.experiments.config.plugin_code import fingerprint
    from fedlib.experiments.config.registry import register_algorithm

    check(isinstance(cls, type), f"register() needs a class, got {cls!r}",
          "pass a Strategy or ServerAddon subclass")
    name = getattr(cls, "name", None)
    code = fingerprint(cls) if code == "auto" else code
    if issubclass(cls, Strategy):
        from fedlib.safl.algorithms import strategy_factory

        check(isinstance(name, str) and name not in ("", Strategy.name),
              f"{cls.__name__} has no name of its own", 'set a class attribute, e.g. name = "my-rule"')
        entry = register_algorithm("safl", name, strategy_factory(cls), _own_options(cls), _description(cls),
                                   code=code, origin=("plugin", cls, base))
        return [entry]
    if issubclass(cls, ServerAddon):
        from fedlib.split.algorithms import addon_factory, addon_options

        check(isinstance(name, str) and name not in ("", ServerAddon.name),
              f"{cls.__name__} has no name of its own", 'set a class attribute, e.g. name = "mix"')
        check("+" not in name, f"add-on name {name!r} contains '+'", "name the add-on alone, e.g. 'mix'")
        _own_options(cls)
        bases = (base,) if isinstance(base, str) else tuple(base)
        return [register_algorithm("split", f"{b}+{name}", addon_factory(cls, base=b), addon_options(cls, b),
                                   _description(cls), code=code, origin=("plugin", cls, b))
                for b in bases]
    raise FedlibError(f"{cls.__name__} is neither a Strategy nor a ServerAddon",
                      "subclass fedlib.plugins.Strategy (SAFL) or fedlib.plugins.ServerAddon (split FL)")


def plugin(cls=None, *, base="fedavg"):
    """Decorator form of :func:`register`: ``@plugin`` or ``@plugin(base=("fedavg", "fedprox"))``;
    returns the class unchanged."""
    def wrap(c):
        register(c, base=base)
        return c

    return wrap if cls is None else wrap(cls)


# ------------------------------------------------------------------ registrations in worker processes
def worker_payload(keys) -> list:
    """The user registrations among ``keys`` ((paradigm, name) pairs) as picklable recipes a fresh
    process rebuilds with :func:`restore` (a sweep's pool initializer); built-in names need none.
    One FedlibError naming the algorithm when one cannot travel."""
    from fedlib.experiments.config.plugin_code import importable, recipe

    out = []
    for paradigm, name in sorted(set(keys)):
        entry = user_entry(paradigm, name)
        if entry is None:
            continue
        try:
            if entry.origin[0] == "plugin":
                _, cls, base = entry.origin
                item = ("plugin", recipe(cls), base)
            else:
                _, trainer, options, description = entry.origin
                made = getattr(trainer, "__fedlib_factory__", None)
                if made is not None:
                    factory, cls, kwargs = made
                    trainer_rec = ("factory", recipe(factory), recipe(cls), kwargs)
                else:
                    if getattr(trainer, "__closure__", None):
                        if not importable(trainer):
                            raise FedlibError(f"its trainer {trainer.__qualname__} is a closure",
                                              "define it at the top level of a module or cell")
                    trainer_rec = ("plain", recipe(trainer))
                nested = made is not None and options is not None and options is getattr(made[1], "Options", None)
                options_rec = None if options is None else (
                    ("attr", trainer_rec[2], "Options") if nested else recipe(options))
                item = ("trainer", paradigm, name, trainer_rec, options_rec, description)
        except FedlibError as err:
            raise FedlibError(f"algorithm {paradigm}/{name}, registered in this process, cannot be sent to "
                              f"worker processes: {err.problem}",
                              "define it in an importable module (a .py file), or run with workers=1") from None
        out.append((item, entry.code))
    return out


def restore(payload) -> None:
    """Register in this process what :func:`worker_payload` described (with the same code fingerprints)."""
    from fedlib.experiments.config.plugin_code import rebuild
    from fedlib.experiments.config.registry import register_algorithm

    for item, code in payload or ():
        if item[0] == "plugin":
            register(rebuild(item[1]), base=item[2], code=code)
            continue
        _, paradigm, name, trainer_rec, options_rec, description = item
        trainer = rebuild(trainer_rec[1])
        if trainer_rec[0] == "factory":
            trainer = trainer(rebuild(trainer_rec[2]), **trainer_rec[3])
        register_algorithm(paradigm, name, trainer, None if options_rec is None else rebuild(options_rec),
                           description, code=code)
