"""Preset names: every name that ever shipped still resolves to the same validated config (issue 13).

``tests/data/preset_snapshot.json`` holds, for each of the 87 preset files fedlib shipped before
presets were composed (``<algorithm>-<task>[-<profile>]``, fedlib/presets/README.md), the validated
``RunConfig.to_dict()`` and ``config_hash()``. It was written once, before the change, by::

    cfgs = {n: RunConfig.from_preset(n) for n in list_presets()}
    {"fedlib": __version__, "presets": {n: {"config": c.to_dict(), "hash": c.config_hash()}}}

The dicts must never change. The hashes also depend on fedlib's version (``"fedlib"`` in the
snapshot) and on how ``config_hash`` is computed: when either changes on purpose, rewrite only the
``hash`` fields, from the snapshot's own configs (``RunConfig.from_dict(config).config_hash()``),
never the configs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedlib.experiments.config import RunConfig, list_presets

SNAPSHOT = json.loads((Path(__file__).parent / "data" / "preset_snapshot.json").read_text())
OLD = SNAPSHOT["presets"]


def test_snapshot_holds_every_old_preset():
    assert len(OLD) == 87 and "toy-smoke" in OLD and "fedqs-avg-cifar10" in OLD


@pytest.mark.parametrize("name", sorted(OLD))
def test_old_name_resolves_to_the_same_config(name):
    cfg = RunConfig.from_preset(name)
    assert cfg.to_dict() == OLD[name]["config"]
    assert cfg.config_hash() == OLD[name]["hash"]


def test_every_old_name_is_still_listed():
    assert set(OLD) <= set(list_presets())
