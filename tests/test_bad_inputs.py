"""Every bad input gets one clear message and nothing runs (issue 19).

CLI rows: ``fedlib ...`` exits with status 2 and prints ``fedlib: error: <problem>`` (and its fix)
without a traceback. API rows: the call raises :class:`FedlibError`. Valid inputs that used to be
refused (``local.lr=1e-3``) are accepted.
"""

from __future__ import annotations

import pytest
import torch

from fedlib.cli import main
from fedlib.core.errors import FedlibError
from fedlib.experiments import RunConfig, run
from fedlib.experiments.runner import as_config
from fedlib.experiments.sweep import grid, sweep

NO_CUDA = not torch.cuda.is_available()
cuda_only = pytest.mark.skipif(not NO_CUDA, reason="this machine has CUDA")
ADULT = "fedavg-adult-gender-smoke"
TOY = "toy-smoke"
SPLIT = "smofi-cifar10-smoke"


def _run(*sets, preset=TOY):
    return ["run", "--preset", preset, "--quiet"] + [a for s in sets for a in ("--set", s)]


# (id, argv, a fragment the message must hold); "{file}" is a regular file, "{tmp}" a folder
CLI_CASES = [
    ("unknown-preset", ["run", "--preset", "fedqs-avg-cifar100"], "did you mean fedqs-avg-cifar10?"),
    ("rounds-0", _run("rounds=0"), "rounds must be >= 1"),
    ("rounds-text", _run("rounds=abc"), "rounds must be an integer"),
    ("epochs-0", _run("local.epochs=0", preset=ADULT), "train nothing"),
    ("steps-0", _run("local.steps=0", preset=ADULT), "train nothing"),
    ("device-banana", _run("device=banana"), "unknown device 'banana'"),
    pytest.param("device-cuda", _run("device=cuda", preset=ADULT), "no usable CUDA GPU",
                 marks=cuda_only, id="device-cuda"),
    ("cnn-on-adult", _run("model.name=cnn", preset=ADULT), "use a model for tabular data: fcn"),
    ("lstm-on-cifar", _run("model.name=lstm", preset="fedavg-cifar10-smoke"), "image data"),
    ("max-train-below-clients", _run("data.max_train=5", preset=ADULT), "train on nothing"),
    ("shards-too-few", _run("data.partition=shards", "data.max_train=15",
                            preset="fedavg-cifar10-smoke"), "shards"),
    ("unknown-section", _run("nosuch.key=1"), "unknown config key 'nosuch'"),
    ("unknown-key", _run("safl.kk=3"), "did you mean safl.k?"),
    ("k-above-clients", _run("safl.k=50", preset=ADULT), "exceeds safl.clients"),
    ("unclosed-list", _run("safl.k=[1"), "cannot parse the value"),
    ("no-equals", _run("justtext"), "not of the form key=value"),
    ("alpha-0", _run("data.alpha=0", preset="fedavg-cifar10-smoke"), "must be > 0"),
    ("alpha-negative-sci", _run("data.alpha=-1e-3", preset="fedavg-cifar10-smoke"), "must be > 0"),
    ("lr-negative", _run("local.lr=-1"), "learning rate"),
    ("paradigm", _run("paradigm=nope"), "unknown paradigm"),
    ("algorithm", _run("algorithm=nope"), "nope"),
    ("option", _run("options.nope=1"), "unknown option"),
    ("dataset", _run("data.dataset=mnist", preset=ADULT), "unknown dataset 'mnist'"),
    ("seed-negative", _run("seed=-1"), "seed must be >= 0"),
    ("per-round-above-clients", _run("split.per_round=50", preset=SPLIT), "exceeds split.clients"),
    ("cut", _run("model.cut=nope", preset=SPLIT), "has no cut point"),
    ("results-under-a-file", ["run", "--preset", TOY, "--results", "{file}/sub"], "not a folder"),
    ("results-is-a-file", ["run", "--preset", TOY, "--results", "{file}"], "not a folder"),
    ("missing-yaml", ["run", "--config", "{dir}/missing.yaml"], "not found"),
    ("broken-yaml", ["run", "--config", "{dir}/broken.yaml"], "cannot parse YAML"),
    ("list-yaml", ["run", "--config", "{dir}/list.yaml"], "mapping at the top level"),
    ("show-unknown", ["results", "show", "abc123", "--results", "{tmp}"], "no result"),
    ("rm-nothing", ["results", "rm", "--results", "{tmp}"], "takes HASH prefix"),
    ("list-file-store", ["results", "list", "--results", "{file}"], "is a file"),
    ("sweep-seed-negative", ["sweep", "--preset", TOY, "--seeds", "-1", "--results", "{tmp}"],
     "seeds must be"),
    ("sweep-grid-no-equals", ["sweep", "--preset", TOY, "--grid", "safl.k", "--results", "{tmp}"],
     "not of the form"),
    ("sweep-workers-0", ["sweep", "--preset", TOY, "--workers", "0", "--results", "{tmp}"],
     "workers must be"),
    ("reproduce-param", ["reproduce", "--list", "-p", "tasks=[adult"], "cannot parse notebook parameter"),
    ("bench-device-banana", ["bench", "engine", "--device", "banana"], "unknown device"),
    pytest.param("bench-device-cuda", ["bench", "engine", "--device", "cuda"], "no usable CUDA",
                 marks=cuda_only, id="bench-device-cuda"),
    ("bench-steps", ["bench", "engine", "--steps", "-3"], "--steps must be >= 1"),
    ("bench-threads", ["bench", "engine", "--threads", "-4"], "--threads must be an integer >= 0"),
    ("bench-clients", ["bench", "engine", "--clients", "0"], "--clients must be >= 1"),
    ("schedule-seed", ["safl", "schedule", "--seed", "-1"], "--seed must be >= 0"),
    ("schedule-k", ["safl", "schedule", "--k", "200"], "exceeds --clients"),
    ("compare-paradigm", ["split", "compare", "--preset", "smofi-cifar10-cpu", "--baseline",
                          "fedavg-adult-gender", "--results", "{tmp}"], "not the same experiment"),
    ("compare-profile", ["split", "compare", "--preset", "smofi-cifar10-cpu", "--baseline",
                         "sflv1-cifar10-smoke", "--results", "{tmp}"], "profile 'cpu' vs 'smoke'"),
    ("data-unknown", ["data", "info", "mnist"], "invalid choice: 'mnist'"),
    ("sweep-seed-text", ["sweep", "--preset", TOY, "--seeds", "a"], "invalid int value"),
]


