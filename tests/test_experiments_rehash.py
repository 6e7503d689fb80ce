"""The config hash covers a run's own paradigm section only, and ``fedlib results rehash`` re-keys a
store written under the old scheme without recomputing anything."""

from __future__ import annotations

import json

import pytest

from fedlib.cli import main
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.experiments.results.rehash import legacy_config_hash, rehash_store


def small_safl():
    return RunConfig.from_preset("fedavg-adult-gender").with_overrides(
        ["safl.clients=10", "safl.delays=uniform", "safl.k=3", "rounds=2", "data.max_train=2000"])


def toy():
    return RunConfig.from_preset("toy-smoke").with_overrides(["rounds=3"])


def test_hash_ignores_the_other_paradigms_section():
    assert toy().with_overrides(["split.clients=7"]).config_hash() != toy().config_hash()  # toy hashes all
    cfg = small_safl()
    assert cfg.with_overrides(["split.clients=7"]).config_hash() == cfg.config_hash()
    assert cfg.with_overrides(["safl.k=4"]).config_hash() != cfg.config_hash()
    split = RunConfig.from_preset("smofi-cifar10-cpu")
    assert split.with_overrides(["safl.k=3"]).config_hash() == split.config_hash()
    assert split.with_overrides(["split.per_round=5"]).config_hash() != split.config_hash()
    assert "split" not in cfg.hashed_dict() and "safl" in cfg.hashed_dict()


def test_legacy_hash_is_the_hash_of_every_section():
    cfg = small_safl()
    from fedlib import __version__

    legacy = legacy_config_hash(cfg.validated().to_dict(), __version__)
    assert legacy != cfg.config_hash()
    assert legacy_config_hash(cfg.with_overrides(["split.clients=7"]).validated().to_dict(), __version__) != legacy


def as_old(store, cfg, scheme, drop=()):
    """Rewrite the stored run of ``cfg`` the way an older fedlib stored it: no data fingerprint
    (schemes v0/v1), without the fields ``drop`` ("local.augment"), under that scheme's hash."""
    from fedlib import __version__
    from fedlib.experiments.results.rehash import scheme_hashes

    h = cfg.config_hash()
    d = store.path(h)
    blobs = {n: (d / n).read_bytes() for n in ("config.json", "history.csv", "clients.csv", "summary.json")}
    stored = json.loads(blobs["config.json"])
    for path in drop:
        section, key = path.split(".")
        del stored["config"][section][key]
    fp = stored.pop("data_fingerprint") if scheme != "v2" else stored["data_fingerprint"]
    old = scheme_hashes(stored["config"], __version__, fp if scheme == "v2" else "absent")[scheme]
    stored["config_hash"] = old
    summary = json.loads(blobs["summary.json"])
    summary["config_hash"] = old
    blobs["config.json"] = (json.dumps(stored) + "\n").encode()
    blobs["summary.json"] = (json.dumps(summary) + "\n").encode()
    store.write_folder(old, blobs)
    store.discard(h)
    return old


@pytest.mark.parametrize("scheme", ["v0", "v1"])
def test_rehash_moves_an_old_scheme_result_to_its_new_hash(tmp_path, capsys, scheme):
    store = ResultStore(tmp_path)
    cfg = small_safl()
    first = run(cfg, store=store, progress=False)
    old = as_old(store, cfg, scheme)
    assert old != cfg.config_hash() and store.hashes() == [old] and store.has(old)
    table = rehash_store(store, dry_run=True)
    assert table["action"].tolist() == ["moved"] and store.hashes() == [old]  # dry run: untouched
    assert table["data"].tolist() == ["assumed current"]
    assert main(["results", "rehash", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "moved 1" in out.out and "assumed: 1 run(s) stored without a data fingerprint" in out.err
    assert store.hashes() == [cfg.config_hash()]
    again = run(cfg, store=store, progress=False)
    assert again.cached and again.history.equals(first.history)
    stored = json.loads((store.path(cfg) / "config.json").read_text())
    assert stored["data_fingerprint"] == cfg.data_fingerprint() and stored["data_fingerprint"]
    assert json.loads((store.path(cfg) / "summary.json").read_text())["config_hash"] == cfg.config_hash()
    assert rehash_store(store)["action"].tolist() == ["current"]


def test_toy_runs_record_no_fingerprint_and_rehash_assumes_none(tmp_path):
    store = ResultStore(tmp_path)
    cfg = toy()
    assert cfg.data_fingerprint() is None
    run(cfg, store=store, progress=False)
    as_old(store, cfg, "v1")
    table = rehash_store(store)
    assert table["action"].tolist() == ["moved"] and table["data"].tolist() == [""]
    assert store.hashes() == [cfg.config_hash()]


def test_neutral_fields_table_lets_a_config_without_them_move(tmp_path, monkeypatch):
    """A stored config lacking exactly a field of NEUTRAL_FIELDS (at its neutral value) moves."""
    import fedlib.experiments.results.rehash as rehash

    store = ResultStore(tmp_path)
    cfg = small_safl()
    run(cfg, store=store, progress=False)
    old = as_old(store, cfg, "v2", drop=["local.augment"])  # as if local.augment were new
    assert rehash_store(store)["action"].str.startswith("kept: its config reads back").all()
    monkeypatch.setattr(rehash, "NEUTRAL_FIELDS", {"local.augment": not cfg.local.augment})
    assert rehash_store(store)["action"].str.startswith("kept").all()  # not the default: not neutral
    monkeypatch.setattr(rehash, "NEUTRAL_FIELDS", {"local.augment": cfg.local.augment})
    table = rehash_store(store)
    assert table["action"].tolist() == ["moved"] and table["data"].tolist() == [""]
    assert store.hashes() == [cfg.config_hash()] and old not in store.hashes()
    stored = json.loads((store.path(cfg) / "config.json").read_text())
    assert stored["config"] == cfg.to_dict()  # the neutral field is written in
    assert run(cfg, store=store, progress=False).cached


def test_labels_are_not_hashed_and_the_data_is():
    cfg = small_safl()
    assert cfg.with_overrides(["profile=smoke", "checkpoint_every=3"]).config_hash() == cfg.config_hash()
    assert cfg.config_hash({"dataset": "adult", "files": 1, "bytes": 1, "sha256": "0"}) != cfg.config_hash()
    assert "profile" not in cfg.hashed_dict() and "checkpoint_every" not in cfg.hashed_dict()


def test_rehash_keeps_what_it_cannot_prove(tmp_path):
    store = ResultStore(tmp_path)
    cfg = toy()
    run(cfg, store=store, progress=False)
    d = store.path(cfg)
    stray = tmp_path / ("0" * 64)
    d.rename(stray)  # a folder whose name is not the hash of its config under either scheme
    table = rehash_store(store)
    assert table["action"].str.startswith("kept").all() and store.hashes() == ["0" * 64]
