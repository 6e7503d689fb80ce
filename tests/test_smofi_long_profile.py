"""The SMoFi ``long`` profile (issue 43), checked without training: the runs its notebooks build, and
that nothing picks it unless asked (``auto``, CI, ``make reproduce``)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOKS = ROOT / "notebooks" / "smofi"


def notebook_namespace(name: str, profile: str, upto: str) -> dict:
    """Execute the code cells of ``notebooks/smofi/<name>.py`` (the jupytext twin), with the parameters
    cell's ``profile = "auto"`` set to ``profile``, until a cell defines ``upto``; return the namespace.
    Only cells that build settings and configs run before ``upto`` (no data, no training)."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("seaborn")
    text = (BOOKS / f"{name}.py").read_text(encoding="utf-8")
    cells = [c for c in text.split("\n# %%")[1:] if not c.lstrip().startswith("[markdown]")]
    ns: dict = {"__name__": f"nb_{name}"}
    for cell in cells:
        if 'tags=["parameters"]' in cell.splitlines()[0]:
            assert 'profile = "auto"' in cell
            cell = cell.replace('profile = "auto"', f'profile = "{profile}"', 1)
        exec(compile("# %%" + cell, f"{name}.py", "exec"), ns)  # noqa: S102 - the project's own notebook
        if upto in ns:
            return ns
    raise AssertionError(f"{name}.py never defines {upto!r}")


def main_long_configs() -> dict:
    """main_accuracy's planned long runs (``LONG_METHODS``) by (method, seed), built as the notebook builds them."""
    from fedlib.studies.smofi.main_accuracy import LONG_METHODS, LONG_SEEDS, METHODS

    study = notebook_namespace("main_accuracy", "long", "study")["study"]
    S, config = study.S, study.config
    return {(name, seed): config(d, METHODS[name], seed, part) for d in S["datasets"] for part in S["participations"]
            for name in (LONG_METHODS if part == "partial" else S["methods"]) for seed in LONG_SEEDS}


def test_main_accuracy_long_is_all_of_cifar10_20_clients_10_per_round_dirichlet_5_seeds():
    from fedlib.reporting.smofi import SMOFI_LONG_CADENCE, SMOFI_LONG_ROUNDS
    from fedlib.studies.smofi.main_accuracy import LONG_METHODS, LONG_SEEDS

    study = notebook_namespace("main_accuracy", "long", "study")["study"]
    ns = {"S": study.S}
    assert study.label == "custom"  # the long runs' store label (RunConfig knows smoke / cpu / paper / custom)
    assert ns["S"]["participations"] == ["partial"] and ns["S"]["datasets"] == ["cifar10"]
    # the default execution runs the whole plan: the paper's main-table rows and both plug-in pairs
    assert ns["S"]["partial_methods"] == LONG_METHODS == ["FedAvg", "+ FedAvgM", "+ SlowMo", "+ SMoFi", "FedProx",
                                                          "FedProx + SMoFi", "FedNAR", "FedNAR + SMoFi"]
    assert ns["S"]["official_fednar_seeds"] == [0]  # FedNAR's official L2 beside the long reading
    assert LONG_SEEDS == [0, 1, 2, 3, 4] and ns["S"]["seeds"] == LONG_SEEDS
    cfgs = main_long_configs()
    assert sorted({m for m, _ in cfgs}) == sorted(["FedAvg", "+ FedAvgM", "+ SlowMo", "+ SMoFi", "FedProx",
                                                    "FedProx + SMoFi", "FedNAR", "FedNAR + SMoFi"])
    assert sorted({s for _, s in cfgs}) == [0, 1, 2, 3, 4]
    assert len({c.config_hash(None) for c in cfgs.values()}) == 40
    for cfg in cfgs.values():
        assert cfg.data.dataset == "cifar10" and cfg.data.max_train is None and cfg.data.max_test is None
        assert (cfg.data.partition, cfg.data.alpha) == ("dirichlet", 0.1)
        assert (cfg.split.clients, cfg.split.per_round, cfg.split.framework) == (20, 10, "sflv1")
        assert (cfg.model.name, cfg.model.cut) == (ns["S"]["model"], "conv1") and cfg.model.name in ("cnn", "cnn3")
        assert (cfg.local.batch_size, cfg.local.epochs, cfg.local.lr, cfg.local.weight_decay) == (32, 1, 0.01, 5e-4)
        assert cfg.local.momentum == 0.9 and cfg.device == "cpu" and cfg.profile == "custom"
        assert (cfg.rounds, cfg.eval_every, cfg.eval_last) == (SMOFI_LONG_ROUNDS, SMOFI_LONG_CADENCE["eval_every"],
                                                               SMOFI_LONG_CADENCE["eval_last"])
    assert 50 <= SMOFI_LONG_ROUNDS <= 200


