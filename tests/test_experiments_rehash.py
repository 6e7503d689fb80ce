"""The config hash covers a run's own paradigm section only, and ``fedlib results rehash`` re-keys a
store written under the old scheme without recomputing anything."""

from __future__ import annotations

import json

from fedlib.cli import main
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.experiments.rehash import _move, legacy_config_hash, rehash_store


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


def test_rehash_moves_an_old_scheme_result_to_its_new_hash(tmp_path, capsys):
    from fedlib import __version__

    store = ResultStore(tmp_path)
    cfg = small_safl()
    first = run(cfg, store=store, progress=False)
    legacy = legacy_config_hash(cfg.to_dict(), __version__)
    _move(store, cfg.config_hash(), legacy)  # the layout an old fedlib wrote
    assert store.hashes() == [legacy] and store.has(legacy)
    table = rehash_store(store, dry_run=True)
    assert table["action"].tolist() == ["moved"] and store.hashes() == [legacy]  # dry run: untouched
    assert main(["results", "rehash", "--results", str(tmp_path)]) == 0
    assert "moved 1" in capsys.readouterr().out
    assert store.hashes() == [cfg.config_hash()]
    again = run(cfg, store=store, progress=False)
    assert again.cached and again.history.equals(first.history)
    assert json.loads((store.path(cfg) / "summary.json").read_text())["config_hash"] == cfg.config_hash()
    assert rehash_store(store)["action"].tolist() == ["current"]


def test_rehash_keeps_what_it_cannot_prove(tmp_path):
    store = ResultStore(tmp_path)
    cfg = toy()
    run(cfg, store=store, progress=False)
    d = store.path(cfg)
    stray = tmp_path / ("0" * 64)
    d.rename(stray)  # a folder whose name is not the hash of its config under either scheme
    table = rehash_store(store)
    assert table["action"].str.startswith("kept").all() and store.hashes() == ["0" * 64]
