"""Typed run configuration: one :class:`RunConfig` per run (docs/ARCHITECTURE.md, issue 4).

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

The ``local`` section is :class:`fedlib.train.LocalConfig` (owned by the training engine).

:meth:`RunConfig.config_hash` is the sha256 of the canonical JSON of every field (algorithm options
completed with their defaults) except the other paradigm's section (``safl`` / ``split``) and the
labels that change no number (``profile``, ``checkpoint_every``), plus the fedlib version and the
fingerprint of the dataset's files under the data root (:mod:`fedlib.data.fingerprint`): the key of
the result store. A user-registered algorithm adds its code's fingerprint (issue 61), a built-in one nothing. ``fedlib results rehash`` re-keys a store written under an earlier scheme.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from fedlib.core.dataclass_io import (build_dataclass, coerce_fields, deep_merge, parse_overrides, plain,
                                      unknown_key_error)
from fedlib.experiments.config.overrides import leaf_keys, merge_path, refuse_unread
from fedlib.experiments.config.registry import code_record
from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.data import DATASETS, PARTITIONS
from fedlib.data.base import NORMALIZE
from fedlib.data.partition import VALIDATION_MODES
from fedlib.models import MODELS, cut_points
# the preset names and YAML loading live in fedlib.experiments.config.presets; re-exported for their users
from fedlib.experiments.config.presets import (PRESET_DIR, TASKS, list_presets, load_preset_dict,  # noqa: F401
                                       load_yaml_file, overlay_overrides, preset_description, profile_overlay)
from fedlib.safl.delays import PROFILES as DELAYS
from fedlib.safl.schedule import MODES as SAFL_MODES
from fedlib.safl.schedule import SCENARIOS, UPLOADS, check_k
from fedlib.split.sfl import FRAMEWORKS, SFLV2_MOMENTUM
from fedlib.train import BACKENDS
from fedlib.train.config import LocalConfig

__all__ = [
    "DataConfig",
    "ModelConfig",
    "SAFLConfig",
    "SplitConfig",
    "RunConfig",
    "ResolvedRun",
    "PRESET_DIR",
    "TASKS",
    "list_presets",
    "profile_overlay",
    "overlay_overrides",
    "load_preset_dict",
]

# The choices of each field are defined once, by the module whose behaviour they select (issue 21):
# partitions, validation modes and normalisations by fedlib.data, SAFL modes, delay profiles, upload
# semantics and scenarios by fedlib.safl, frameworks by fedlib.split. A config adds only:
VALIDATIONS = ("none", *VALIDATION_MODES)  # "none": no validation split
# "none" stays the tabular datasets' own setting (fedlib.safl.algorithms), not a config choice [D]
NORMALIZATIONS = tuple(n for n in NORMALIZE if n != "none")
PROFILES = ("smoke", "cpu", "paper", "custom")  # labels of a run (fedlib.reporting: the first three)
# paradigm -> the sections it never reads, left out of its hash (a paradigm not listed here, e.g. the
# toy one, which reads safl.clients/k, or one registered by a user, hashes every section)
UNREAD_SECTIONS = {"safl": ("split",), "split": ("safl",)}
# top-level fields that are labels: they change no number of a run, so the hash leaves them out
# [D, issue 19: a smoke-labelled run and the same config labelled custom are one result]
LABEL_FIELDS = ("profile", "checkpoint_every")
# fields added after stored results, which the hash leaves out while they hold the value that
# reproduces the behaviour from before they existed [D, issue 31]: every config written before keeps
# its hash and its stored history; a config that sets another value hashes the field. (Fields added
# earlier — ``rehash.NEUTRAL_FIELDS``' local.precision, options.weighting — are hashed: their
# configs were re-keyed then, and omitting them now would move those results again.)
HASH_OMITTED_AT_DEFAULT: dict[str, object] = {
    "split.sflv2_momentum": "carry",
    "eval_last": 0,  # issue 34: 0 = only eval_every sets the evaluated rounds, as before
}
# paradigms whose runs read ``data.dataset``: their hash covers the dataset's fingerprint. Others
# (the toy paradigm: synthetic data from the seed; a paradigm a user registers) hash no data
# fingerprint [D, issue 19]: add a paradigm's name here when it loads a fedlib dataset.
DATA_PARADIGMS = {"safl", "split"}
# which input each model takes, checked against the dataset's kind at validation (issue 19)
MODEL_INPUTS = {"resnet18": "image", "vgg16": "image", "mobilenetv2": "image",
                "densenet121": "image", "cnn": "image", "cnn3": "image", "lstm": "text",
                "fcn": "tabular"}
# partitions that only make sense for one dataset
_PARTITION_DATASETS = {"sex": ("adult", "adult_onehot"), "race": ("adult", "adult_onehot"),
                       "role": ("shakespeare",)}


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
    # SFLV2's one server optimizer from one client to the next within a round [D, issue 31]:
    # "carry" (momentum carried over, fedlib's behaviour since SFLV2 exists) | "reset" (fresh per client)
    sflv2_momentum: str = "carry"


@dataclass
class RunConfig:
    """Everything that determines one run; its hash keys the result store."""

    paradigm: str = "safl"        # safl | split (| toy, the example paradigm)
    algorithm: str = "fedqs-avg"  # registered name within the paradigm
    options: dict = field(default_factory=dict)  # validated by the algorithm's options dataclass
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    local: LocalConfig = field(default_factory=LocalConfig)
    safl: SAFLConfig = field(default_factory=SAFLConfig)
    split: SplitConfig = field(default_factory=SplitConfig)
    rounds: int = 400
    eval_every: int = 1
    eval_last: int = 0            # also evaluate every round of the last eval_last (issue 34; 0: eval_every alone)
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
        if d is None:
            d = {}
        check(isinstance(d, dict) or dataclasses.is_dataclass(d),
              f"a run configuration must be a mapping, got {type(d).__name__} {d!r:.60}",
              "pass a dict such as {'rounds': 3}, or use RunConfig.from_preset / from_yaml / "
              "with_overrides(['rounds=3'])")
        d = deep_merge(plain(d), plain(kwargs))
        check(isinstance(d, dict), f"a run configuration must be a mapping, got {type(d).__name__}")
        cfg = build_dataclass(cls, d, "")
        return cfg.validate()

    @classmethod
    def from_yaml(cls, path: str | Path, overrides=None) -> "RunConfig":
        """Load a YAML file (may ``extends: <preset>``), then apply ``overrides``."""
        d = load_yaml_file(path)  # checks that ``path`` is a path (one line for from_yaml(None))
        return cls.from_dict(d).with_overrides(overrides) if overrides else cls.from_dict(d)

    @classmethod
    def from_preset(cls, name: str, overrides=None) -> "RunConfig":
        """Load preset ``name`` (a file in fedlib/presets/ or a composed ``<algorithm>-<task>[-<profile>]``,
        fedlib/presets/README.md), then apply ``overrides``."""
        check(isinstance(name, str) and bool(name.strip()),
              f"a preset name must be a non-empty string, got {type(name).__name__} {name!r:.60}",
              "e.g. RunConfig.from_preset('fedavg-adult-gender-smoke'); `fedlib presets` lists them")
        d = load_preset_dict(name)
        return cls.from_dict(d).with_overrides(overrides) if overrides else cls.from_dict(d)

    def with_overrides(self, overrides) -> "RunConfig":
        """A new validated config with ``["section.key=value", ...]`` (or a dict) applied.

        Values are parsed with ``yaml.safe_load`` (``20`` -> int, ``0.05`` -> float, ``null`` ->
        None, ``[1, 2]`` -> list); ``options.NAME=value`` sets an algorithm option. A dict value
        for a section (``{"local": {"lr": 0.05}}``) is merged into that section key by key, as
        :meth:`replace` does (issue 33: it used to reset the section's other fields). A key this
        run does not read (``data.alpha`` without a Dirichlet partition, ``model.cut`` outside split
        FL) is refused when the override changes it: it would only store a duplicate run.
        """
        d = self.to_dict()
        explicit, touched = set(), set()
        for key, value in parse_overrides(overrides):
            check(isinstance(key, str) and bool(key.strip()),
                  f"override key {key!r} must be a dotted name such as 'local.lr'",
                  "write e.g. {'local.lr': 0.05} or ['local.lr=0.05']")
            merge_path(d, key, value)
            touched |= leaf_keys(key, value)
            if key == "options":
                explicit |= set(value) if isinstance(value, dict) else set()
            elif key.startswith("options."):
                explicit.add(key.split(".", 2)[1])
        new = RunConfig.from_dict(self._carry_options(d, explicit))
        refuse_unread(self, new, touched, DATA_PARADIGMS)
        return new

    def replace(self, **changes) -> "RunConfig":
        """A new validated config with keyword changes merged in (sections as dicts)."""
        changes = plain(changes)
        d = deep_merge(self.to_dict(), changes)
        explicit = set(changes.get("options") or {}) if isinstance(changes.get("options"), dict) \
            else set()
        new = RunConfig.from_dict(self._carry_options(d, explicit))
        refuse_unread(self, new, {k for key, v in changes.items() for k in leaf_keys(key, v)}, DATA_PARADIGMS)
        return new

    def _carry_options(self, d: dict, explicit: set) -> dict:
        """When an override switches the algorithm, drop the old algorithm's *default* options.

        A validated config holds every option of its algorithm (defaults filled in); switching to
        another algorithm keeps only the options the user changed or set in this override (which
        the new algorithm must then accept), so ``--grid algorithm=fedqs-avg,fedavg`` works.
        """
        if (d.get("paradigm"), d.get("algorithm")) == (self.paradigm, self.algorithm) \
                or not isinstance(d.get("options"), dict):
            return d
        from fedlib.experiments.config.registry import get_algorithm

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
        return plain(self)

    def hashed_dict(self) -> dict:
        """The validated config without the sections of the *other* paradigms: what the hash covers.

        A SAFL run does not read ``split`` (nor a split run ``safl``), so a default changed there must
        not discard its stored results [D, issue 13; before fedlib 0.1.0's store migration every
        section was hashed — ``fedlib results rehash`` re-keys such a store].
        """
        return self.validated()._hashed_fields()

    def _hashed_fields(self) -> dict:
        """:meth:`hashed_dict` of a config that is already validated."""
        d = self.to_dict()
        for section in UNREAD_SECTIONS.get(self.paradigm, ()):
            d.pop(section)
        for label in LABEL_FIELDS:
            d.pop(label)
        if (code := code_record(self)) is not None:  # issue 61: a user registration's runs are keyed by its code too
            d["code"] = code["fingerprint"]
        return omit_hash_defaults(d)

    def resolve(self, data_fingerprint="current") -> "ResolvedRun":
        """This config resolved once, at a run's boundary: validated, its options built into their
        dataclass (the only place a run's options object is built), its data fingerprint (or the one
        given; None for none) and hash computed from that one validated copy (issues 21, 32)."""
        cfg, options = self._validated_copy()
        fp = cfg.data_fingerprint() if data_fingerprint == "current" else data_fingerprint
        return ResolvedRun(cfg, options, fp, _hash_of(cfg._hashed_fields(), fp))

    def data_fingerprint(self) -> dict | None:
        """The fingerprint of ``data.dataset``'s files under the data root (``$FEDLIB_DATA``), or None
        for a paradigm that reads no dataset (:data:`DATA_PARADIGMS`) or a dataset not found."""
        if self.paradigm not in DATA_PARADIGMS:
            return None
        from fedlib.data.fingerprint import dataset_fingerprint

        return dataset_fingerprint(self.data.dataset)

    def canonical_json(self, data_fingerprint="current") -> str:
        """The canonical JSON the hash is computed from (options completed with defaults), with the
        data fingerprint of the current data root (or the one given)."""
        fp = self.data_fingerprint() if data_fingerprint == "current" else data_fingerprint
        return _canonical(self.hashed_dict(), fp)

    def config_hash(self, data_fingerprint="current") -> str:
        """sha256 (hex) of :meth:`canonical_json`: the same in every process and machine holding the
        same data files."""
        return hashlib.sha256(self.canonical_json(data_fingerprint).encode()).hexdigest()

    @property
    def short_hash(self) -> str:
        return self.config_hash()[:12]

    # ---------------------------------------------------------------- validation
    def validated(self) -> "RunConfig":
        return self._validated_copy()[0]  # a validated, normalised copy (self left untouched)

    def _validated_copy(self) -> tuple["RunConfig", object | None]:
        """A validated, normalised copy and the options instance its validation built; a config
        whose fields hold what its last validation produced is copied, not validated again (issue 45)."""
        if self._is_known_valid():
            return copy.deepcopy(self), copy.deepcopy(self.__dict__["_valid"][1])
        cfg = copy.deepcopy(self)
        options = cfg._normalise()
        cfg.__dict__["_valid"] = (stamp := cfg._stamp(), options)
        if self._stamp() == stamp:  # self was already normal: remember it too
            self.__dict__["_valid"] = cfg.__dict__["_valid"]
        return cfg, options

    def validate(self) -> "RunConfig":
        """Check everything (raises one FedlibError per problem found); normalise in place and
        return ``self`` (the constructors' step; elsewhere prefer :meth:`validated`)."""
        if not self._is_known_valid():
            options = self._normalise()
            self.__dict__["_valid"] = (self._stamp(), options)  # beside the fields, never hashed
        return self

    def _stamp(self) -> str:
        """Every field's value, types included (``1`` and ``1.0`` differ): what a validation read."""
        return json.dumps(plain(self), sort_keys=True, default=repr)

    def _is_known_valid(self) -> bool:
        """No field changed since the last validation (its options instance: ``_valid[1]``)."""
        seen = self.__dict__.get("_valid")
        return seen is not None and seen[0] == self._stamp()

    def _normalise(self):
        """Validate and normalise in place; return the algorithm's options instance.

        Normalisation: section values are coerced to their declared types (``1`` -> ``1.0`` for a
        float field) and ``options`` is completed with the algorithm's defaults.
        """
        # sections must be the right dataclasses (a bare RunConfig(...) may hold dicts)
        for name, sub in (("data", DataConfig), ("model", ModelConfig), ("safl", SAFLConfig),
                          ("split", SplitConfig), ("local", LocalConfig)):
            val = getattr(self, name)
            if isinstance(val, dict):
                setattr(self, name, build_dataclass(sub, val, name + "."))
            elif not dataclasses.is_dataclass(val):
                raise FedlibError(f"section {name!r} must be a mapping, got {type(val).__name__}")
            else:
                setattr(self, name, build_dataclass(sub, plain(val), name + "."))
        top = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("data", "model", "local", "safl", "split", "options")}
        for k, v in coerce_fields(RunConfig, top, "").items():
            setattr(self, k, v)
        check(isinstance(self.options, dict),
              f"options must be a mapping of algorithm options, got {type(self.options).__name__}")

        self._validate_top()
        self._validate_data()
        self._validate_model()
        self._validate_local()
        self._validate_safl()
        self._validate_split()
        return self._validate_algorithm()

    def _validate_top(self) -> None:
        from fedlib.experiments.config.registry import paradigms

        check_choice("paradigm", self.paradigm, paradigms())
        _at_least("rounds", self.rounds, 1)
        _at_most("rounds", self.rounds, MAX_ROUNDS, "the papers run 400")
        _at_least("eval_every", self.eval_every, 1)
        _at_least("eval_last", self.eval_last, 0)
        # [D, issue 34] a cadence that evaluates the same rounds as eval_every alone would only store a
        # duplicate run under another hash
        check(self.eval_last == 0 or self.eval_every > 1,
              f"eval_last={self.eval_last} changes nothing with eval_every=1 (every round is evaluated)",
              "leave eval_last=0, or set eval_every > 1 (e.g. eval_every=5 eval_last=20)")
        check(self.eval_last < self.rounds,
              f"eval_last={self.eval_last} covers all {self.rounds} rounds: every round is evaluated",
              f"set eval_last below rounds={self.rounds}, or eval_every=1 eval_last=0")
        _at_least("checkpoint_every", self.checkpoint_every, 0)
        _at_least("seed", self.seed, 0)
        check_choice("profile", self.profile, PROFILES)
        dev = self.device
        ok = dev in ("auto", "cpu", "cuda", "mps") or (
            dev.startswith("cuda:") and dev[5:].isdigit())
        check(ok, f"unknown device {dev!r}", "use auto, cpu, cuda, cuda:N or mps")
        check_choice("engine backend", self.backend, {"auto", *BACKENDS})

    def _validate_data(self) -> None:
        d = self.data
        check_choice("dataset", d.dataset, DATASETS)
        check_choice("partition", d.partition, PARTITIONS)
        need = _PARTITION_DATASETS.get(d.partition)
        check(need is None or d.dataset in need,
              f"partition {d.partition!r} only exists for dataset {' / '.join(map(repr, need or ()))}"
              f", not {d.dataset!r}", "use partition=iid, dirichlet or shards for this dataset")
        check(d.alpha > 0 and math.isfinite(d.alpha),
              f"data.alpha (Dirichlet concentration) must be > 0, got {d.alpha}")
        # [D, issue 33] below 1e-6 the Dirichlet draw gives each class to one client whatever the
        # value (1e-9 and 1e-300 split alike): a typo, not a setting
        check(d.alpha >= MIN_ALPHA, f"data.alpha={d.alpha} is below {MIN_ALPHA}: every smaller value "
              "gives each class to a single client (the same split), so it sets nothing",
              "use e.g. data.alpha=0.1 (strong label skew) or partition=shards for one-class shards")
        _at_least("data.shards_per_client", d.shards_per_client, 1)
        if d.roles is not None:
            _at_least("data.roles", d.roles, 1)
        check_choice("validation split", d.validation, VALIDATIONS)
        check(0 < d.val_frac < 1, f"data.val_frac must be in (0, 1), got {d.val_frac}")
        check_choice("normalisation", d.normalize, NORMALIZATIONS)
        if d.roles is not None:
            _at_most("data.roles", d.roles, MAX_CLIENTS)
        _at_most("data.shards_per_client", d.shards_per_client, MAX_SIZE)
        for key in ("max_train", "max_test"):
            if getattr(d, key) is not None:
                _at_least(f"data.{key}", getattr(d, key), 1)
        clients = {"safl": self.safl.clients, "split": self.split.clients}.get(self.paradigm)
        if clients is not None and d.max_train is not None:
            need = clients * (d.shards_per_client if d.partition == "shards" else 1)
            check(d.max_train >= need,
                  f"data.max_train={d.max_train} training samples cannot give each of the {clients} "
                  f"clients {'its ' + str(d.shards_per_client) + ' shards' if d.partition == 'shards' else 'a sample'}"
                  ": some clients would train on nothing",
                  f"raise data.max_train to at least {need} or lower {self.paradigm}.clients")

    def _validate_model(self) -> None:
        check_choice("model", self.model.name, MODELS)
        if self.paradigm in DATA_PARADIGMS:
            from fedlib.data.registry import SPECS

            kind, takes = SPECS[self.data.dataset].kind, MODEL_INPUTS.get(self.model.name)
            fits = sorted(m for m, k in MODEL_INPUTS.items() if k == kind)
            check(takes is None or takes == kind,
                  f"model {self.model.name!r} takes {takes} input, but dataset "
                  f"{self.data.dataset!r} is {kind} data",
                  f"use a model for {kind} data: {', '.join(fits) or '(none)'}")
        if self.model.cut is not None and self.paradigm == "split":
            valid = _cut_points(self.model.name)
            if self.model.cut not in valid:
                raise FedlibError(
                    f"model {self.model.name!r} has no cut point {self.model.cut!r}",
                    f"use one of: {', '.join(valid)} (or model.cut=null for the default)")

    def _validate_local(self) -> None:
        try:
            self.local.validate()
        except FedlibError as err:
            raise FedlibError(f"local: {err.problem}", err.fix) from None
        loc = self.local
        check(loc.lr > 0, "local.lr=0: every client step would leave the model unchanged, so the run "
              "would train nothing", "set local.lr > 0, e.g. local.lr=0.01")
        # [D, issue 44] a step that cannot move a weight: below float32's smallest normal number
        # (MIN_STEP) the learning rate is itself a subnormal or zero float32, and lr x |g| (|g| <=
        # clip_norm when clipping) cannot change any float32 weight of ordinary size, so every round
        # would return the model it started from and the run would be stored as "done" with flat curves
        check(loc.lr >= MIN_STEP, f"local.lr={loc.lr:g} is below {MIN_STEP:.4g} (float32's smallest normal "
              "number): no step can change a float32 weight, so every round would return the initial model",
              "use an ordinary learning rate, e.g. local.lr=0.01")
        if loc.clip_norm is not None:
            check(loc.clip_norm >= MIN_STEP, f"local.clip_norm={loc.clip_norm:g} is below {MIN_STEP:.4g} "
                  "(float32's smallest normal number): every clipped gradient is ~0, so no weight can "
                  "change", "use an ordinary clip norm (the papers use 10-20), or clip_norm=null for none")
            check(loc.lr * loc.clip_norm >= MIN_STEP,
                  f"local.lr x local.clip_norm = {loc.lr * loc.clip_norm:g} is below {MIN_STEP:.4g} "
                  "(float32's smallest normal number): the largest step a client can take cannot change a "
                  "float32 weight", "raise local.lr or local.clip_norm")
        _at_most("local.batch_size", loc.batch_size, MAX_SIZE)
        if loc.steps is not None:
            _at_most("local.steps", loc.steps, MAX_SIZE)
        if loc.epochs is not None:
            _at_most("local.epochs", loc.epochs, MAX_SIZE)
        idle = loc.steps == 0 if loc.steps is not None else loc.epochs == 0
        check(not idle, f"local.{'steps' if loc.steps is not None else 'epochs'}=0: the clients "
              "would train nothing and every round would return the initial model",
              "set local.epochs >= 1 (or local.steps >= 1)")

    def _validate_safl(self) -> None:
        s = self.safl
        check_choice("safl.mode", s.mode, SAFL_MODES)
        _at_least("safl.clients", s.clients, 1)
        _at_most("safl.clients", s.clients, MAX_CLIENTS)
        _at_least("safl.k", s.k, 1)
        check_choice("safl.delays", s.delays, DELAYS)
        _at_least("safl.ratio", s.ratio, 1)
        _at_most("safl.ratio", s.ratio, MAX_RATIO, "the papers use 1:20 to 1:100")
        check_choice("safl.upload", s.upload, UPLOADS)
        check_choice("safl.scenario", s.scenario, SCENARIOS)
        if self.paradigm == "safl":
            check_k(s.k, s.clients)
            check(s.delays != "official-100" or s.clients == 100,
                  f"safl.delays=official-100 holds the official code's 100 delays, "
                  f"but safl.clients={s.clients}",
                  "use safl.clients=100 or safl.delays=uniform")

    def _validate_split(self) -> None:
        s = self.split
        check_choice("split.framework", s.framework, FRAMEWORKS)
        check_choice("split.sflv2_momentum", s.sflv2_momentum, SFLV2_MOMENTUM)
        _at_least("split.clients", s.clients, 1)
        _at_most("split.clients", s.clients, MAX_CLIENTS)
        _at_least("split.per_round", s.per_round, 1)
        if self.paradigm == "split":
            from fedlib.split.algorithms import check_split_run

            check_split_run(self.algorithm, s, self.model.name)

    def _validate_algorithm(self):
        """The options instance (None without options); ``options`` completed with its defaults."""
        from fedlib.experiments.config.registry import get_algorithm

        inst = get_algorithm(self.paradigm, self.algorithm).build_options(self.options)
        self.options = {} if inst is None else plain(inst)
        return inst


def omit_hash_defaults(d: dict) -> dict:
    """``d`` (a config dict) without the :data:`HASH_OMITTED_AT_DEFAULT` fields that hold their
    neutral value (in place; returned): what the hash covers of them."""
    for path, neutral in HASH_OMITTED_AT_DEFAULT.items():
        *head, last = path.split(".")
        node = d
        for part in head:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node and node[last] == neutral:
            node.pop(last)
    return d


def _canonical(hashed: dict, fp) -> str:
    from fedlib import __version__

    payload = {"fedlib": __version__, "config": hashed, "data": fp}
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _hash_of(hashed: dict, fp) -> str:
    return hashlib.sha256(_canonical(hashed, fp).encode()).hexdigest()


@dataclass(frozen=True)
class ResolvedRun:
    """A run config resolved once at the boundary (:meth:`RunConfig.resolve`, issue 21): the
    validated config, its options instance, data fingerprint and hash — what the store and the
    trainer of one run read (the trainer factory receives ``config`` and ``options``), so nothing
    is validated or rebuilt again during the run."""

    config: RunConfig
    options: object | None
    fingerprint: dict | None
    hash: str


def _at_least(name: str, value, low) -> None:
    check(value >= low, f"{name} must be >= {low}, got {value}")


# upper bounds on sizes [D, issue 33]: far above every paper setting, low enough that a typo
# (rounds=1e30, safl.ratio=1000000000) is refused with a message instead of hanging the clock
MAX_ROUNDS = 100_000
MAX_CLIENTS = 100_000
MAX_RATIO = 10_000
MAX_SIZE = 10_000_000
MIN_ALPHA = 1e-6
# [D, issue 44] the smallest learning rate / clip norm / largest step lr x clip_norm accepted:
# float32's smallest positive normal number (torch.finfo(torch.float32).tiny), see _validate_local
MIN_STEP = 1.1754943508222875e-38


def _at_most(name: str, value, high, note: str = "") -> None:
    check(value <= high, f"{name}={value} exceeds the limit of {high:,}" + (f" ({note})" if note else ""),
          f"use {name} <= {high:,}")


@functools.lru_cache(maxsize=None)
def _cut_points(model: str):
    return list(cut_points(model))
