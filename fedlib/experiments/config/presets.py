"""Presets: named run configurations (fedlib/presets/README.md), files and composed names.

A preset is a YAML file in ``fedlib/presets/`` (it may ``extends:`` another preset) or a
*composed* name ``<algorithm>-<task>[-<profile>]``: the task's base preset with ``algorithm`` set,
then the profile's overlay ``presets/profiles/<paradigm>-<task>-<profile>.yaml`` merged on top. This
module turns a name into the merged, not yet validated dict (:func:`load_preset_dict`); the
:class:`~fedlib.experiments.config.RunConfig` constructors validate it.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from fedlib.core.dataclass_io import deep_merge
from fedlib.core.errors import FedlibError, check

__all__ = ["PRESET_DIR", "TASKS", "load_yaml_file", "load_preset_dict", "list_presets", "preset_description",
           "profile_overlay", "overlay_overrides"]

PRESET_DIR = Path(__file__).resolve().parents[2] / "presets"  # fedlib/presets

# Composed presets (fedlib/presets/README.md): a name ``<algorithm>-<task>[-<profile>]`` without a
# file of its own is the task's base preset with ``algorithm`` set, then the profile's overlay file
# ``presets/profiles/<paradigm>-<task>-<profile>.yaml`` merged on top. A ``+`` in an algorithm's
# name is written ``-`` (``fedprox-slowmo-cifar10``). Per paradigm, task -> (base preset, what
# composed descriptions call it); paradigms are tried in this order, so ``fedavg-cifar10`` is SAFL
# FedAvg (split FedAvg on CIFAR-10 is ``sflv1-cifar10``).
TASKS = {
    "safl": {
        "adult-gender": ("fedqs-base-adult-gender", "UCI Adult split by gender (sex), FCN"),
        "adult-ethnicity": ("fedqs-base-adult-ethnicity",
                            "UCI Adult split by ethnicity (race), FCN"),
        "cifar10": ("fedqs-base-cifar10", "CIFAR-10, Dirichlet x=0.5 over 100 clients, ResNet-18"),
        "shakespeare": ("fedqs-base-shakespeare",
                        "Shakespeare next-character, one speaking role per client, LSTM"),
    },
    "split": {
        "cifar10": ("sflv1-cifar10", "split CIFAR-10, Dir(0.1), 20 clients / 10 per round, "
                                     "ResNet-18 cut after layer1 (SMoFi spec §4)"),
    },
}


_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+._-]{0,119}$")


def load_yaml_file(path: Path, chain: tuple = ()) -> dict:
    """The dict of one YAML file, its ``extends:`` chain merged underneath (``chain``: the presets
    already being loaded, to report a cycle)."""
    import yaml

    from fedlib.core.yaml_safe import MAX_YAML_BYTES, load_yaml

    if not isinstance(path, (str, os.PathLike)):
        raise FedlibError(f"a config file must be given as a path, got {type(path).__name__} {path!r:.60}",
                          "pass the path of a YAML file, e.g. RunConfig.from_yaml('my.yaml')")
    path = Path(path)
    shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
    try:
        found = path.is_file()
        size = path.stat().st_size if found else 0
    except OSError as err:  # e.g. a name too long for the file system
        raise FedlibError(f"cannot open config file {shown!r}: {err.strerror}",
                          "give the path of a YAML file") from None
    check(found, f"config file {shown!r} not found")
    check(size <= MAX_YAML_BYTES, f"config file {shown!r} holds {size:,} bytes (a config is at most "
          f"{MAX_YAML_BYTES:,})", "give the path of a YAML config file")
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"), f"config file {shown!r}") or {}
    except UnicodeDecodeError:
        raise FedlibError(f"config file {shown!r} is not a text (UTF-8) file",
                          "give a YAML file such as `extends: fedavg-adult-gender-smoke`") from None
    except OSError as err:
        raise FedlibError(f"cannot read config file {shown!r}: {err.strerror}",
                          "check the path and its permissions") from None
    except yaml.YAMLError as err:
        raise FedlibError(f"cannot parse YAML file {shown!r}: {err}") from None
    check(isinstance(raw, dict), f"{str(path)!r} must hold a mapping at the top level")
    raw = dict(raw)
    parent = raw.pop("extends", None)
    raw.pop("description", None)
    if parent is None:
        return raw
    check(isinstance(parent, str), f"extends in {str(path)!r} must be a preset name")
    return deep_merge(_preset_dict(parent, chain), raw)


def _preset_dict(name: str, chain: tuple) -> dict:
    """A preset file's dict if ``name.yaml`` exists, else the composed preset ``name``."""
    check(name not in chain, f"presets extend each other in a cycle: {' -> '.join(chain + (name,))}")
    if not (isinstance(name, str) and _PRESET_NAME.match(name)):
        raise FedlibError(f"{str(name)[:60]!r}{'...' if len(str(name)) > 60 else ''} "
                          f"({len(str(name))} characters) is not a preset name",
                          "preset names are lower-case letters, digits, '-', '+', '.' and '_', at most "
                          "120 characters; `fedlib presets` lists them")
    path = PRESET_DIR / f"{name}.yaml"
    if path.is_file():
        return load_yaml_file(path, chain + (name,))
    composed = _composed().get(name)
    if composed is None:
        raise _unknown_preset(name)
    paradigm, algorithm, task, profile = composed
    if profile:  # <algorithm>-<task> (a file or composed), then the profile's overlay
        stem = name[: -len(profile) - 1]
        return deep_merge(_preset_dict(stem, chain + (name,)),
                          _overlay_for(_overlays()[paradigm, task, profile], paradigm, algorithm, chain))
    base = TASKS[paradigm][task][0]
    return deep_merge(_preset_dict(base, chain + (name,)), {"algorithm": algorithm})


