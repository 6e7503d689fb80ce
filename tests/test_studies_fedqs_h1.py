"""The FedQS study modules of Table 1, Table 2 and Figure 4 (``fedlib/studies/fedqs/``): their profiles are
what ``fedlib reproduce`` sees, their grids have the methods x seeds the notebooks promise, and a wrong
knob value fails with a FedlibError that names the fix."""

from pathlib import Path

import pytest

from fedlib.core.errors import FedlibError
from fedlib.reporting import apply_knobs
from fedlib.reproduce import notebook_profiles, study_module
from fedlib.studies.fedqs import figure4_loss_curves as f4
from fedlib.studies.fedqs import table1_aggregation_gap as t1
from fedlib.studies.fedqs import table2_accuracy as t2

ROOT = Path(__file__).resolve().parents[1]
BOOKS = {"table1_aggregation_gap": t1, "table2_accuracy": t2, "figure4_loss_curves": f4}


@pytest.mark.parametrize("name", sorted(BOOKS))
def test_reproduce_reads_the_profiles_of_the_study(name):
    book = ROOT / "notebooks" / "fedqs" / f"{name}.ipynb"
    assert study_module(book) == ROOT / "fedlib" / "studies" / "fedqs" / f"{name}.py"
    assert notebook_profiles(book) == set(BOOKS[name].SETTINGS)


def test_profiles_per_study():
    assert set(t2.SETTINGS) == set(t1.SETTINGS) == {"smoke", "cpu", "paper", "long"}
    assert set(f4.SETTINGS) == {"smoke", "cpu", "paper"}  # Figure 4 has no long profile


def settings(module, profile, **knobs):
    """The profile's settings with ``knobs`` applied, as the notebook's settings cell does."""
    return apply_knobs(module.SETTINGS[profile], knobs, module.LISTS)


# ------------------------------------------------------------------ Table 1
def test_table1_smoke_grid():
    study = t1.Table1("smoke", settings(t1, "smoke"))
    # IID / non-IID x sync / semi-async x FedSGD / FedAvg x 2 seeds, plus the snapshot pair (2 methods x 2 seeds)
    assert len(study.cells) == len(study.cfgs) == 2 * 2 * 2 * 2 + 2 * 2
    assert len({c.config_hash() for c in study.cfgs}) == len(study.cfgs)
    assert sum(mode == t1.SNAPSHOT for _, mode, _, _ in study.cells) == 4
    assert study.not_run() == []


def test_table1_long_runs_the_semi_asynchronous_cells_and_says_what_it_leaves_out():
    study = t1.Table1("long", settings(t1, "long"))
    assert {mode for _, mode, _, _ in study.cells} == {"semi-asynchronous"}
    assert len(study.cells) == 2 * 2 * 2  # two splits x two methods x seeds [0, 1]
    assert [r["setting"] for r in study.not_run()] == [
        "IID + synchronous (FedSGD and FedAvg)", "non-IID + synchronous (FedSGD and FedAvg)",
        f"non-IID + {t1.SNAPSHOT}"]


def test_table1_knobs_override_the_profile():
    study = t1.Table1("smoke", settings(t1, "smoke", seeds="[3]", snapshot_pair=False))
    assert {seed for *_, seed in study.cells} == {3}
    assert len(study.cells) == 2 * 2 * 2
    assert t1.shown_settings(study.S, "smoke")["snapshot pair"] == "not run"


# ------------------------------------------------------------------ Table 2
@pytest.fixture
def no_missing_data(monkeypatch):
    """Every dataset counts as present: the grid does not depend on the data folder."""
    monkeypatch.setattr(t2, "dataset_missing", lambda name: "")


def test_table2_smoke_grid(no_missing_data):
    study = t2.Table2("smoke", settings(t2, "smoke"))
    main = [c for c in study.cells if c[3] == ""]
    assert {m for _, m, _, _ in main} == set(t2.METHODS)  # all thirteen methods
    assert len(main) == len(t2.METHODS) * 2  # x seeds [0, 1]
    assert sorted({v for *_, v in study.cells}) == ["", "code-main", t2.HOLDOUT]
    assert sum(v == t2.HOLDOUT for *_, v in study.cells) == 2 * 2  # FedQS-Avg / FedQS-SGD x 2 seeds
    assert len({c.config_hash() for c in study.cfgs}) == len(study.cfgs)