def _fill(argv, tmp_path):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "broken.yaml").write_text("rounds: [1\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    return [a.replace("{file}", str(tmp_path / "afile")).replace("{tmp}", str(tmp_path / "store"))
            .replace("{dir}", str(tmp_path)) for a in argv]


@pytest.mark.parametrize("name, argv, fragment", CLI_CASES,
                         ids=[c[0] if isinstance(c, tuple) else c.id for c in CLI_CASES])
def test_cli_bad_input_is_one_clear_error(name, argv, fragment, tmp_path, capsys):
    code = main(_fill(argv, tmp_path))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("fedlib: error: ") and "Traceback" not in err, err
    assert fragment in err, err
    assert len(err) < 1500, err  # no list of every preset
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


def test_results_env_pointing_at_a_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "afile"))
    assert main(_run()) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedlib: error: ") and "FEDLIB_RESULTS" in err and "Traceback" not in err


def test_fedlib_threads_env(monkeypatch, capsys):
    monkeypatch.setenv("FEDLIB_THREADS", "-2")
    assert main(_run()) == 2
    assert "FEDLIB_THREADS must be an integer" in capsys.readouterr().err


def _toy():
    return RunConfig.from_preset(TOY).with_overrides(["rounds=2"])


API_CASES = [
    ("from-dict-list", lambda t: RunConfig.from_dict([1, 2]), "must be a mapping"),
    ("from-dict-str", lambda t: RunConfig.from_dict("rounds=3"), "must be a mapping"),
    ("from-dict-zero", lambda t: RunConfig.from_dict(0), "must be a mapping"),
    ("from-dict-bad-lr", lambda t: RunConfig.from_dict({"local": {"lr": "abc"}}), "local.lr"),
    ("section-not-mapping", lambda t: RunConfig.from_dict({"safl": 3}), "safl must be a mapping"),
    ("grid-scalar-axis", lambda t: grid(_toy(), {"safl.k": 5}), "non-empty list"),
    ("grid-empty-axis", lambda t: grid(_toy(), {"safl.k": []}), "non-empty list"),
    ("grid-not-dict", lambda t: grid(_toy(), ["safl.k=2"]), "must be a dict"),
    ("sweep-text-seed", lambda t: sweep([_toy()], seeds=["a"], store=t, progress=False), "seeds"),
    ("sweep-negative-seed", lambda t: sweep([_toy()], seeds=[-1], store=t, progress=False), "seeds"),
    ("sweep-workers", lambda t: sweep([_toy()], workers=0, store=t, progress=False), "workers"),
    ("sweep-store-file", lambda t: sweep([_toy()], store=t / "afile", progress=False), "not a folder"),
    ("run-threads", lambda t: run(_toy(), threads=-1, store=t, progress=False), "threads"),
    ("run-store-file", lambda t: run(_toy(), store=t / "afile", progress=False), "not a folder"),
    ("run-store-type", lambda t: run(_toy(), store=123, progress=False), "store must be"),
    ("as-config-int", lambda t: as_config(42), "cannot make a run configuration"),
    ("preset-suggestions", lambda t: RunConfig.from_preset("fedqs-avg-cifar100"), "did you mean"),
    pytest.param("run-cuda", lambda t: run(RunConfig.from_preset(ADULT, ["device=cuda"]), store=t,
                                            progress=False), "no usable CUDA",
                 marks=cuda_only, id="run-cuda"),
]


