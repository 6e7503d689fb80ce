"""Typed run configuration: one :class:`RunConfig` per run (docs/CONTRACTS.md, issue 4).

A preset, a YAML file, a dict or keyword arguments and ``--set section.key=value`` overrides all
build the same nested dataclass::

    cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=30", "local.lr=0.05"])
    cfg = RunConfig.from_yaml("my.yaml")
    cfg = RunConfig.from_dict({"paradigm": "safl", "safl": {"k": 20}, "options": {...}})

Every constructor except the bare dataclass one validates before returning (``run()`` validates
the bare one): unknown keys (with the closest valid key), wrong types, unknown choices (listing the
valid ones), out-of-range values, inconsistent combinations (K > N, a cut point the model lacks,
an algorithm of another paradigm) and the algorithm's options (checked against the options
dataclass the algorithm registered). Each problem raises one :class:`~fedlib.core.errors.FedlibError`.

The ``local`` section is :class:`fedlib.train.LocalConfig` (owned by the training engine); until
that module exists a minimal stand-in with the same role is used.

:meth:`RunConfig.config_hash` is the sha256 of the canonical JSON of every field (algorithm options
completed with their defaults) plus the fedlib version: the key of the result store.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import hashlib
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedlib.core.errors import FedlibError, check, check_choice

__all__ = [
    "DataConfig",
    "ModelConfig",
    "SAFLConfig",
    "SplitConfig",
    "RunConfig",
    "PRESET_DIR",
    "list_presets",
    "load_preset_dict",
    "local_config_class",
    "build_dataclass",
]

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"

PARTITIONS = ("iid", "dirichlet", "shards", "role", "sex", "race")
VALIDATIONS = ("none", "holdout", "per_class")
NORMALIZATIONS = ("half", "dataset")
SAFL_MODES = ("semi-async", "sync")
DELAYS = ("uniform", "official-100")
UPLOADS = ("snapshot", "overwrite")
SCENARIOS = ("none", "speed-change", "random-time", "dropout")
FRAMEWORKS = ("sflv1", "sflv2")
PROFILES = ("smoke", "cpu", "paper", "custom")
# partitions that only make sense for one dataset
_PARTITION_DATASETS = {"sex": ("adult", "adult_onehot"), "race": ("adult", "adult_onehot"),
                       "role": ("shakespeare",)}
# keys a YAML file / preset may carry besides the config itself
_META_KEYS = ("extends", "description")


@dataclass
class DataConfig:
    """Which dataset and how it is split over clients (FedQS §7, SMoFi §4)."""

    dataset: str = "adult"        # fedlib.data.DATASETS
    partition: str = "sex"        # iid | dirichlet | shards | role | sex | race
    alpha: float = 0.5            # Dirichlet concentration
    shards_per_client: int = 2
    roles: int | None = None      # Shakespeare: roles sampled (None = all)
    validation: str = "none"      # none | holdout | per_class   (FedQS default: holdout 8:2)
    val_frac: float = 0.2
    normalize: str = "half"       # half (mean=std=0.5, FedQS) | dataset
    max_train: int | None = None  # optional subsample of the train set (cpu/smoke profiles)
    max_test: int | None = None


@dataclass
class ModelConfig:
    """Which model (fedlib.models.MODELS) and, for split FL, where it is cut."""

    name: str = "fcn"
    cut: str | None = None        # split FL cut point (None = the model's default)


@dataclass
class SAFLConfig:
    """Semi-asynchronous simulator settings (FedQS spec §1)."""

    mode: str = "semi-async"      # semi-async | sync
    clients: int = 100
    k: int = 10
    delays: str = "uniform"       # uniform | official-100
    ratio: int = 50               # uniform integer delays in [1, ratio]
    upload: str = "snapshot"      # snapshot | overwrite
    scenario: str = "none"        # none | speed-change | random-time | dropout


@dataclass
class SplitConfig:
    """Split-FL settings (SMoFi spec)."""

    framework: str = "sflv1"      # sflv1 | sflv2
    clients: int = 20
    per_round: int = 10


@dataclass
class _FallbackLocalConfig:
    """Stand-in for :class:`fedlib.train.LocalConfig` while that module does not exist."""

    lr: float = 0.1
    momentum: float = 0.0
    weight_decay: float = 0.0
    epochs: int = 2
    batch_size: int = 50


def local_config_class() -> type:
    """:class:`fedlib.train.LocalConfig` when importable, else a minimal stand-in."""
    try:
        from fedlib.train import LocalConfig  # noqa: PLC0415  (lazy: train may import us)
    except ImportError:
        return _FallbackLocalConfig
    return LocalConfig


def _default_local():
    return local_config_class()()


@dataclass
class RunConfig:
    """Everything that determines one run; its hash keys the result store."""

    paradigm: str = "safl"        # safl | split (| toy, the example paradigm)
    algorithm: str = "fedqs-avg"  # registered name within the paradigm
    options: dict = field(default_factory=dict)  # validated by the algorithm's options dataclass
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    local: Any = field(default_factory=_default_local)  # fedlib.train.LocalConfig
    safl: SAFLConfig = field(default_factory=SAFLConfig)
    split: SplitConfig = field(default_factory=SplitConfig)
    rounds: int = 400
    eval_every: int = 1
    seed: int = 0
    device: str = "auto"
    backend: str = "auto"         # engine backend
    profile: str = "custom"       # smoke | cpu | paper | custom (a label, printed in reports)
    checkpoint_every: int = 20    # 0 = never checkpoint

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_dict(cls, d: dict | None = None, **kwargs) -> "RunConfig":
        """Build and validate from a nested dict (sections may also be dataclass instances).

        Keyword arguments are merged over ``d`` (section dicts are merged key by key).
        """
        d = _deep_merge(_plain(d or {}), _plain(kwargs))
        check(isinstance(d, dict), f"a run configuration must be a mapping, got {type(d).__name__}")
        cfg = build_dataclass(cls, d, "")
        return cfg.validate()

    @classmethod
    def from_yaml(cls, path: str | Path, overrides=None) -> "RunConfig":
        """Load a YAML file (may ``extends: <preset>``), then apply ``overrides``."""
        d = _load_yaml_file(Path(path), chain=())
        return cls.from_dict(d).with_overrides(overrides) if overrides else cls.from_dict(d)

    @classmethod
    def from_preset(cls, name: str, overrides=None) -> "RunConfig":
        """Load ``fedlib/presets/<name>.yaml`` (may ``extends: other``), then apply ``overrides``."""
        d = load_preset_dict(name)
        return cls.from_dict(d).with_overrides(overrides) if overrides else cls.from_dict(d)

    def with_overrides(self, overrides) -> "RunConfig":
        """A new validated config with ``["section.key=value", ...]`` (or a dict) applied.

        Values are parsed with ``yaml.safe_load`` (``20`` -> int, ``0.05`` -> float, ``null`` ->
        None, ``[1, 2]`` -> list); ``options.NAME=value`` sets an algorithm option.
        """
        d = self.to_dict()
        explicit = set()
        for key, value in _parse_overrides(overrides):
            _set_path(d, key, value)
            if key == "options":
                explicit |= set(value) if isinstance(value, dict) else set()
            elif key.startswith("options."):
                explicit.add(key.split(".", 2)[1])
        return RunConfig.from_dict(self._carry_options(d, explicit))

    def replace(self, **changes) -> "RunConfig":
        """A new validated config with keyword changes merged in (sections as dicts)."""
        changes = _plain(changes)
        d = _deep_merge(self.to_dict(), changes)
        explicit = set(changes.get("options") or {}) if isinstance(changes.get("options"), dict) \
            else set()
        return RunConfig.from_dict(self._carry_options(d, explicit))

    def _carry_options(self, d: dict, explicit: set) -> dict:
        """When an override switches the algorithm, drop the old algorithm's *default* options.

        A validated config holds every option of its algorithm (defaults filled in); switching to
        another algorithm keeps only the options the user changed or set in this override (which
        the new algorithm must then accept), so ``--grid algorithm=fedqs-avg,fedavg`` works.
        """
        if (d.get("paradigm"), d.get("algorithm")) == (self.paradigm, self.algorithm) \
                or not isinstance(d.get("options"), dict):
            return d
        from fedlib.experiments.registry import get_algorithm

        try:
            defaults = get_algorithm(self.paradigm, self.algorithm).option_defaults()
        except FedlibError:
            return d
        d["options"] = {k: v for k, v in d["options"].items()
                        if k in explicit or k not in defaults or defaults[k] != v}
        return d

    # ---------------------------------------------------------------- views
    def to_dict(self) -> dict:
        """A plain nested dict (JSON/YAML-ready); ``from_dict(to_dict())`` round-trips."""
        return _plain(self)

    def canonical_json(self) -> str:
        """The canonical JSON the hash is computed from (options completed with defaults)."""
        from fedlib import __version__

        payload = {"fedlib": __version__, "config": self.validated().to_dict()}
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)

    def config_hash(self) -> str:
        """sha256 (hex) of :meth:`canonical_json`: the same in every process and machine."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.config_hash()[:12]

    # ---------------------------------------------------------------- validation
    def validated(self) -> "RunConfig":
        """A validated, normalised copy (``self`` is left untouched)."""
        return copy.deepcopy(self).validate()

    def validate(self) -> "RunConfig":
        """Check everything (raises one FedlibError per problem found); normalise in place.

        Normalisation: section values are coerced to their declared types (``1`` -> ``1.0`` for a
        float field) and ``options`` is completed with the algorithm's defaults.
        """
        # sections must be the right dataclasses (a bare RunConfig(...) may hold dicts)
        for name, sub in (("data", DataConfig), ("model", ModelConfig), ("safl", SAFLConfig),
                          ("split", SplitConfig), ("local", local_config_class())):
            val = getattr(self, name)
            if isinstance(val, dict):
                setattr(self, name, build_dataclass(sub, val, name + "."))
            elif not dataclasses.is_dataclass(val):
                raise FedlibError(f"section {name!r} must be a mapping, got {type(val).__name__}")
            else:
                setattr(self, name, build_dataclass(sub, _plain(val), name + "."))
        top = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("data", "model", "local", "safl", "split", "options")}
        for k, v in _coerce_fields(RunConfig, top, "").items():
            setattr(self, k, v)
        check(isinstance(self.options, dict),
              f"options must be a mapping of algorithm options, got {type(self.options).__name__}")

        self._validate_top()
        self._validate_data()
        self._validate_model()
        self._validate_local()
        self._validate_safl()
        self._validate_split()
        self._validate_algorithm()
        return self

    def _validate_top(self) -> None:
        from fedlib.experiments.registry import paradigms

        check_choice("paradigm", self.paradigm, paradigms())
        _at_least("rounds", self.rounds, 1)
        _at_least("eval_every", self.eval_every, 1)
        _at_least("checkpoint_every", self.checkpoint_every, 0)
        _at_least("seed", self.seed, 0)
        check_choice("profile", self.profile, PROFILES)
        dev = self.device
        ok = dev in ("auto", "cpu", "cuda", "mps") or (
            dev.startswith("cuda:") and dev[5:].isdigit())
        check(ok, f"unknown device {dev!r}", "use auto, cpu, cuda, cuda:N or mps")
        backends = _optional_attr("fedlib.train", "BACKENDS")
        if backends is not None:
            check_choice("engine backend", self.backend, {"auto", *backends})

    def _validate_data(self) -> None:
        d = self.data
        datasets = _optional_attr("fedlib.data", "DATASETS")
        if datasets is not None:
            check_choice("dataset", d.dataset, datasets)
        check_choice("partition", d.partition, PARTITIONS)
        need = _PARTITION_DATASETS.get(d.partition)
        check(need is None or d.dataset in need,
              f"partition {d.partition!r} only exists for dataset {' / '.join(map(repr, need or ()))}"
              f", not {d.dataset!r}", "use partition=iid, dirichlet or shards for this dataset")
        check(d.alpha > 0 and math.isfinite(d.alpha),
              f"data.alpha (Dirichlet concentration) must be > 0, got {d.alpha}")
        _at_least("data.shards_per_client", d.shards_per_client, 1)
        if d.roles is not None:
            _at_least("data.roles", d.roles, 1)
        check_choice("validation split", d.validation, VALIDATIONS)
        check(0 < d.val_frac < 1, f"data.val_frac must be in (0, 1), got {d.val_frac}")
        check_choice("normalisation", d.normalize, NORMALIZATIONS)
        for key in ("max_train", "max_test"):
            if getattr(d, key) is not None:
                _at_least(f"data.{key}", getattr(d, key), 1)

    def _validate_model(self) -> None:
        models = _optional_attr("fedlib.models", "MODELS")
        if models is not None:
            check_choice("model", self.model.name, models)
        if self.model.cut is not None and self.paradigm == "split":
            valid = _cut_points(self.model.name)
            if valid is not None and self.model.cut not in valid:
                raise FedlibError(
                    f"model {self.model.name!r} has no cut point {self.model.cut!r}",
                    f"use one of: {', '.join(valid)} (or model.cut=null for the default)")

    def _validate_local(self) -> None:
        loc = self.local
        if hasattr(loc, "validate"):  # fedlib.train.LocalConfig validates itself
            try:
                loc.validate()
            except FedlibError as err:
                raise FedlibError(f"local: {err.problem}", err.fix) from None
            return
        for key in ("lr", "weight_decay"):
            v = getattr(loc, key)
            check(v >= 0 and math.isfinite(v), f"local.{key} must be >= 0, got {v}")
        check(0 <= loc.momentum < 1, f"local.momentum must be in [0, 1), got {loc.momentum}")
        _at_least("local.epochs", loc.epochs, 0)
        _at_least("local.batch_size", loc.batch_size, 1)

    def _validate_safl(self) -> None:
        s = self.safl
        check_choice("safl.mode", s.mode, SAFL_MODES)
        _at_least("safl.clients", s.clients, 1)
        _at_least("safl.k", s.k, 1)
        check_choice("safl.delays", s.delays, DELAYS)
        _at_least("safl.ratio", s.ratio, 1)
        check_choice("safl.upload", s.upload, UPLOADS)
        check_choice("safl.scenario", s.scenario, SCENARIOS)
        if self.paradigm == "safl":
            check(s.k <= s.clients,
                  f"safl.k={s.k} updates per aggregation exceeds safl.clients={s.clients}",
                  "lower safl.k or raise safl.clients")
            check(s.delays != "official-100" or s.clients == 100,
                  f"safl.delays=official-100 holds the official code's 100 delays, "
                  f"but safl.clients={s.clients}",
                  "use safl.clients=100 or safl.delays=uniform")

    def _validate_split(self) -> None:
        s = self.split
        check_choice("split.framework", s.framework, FRAMEWORKS)
        _at_least("split.clients", s.clients, 1)
        _at_least("split.per_round", s.per_round, 1)
        if self.paradigm == "split":
            check(s.per_round <= s.clients,
                  f"split.per_round={s.per_round} exceeds split.clients={s.clients}",
                  "lower split.per_round or raise split.clients")

    def _validate_algorithm(self) -> None:
        from fedlib.experiments.registry import get_algorithm

        entry = get_algorithm(self.paradigm, self.algorithm)
        self.options = entry.validate_options(self.options)