def _overlays() -> dict:
    """(paradigm, task, profile) -> overlay file, for each file in presets/profiles/."""
    out = {}
    for path in sorted((PRESET_DIR / "profiles").glob("*.yaml")):
        paradigm, _, rest = path.stem.partition("-")
        task, _, profile = rest.rpartition("-")
        out[paradigm, task, profile] = path
    return out


def _composed() -> dict:
    """Every composed name -> (paradigm, algorithm, task, profile or None).

    Every registered algorithm of a paradigm with every task of that paradigm whose base preset
    exists, alone and with each of that task's profile overlays. A name an earlier paradigm already
    composed keeps that paradigm, profiles included.
    """
    from fedlib.experiments.config.registry import algorithms

    overlays = _overlays()
    out: dict = {}
    for paradigm, tasks in TASKS.items():
        for task, (base, _) in tasks.items():
            if not (PRESET_DIR / f"{base}.yaml").is_file():
                continue
            profiles = [p for (pa, t, p) in overlays if (pa, t) == (paradigm, task)]
            for entry in algorithms(paradigm):
                stem = f"{entry.name.replace('+', '-')}-{task}"
                if stem in out and out[stem][0] != paradigm:
                    continue  # an earlier paradigm's name (fedavg-cifar10 is SAFL's)
                out[stem] = (paradigm, entry.name, task, None)
                for profile in profiles:
                    out[f"{stem}-{profile}"] = (paradigm, entry.name, task, profile)
    return out


def _unknown_preset(name: str) -> FedlibError:
    names = list_presets()
    stem, _, profile = name.rpartition("-")
    overlays = _overlays()
    if stem in names and profile in {p for (_, _, p) in overlays}:
        have = ", ".join(f"{pa}-{t}-{p}" for (pa, t, p) in overlays)
        return FedlibError(f"unknown preset {name!r}: preset {stem!r} has no {profile!r} profile",
                           f"the profile overlays in fedlib/presets/profiles/ are {have}; "
                           f"or start from {stem} and --set the keys you need")
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return FedlibError(f"unknown preset {name!r}",
                       (f"did you mean {close[0]}? " if close else "")
                       + (f"(also close: {', '.join(close[1:])}) " if len(close) > 1 else "")
                       + f"`fedlib presets` lists all {len(names)} presets")