@pytest.mark.parametrize("name, call, fragment", API_CASES,
                         ids=[c[0] if isinstance(c, tuple) else c.id for c in API_CASES])
def test_api_bad_input_raises_fedlib_error(name, call, fragment, tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FedlibError) as info:
        call(tmp_path)
    assert fragment in str(info.value)
    assert len(str(info.value)) < 1500


def test_table_has_at_least_40_rows():
    assert len(CLI_CASES) + len(API_CASES) >= 40


# ------------------------------------------------------------------ valid inputs are accepted
@pytest.mark.parametrize("value, expected", [("1e-3", 1e-3), ("1E-3", 1e-3), ("2.5e-2", 0.025)])
def test_scientific_notation_is_a_number(value, expected):
    cfg = RunConfig.from_preset(ADULT).with_overrides([f"local.lr={value}"])
    assert cfg.local.lr == expected
    assert RunConfig.from_dict({"local": {"lr": value}}).local.lr == expected


def test_tiny_alpha_and_yaml_scientific_notation(tmp_path):
    # issue 33: 1e-6 is the smallest alpha accepted (below it every value gives the same split)
    cfg = RunConfig.from_preset("fedavg-cifar10-smoke").with_overrides(["data.alpha=1e-6"])
    assert cfg.data.alpha == 1e-6
    path = tmp_path / "mine.yaml"
    path.write_text(f"extends: {ADULT}\nlocal:\n  lr: 1e-3\n")
    assert RunConfig.from_yaml(path).local.lr == 1e-3


def test_cli_runs_with_lr_in_scientific_notation(tmp_path, capsys):
    code = main(_run("local.lr=1e-3", "rounds=2", preset=ADULT) + ["--results", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert '"rounds": 2' in capsys.readouterr().out