def test_long_fednar_reads_l2_001_and_the_official_l2_stays_reachable():
    """[D] spec §4: at long FedNAR (alone and + SMoFi) trains with L2 0.01, the official 0.1 is the reading beside it
    (an explicit override); no other method and no other profile carries an L2 change."""
    from fedlib.reporting import smofi_configs
    from fedlib.reporting.smofi import SMOFI_LONG_FEDNAR_L2
    from fedlib.split.bases import FedNAROptions

    cfgs = main_long_configs()
    assert SMOFI_LONG_FEDNAR_L2 == 0.01 and FedNAROptions().l2 == 0.1
    for (name, _), cfg in cfgs.items():
        assert cfg.options.get("l2") == (0.01 if name.startswith("FedNAR") else None)
    study = notebook_namespace("main_accuracy", "long", "study")["study"]
    config = smofi_configs("long", study.label, study.S)
    official = config("cifar10", "fednar", 0, "partial", **{"options.l2": FedNAROptions().l2})
    assert official.options["l2"] == 0.1 and official.config_hash(None) != cfgs[("FedNAR", 0)].config_hash(None)
    cpu = notebook_namespace("main_accuracy", "cpu", "study")["study"]
    cpu_cfg = smofi_configs("cpu", cpu.label, cpu.S)("cifar10", "fednar", 0, "full")
    assert cpu_cfg.options["l2"] == 0.1 and cpu.S["official_fednar_seeds"] == []


def test_long_data_is_all_50000_train_and_10000_test_images(monkeypatch):
    """Where the data is present, the long profile's run loads every image and spreads it over 20 clients."""
    import os

    from fedlib.core.errors import FedlibError
    from fedlib.split.sfl import prepare_data

    if not os.environ.get("FEDLIB_DATA"):
        pytest.skip("needs FEDLIB_DATA (real CIFAR-10)")
    cfg = main_long_configs()[("FedAvg", 0)]
    try:
        ds, parts = prepare_data(cfg)
    except FedlibError as err:
        pytest.skip(f"CIFAR-10 not here: {err}")
    assert (len(ds.train_y), len(ds.test_y), len(parts)) == (50_000, 10_000, 20)
    assert sum(len(p) for p in parts) == 50_000


def test_ablations_long_screens_every_reading_against_fedavg_sharing_main_runs():
    from fedlib.studies.smofi.ablations import LONG_ALPHAS

    study = notebook_namespace("ablations", "long", "study")["study"]
    ns = {"S": study.S, "LONG_ALPHAS": LONG_ALPHAS}
    cells, unique = study.cells, study.configs
    labels = sorted({label for _, label, *_ in cells})
    # the default execution: `text` at every planned α (−0.05, −0.1, −0.5, −1), every other reading at α = −0.1,
    # `fresh` also on FedProx and FedNAR (their no-fusion runs beside), α's two ends under `data-share` too
    # and FedAvgM / SlowMo, the main table's momentum baselines every other reading is paired with (`rivals`)
    assert labels == sorted(["FedAvg (no fusion)", "FedProx (no fusion)", "FedNAR (no fusion)",
                             "+ FedAvgM (no fusion)", "+ SlowMo (no fusion)",
                             "reading text, α=-0.05", "reading text, α=-0.1", "reading text, α=-0.5", "reading text, α=-1",
                             "reading text-weighted, α=-0.1", "reading data-share, α=-0.1", "reading fresh, α=-0.1",
                             "reading drop-J, α=-0.1", "reading data-share, α=-0.05", "reading data-share, α=-1"])
    assert ns["LONG_ALPHAS"] == [-0.05, -0.1, -0.5, -1.0] and ns["S"]["alphas"] == ns["LONG_ALPHAS"]
    assert {fam for fam, *_ in cells} == {"staleness"} and {0, 1, 2} <= {c[3] for c in cells}
    # the screen's readings run on the seeds `rule_seeds` names (fresh on every seed)
    seeds = {label: sorted(c[3] for c in cells if c[1] == label and c[2] in ("SMoFi", "FedAvg", "FedProx", "FedNAR"))
             for label in labels}
    rule_seeds = ns["S"]["rule_seeds"]
    for rule in ns["S"]["rules"]:
        assert seeds[f"reading {rule}, α=-0.1"] == sorted(rule_seeds.get(rule, ns["S"]["seeds"]))
    # FedAvg runs on every seed a row runs, so every row is paired; FedProx / FedNAR on the seeds of `fresh`
    assert seeds["FedAvg (no fusion)"] == sorted({*ns["S"]["seeds"], *(x for v in rule_seeds.values() for x in v)})
    assert seeds["FedProx (no fusion)"] == seeds["FedNAR (no fusion)"] == rule_seeds["fresh"]
    on_bases = sum(len(b) * len(rule_seeds[r]) for r, b in ns["S"]["rule_bases"].items())
    alphas = sum(len(a) * len(rule_seeds[r]) for r, a in ns["S"]["reading_alphas"].items())
    rivals = {c.config_hash(None) for _, label, *_, c in cells if label.startswith("+ ")}
    assert len(rivals) == 2 * len(seeds["FedAvg (no fusion)"])  # each on every seed a reading naming it runs
    assert len(unique) == len(seeds["FedAvg (no fusion)"]) + 4 * len(ns["S"]["seeds"]) + sum(
        len(rule_seeds.get(r, ns["S"]["seeds"])) for r in ns["S"]["rules"]) + 2 * on_bases + alphas + len(rivals)
    main = {c.config_hash(None) for c in main_long_configs().values()}
    shared = [c for c in unique.values() if c.config_hash(None) in main]
    # main_accuracy's runs: FedAvg on every seed the screen pairs, SMoFi (text, α = −0.1) on seeds 0–2, and the
    # FedProx / FedNAR base runs the `fresh` rows pair with, and the momentum baselines
    assert len(shared) == len(seeds["FedAvg (no fusion)"]) + len(ns["S"]["seeds"]) + on_bases + len(rivals)
    for cfg in unique.values():
        assert (cfg.split.clients, cfg.split.per_round, cfg.data.max_train, cfg.data.partition) == \
            (20, 10, None, "dirichlet")
    drop = [c for fam, label, *_, c in cells if label.startswith("drop")]
    assert all(c.options["stale"] == "drop" and c.options["renormalise"] is True for c in drop)


