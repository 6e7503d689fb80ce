"""Algorithm registry: (paradigm, name) -> trainer factory + options dataclass.

The paradigm packages list their algorithms as :class:`~fedlib.core.protocols.AlgorithmSpec`s in a
``CATALOG`` (``fedlib.safl.algorithms``, ``fedlib.split.algorithms``, ``fedlib.experiments.running.toy``);
the first time a paradigm is asked for, this module imports its catalog and registers every entry,
so the algorithms never import the experiment layer. An import error there is a real error and
propagates. A ``Strategy`` or ``ServerAddon`` class is registered with ``fedlib.plugins.register(cls)``
(issue 61); any other trainer is one call (e.g. in a notebook)::

    @dataclass
    class MyOptions:
        beta: float = 0.9
        def __post_init__(self):           # optional: range checks, FedlibError
            check(0 <= self.beta < 1, f"options.beta must be in [0, 1), got {self.beta}")

    register_algorithm("safl", "my-algo", MyTrainer, options=MyOptions,
                       description="one line for `fedlib presets` / docs")

``MyTrainer(cfg, options)`` receives the validated :class:`~fedlib.experiments.config.RunConfig` and
the ``MyOptions`` instance its one resolution built (:meth:`RunConfig.resolve`; None for an algorithm
without options; ``cfg.options`` holds the same as a plain dict) and returns a
:class:`~fedlib.core.protocols.Trainer`.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from dataclasses import dataclass, field
from typing import Callable

from fedlib.core.dataclass_io import build_options
from fedlib.core.errors import FedlibError

__all__ = ["AlgorithmEntry", "register_algorithm", "get_algorithm", "algorithms", "paradigms", "user_entry",
           "code_record"]

# paradigm -> module whose CATALOG lists that paradigm's algorithms
_CATALOGS = {
    "safl": "fedlib.safl.algorithms",
    "split": "fedlib.split.algorithms",
    "toy": "fedlib.experiments.running.toy",
}

_REGISTRY: dict[tuple[str, str], "AlgorithmEntry"] = {}
_LOADED: set[str] = set()  # paradigms whose catalog is registered


@dataclass(frozen=True)
class AlgorithmEntry:
    paradigm: str
    name: str
    trainer: Callable
    options: type | None = None
    description: str = ""
    # issue 61: the fingerprint of a user registration's code (joins the run's hash; None for the
    # built-in algorithms, whose hashes stay as they were) and what rebuilds it in a worker process
    code: str | None = None
    origin: tuple | None = field(default=None, compare=False, repr=False)

    def code_record(self) -> dict | None:
        """What a stored run records of the code that made it (None for a built-in algorithm)."""
        if self.code is None:
            return None
        obj = self.origin[1] if self.origin else self.trainer
        obj = getattr(obj, "__fedlib_class__", obj)
        return {"fingerprint": self.code,
                "made_by": f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"}

    def option_defaults(self) -> dict:
        """The options dataclass' defaults as a dict ({} when the algorithm has no options)."""
        return self.validate_options({})

    def validate_options(self, options: dict | None) -> dict:
        """Check ``options`` against the options dataclass; return them completed with defaults."""
        from fedlib.core.dataclass_io import plain

        inst = self.build_options(options)
        return {} if inst is None else plain(inst)

    def build_options(self, options: dict | None):
        """The options dataclass instance of ``options`` (None for an algorithm without options):
        the one validation path — unknown names (with the closest valid one), types, the class's
        own ``validate()``/``__post_init__`` checks (:func:`fedlib.core.dataclass_io.build_options`)."""
        options = dict(options or {})
        if self.options is None:
            if options:
                raise FedlibError(
                    f"algorithm {self.paradigm}/{self.name} takes no options, "
                    f"got {', '.join(sorted(map(str, options)))}",
                    "remove the options section")
            return None
        return build_options(self.options, options, f"{self.paradigm}/{self.name}")


