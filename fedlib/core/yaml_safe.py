"""YAML for configs and ``--set`` values, bounded (issue 44).

:func:`load_yaml` parses with :class:`ConfigLoader`, a ``yaml.SafeLoader`` that

* **refuses anchors and aliases entirely** (``&name`` / ``*name``) [D]: no preset or config of fedlib
  uses them, and refusing them (rather than counting expansions) rules out both an alias bomb
  ("billion laughs": nine levels of ten aliases expand to 10^9 nodes) and a recursive anchor (a
  node that contains itself, which made the config code recurse until ``RecursionError``);
* refuses an integer written with more than :data:`MAX_INT_DIGITS` digits (Python refuses to parse
  more than 4,300 and no size in a config needs more than a few);
* and reads at most :data:`MAX_YAML_BYTES` of text (a config is a few hundred bytes).

Every refusal is one :class:`~fedlib.core.errors.FedlibError` naming where and why.
"""

from __future__ import annotations

import yaml

from fedlib.core.errors import FedlibError

__all__ = ["ConfigLoader", "PlainLoader", "load_yaml", "plain_problem", "MAX_INT_DIGITS", "MAX_YAML_BYTES"]

MAX_INT_DIGITS = 100
MAX_YAML_BYTES = 1 << 20  # 1 MiB


class _Refused(yaml.YAMLError):
    """A construct :class:`ConfigLoader` does not accept (anchor, alias, huge integer)."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


class ConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without anchors / aliases and with an integer digit limit."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(f"uses the YAML alias *{str(event.anchor)[:40]} (anchors and aliases are not "
                           "accepted in fedlib configs: they allow alias bombs and self-referencing nodes)",
                           "write the values out in full instead of &anchor / *alias")
        if getattr(event, "anchor", None) is not None:
            raise _Refused(f"defines the YAML anchor &{str(event.anchor)[:40]} (anchors and aliases are not "
                           "accepted in fedlib configs: they allow alias bombs and self-referencing nodes)",
                           "write the values out in full instead of &anchor / *alias")
        return super().compose_node(parent, index)

    def construct_yaml_int(self, node):
        digits = sum(ch in "0123456789abcdefABCDEF" for ch in str(node.value).lower().replace("0x", "", 1))
        if digits > MAX_INT_DIGITS:
            raise _Refused(f"holds an integer of {digits:,} digits (at most {MAX_INT_DIGITS} are accepted)",
                           "give an ordinary number (every size in a config has a limit far below that)")
        return super().construct_yaml_int(node)


ConfigLoader.add_constructor("tag:yaml.org,2002:int", ConfigLoader.construct_yaml_int)


class PlainLoader(ConfigLoader):
    """:class:`ConfigLoader` that also refuses every YAML tag (``!!pairs``, ``!!set``, ``!!binary``,
    ``!python/...``) and every value but plain scalars, lists and mappings (a date, a timestamp):
    what a ``-p`` value may be, since it is written into a notebook's code [issue 59]."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        tag = getattr(event, "tag", None)
        implicit = getattr(event, "implicit", True)
        explicit = tag is not None and not (any(implicit) if isinstance(implicit, tuple) else implicit)
        if explicit:
            raise _Refused(f"uses the YAML tag {str(tag)[:40]} (tags are not accepted: only plain values, "
                           "lists and mappings)", "write the value without a !tag, e.g. [a, b] or {k: 1}")
        return super().compose_node(parent, index)


PLAIN_TYPES = (str, int, float, bool, type(None))


def plain_problem(value, depth: int = 0) -> str:
    """Why ``value`` is not built of plain scalars, lists and mappings with text keys ("" when it is)."""
    if depth > 32:
        return "is nested more than 32 levels deep"
    if isinstance(value, PLAIN_TYPES):
        return ""
    if isinstance(value, list):
        return next((w for w in (plain_problem(v, depth + 1) for v in value) if w), "")
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return "has a mapping key that is not text (quote it)"
        return next((w for w in (plain_problem(v, depth + 1) for v in value.values()) if w), "")
    return f"holds a {type(value).__name__} ({str(value)[:30]!r}), not a plain value (quote it to mean text)"


def load_yaml(text: str, where: str, fix: str | None = None, plain: bool = False):
    """The YAML document ``text`` (from ``where``, named in errors) parsed by :class:`ConfigLoader`.

    FedlibError for text over :data:`MAX_YAML_BYTES`, an anchor / alias, an over-long integer;
    ``yaml.YAMLError`` for a syntax error (the callers word that one). ``plain``: also refuse
    every tag and any value but plain scalars, lists and mappings (:class:`PlainLoader`).
    """
    if not isinstance(text, str):
        raise FedlibError(f"{where} must be YAML text, got {type(text).__name__}")
    if len(text) > MAX_YAML_BYTES:
        raise FedlibError(f"{where} holds {len(text):,} characters (at most {MAX_YAML_BYTES:,} are read)",
                          fix or "a config is a few lines of YAML: give the right file")
    try:
        value = yaml.load(text, Loader=PlainLoader if plain else ConfigLoader)  # noqa: S506 - SafeLoaders
    except _Refused as err:
        raise FedlibError(f"{where} {err.problem}", err.fix) from None
    except RecursionError:
        raise FedlibError(f"{where} is nested too deeply to parse", "flatten the YAML") from None
    why = plain_problem(value) if plain else ""
    if why:
        raise FedlibError(f"{where} {why}", "write plain values, lists and mappings (quote a date: '2026-12-07')")
    return value