def test_frameworks_long_is_sflv2_vs_sflv1_five_seeds_and_speedup_long_needs_no_new_run():
    main = {c.config_hash(None) for c in main_long_configs().values()}
    study = notebook_namespace("frameworks", "long", "study")["study"]  # the cell that stops before any run
    S = study.S
    assert S["frameworks"] == ["SFLV1", "SFLV2"] and S["seeds"] == [0, 1, 2, 3, 4] and S["participations"] == ["partial"]
    cfgs = {(fw, seed): study.config(d, fw, seed, part) for d in S["datasets"] for part in S["participations"]
            for fw in study.frameworks_of(part) for seed in S["seeds"]}
    assert len(cfgs) == 10
    # SFLV2's explicit path draws no dropout masks: the long comparison runs on `cnn` (cnn3 has dropout), so its
    # SFLV1 runs are its own, not main_accuracy's cnn3 FedAvg
    assert {c.model.name for c in cfgs.values()} == {"cnn"}
    assert not any(c.config_hash(None) in main for c in cfgs.values())
    assert all(cfgs[("SFLV2", s)].split.framework == "sflv2" for s in range(5))
    from fedlib.studies.smofi.convergence_speedup import PAIRS

    sp = notebook_namespace("convergence_speedup", "long", "study")["study"]
    S, config, METHODS = sp.S, sp.config, sp.methods
    runs = {config(d, METHODS[m], seed, part).config_hash(None) for d in S["datasets"]
            for part in S["participations"] for pair in PAIRS for m in PAIRS[pair]
            for seed in range(5)}
    assert runs <= main and len(runs) == 40  # every pair of the plan reads main_accuracy's planned runs
    default = {config(d, METHODS[m], seed, part).config_hash(None) for d in S["datasets"]
               for part in S["participations"] for pair in S["partial_pairs"] for m in PAIRS[pair]
               for seed in S["seeds"]}
    assert len(default) == 8 * len(S["seeds"])  # by default every pair: the eight methods of main_accuracy's plan


def test_cpu_configs_keep_their_cadence_and_label():
    """The long profile's additions leave the other profiles' runs as they were (every round evaluated)."""
    from fedlib.reporting.smofi import SMOFI_PARTICIPATION, smofi_config, smofi_label

    for part in SMOFI_PARTICIPATION["cpu"]:
        cfg = smofi_config("cpu", "cifar10", "fedavg+smofi", 0, part, label="cpu", model="cnn", cut="conv1",
                           max_test=5000)
        assert (cfg.eval_every, cfg.eval_last, cfg.profile) == (1, 0, "cpu")
    assert smofi_label({"rounds": None}, {"rounds": None}, "cpu", ("rounds",)) == "cpu"
    assert smofi_label({"rounds": None}, {"rounds": None}, "long", ("rounds",)) == "custom"


