"""Every bad input gets one clear message and nothing runs (issues 19, 33).

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
from fedlib.experiments.running.runner import as_config
from fedlib.experiments.running.sweep import grid, parse_grid, sweep
from fedlib.experiments.results.store import ResultStore

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
    # issue 45: SMoFi's alpha < 0 rule, before any notebook runs
    ("reproduce-smofi-alpha", ["reproduce", "--list", "--only", "smofi/ablations", "-p", "alphas=[-0.5, 0.5]"],
     "alphas of smofi/ablations: SMoFi staleness exponent alpha=0.5 must be < 0"),
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
    # ---- issue 33: tracebacks that became one line
    ("lr-max-inf", _run("options.lr_max=.inf", preset="fedqs-avg-adult-gender-smoke"), "finite number"),
    ("lr-nan", _run("local.lr=.nan"), "finite number"),
    ("alpha-inf", _run("data.alpha=.inf", preset="fedavg-cifar10-smoke"), "finite number"),
    ("preset-5000-chars", ["run", "--preset", "x" * 5000], "is not a preset name"),
    ("results-300-chars", ["run", "--preset", TOY, "--results", "{dir}/" + "r" * 300], "too long"),
    ("config-binary", ["run", "--config", "{dir}/binary.yaml"], "not a text"),
    ("config-folder", ["run", "--config", "{dir}"], "not found"),
    ("bench-clients-huge", ["bench", "engine", "--clients", "1000000000000"], "exceeds the limit"),
    ("bench-batch-huge", ["bench", "engine", "--batch-size", "1000000000"], "exceeds the limit"),
    ("bench-samples-huge", ["bench", "engine", "--clients", "100000", "--steps", "100", "--batch-size",
                            "100"], "would not fit in memory"),
    ("data-fetch-proc", ["data", "fetch", "adult", "--root", "/proc/x"], "data folder"),
    ("reproduce-seeds-text", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "seeds=abc"],
     "seeds='abc' must be a list of integers"),
    ("reproduce-unknown-name", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "seed=[1]"],
     "did you mean seeds?"),
    ("reproduce-only-empty", ["reproduce", "--list", "--only", ""], "--only needs notebook names"),
    ("reproduce-only-nothing", ["reproduce", "--list", "--only"], "--only needs notebook names"),
    ("reproduce-profile-param", ["reproduce", "--list", "--profile", "smoke", "-p", "profile=cpu"],
     "chosen by --profile"),
    ("reproduce-rounds-text", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "rounds=many"],
     "an integer >= 1"),
    # issue 59: -p values are plain YAML, each knob checked by type and range, the variant name bounded
    ("reproduce-tag-pairs", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "readings=!!pairs [[a, b]]"],
     "uses the YAML tag tag:yaml.org,2002:pairs (tags are not accepted"),
    ("reproduce-tag-set", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "readings=!!set {a: null}"],
     "uses the YAML tag"),
    ("reproduce-tag-python", ["reproduce", "--list", "-p", "x=!!python/object/apply:os.system [id]"],
     "uses the YAML tag"),
    ("reproduce-date", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "readings=[2026-12-07]"],
     "holds a date"),
    ("reproduce-too-long", ["reproduce", "--list", "--only", "fedqs/table2", "-p",
                            "readings=[" + ", ".join(["code-main-" + "x" * 20] * 14) + "]"],
     "a file name holds at most 150"),
    ("reproduce-repeats", ["reproduce", "--list", "--only", "fedqs/table2", "-p", "readings=[code-main, code-main]"],
     "readings=['code-main', 'code-main'] must be a list without repeats"),
    ("reproduce-fraction", ["reproduce", "--list", "--only", "smofi/ablations", "-p", "client_fraction=-0.5"],
     "client_fraction=-0.5 must be a number in (0, 1]"),
    ("reproduce-flag", ["reproduce", "--list", "--only", "smofi/ablations", "-p", "first_moment_only=maybe"],
     "first_moment_only='maybe' must be true or false"),
    ("reproduce-fednar-seeds", ["reproduce", "--list", "--only", "smofi/main_accuracy", "-p",
                                "official_fednar_seeds=abc"], "official_fednar_seeds='abc' must be a list of integers"),
    ("seed-huge-hex", _run("seed=0x" + "f" * 5000), "holds an integer of 5,000 digits"),
    # ---- runs that would train nothing or mean nothing
    ("batch-100000", _run("local.batch_size=100000", preset=ADULT), "no client has a full batch"),
    ("max-train-10", _run("data.max_train=10", preset=ADULT), "no client has a full batch"),
    ("lr-0", _run("local.lr=0", preset=ADULT), "local.lr=0"),
    # issue 30: FedQS would clip η0 = local.lr to lr_max at its first adaptation, silently
    ("fedqs-eta0-above-lr-max", _run("local.lr=0.5", preset="fedqs-avg-adult-gender-smoke"),
     "outside its bounds [lr_min, lr_max] = [0.001, 0.2]"),
    ("alpha-1e-300", _run("data.alpha=1e-300", preset="fedavg-cifar10-smoke"), "below 1e-06"),
    ("split-batch-huge", _run("local.batch_size=100000", "local.drop_last=true", "data.max_train=200",
                              preset=SPLIT),
     "no client has a full batch"),
    # ---- unbounded sizes
    ("rounds-1e30", _run("rounds=1e30"), "exceeds the limit of 100,000"),
    ("ratio-1e9", _run("safl.ratio=1000000000", preset=ADULT), "exceeds the limit of 10,000"),
    ("clients-huge", _run("safl.clients=1000000", "data.max_train=null", preset=ADULT), "exceeds the limit"),
    ("split-clients-huge", _run("split.clients=1000000", "data.max_train=null", preset=SPLIT), "exceeds the limit"),
    ("epochs-huge", _run("local.epochs=100000000", preset=ADULT), "exceeds the limit"),
    ("steps-huge", _run("local.steps=100000000", preset=ADULT), "exceeds the limit"),
    ("batch-size-huge", _run("local.batch_size=100000000", preset=ADULT), "exceeds the limit"),
    ("schedule-rounds-1e9", ["safl", "schedule", "--rounds", "1000000000"], "--rounds 1000000000 exceeds"),
    ("schedule-ratio-1e9", ["safl", "schedule", "--delays", "uniform", "--ratio", "1000000000"],
     "--ratio 1000000000 exceeds"),
    ("schedule-clients-huge", ["safl", "schedule", "--delays", "uniform", "--clients", "10000000"],
     "--clients 10000000 exceeds"),
    # ---- keys this run does not read
    ("alpha-on-sex", _run("data.alpha=0.3", preset=ADULT), "not read by this run"),
    ("cut-on-safl", _run("model.cut=layer1", preset=ADULT), "only split FL cuts the model"),
    ("ratio-with-official-delays", _run("safl.ratio=20", preset="fedavg-adult-gender"),
     "only safl.delays=uniform reads it"),
    ("shards-on-sex", _run("data.shards_per_client=3", preset=ADULT), "only partition=shards"),
    ("val-frac-without-validation", _run("data.val_frac=0.3", preset=ADULT), "no validation split"),
    ("roles-on-adult", _run("data.roles=5", preset=ADULT), "only partition=role"),
    ("alpha-on-split-shards", _run("data.alpha=0.3", "data.partition=shards", preset=SPLIT), "not read"),
    # ---- sweep
    ("sweep-grid-axis-twice", ["sweep", "--preset", TOY, "--grid", "safl.k=2", "safl.k=3", "--results",
                               "{tmp}"], "given twice"),
    ("sweep-grid-seed-and-seeds", ["sweep", "--preset", TOY, "--grid", "seed=0,1", "--seeds", "2",
                                   "--results", "{tmp}"], "both set the seeds"),
    # ---- results
    ("rm-not-hex", ["results", "rm", "zz", "--results", "{tmp}"], "not a result hash"),
    ("show-nothing", ["results", "show", "--results", "{tmp}"], "exactly one HASH"),
    # ---- more plain config errors, one line each
    ("k-float", _run("safl.k=2.5", preset=ADULT), "must be an integer"),
    ("rounds-bool", _run("rounds=true"), "must be an integer"),
    ("lr-text", _run("local.lr=abc"), "must be a number"),
    ("section-scalar", _run("data=3", preset=ADULT), "data must be a mapping"),
    ("options-scalar", _run("options=3", preset=ADULT), "options must be a mapping"),
    ("value-as-section", _run("rounds.x=1"), "is a value, not a section"),
    ("empty-key", _run("=3"), "empty key"),
    ("eval-every-0", _run("eval_every=0"), "eval_every must be >= 1"),
    ("checkpoint-every-negative", _run("checkpoint_every=-1"), "checkpoint_every must be >= 0"),
    ("val-frac-1.5", _run("data.validation=holdout", "data.val_frac=1.5", preset=ADULT), "val_frac"),
    ("momentum-1.5", _run("local.momentum=1.5", preset=ADULT), "momentum"),
    ("optimizer", _run("local.optimizer=nope", preset=ADULT), "unknown optimizer"),
    ("profile-label", _run("profile=nope"), "unknown profile"),
    ("engine-backend", _run("backend=nope"), "unknown engine backend"),
    ("safl-mode", _run("safl.mode=nope", preset=ADULT), "unknown safl.mode"),
    ("safl-delays", _run("safl.delays=nope", preset=ADULT), "unknown safl.delays"),
    ("safl-upload", _run("safl.upload=nope", preset=ADULT), "unknown safl.upload"),
    ("safl-scenario", _run("safl.scenario=nope", preset=ADULT), "unknown safl.scenario"),
    ("partition", _run("data.partition=nope", preset=ADULT), "unknown partition"),
    ("normalize", _run("data.normalize=nope", preset=ADULT), "unknown normalisation"),
    ("validation", _run("data.validation=nope", preset=ADULT), "unknown validation split"),
    ("model-name", _run("model.name=nope", preset=ADULT), "unknown model"),
    ("split-framework", _run("split.framework=nope", preset=SPLIT), "unknown split.framework"),
    ("partition-role-on-adult", _run("data.partition=role", preset=ADULT), "only exists for dataset"),
    # ---- issue 44: tracebacks, hangs and silent runs that became one line
    ("toy-dim-1e9", _run("options.dim=1e9"), "options.dim=1000000000 exceeds the limit"),
    ("toy-dim-11-digits", _run("options.dim=99999999999"), "options.dim=99999999999 exceeds the limit"),
    ("toy-samples-11-digits", _run("options.samples_per_client=99999999999"), "exceeds the limit"),
    ("toy-test-samples-11-digits", _run("options.test_samples=99999999999"), "exceeds the limit"),
    ("toy-samples-1e8", _run("options.samples_per_client=99999999"), "exceeds the limit"),
    ("toy-features-x-clients", _run("options.samples_per_client=500000", "safl.clients=200"),
     "features exceed the limit"),
    ("rounds-5000-digits", _run("rounds=" + "9" * 5000), "integer of 5,000 digits"),
    ("yaml-alias-bomb", ["run", "--config", "{dir}/bomb.yaml"], "anchors and aliases are not accepted"),
    ("yaml-recursive-anchor", ["run", "--config", "{dir}/recursive.yaml"], "anchors and aliases are not accepted"),
    ("yaml-huge", ["run", "--config", "{dir}/huge.yaml"], "a config is at most"),
    ("lr-1e-320-toy", _run("local.lr=1e-320"), "float32's smallest normal"),
    ("lr-1e-320-adult", _run("local.lr=1e-320", preset=ADULT), "float32's smallest normal"),
    ("clip-1e-320-adult", _run("local.clip_norm=1e-320", preset=ADULT), "float32's smallest normal"),
    ("lr-x-clip-tiny-adult", _run("local.lr=1e-20", "local.clip_norm=1e-20", preset=ADULT),
     "local.lr x local.clip_norm"),
    ("toy-heterogeneity-1e6", _run("options.heterogeneity=1e6"), "no round can change it"),
    ("results-root", ["run", "--preset", TOY, "--results", "/"], "is the system folder '/'"),
    ("results-etc", ["results", "list", "--results", "/etc"], "system folder"),
    ("import-results-root", ["results", "import", "--results", "/"], "system folder"),
    ("verify-changed-since-bad-rev", ["verify", "--changed-since", "no-such-rev-44", "--ledger", "{dir}"],
     "git cannot list what changed"),
    ("verify-changed-since-option", ["verify", "--changed-since", "--all", "--ledger", "{dir}"],
     "expected one argument"),
]


def _fill(argv, tmp_path):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "broken.yaml").write_text("rounds: [1\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "binary.yaml").write_bytes(bytes(range(128, 256)) * 3)
    lol = ", ".join(["*a"] * 9)
    (tmp_path / "bomb.yaml").write_text("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                                        + "".join(f"{c}: &{c} [{lol.replace('a', p)}]\n"
                                                  for p, c in zip("abcdefgh", "bcdefghi")))
    (tmp_path / "recursive.yaml").write_text("extends: toy-smoke\noptions: &o {x: *o}\n")
    (tmp_path / "huge.yaml").write_text("# " + "x" * (2 << 20) + "\n")
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
    # ---- issue 33
    ("from-preset-none", lambda t: RunConfig.from_preset(None), "non-empty string"),
    ("from-preset-empty", lambda t: RunConfig.from_preset(""), "non-empty string"),
    ("from-preset-long", lambda t: RunConfig.from_preset("x" * 5000), "is not a preset name"),
    ("overrides-int-key", lambda t: _toy().with_overrides({3: 4}), "override key 3"),
    ("overrides-inf-option", lambda t: RunConfig.from_preset("fedqs-avg-adult-gender-smoke")
     .with_overrides(["options.lr_max=.inf"]), "finite number"),
    ("from-dict-nan-lr", lambda t: RunConfig.from_dict({"local": {"lr": float("nan")}}), "finite number"),
    ("from-dict-huge-rounds", lambda t: RunConfig.from_dict({"rounds": 10 ** 30}), "exceeds the limit"),
    ("from-dict-lr-0", lambda t: RunConfig.from_dict({"local": {"lr": 0}}), "local.lr=0"),
    ("from-dict-huge-ratio", lambda t: RunConfig.from_dict({"safl": {"ratio": 10 ** 9}}), "exceeds"),
    ("alpha-tiny", lambda t: RunConfig.from_preset("fedavg-cifar10-smoke", ["data.alpha=1e-300"]),
     "below 1e-06"),
    ("run-trainer-int", lambda t: run(_toy(), trainer=123, store=t, progress=False), "trainer must be"),
    ("store-int", lambda t: ResultStore(123).list(), "must be a folder path"),
    ("store-long", lambda t: ResultStore(t / ("r" * 300)).list(), "too long"),
    ("store-resolve-int", lambda t: ResultStore(t).resolve(123), "must be a string"),
    ("store-rm-not-hex", lambda t: ResultStore(t).rm("zz"), "not a result hash"),
    ("sweep-empty", lambda t: sweep([], progress=True, store=t), "at least one config"),
    ("sweep-seed-configs-and-seeds", lambda t: sweep([_toy(), _toy().replace(seed=1)], seeds=[2], store=t,
                                                      progress=False), "differ only in their seed"),
    ("grid-axis-twice", lambda t: parse_grid(["safl.k=1", "safl.k=2"]), "given twice"),
    ("grid-lr-0", lambda t: grid(_toy(), {"local.lr": [0]}), "local.lr=0"),
    ("unread-alpha", lambda t: RunConfig.from_preset(ADULT).with_overrides(["data.alpha=0.3"]), "not read"),
    ("unread-alpha-nested", lambda t: RunConfig.from_preset(ADULT).with_overrides({"data": {"alpha": 0.3}}),
     "not read"),
    ("unread-cut-replace", lambda t: RunConfig.from_preset(ADULT).replace(model={"cut": "layer1"}), "not read"),
    ("unread-grid", lambda t: grid(RunConfig.from_preset(ADULT), {"data.alpha": [0.1, 0.3]}), "not read"),
    ("run-threads-huge", lambda t: run(_toy(), threads=10 ** 6, store=t, progress=False), "exceeds"),
    ("run-no-full-batch", lambda t: run(RunConfig.from_preset(ADULT, ["local.batch_size=100000"]), store=t,
                                         progress=False), "no client has a full batch"),
    ("run-max-train-10", lambda t: run(RunConfig.from_preset(ADULT, ["data.max_train=10"]), store=t,
                                        progress=False), "no client has a full batch"),
    ("from-yaml-binary", lambda t: RunConfig.from_yaml(_binary(t)), "not a text"),
    # ---- issue 44
    ("from-yaml-none", lambda t: RunConfig.from_yaml(None), "must be given as a path"),
    ("from-yaml-int", lambda t: RunConfig.from_yaml(123), "must be given as a path"),
    ("store-get-none", lambda t: ResultStore(t).get(None), "named by a RunConfig or its config hash"),
    ("store-status-int", lambda t: ResultStore(t).status(5), "named by a RunConfig or its config hash"),
    ("store-write-escape", lambda t: ResultStore(t / "s").write_folder("../escape", {"config.json": b"{}"}),
     "is not a result hash"),
    ("store-path-prefix", lambda t: ResultStore(t).path("abc"), "is not a result hash"),
    ("store-root", lambda t: ResultStore("/"), "system folder"),
    ("store-proc", lambda t: ResultStore("/proc/self"), "system folder"),
    ("ledger-int", lambda t: _ledger(5).hashes(), "must be a folder path"),
    ("ledger-root", lambda t: _ledger("/").hashes(), "system folder"),
    ("ledger-read-escape", lambda t: _ledger(t).read("../../etc"), "is not a ledger entry hash"),
    ("list-presets-int", lambda t: _list_presets(5), "takes a name prefix"),
    ("overrides-5000-digits", lambda t: _toy().with_overrides(["rounds=" + "1" * 5000]), "5,000 digits"),
    ("overrides-alias", lambda t: _toy().with_overrides(["options=&a {x: *a}"]), "anchor"),
    ("toy-dim-huge-dict", lambda t: RunConfig.from_dict({"paradigm": "toy", "algorithm": "fedavg",
                                                         "options": {"dim": 10 ** 11}}), "exceeds the limit"),
    ("lr-denormal-dict", lambda t: RunConfig.from_dict({"local": {"lr": 1e-320}}), "smallest normal"),
]


def _ledger(root):
    from fedlib.experiments.results.ledger import Ledger

    return Ledger(root)


def _list_presets(x):
    from fedlib.experiments.config.presets import list_presets

    return list_presets(x)


def _binary(t):
    (t / "binary.yaml").write_bytes(bytes(range(128, 256)))
    return t / "binary.yaml"


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


def test_table_has_at_least_120_rows():  # issue 33
    assert len(CLI_CASES) + len(API_CASES) + len(ENV_CASES) >= 120


# (id, environment, argv, fragment): the environment is checked before the store is touched
ENV_CASES = [
    ("threads-text", {"FEDLIB_THREADS": "abc"}, _run(), "FEDLIB_THREADS must be an integer"),
    ("threads-huge", {"FEDLIB_THREADS": "100000"}, _run(), "FEDLIB_THREADS=100000 exceeds"),
    ("progress-unknown", {"FEDLIB_PROGRESS": "foo"}, ["run", "--preset", TOY], "unknown FEDLIB_PROGRESS"),
    ("results-env-long", {"FEDLIB_RESULTS": "/tmp/" + "r" * 300}, _run(), "too long"),
    ("results-env-root", {"FEDLIB_RESULTS": "/"}, _run(), "is the system folder '/'"),
    ("results-env-usr", {"FEDLIB_RESULTS": "/usr"}, ["results", "list"], "system folder"),
    ("ledger-env-root", {"FEDLIB_LEDGER": "/"}, ["results", "import", "--results", "/tmp/fedlib-44-unused"],
     "system folder"),
    ("cache-env-empty", {"FEDLIB_CACHE": ""}, ["data", "info", "adult"], "FEDLIB_CACHE is set but empty"),
    ("cache-env-blank", {"FEDLIB_CACHE": "  "}, _run(preset=ADULT), "FEDLIB_CACHE is set but empty"),
]


@pytest.mark.parametrize("name, env, argv, fragment", ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_cli_bad_environment_is_one_clear_error(name, env, argv, fragment, monkeypatch, capsys):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedlib: error: ") and "Traceback" not in err and fragment in err, err


@pytest.mark.parametrize("env", [{"FEDLIB_THREADS": "abc"}, {"FEDLIB_PROGRESS": "foo"},
                                 {"FEDLIB_THREADS": "100000"}])
def test_bad_environment_with_no_resume_keeps_the_finished_result(env, tmp_path, monkeypatch, capsys):
    """Issue 33: the invocation is checked before the store is touched: nothing computed is lost."""
    store = ResultStore(tmp_path)
    res = run(_toy(), store=store, progress=False)
    before = (res.path / "history.csv").read_bytes()
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["run", "--preset", TOY, "--set", "rounds=2", "--no-resume", "--results", str(tmp_path)]) == 2
    assert store.has(res.config_hash) and (res.path / "history.csv").read_bytes() == before


def test_no_resume_keeps_the_old_result_until_the_new_one_replaces_it(tmp_path):
    store = ResultStore(tmp_path)
    res = run(_toy(), store=store, progress=False)

    class Boom:
        def __init__(self, cfg, options):
            raise RuntimeError("trainer failed")

    with pytest.raises(RuntimeError):
        run(_toy(), store=store, progress=False, resume=False, trainer=Boom)
    assert store.has(res.config_hash)  # the failed recompute lost nothing
    again = run(_toy(), store=store, progress=False, resume=False)
    assert not again.cached and again.history.equals(res.history.assign(wall_time=again.history.wall_time))


def test_a_diverging_run_stops_naming_the_round(tmp_path):
    cfg = RunConfig.from_preset(ADULT, ["local.lr=1e30", "rounds=3"])
    with pytest.raises(FedlibError, match=r"diverged: its loss is nan at round 1"):
        run(cfg, store=tmp_path, progress=False)
    assert ResultStore(tmp_path).status(cfg)[0] == "failed"  # not stored as done


def test_a_diverged_run_can_be_recorded_as_its_outcome_with_every_round(tmp_path):
    cfg = RunConfig.from_preset(ADULT, ["local.lr=1e30", "rounds=3"])
    with pytest.raises(FedlibError, match="unknown diverged 'keep'"):
        run(cfg, store=tmp_path, progress=False, diverged="keep")
    res = run(cfg, store=tmp_path, progress=False, diverged="record")
    h = res.history
    assert list(h["round"]) == [1, 2, 3] and res.summary["diverged_round"] == 1
    assert h["accuracy"].nunique() == 1  # the later rounds repeat round 1's evaluation and train nothing:
    assert h.iloc[1:].drop(columns=["round", "accuracy", "loss", "wall_time"]).isna().all().all()
    again = run(cfg, store=tmp_path, progress=False)  # stored as done: the default mode reads it, no error
    assert again.cached and again.summary["diverged_round"] == 1
    from fedlib.experiments import sweep

    cfg2 = cfg.replace(seed=1)
    table = sweep([cfg2], workers=1, store=tmp_path, progress=False, diverged="record")
    assert list(table["status"]) == ["done"] and ResultStore(tmp_path).get(cfg2).summary["diverged_round"] == 1


def test_rm_asks_before_a_short_prefix_and_reports_what_it_could_not_remove(tmp_path, monkeypatch, capsys):
    res = run(_toy(), store=tmp_path, progress=False)
    h = res.config_hash
    assert main(["results", "rm", h[:1], "--results", str(tmp_path)]) == 2
    assert "too short" in capsys.readouterr().err and ResultStore(tmp_path).has(h)
    import os

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "rename", refuse)  # a read-only store (the tests may run as root)
    assert main(["results", "rm", h[:8], "--results", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert "could not remove" in out.err and "removed" not in out.out and ResultStore(tmp_path).has(h)
    monkeypatch.undo()
    assert main(["results", "rm", h[:3], "--yes", "--results", str(tmp_path)]) == 0
    assert f"removed {h}" in capsys.readouterr().out and ResultStore(tmp_path).hashes() == []


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


def test_numpy_and_torch_integers_are_integers():
    import numpy as np

    cfg = _toy()
    a = cfg.with_overrides({"rounds": np.int64(3), "safl.k": torch.tensor(2), "local.lr": np.float32(0.5)})
    b = cfg.with_overrides({"rounds": 3, "safl.k": 2, "local.lr": 0.5})
    assert (a.rounds, a.safl.k, type(a.rounds)) == (3, 2, int) and a.config_hash() == b.config_hash()


def test_with_overrides_merges_a_section_dict_as_replace_does():
    """Issue 33: {'local': {'lr': 0.05}} used to reset the preset's other local fields."""
    cfg = RunConfig.from_preset(ADULT)
    merged = cfg.with_overrides({"local": {"lr": 0.05}})
    assert merged.to_dict() == cfg.replace(local={"lr": 0.05}).to_dict()
    assert merged.local.batch_size == cfg.local.batch_size == 50 and merged.local.clip_norm == 20.0
    assert merged.to_dict() == cfg.with_overrides(["local.lr=0.05"]).to_dict()
    cells = grid(cfg, {"local": [{"lr": 0.05}, {"lr": 0.2}]})
    assert [c.local.lr for c in cells] == [0.05, 0.2] and all(c.local.drop_last for c in cells)