def test_table2_long_grid(no_missing_data):
    study = t2.Table2("long", settings(t2, "long"))
    assert study.task_list == ["cifar10-x0.5"]
    by_variant = {}
    for _, m, _, v in study.cells:
        by_variant.setdefault(v, set()).add(m)
    assert by_variant == {"": {"fedqs-sgd", "fedsgd", "fedqs-avg", "fedavg"},
                          "code-main": {"fedqs-avg", "fedqs-sgd"}, "code-momentum": {"fedqs-avg", "fedqs-sgd"}}
    seeds = {}
    for _, m, s, v in study.cells:
        seeds.setdefault((m, v), []).append(s)
    assert all(s == [0, 1, 2] for s in seeds.values())  # every arm at three paired seeds (issue 58)
    assert len(study.cells) == 3 * (4 + 2 + 2)
    assert not [r for r in study._not_run_rows() if "method_seeds" in r["note"]]


def test_table2_method_seeds_prices_the_seeds_the_other_arms_lack(no_missing_data):
    study = t2.Table2("long", settings(t2, "long", seeds="[0, 1]",
                                       method_seeds='{"fedsgd": [0, 1, 2], "fedqs-sgd": [0, 1, 2]}'))
    seeds = {}
    for _, m, s, v in study.cells:
        seeds.setdefault((m, v), []).append(s)
    assert all(s == ([0, 1, 2] if m in ("fedsgd", "fedqs-sgd") else [0, 1]) for (m, v), s in seeds.items())
    left = [r for r in study._not_run_rows() if "method_seeds" in r["note"]]
    assert [r["setting"] for r in left] == ["CV x=0.5: FedQS-Avg, FedQS-Avg · code-main, FedQS-Avg · code-momentum, "
                                            "FedAvg, seed(s) [2]"]
    assert "4 more runs" in left[0]["note"]


def test_table2_cpu_reduced_columns_run_the_main_methods(no_missing_data):
    study = t2.Table2("cpu", settings(t2, "cpu", tasks='["cifar10"]'))
    assert study.methods_on("cifar10-x0.5") == study.method_list  # `full_tasks`: every method
    assert study.methods_on("cifar10-x0.1") == [m for m in study.method_list if m in t2.MAIN]


@pytest.mark.parametrize("knob, value, word", [("reading_methods", '["fedavg"]', "FedQS variant"),
                                               ("reduced_methods", '["fedfoo"]', "method"),
                                               ("methods", '["fedfoo"]', "method"),
                                               ("reading_seeds", '{"cifar7": [0]}', "task"),
                                               ("method_seeds", '{"fedfoo": [0]}', "method")])
def test_table2_unknown_knob_value_names_the_choices(no_missing_data, knob, value, word):
    with pytest.raises(FedlibError, match=f"unknown {word}") as err:
        t2.Table2("smoke", settings(t2, "smoke", **{knob: value}))
    assert err.value.fix.startswith("choose from")


# ------------------------------------------------------------------ Figure 4
def test_figure4_smoke_grid():
    study = f4.Figure4("smoke", settings(f4, "smoke"))
    # FedAvg / FedSGD, FedQS-Avg / FedQS-SGD under the paper reading and under code-main, x 2 seeds
    assert len(study.cells) == (4 + 2) * 2
    assert {r for *_, r in study.cells} == {"paper", "code-main"}
    assert study.describe() == "12 runs, FedQS also under ['code-main']"


def test_figure4_unknown_method_fails():
    with pytest.raises(FedlibError, match="unknown method"):
        f4.Figure4("smoke", settings(f4, "smoke", methods='["fedfoo"]'))


