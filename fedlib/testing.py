"""A conformance kit for your plug-in (issue 61): run it before you trust a new rule.

    from fedlib.testing import Identity, check_strategy
    report = check_strategy(StalenessAvg, identity=Identity("a = 0 is FedAvg", {"a": 0.0}, "fedavg"))
    print(report)        # one line per check; raises AssertionError naming the failed ones

Each check runs the algorithm on a small config (the smoke profile; yours with ``config=``) through
:func:`fedlib.experiments.run` in a temporary store:

* ``determinism`` — the same config and seed twice give the same history, row for row;
* ``options`` — the options survive the round trip config -> options dataclass -> config, and the
  config's hash survives ``RunConfig.from_dict(cfg.to_dict())``;
* ``identity`` — the case you name (e.g. "a = 0 equals FedAvg"): your algorithm with those options
  gives the history of the reference algorithm (exactly, or within ``Identity.tolerance``);
* ``backends`` — the stacked (vmap) client engine gives the loop engine's history within
  ``backend_tolerance`` (float summation order differs between them).
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from dataclasses import dataclass, field

from fedlib.core.errors import FedlibError
from fedlib.experiments import ResultStore, RunConfig, get_algorithm, run

__all__ = ["Identity", "Check", "Conformance", "check_strategy", "check_addon", "check_algorithm",
           "smoke_config"]

# the columns a history's rows are compared on (host time and other bookkeeping left out)
COMPARED = ("accuracy", "loss", "train_loss")


@dataclass
class Identity:
    """A case where your algorithm must equal another: ``options`` of yours vs ``reference``
    (a registered name of the same paradigm) with ``reference_options``."""

    label: str
    options: dict
    reference: str
    reference_options: dict = field(default_factory=dict)
    tolerance: float = 0.0  # 0: bit for bit; else the largest |difference| of accuracy and loss


@dataclass
class Check:
    name: str
    passed: bool
    detail: str


@dataclass
class Conformance:
    """What :func:`check_algorithm` found: one :class:`Check` per property."""

    algorithm: str
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    def __str__(self) -> str:
        lines = [f"conformance of {self.algorithm}: {'ok' if self.ok else 'FAILED'}"]
        lines += [f"  [{'ok' if c.passed else 'FAIL'}] {c.name}: {c.detail}" for c in self.checks]
        return "\n".join(lines)


def smoke_config(paradigm: str, algorithm: str) -> RunConfig:
    """The kit's default config: the smoke task of ``paradigm`` (Adult for SAFL, CIFAR-10 for split)
    cut down to two rounds."""
    if paradigm == "safl":
        base = RunConfig.from_preset("fedavg-adult-gender-smoke")
        return base.replace(algorithm=algorithm, rounds=2, checkpoint_every=0,
                            data={"max_train": 600, "max_test": 300}, safl={"clients": 6, "k": 2})
    if paradigm == "split":
        base = RunConfig.from_preset("sflv1-cifar10-smoke")
        return base.replace(algorithm=algorithm, rounds=1, checkpoint_every=0,
                            data={"max_train": 240, "max_test": 100}, split={"clients": 4, "per_round": 2})
    return RunConfig.from_preset("toy-smoke").replace(algorithm=algorithm, rounds=3, checkpoint_every=0)


def _history(cfg: RunConfig, every_column: bool = False):
    """The run's history: the :data:`COMPARED` columns, or every column but host time."""
    with tempfile.TemporaryDirectory(prefix="fedlib-check-") as tmp:
        res = run(cfg, store=ResultStore(tmp), progress=False, resume=False)
    h = res.history
    cols = [c for c in h if "wall" not in c and "host" not in c] if every_column else \
        ["round", *(c for c in COMPARED if c in h)]
    return h[cols].reset_index(drop=True)


def _gap(a, b) -> float:
    """The largest |difference| between two histories' compared columns (inf if their shapes differ)."""
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return math.inf
    worst = 0.0
    for col in a.columns:
        x, y = a[col].astype(float), b[col].astype(float)
        both_nan = x.isna() & y.isna()
        d = (x - y).abs()[~both_nan]
        if d.isna().any():
            return math.inf
        worst = max(worst, float(d.max()) if len(d) else 0.0)
    return worst


def check_algorithm(paradigm: str, name: str, config: RunConfig | None = None, *,
                    identity: Identity | None = None, backends: bool = True,
                    backend_tolerance: float = 1e-3, raise_on_fail: bool = True) -> Conformance:
    """Run the kit (module docstring) on registered algorithm ``paradigm/name``."""
    entry = get_algorithm(paradigm, name)
    cfg = (config or smoke_config(paradigm, name)).replace(algorithm=name)
    checks = []
    base = cfg.replace(backend="loop") if backends else cfg
    full = _history(base, every_column=True)
    gap = _gap(full, _history(base, every_column=True))
    checks.append(Check("determinism", gap == 0.0, f"seed {cfg.seed} twice: largest difference {gap:g}"))
    first = full[["round", *(c for c in COMPARED if c in full)]]

    built = entry.build_options(cfg.options)
    round_trip = {} if built is None else dataclasses.asdict(built)
    same_hash = RunConfig.from_dict(cfg.to_dict()).config_hash(None) == cfg.config_hash(None)
    checks.append(Check("options", round_trip == dict(cfg.options) and same_hash,
                        f"{len(round_trip)} option(s) round-trip{'' if same_hash else ', but the hash moved'}"))

    if identity is not None:
        ours = _history(base.replace(options=identity.options))
        ref_cfg = RunConfig.from_dict({**base.to_dict(), "algorithm": identity.reference,
                                       "options": dict(identity.reference_options)})
        gap = _gap(ours, _history(ref_cfg))
        checks.append(Check(f"identity ({identity.label})", gap <= identity.tolerance,
                            f"largest difference {gap:g} (allowed {identity.tolerance:g})"))
    if backends:
        gap = _gap(first, _history(base.replace(backend="stacked")))
        checks.append(Check("backends", gap <= backend_tolerance,
                            f"stacked vs loop: largest difference {gap:g} (allowed {backend_tolerance:g})"))
    report = Conformance(f"{paradigm}/{name}", checks)
    if raise_on_fail and not report.ok:
        raise AssertionError(str(report))
    return report


def _registered_name(cls_or_name, paradigm: str, base: str | None = None) -> str:
    if isinstance(cls_or_name, str):
        return cls_or_name
    name = getattr(cls_or_name, "name", None)
    full = name if base is None else f"{base}+{name}"
    entry = get_algorithm(paradigm, full)  # FedlibError listing the names when it is not registered
    if entry.code is not None and getattr(entry.trainer, "__fedlib_class__", None) is not cls_or_name:
        raise FedlibError(f"{paradigm}/{full} is registered for another version of {cls_or_name.__name__}",
                          "register this class first: fedlib.plugins.register(cls)")
    return full


def check_strategy(strategy, config: RunConfig | None = None, **kw) -> Conformance:
    """:func:`check_algorithm` for a registered SAFL strategy (its class or name)."""
    return check_algorithm("safl", _registered_name(strategy, "safl"), config, **kw)


def check_addon(addon, config: RunConfig | None = None, *, base: str = "fedavg", **kw) -> Conformance:
    """:func:`check_algorithm` for a registered split add-on (its class, on ``base``, or its full name)."""
    return check_algorithm("split", _registered_name(addon, "split", base), config, **kw)