def test_long_is_never_the_default_and_runs_only_the_notebooks_that_define_it(monkeypatch):
    from fedlib.reporting import PARTIAL_PROFILES, resolve_profile
    from fedlib.reproduce import books_for, find_notebooks, notebook_profiles

    monkeypatch.delenv("FEDLIB_PROFILE", raising=False)
    assert resolve_profile("auto") in ("cpu", "paper") and "long" in PARTIAL_PROFILES
    for name in ("main_accuracy", "ablations", "frameworks", "convergence_speedup"):
        assert notebook_profiles(BOOKS / f"{name}.ipynb") == {"smoke", "cpu", "paper", "long"}
    smofi = [str(b.relative_to(ROOT / "notebooks")) for b in books_for(find_notebooks(ROOT, ["smofi/"]), "long", ROOT)]
    assert smofi == ["smofi/ablations.ipynb", "smofi/convergence_speedup.ipynb", "smofi/frameworks.ipynb",
                     "smofi/main_accuracy.ipynb"]


def test_a_planned_piece_left_out_is_a_priced_not_run_row():
    from fedlib.reporting.smofi import planned_not_run, run_cost

    row = planned_not_run("ablation: staleness", "α=-0.5, SMoFi", "alphas", run_cost(3, 16.4))
    assert row["setting"] == "α=-0.5, SMoFi" and row["paper"] != row["paper"]  # NaN: the paper states none
    assert row["reason"] == ("in the long profile's plan, not in `alphas` of this execution: 3 runs of ≈ 16 min each "
                             "(the mean of this execution's runs); -p 'alphas=[...]' adds it")
    seeds = planned_not_run("main", "seeds [3, 4]", "seeds", run_cost(8, 12), "seeds=[0, 1, 2, 3, 4]", note="why")
    assert seeds["reason"].endswith("-p 'seeds=[0, 1, 2, 3, 4]' adds it; why")


def test_the_alpha_claim_reads_the_rows_the_long_ablations_write():
    """smofi-alpha's cells name exactly the rows the long ablations write for the planned α values
    (each α − the default −0.1, the paper's rule otherwise)."""
    from fedlib.claims import all_claims

    from fedlib.studies.smofi.ablations import LONG_ALPHAS

    study = notebook_namespace("ablations", "long", "study")["study"]
    claim = next(c for c in all_claims() if c.id == "smofi-alpha")
    planned = {"text": [a for a in LONG_ALPHAS if a != -0.1], **study.S["reading_alphas"]}
    assert {c.setting for c in claim.cells} == {f"reading {r}, α={a:g}, SMoFi − SMoFi, reading {r}"
                                                for r, values in planned.items() for a in values}
    assert {c.reading for c in claim.cells} == set(claim.readings) == set(planned)
    assert {c.report for c in claim.cells} == {"long/smofi/ablations"} and {c.kind for c in claim.cells} == {"differs"}


def test_a_diverged_seed_is_named_in_the_note_and_counted_not_dropped():
    import numpy as np
    import pandas as pd

    from fedlib.reporting.smofi import diverged_note

    runs = pd.DataFrame({"method": ["FedProx", "FedProx + SMoFi", "FedProx + SMoFi"], "seed": [2, 1, 2],
                         "diverged": [np.nan, np.nan, 44.0], "final": [51.96, 28.26, 10.0]})
    note = diverged_note(runs, ["FedProx + SMoFi", "FedProx"])
    assert note.startswith("diverged (loss not finite): FedProx + SMoFi seed 2 at round 44 — counted")
    assert diverged_note(runs, ["FedProx"]) == "" and diverged_note(runs.drop(columns="diverged"), ["FedProx"]) == ""


def test_long_rows_name_fednar_s_l2_reading_only_where_fednar_runs():
    from fedlib.reporting.smofi import smofi_scale_note

    S = dict(rounds=None, model="cnn3", max_test=None, seeds=[0, 1, 2, 3, 4])
    with_nar = smofi_scale_note("long", "custom", S, "cifar10", "partial", fednar=True)
    assert "FedNAR's L2 0.01" in with_nar and "official 0.1" in with_nar
    assert "FedNAR" not in smofi_scale_note("long", "custom", S, "cifar10", "partial")
    cpu = dict(S, model="cnn", max_test=5000, seeds=[0, 1, 2])
    assert "FedNAR" not in smofi_scale_note("cpu", "cpu", cpu, "cifar10", "full", fednar=True)  # cpu: the official L2