def test_table2_rounds_rows_pair_fedqs_with_each_baseline_fewer_rounds_the_papers_side(no_missing_data):
    """fedqs-t2-fastest's rows: FedQS − each baseline of its family in rounds to target, per seed,
    judged with the paper's sign −1 (fewer rounds), a censored run named in the row's note."""
    from types import SimpleNamespace

    import pandas as pd

    study = t2.Table2("smoke", settings(t2, "smoke", methods='["fedqs-avg", "fedavg"]', seeds="[0, 1, 2]",
                                        readings="[]", holdout_tasks="[]"))
    reach = {"FedQS-Avg": [3, 4, 2], "FedAvg": [6, 6, None]}  # rounds to 98 % per seed (None: never reached)
    results = []
    for (_, method, seed, _), cfg in zip(study.cells, study.cfgs):
        r = reach[t2.METHODS[method][0]][seed]
        acc = [0.5 + 0.4 * min(1.0, k / (r or 20)) for k in range(1, cfg.rounds + 1)]
        results.append(SimpleNamespace(
            summary={"convergence_accuracy": acc[-1], "rounds_to_98": r, "rounds_to_95": r, "oscillations": 0,
                     "virtual_time": 1.0, "wall_time": 1.0},
            history=pd.DataFrame({"round": range(1, cfg.rounds + 1), "accuracy": acc})))
    study.measure(results)
    (row,) = study.rounds.to_dict("records")
    assert row["comparison"] == "FedQS-Avg − FedAvg" and row["sign"] == -1
    T = study.cfgs[0].rounds
    assert list(row["per seed"]) == pytest.approx([3 - 6, 4 - 6, 2 - T])  # the censored run counts as T
    out = [r for r in study.comparison() if r["metric"] == "paired difference, rounds to target (rounds)"]
    assert [r["setting"] for r in out] == ["RWD Gender, FedQS-Avg − FedAvg"]
    assert "1 run(s) censored at T" in out[0]["note"]
    verdicts = [r for r in study.comparison() if "fewer rounds than every" in r["setting"]]
    assert [r["setting"] for r in verdicts] == ["FedQS-Avg reaches its target in fewer rounds than every "
                                                "model-aggregation baseline (RWD Gender)"]


def test_table1_figure1_rows_read_a_target_both_runs_reach_and_the_largest_drop():
    """fedqs-fig1-faster / -fluctuation: FedSGD − FedAvg per seed in rounds to 95 % of the pair's lower
    convergence accuracy (sign −1) and in the largest accuracy drop (sign +1), semi-asynchronous cells only."""
    from types import SimpleNamespace

    import pandas as pd

    study = t1.Table1("smoke", settings(t1, "smoke"))
    results = []
    for (split, mode, method, seed), cfg in zip(study.cells, study.cfgs):
        fast = method.startswith("FedSGD")
        # FedSGD climbs to 0.8 by round 2, FedAvg to 0.6 by round 4; FedSGD dips 0.1 once (its largest drop)
        acc = [min(r / (2 if fast else 4), 1.0) * (0.8 if fast else 0.6) for r in range(1, cfg.rounds + 1)]
        if fast:
            acc[2] -= 0.1
        results.append(SimpleNamespace(config_hash=f"{method}{seed}{mode}{split}", summary={},
                                       history=pd.DataFrame({"round": range(1, cfg.rounds + 1), "accuracy": acc})))
    study.measure(results)
    speed = study.speed.set_index("setting")
    assert set(speed.index) == {"IID + semi-asynchronous", "non-IID + semi-asynchronous"}  # no sync, no snapshot
    # the common target 0.95 × 0.6 = 0.57: FedSGD reaches it in round 2, FedAvg in round 4
    assert list(speed.loc["non-IID + semi-asynchronous", "per seed"]) == [2 - 4] * len(study.S["seeds"])
    assert (speed["sign"] == -1).all()
    drop = study.fluctuation[study.fluctuation["metric"] == "largest_drop"].set_index("setting")
    # FedSGD's one 0.1 dip (10 points) against FedAvg's none, on every seed, the paper's side (+1)
    assert list(drop.loc["IID + semi-asynchronous", "per seed"]) == pytest.approx([10.0] * len(study.S["seeds"]))
    assert (drop["sign"] == 1).all()