def test_an_unread_key_set_to_its_own_value_is_accepted():
    cfg = RunConfig.from_preset(ADULT)
    assert cfg.with_overrides([f"data.alpha={cfg.data.alpha}"]).config_hash() == cfg.config_hash()
    cifar = RunConfig.from_preset("fedavg-cifar10-smoke")
    assert cifar.with_overrides(["data.alpha=0.3"]).data.alpha == 0.3  # read by a Dirichlet split


def test_cli_runs_with_lr_in_scientific_notation(tmp_path, capsys):
    code = main(_run("local.lr=1e-3", "rounds=2", preset=ADULT) + ["--results", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert '"rounds": 2' in capsys.readouterr().out


def test_sflv2_with_a_dropout_model_is_refused_when_the_config_is_built():
    """SFLV2's explicit path draws no dropout masks: a model with dropout (cnn3) is refused before any run
    starts (it used to fail at round 1 of every run), naming the layers and the fix."""
    with pytest.raises(FedlibError, match=r"model 'cnn3' has dropout: fc1.2 \(p=0.3\).*\n  fix: use a model without"):
        RunConfig.from_preset("sflv1-cifar10-smoke", ["algorithm=fedavg", "split.framework=sflv2", "model.name=cnn3"])
    cfg = RunConfig.from_preset("sflv1-cifar10-smoke", ["algorithm=fedavg", "split.framework=sflv2", "model.name=cnn"])
    assert cfg.split.framework == "sflv2"
    RunConfig.from_preset("sflv1-cifar10-smoke", ["model.name=cnn3"])  # SFLV1 trains dropout models (stacked path)


# ------------------------------------------------------------ output paths (issue 59, Why 3)
def test_the_output_path_predicate_names_devices_fifos_and_folders(tmp_path):
    import os

    from fedlib.core.utils import output_kind

    assert output_kind("/dev/null") == "a device"  # only stat'ed, never written
    assert output_kind(tmp_path) == "a folder"
    os.mkfifo(tmp_path / "fifo")
    assert output_kind(tmp_path / "fifo") == "a FIFO (named pipe)"
    (tmp_path / "plain").write_text("x")
    assert output_kind(tmp_path / "plain") is None and output_kind(tmp_path / "new") is None
    os.symlink("/dev/null", tmp_path / "link")
    assert output_kind(tmp_path / "link") == "a device"  # what a link leads to counts


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_fifo_or_a_folder_is_never_replaced_by_an_output_file(kind, tmp_path, capsys):
    import os
    import stat

    from fedlib.core.utils import atomic_write_bytes

    target = tmp_path / kind
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    with pytest.raises(FedlibError, match="not a regular file"):
        atomic_write_bytes(target, b"x")
    # verify --record names it before anything is recomputed
    assert main(["verify", "--record", str(target), "--ledger", str(tmp_path / "noledger")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fedlib: error: the drift record (--record)") and "Traceback" not in err, err
    mode = os.lstat(target).st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISDIR(mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [kind]  # no temporary left beside it


# ------------------------------------------------------------ verify's choices (issue 59, Why 6)
@pytest.mark.parametrize("argv, fragment", [
    (["verify", "--only"], "--only needs at least one report name"),
    (["verify", "--profile", "nope"], "--profile nope only chooses reports with --only"),
    (["verify", "--only", "fedqs", "--profile", "nope"], "unknown profile 'nope'"),
])
def test_verify_choices_that_would_be_ignored_are_refused(argv, fragment, tmp_path, capsys):
    assert main(argv + ["--ledger", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err, err


def test_a_report_path_that_is_a_fifo_is_refused_before_the_notebook_runs(tmp_path):
    import os

    from fedlib.reproduce import execute, project_root

    root = project_root()
    book = root / "notebooks" / "fedqs" / "table2_accuracy.ipynb"
    (tmp_path / "fedqs").mkdir()
    os.mkfifo(tmp_path / "fedqs" / "table2_accuracy.ipynb")
    with pytest.raises(FedlibError, match="the report .* is a FIFO"):
        execute(book, root, tmp_path, "smoke")
