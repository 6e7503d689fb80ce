"""``fedlib results list``: filters (--profile, --algorithm, --report), --limit, no internal labels."""

import json

from fedlib.cli import main
from fedlib.experiments import RunConfig, ResultStore, run


def _store(tmp_path):
    store = ResultStore(tmp_path / "results")
    base = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=2"])
    made = {"smoke0": run(base, store=store, progress=False),
            "smoke1": run(base.replace(seed=1), store=store, progress=False),
            "custom": run(base.replace(profile="custom", seed=2), store=store, progress=False)}
    return store, {k: r.config_hash[:12] for k, r in made.items()}


def _listed(capsys, *args) -> str:
    assert main(["results", "list", *args]) == 0
    return capsys.readouterr().out


def test_results_list_filters_and_pages(tmp_path, capsys, monkeypatch):
    store, h = _store(tmp_path)
    where = ["--results", str(store.root)]
    every = _listed(capsys, *where)
    assert all(x in every for x in h.values()) and "3 of 3 run(s)" in every
    assert " custom scale " in every and " custom " not in every.replace("custom scale", "")
    custom = _listed(capsys, *where, "--profile", "custom scale")
    assert h["custom"] in custom and h["smoke0"] not in custom and "1 of 1 run(s) matching the filters" in custom
    assert "3 of 3" in _listed(capsys, *where, "--algorithm", "fedavg")
    assert "(no results matching the filters (of 3)" in _listed(capsys, *where, "--algorithm", "fedqs-avg")
    two = _listed(capsys, *where, "--limit", "2")
    assert sum(x in two for x in h.values()) == 2 and "2 of 3 run(s)" in two and "--limit 0 shows all" in two
    rows = json.loads(_listed(capsys, *where, "--json", "--profile", "smoke"))
    assert {r["hash"] for r in rows} == {h["smoke0"], h["smoke1"]}
    reports = tmp_path / "reports" / "cpu" / "fedqs"
    reports.mkdir(parents=True)
    (reports / "t3.runs.json").write_text(json.dumps({"runs": [h["smoke1"] + "0" * 52]}))
    monkeypatch.setenv("FEDLIB_LEDGER", str(tmp_path / "ledger"))  # reports/ is beside the ledger
    t3 = _listed(capsys, *where, "--report", "fedqs/t3")
    assert h["smoke1"] in t3 and h["smoke0"] not in t3
    assert main(["results", "list", *where, "--report", "nope"]) == 2
    assert "no report matches 'nope'" in capsys.readouterr().err


def test_every_subcommand_has_a_description():
    """``fedlib COMMAND --help`` says what COMMAND does, for every command and sub-command."""
    import argparse

    from fedlib.cli import build_parser

    def walk(parser, name):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield f"{name} {sub_name}", sub
                    yield from walk(sub, f"{name} {sub_name}")

    commands = dict(walk(build_parser(), "fedlib"))
    assert {"fedlib reproduce", "fedlib verify", "fedlib scoreboard", "fedlib presets"} <= set(commands)
    assert [name for name, sub in commands.items() if not (sub.description or "").strip()] == []