# -------------------------------------------------------------------- dataclass building
def _hints(cls) -> dict:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable annotations: accept any value
        return {f.name: Any for f in dataclasses.fields(cls)}


def build_dataclass(cls, data: dict, prefix: str = ""):
    """Instantiate dataclass ``cls`` from ``data``: unknown keys and wrong types raise FedlibError.

    Nested dataclass fields are built recursively; ``prefix`` ("safl.") names the location in
    error messages.
    """
    check(isinstance(data, dict),
          f"{prefix.rstrip('.') or 'config'} must be a mapping, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        raise _unknown_key_error(prefix, unknown[0], names)
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        v = data[f.name]
        sub = _dataclass_of(hints.get(f.name, Any), cls, f.name)
        if sub is not None:
            values[f.name] = build_dataclass(sub, _plain(v), f"{prefix}{f.name}.")
        else:
            values[f.name] = v
    values = _coerce_fields(cls, values, prefix, hints)
    try:
        return cls(**values)
    except FedlibError:
        raise
    except (TypeError, ValueError) as err:
        raise FedlibError(f"invalid {prefix.rstrip('.') or 'config'}: {err}") from None


def _dataclass_of(hint, owner, name):
    if owner is RunConfig and name == "local":
        return local_config_class()
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    return None


def _coerce_fields(cls, values: dict, prefix: str, hints: dict | None = None) -> dict:
    hints = hints if hints is not None else _hints(cls)
    return {k: _coerce(v, hints.get(k, Any), f"{prefix}{k}") for k, v in values.items()}


def _coerce(value, hint, where: str):
    """Check ``value`` against a simple annotation, converting int->float and int->str."""
    if hint is Any or dataclasses.is_dataclass(value):
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a, where)
            except FedlibError as err:
                errors.append(err)
        names = " or ".join(_type_name(a) for a in args)
        raise FedlibError(f"{where} must be {names}, got {value!r}")
    if hint is bool:
        check(isinstance(value, bool), f"{where} must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        check(isinstance(value, int) and not isinstance(value, bool),
              f"{where} must be an integer, got {value!r}")
        return value
    if hint is float:
        check(isinstance(value, (int, float)) and not isinstance(value, bool),
              f"{where} must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        check(isinstance(value, str), f"{where} must be a string, got {value!r}")
        return value
    if hint is dict or origin is dict:
        check(isinstance(value, dict), f"{where} must be a mapping, got {value!r}")
        return value
    if origin in (list, tuple) or hint in (list, tuple):
        check(isinstance(value, (list, tuple)), f"{where} must be a list, got {value!r}")
        return type(value)(value) if origin is None else (list if origin is list else tuple)(value)
    if isinstance(hint, type) and hint.__module__ == "typing":  # exotic typing constructs
        return value
    return value


def _type_name(t) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true/false",
            dict: "a mapping"}.get(t, getattr(t, "__name__", str(t)))