def profile_overlay(paradigm: str, task: str, profile: str, algorithm: str | None = None) -> dict:
    """The overlay ``presets/profiles/<paradigm>-<task>-<profile>.yaml`` (without its description)
    as it applies to ``algorithm`` (its ``algorithms:`` entry merged on top; None: no entry), or
    ``{}`` where the profile changes nothing (e.g. ``cpu`` on UCI Adult: the paper's scale)."""
    path = _overlays().get((paradigm, task, profile))
    return {} if path is None else _overlay_for(path, paradigm, algorithm, ())


def _overlay_for(path: Path, paradigm: str, algorithm: str | None, chain: tuple) -> dict:
    """An overlay file's dict for one algorithm: its common keys, then its ``algorithms:`` entry for
    ``algorithm`` merged on top (e.g. FedQS's η bounds where the overlay changes ``local.lr``,
    issue 30). Every name under ``algorithms:`` must be one of the paradigm's algorithms."""
    from fedlib.experiments.config.registry import algorithms

    overlay = load_yaml_file(path, chain)
    per = overlay.pop("algorithms", None) or {}
    check(isinstance(per, dict) and all(isinstance(v, dict) for v in per.values()),
          f"`algorithms:` in {path.name} must map algorithm names to the keys they change",
          "e.g. algorithms: {fedqs-avg: {options: {lr_max: 1.6}}}")
    known = {entry.name for entry in algorithms(paradigm)}
    unknown = sorted(set(per) - known)
    check(not unknown, f"`algorithms:` in {path.name} names unknown {paradigm} algorithm(s) {unknown}",
          f"choose from {sorted(known)}")
    return deep_merge(overlay, per[algorithm]) if algorithm in per else overlay


def overlay_overrides(overlay: dict, prefix: str = "") -> list[str]:
    """``{"safl": {"k": 3}, "rounds": 5}`` -> ``["safl.k=3", "rounds=5"]`` (``with_overrides`` input)."""
    import yaml

    out = []
    for key, value in overlay.items():
        if isinstance(value, dict):
            out += overlay_overrides(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}")
    return out


def load_preset_dict(name: str) -> dict:
    """The merged dict of preset ``name`` (its ``extends`` chain resolved), not yet validated."""
    return _preset_dict(name, ())


def list_presets(prefix: str | None = None) -> list[str]:
    """Every preset name (``fedlib presets``): the files in fedlib/presets/ and every composed name
    (those starting with ``prefix`` when given, e.g. ``"fedqs-"``)."""
    check(prefix is None or isinstance(prefix, str),
          f"list_presets takes a name prefix (a string) or nothing, got {type(prefix).__name__} {prefix!r:.60}",
          "call list_presets() or e.g. list_presets('fedqs-')")
    names = sorted({p.stem for p in PRESET_DIR.glob("*.yaml")} | set(_composed()))
    return [n for n in names if n.startswith(prefix)] if prefix else names


def preset_description(name: str) -> str:
    """One line for ``fedlib presets``: a file's ``description:``, else composed ("" if unknown)."""
    import yaml

    path = PRESET_DIR / f"{name}.yaml"
    if path.is_file():
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except Exception as err:  # a broken preset is still listed
            return f"(unreadable: {err})"
        return str(raw.get("description", "")).strip() if isinstance(raw, dict) else ""
    composed = _composed().get(name)
    if composed is None:
        return ""
    paradigm, _, task, profile = composed
    algorithm = load_preset_dict(name)["algorithm"]  # a file <algorithm>-<task> may set another
    text = f"{_algorithm_title(paradigm, algorithm)} on {TASKS[paradigm][task][1]}"
    if profile:
        raw = yaml.safe_load(_overlays()[paradigm, task, profile].read_text()) or {}
        text += f"; {str(raw.get('description', profile)).strip()}"
    return text


def _algorithm_title(paradigm: str, algorithm: str) -> str:
    """The head of the algorithm's registered description ("[model] FedAT (Chai ..." -> FedAT); a
    head that is no name ("slow momentum (SlowMo)") follows the algorithm's name."""
    from fedlib.experiments.config.registry import get_algorithm

    text = re.sub(r"^\[[^\]]*\]\s*", "", get_algorithm(paradigm, algorithm).description)
    head = re.split(r" \(|: | = ", text, maxsplit=1)[0].replace(" on split FL", "")
    return head if head[:1].isupper() else f"{algorithm} ({head})" if head else algorithm
