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

__all__ = ["ConfigLoader", "load_yaml", "MAX_INT_DIGITS", "MAX_YAML_BYTES"]

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
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise _Refused(f"holds an integer of {digits:,} digits (at most {MAX_INT_DIGITS} are accepted)",
                           "give an ordinary number (every size in a config has a limit far below that)")
        return super().construct_yaml_int(node)


ConfigLoader.add_constructor("tag:yaml.org,2002:int", ConfigLoader.construct_yaml_int)


def load_yaml(text: str, where: str, fix: str | None = None):
    """The YAML document ``text`` (from ``where``, named in errors) parsed by :class:`ConfigLoader`.

    FedlibError for text over :data:`MAX_YAML_BYTES`, an anchor / alias, an over-long integer;
    ``yaml.YAMLError`` for a syntax error (the callers word that one).
    """
    if not isinstance(text, str):
        raise FedlibError(f"{where} must be YAML text, got {type(text).__name__}")
    if len(text) > MAX_YAML_BYTES:
        raise FedlibError(f"{where} holds {len(text):,} characters (at most {MAX_YAML_BYTES:,} are read)",
                          fix or "a config is a few lines of YAML: give the right file")
    try:
        return yaml.load(text, Loader=ConfigLoader)  # noqa: S506 - ConfigLoader is a SafeLoader
    except _Refused as err:
        raise FedlibError(f"{where} {err.problem}", err.fix) from None
    except RecursionError:
        raise FedlibError(f"{where} is nested too deeply to parse", "flatten the YAML") from None
