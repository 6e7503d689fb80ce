"""Dataclasses from and to plain data: the typed configs' I/O, with one clear error per problem.

- :func:`build_dataclass` — a (nested) dataclass from a dict: unknown keys (with the closest valid
  key), wrong types (int → float and int → str are converted) raise :class:`FedlibError`;
- :func:`plain` — dataclasses → dicts, tuples → lists (a JSON-ready deep copy);
- :func:`json_clean` — ``plain`` plus tensors/numpy scalars → numbers and NaN/inf → None;
- :func:`deep_merge`, :func:`parse_overrides` (``["section.key=value", ...]``), :func:`set_path`.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import re
import types
import typing
from pathlib import Path
from typing import Any

from fedlib.core.errors import FedlibError, check

__all__ = ["build_dataclass", "plain", "json_clean", "deep_merge", "parse_overrides", "set_path",
           "unknown_key_error", "coerce_fields"]


def _hints(cls) -> dict:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable annotations: accept any value
        return {f.name: Any for f in dataclasses.fields(cls)}


def build_options(cls, values: dict | None, owner: str):
    """The options dataclass ``cls`` built from the dict ``values`` — the one path from a dict to an
    algorithm's options (issue 45: the registry's and a :class:`~fedlib.safl.strategy.Strategy`'s):
    unknown names refused with the closest valid one, values coerced to their declared types, then
    the class's own ``__post_init__`` / ``validate()`` checks. ``owner`` names the algorithm."""
    values = dict(values or {})
    check(dataclasses.is_dataclass(cls), f"{owner}: options class {cls!r} is not a dataclass")
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(str(k) for k in values if k not in valid)
    if unknown:
        hints = [f"options.{close[0]} (for {k})" for k in unknown
                 if (close := difflib.get_close_matches(k, valid, n=1, cutoff=0.5))]
        raise FedlibError(f"unknown option(s) for {owner}: {', '.join(unknown)}",
                          (f"did you mean {', '.join(hints)}? " if hints else "")
                          + f"valid options: {', '.join(valid) or '(none)'}")
    inst = build_dataclass(cls, values, "options.")
    if hasattr(inst, "validate"):
        inst.validate()
    return inst


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
        raise unknown_key_error(prefix, unknown[0], names)
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        v = data[f.name]
        sub = _dataclass_of(hints.get(f.name, Any))
        if sub is not None:
            values[f.name] = build_dataclass(sub, plain(v), f"{prefix}{f.name}.")
        else:
            values[f.name] = v
    values = coerce_fields(cls, values, prefix, hints)
    try:
        return cls(**values)
    except FedlibError:
        raise
    except (TypeError, ValueError) as err:
        raise FedlibError(f"invalid {prefix.rstrip('.') or 'config'}: {err}") from None


def _dataclass_of(hint):
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    return None


def coerce_fields(cls, values: dict, prefix: str, hints: dict | None = None) -> dict:
    hints = hints if hints is not None else _hints(cls)
    return {k: _coerce(v, hints.get(k, Any), f"{prefix}{k}") for k, v in values.items()}


def _coerce(value, hint, where: str):
    """Check ``value`` against a simple annotation, converting int->float and int->str.

    numpy / torch scalars count as the Python number they hold (``np.int64(3)`` is an integer);
    a float must be finite (``.inf`` / ``nan`` mean no run: refused here, not at hashing).
    """
    if hint is Any or dataclasses.is_dataclass(value):
        return value
    value = _python_scalar(value)
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
        value = _number_from_str(value)
        check(isinstance(value, (int, float)) and not isinstance(value, bool),
              f"{where} must be a number, got {value!r}")
        check(math.isfinite(float(value)), f"{where} must be a finite number, got {value!r}",
              f"give {where} an ordinary number (no .inf / .nan)")
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


def _python_scalar(value):
    """A numpy / torch 0-d number as the Python int / float / bool it holds; else ``value``."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    mod = type(value).__module__.split(".")[0]
    if mod in ("numpy", "torch") and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        try:
            out = value.item()
        except Exception:  # noqa: BLE001 - not a plain number: leave it to the type check
            return value
        return out if isinstance(out, (bool, int, float)) else value
    return value


# YAML 1.1 (PyYAML) reads ``1e-3`` (no dot) and ``1E5`` as strings; they are numbers [D, issue 19]
_NUMBER_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _number_from_str(value):
    """``"1e-3"`` -> 0.001 (a string that is a plain decimal number); anything else unchanged."""
    if isinstance(value, str) and _NUMBER_RE.match(value.strip()):
        return float(value.strip())
    return value


def _type_name(t) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true/false",
            dict: "a mapping"}.get(t, getattr(t, "__name__", str(t)))


def unknown_key_error(prefix: str, key: str, valid) -> FedlibError:
    where = prefix.rstrip(".")
    full = f"{prefix}{key}"
    close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.5)
    fix = (f"did you mean {prefix}{close[0]}? " if close else "") + \
        f"valid keys{' in ' + where if where else ''}: {', '.join(valid)}"
    return FedlibError(f"unknown config key {full!r}", fix)


def plain(obj):
    """Dataclasses -> dicts, tuples -> lists, recursively (a JSON-ready deep copy)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def deep_merge(base, over):
    """``over`` merged into a copy of ``base``; nested dicts merge key by key."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return copy.deepcopy(over)
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) \
            else copy.deepcopy(v)
    return out


def parse_overrides(overrides) -> list[tuple[str, Any]]:
    import yaml

    from fedlib.core.yaml_safe import load_yaml

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
            value = load_yaml(raw, f"override {item[:60]!r}") if raw.strip() else ""
        except yaml.YAMLError as err:
            problem = str(err).splitlines()[0]
            raise FedlibError(f"cannot parse the value of override {item!r} ({problem})",
                              "quote it or close its brackets, e.g. --set 'key=[1, 2]'") from None
        if isinstance(value, str) and _NUMBER_RE.match(value.strip()) and "e" in value.lower():
            value = float(value)  # 1e-3: a number (YAML 1.1 wants 1.0e-3)
        pairs.append((key, value))
    return pairs


def set_path(d: dict, key: str, value) -> None:
    parts = key.split(".")
    node = d
    for i, part in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if part not in node:
            raise unknown_key_error(".".join(parts[:i]) + "." if i else "", part, list(node))
        check(isinstance(node[part], dict),
              f"override {key!r}: {where} is a value, not a section")
        node = node[part]
    node[parts[-1]] = value


def json_clean(obj):
    """NaN/inf -> None, numpy/torch scalars -> Python, tuples -> lists, paths -> str (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 0) == 0:
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, Path):
        return str(obj)
    return obj