def _unknown_key_error(prefix: str, key: str, valid) -> FedlibError:
    where = prefix.rstrip(".")
    full = f"{prefix}{key}"
    close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.5)
    fix = (f"did you mean {prefix}{close[0]}? " if close else "") + \
        f"valid keys{' in ' + where if where else ''}: {', '.join(valid)}"
    return FedlibError(f"unknown config key {full!r}", fix)


def _at_least(name: str, value, low) -> None:
    check(value >= low, f"{name} must be >= {low}, got {value}")


def _optional_attr(module: str, attr: str):
    """``module.attr`` if that module exists yet (parallel development), else None."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name and (module == err.name or module.startswith(err.name + ".")):
            return None
        raise
    return getattr(mod, attr, None)


_CUT_CACHE: dict[str, list | None] = {}


def _cut_points(model: str):
    if model not in _CUT_CACHE:
        fn = _optional_attr("fedlib.models", "cut_points")
        _CUT_CACHE[model] = list(fn(model)) if fn is not None else None
    return _CUT_CACHE[model]


# -------------------------------------------------------------------- dict helpers
def _plain(obj):
    """Dataclasses -> dicts, tuples -> lists, recursively (a JSON-ready deep copy)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _deep_merge(base, over):
    """``over`` merged into a copy of ``base``; nested dicts merge key by key."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return copy.deepcopy(over)
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) \
            else copy.deepcopy(v)
    return out


def _parse_overrides(overrides) -> list[tuple[str, Any]]:
    import yaml

    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return list(overrides.items())
    if isinstance(overrides, str):
        overrides = [overrides]
    pairs = []
    for item in overrides:
        check(isinstance(item, str) and "=" in item,
              f"override {item!r} is not of the form key=value",
              "write e.g. --set safl.k=20 or --set options.similarity=angle")
        key, raw = item.split("=", 1)
        key = key.strip()
        check(bool(key), f"override {item!r} has an empty key")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as err:
            raise FedlibError(f"cannot parse the value of override {item!r}: {err}") from None
        pairs.append((key, value))
    return pairs


def _set_path(d: dict, key: str, value) -> None:
    parts = key.split(".")
    node = d
    for i, part in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if part not in node:
            raise _unknown_key_error(".".join(parts[:i]) + "." if i else "", part, list(node))
        check(isinstance(node[part], dict),
              f"override {key!r}: {where} is a value, not a section")
        node = node[part]
    node[parts[-1]] = value


# -------------------------------------------------------------------- presets and YAML
def _load_yaml_file(path: Path, chain: tuple) -> dict:
    import yaml

    check(path.is_file(), f"config file {str(path)!r} not found")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise FedlibError(f"cannot parse YAML file {str(path)!r}: {err}") from None
    check(isinstance(raw, dict), f"{str(path)!r} must hold a mapping at the top level")
    raw = dict(raw)
    parent = raw.pop("extends", None)
    raw.pop("description", None)
    if parent is None:
        return raw
    check(isinstance(parent, str), f"extends in {str(path)!r} must be a preset name")
    return _deep_merge(_preset_dict(parent, chain), raw)


def _preset_dict(name: str, chain: tuple) -> dict:
    check(name not in chain, f"presets extend each other in a cycle: {' -> '.join(chain + (name,))}")
    path = PRESET_DIR / f"{name}.yaml"
    if not path.is_file():
        names = list_presets()
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        raise FedlibError(f"unknown preset {name!r}",
                          (f"did you mean {close[0]}? " if close else "")
                          + f"available presets: {', '.join(names) or '(none)'}")
    return _load_yaml_file(path, chain + (name,))


def load_preset_dict(name: str) -> dict:
    """The merged dict of preset ``name`` (its ``extends`` chain resolved), not yet validated."""
    return _preset_dict(name, ())


def list_presets() -> list[str]:
    """Names of the presets shipped in fedlib/presets/."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def preset_description(name: str) -> str:
    """The ``description:`` line of a preset file ("" if none)."""
    import yaml

    try:
        raw = yaml.safe_load((PRESET_DIR / f"{name}.yaml").read_text()) or {}
    except Exception as err:  # a broken preset is still listed
        return f"(unreadable: {err})"
    return str(raw.get("description", "")).strip() if isinstance(raw, dict) else ""