def register_algorithm(paradigm: str, name: str, trainer: Callable, options: type | None = None,
                       description: str = "", *, code: str | None = "auto",
                       origin: tuple | None = None) -> AlgorithmEntry:
    """Register ``trainer`` (``trainer(cfg, options) -> Trainer``) as ``paradigm/name``.

    ``options`` is a dataclass whose fields are the algorithm's options (``cfg.options``).
    Re-registering the same name replaces the entry (handy in notebooks). ``code``: the fingerprint
    of the registration's code, which joins its runs' hashes (default: computed from ``trainer``, the
    strategy or add-on class a factory wraps, and ``options``; the built-in catalogs pass None).
    ``origin``: what rebuilds the registration in a worker process (default: these arguments).
    Prefer :func:`fedlib.plugins.register` for a Strategy or ServerAddon class.
    """
    from fedlib.experiments.config.plugin_code import fingerprint, user_code

    if options is not None and not (isinstance(options, type) and dataclasses.is_dataclass(options)):
        raise TypeError(f"options for {paradigm}/{name} must be a dataclass type, got {options!r}")
    if not callable(trainer):
        raise TypeError(f"trainer for {paradigm}/{name} must be callable, got {trainer!r}")
    if code == "auto":
        code = fingerprint(getattr(trainer, "__fedlib_class__", trainer),
                           options if options is not None and user_code(options) else None)
    entry = AlgorithmEntry(paradigm, name, trainer, options, description, code,
                           origin or ("trainer", trainer, options, description))
    _REGISTRY[(paradigm, name)] = entry
    return entry


def _load(paradigm: str) -> None:
    """Register the paradigm's catalog once (a paradigm without one is only what was registered)."""
    if paradigm in _LOADED or paradigm not in _CATALOGS:
        return
    for spec in importlib.import_module(_CATALOGS[paradigm]).CATALOG:
        register_algorithm(paradigm, spec.name, spec.trainer, spec.options, spec.description, code=None)
    _LOADED.add(paradigm)


def paradigms() -> list[str]:
    """Known paradigms: the built-in ones plus any with a registered algorithm."""
    return sorted(set(_CATALOGS) | {p for p, _ in _REGISTRY})


def algorithms(paradigm: str | None = None) -> list[AlgorithmEntry]:
    """Registered algorithms (of one paradigm, or all), sorted by (paradigm, name)."""
    for p in ([paradigm] if paradigm else list(_CATALOGS)):
        _load(p)
    return sorted((e for e in _REGISTRY.values() if paradigm in (None, e.paradigm)),
                  key=lambda e: (e.paradigm, e.name))


def get_algorithm(paradigm: str, name: str) -> AlgorithmEntry:
    """The entry for ``paradigm/name``; FedlibError listing the valid names otherwise."""
    _load(paradigm)
    entry = _REGISTRY.get((paradigm, name))
    if entry is not None:
        return entry
    names = sorted(n for p, n in _REGISTRY if p == paradigm)
    # the name may belong to another paradigm: say so
    for other in _CATALOGS:
        _load(other)
    owners = sorted(p for p, n in _REGISTRY if n == name and p != paradigm)
    if owners:
        raise FedlibError(f"algorithm {name!r} belongs to paradigm {owners[0]!r}, not {paradigm!r}",
                          f"set paradigm={owners[0]} (or pick a {paradigm} algorithm: "
                          f"{', '.join(names) or 'none registered'})")
    if not names:
        raise FedlibError(f"no algorithms are registered for paradigm {paradigm!r}",
                          "check the fedlib installation, or register_algorithm() your own")
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    raise FedlibError(f"unknown {paradigm} algorithm {name!r}",
                      (f"did you mean {close[0]}? " if close else "")
                      + f"use one of: {', '.join(names)}")



def user_entry(paradigm: str, name: str) -> AlgorithmEntry | None:
    """The entry of ``paradigm/name`` if a user registered it (it carries a code fingerprint), else None."""
    entry = _REGISTRY.get((paradigm, name))
    return entry if entry is not None and entry.code is not None else None


def code_record(cfg) -> dict | None:
    """The fingerprint and class of the code config ``cfg``'s algorithm runs when a user registered
    it (:mod:`fedlib.experiments.config.plugin_code`); None for a built-in or unknown algorithm."""
    entry = user_entry(cfg.paradigm, cfg.algorithm)
    return None if entry is None else entry.code_record()
