"""Results keyed by code for user-registered algorithms (issue 61); built-in hashes unchanged."""

import json
from pathlib import Path

import pytest

from fedlib.experiments.results.ledger import current_hash

LEDGER = Path(__file__).resolve().parents[1] / "ledger"


def _ledger_entries(n_per_algorithm=2):
    """A few ledger entries per (paradigm, algorithm): their folder name is the hash they were stored under."""
    picked = {}
    for cfg_file in sorted(LEDGER.glob("*/*/config.json")):
        entry = json.loads(cfg_file.read_text())
        key = (entry["config"]["paradigm"], entry["config"]["algorithm"])
        if len(picked.setdefault(key, [])) < n_per_algorithm:
            picked[key].append((cfg_file.parent.name, entry))
    return [e for es in picked.values() for e in es]


@pytest.mark.skipif(not LEDGER.is_dir(), reason="no ledger in this checkout")
def test_builtin_algorithms_keep_the_hashes_the_ledger_stores():
    entries = _ledger_entries()
    assert len(entries) >= 10
    for h, entry in entries:
        assert current_hash(entry) == h, (entry["config"]["paradigm"], entry["config"]["algorithm"])


# ------------------------------------------------------------------------------ user code in the key
import linecache  # noqa: E402
import textwrap  # noqa: E402

from fedlib.plugins import register  # noqa: E402
from fedlib.experiments import ResultStore, RunConfig, get_algorithm, run  # noqa: E402
from fedlib.experiments.config.plugin_code import fingerprint  # noqa: E402
from fedlib.experiments.config.registry import code_record  # noqa: E402

_CELLS = [0]

STRATEGY = '''
from dataclasses import dataclass
import torch
from fedlib.plugins import Strategy, weighted_model_average


class EditMe(Strategy):
    """A strategy a notebook user edits between runs."""

    name = "test-edit-me"

    @dataclass
    class Options:
        a: float = 0.0

    def aggregate(self, global_state, updates, ctx):
        w = torch.tensor([WEIGHT for u in updates], dtype=torch.float64)
        return weighted_model_average([u.state for u in updates], w / w.sum())
'''


def notebook_cell(source: str, name: str):
    """Run ``source`` as a notebook cell does (module ``__main__``, its lines in linecache under a
    cell file name) and return the object ``name`` it defines."""
    _CELLS[0] += 1
    filename = f"<ipython-input-{_CELLS[0]}-test>"
    source = textwrap.dedent(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def tiny_safl(algorithm: str, **changes) -> RunConfig:
    return RunConfig.from_preset("fedavg-adult-gender-smoke").replace(
        algorithm=algorithm, rounds=2, data={"max_test": 300}, **changes)


def test_editing_a_registered_strategy_changes_its_hash_and_recomputes(tmp_path):
    store = ResultStore(tmp_path / "store")
    plain = notebook_cell(STRATEGY.replace("WEIGHT", "1.0"), "EditMe")
    register(plain)
    cfg = tiny_safl("test-edit-me")
    first = run(cfg, store=store, progress=False)
    assert not first.cached and run(cfg, store=store, progress=False).cached
    assert first.code["fingerprint"] == get_algorithm("safl", "test-edit-me").code
    assert first.code["made_by"] == "__main__.EditMe"
    # the same cell run again (a kernel restart, a second notebook): the same code, the same key
    register(notebook_cell(STRATEGY.replace("WEIGHT", "1.0"), "EditMe"))
    assert cfg.config_hash() == first.config_hash and run(cfg, store=store, progress=False).cached

    register(notebook_cell(STRATEGY.replace("WEIGHT", "float(u.num_samples)"), "EditMe"))
    edited = run(cfg, store=store, progress=False)
    assert edited.config_hash != first.config_hash and not edited.cached
    assert edited.code["fingerprint"] != first.code["fingerprint"]
    assert ResultStore(tmp_path / "store").get(cfg).code == edited.code  # the store says which code made it
    assert not edited.history["accuracy"].equals(first.history["accuracy"])  # really the new rule


def test_fingerprint_covers_methods_options_and_code_without_source():
    a = notebook_cell(STRATEGY.replace("WEIGHT", "1.0"), "EditMe")
    assert fingerprint(a) == fingerprint(notebook_cell(STRATEGY.replace("WEIGHT", "1.0"), "EditMe"))
    assert fingerprint(a) != fingerprint(notebook_cell(STRATEGY.replace("a: float = 0.0", "a: float = 1.0")
                                                       .replace("WEIGHT", "1.0"), "EditMe"))
    # a helper the class reads as a global (defined in the same cell) is part of its code
    helper = STRATEGY.replace("WEIGHT", "weight(u)") + "\n\ndef weight(u):\n    return HELPER\n"
    assert fingerprint(notebook_cell(helper.replace("HELPER", "1.0"), "EditMe")) != \
        fingerprint(notebook_cell(helper.replace("HELPER", "2.0"), "EditMe"))
    ns1, ns2 = {}, {}  # no source anywhere: the bytecode and constants decide
    exec(compile("def f(x):\n    return x + 1\n", "<nowhere-1>", "exec"), ns1)
    exec(compile("def f(x):\n    return x + 2\n", "<nowhere-2>", "exec"), ns2)
    assert fingerprint(ns1["f"]) != fingerprint(ns2["f"])


def test_builtin_algorithms_carry_no_code_in_their_key():
    cfg = tiny_safl("fedavg")
    assert get_algorithm("safl", "fedavg").code is None and code_record(cfg) is None
    assert "code" not in cfg.hashed_dict()


# ------------------------------------------------------------------------------ registrations reach workers
from fedlib.core.errors import FedlibError  # noqa: E402
from fedlib.experiments import register_algorithm, sweep  # noqa: E402
from fedlib.plugins import Strategy, weighted_model_average  # noqa: E402
from fedlib.safl.algorithms import strategy_factory  # noqa: E402


class SizeWeighted(Strategy):
    """A strategy of an importable module: workers import it by module and name."""

    name = "test-size-weighted"

    def aggregate(self, global_state, updates, ctx):
        import torch

        w = torch.tensor([float(u.num_samples) for u in updates], dtype=torch.float64)
        return weighted_model_average([u.state for u in updates], w / w.sum())


def test_a_two_worker_sweep_runs_notebook_and_module_registrations(tmp_path):
    store = ResultStore(tmp_path / "store")
    cell = notebook_cell(STRATEGY.replace("WEIGHT", "2.0 ** -u.staleness").replace("test-edit-me", "test-cell"),
                         "EditMe")
    register(cell)  # defined in a notebook cell: travels as its source
    register(SizeWeighted)  # defined in this module: travels by name
    register_algorithm("safl", "test-old-call", strategy_factory(cell), options=cell.Options)  # the old call
    cfgs = [tiny_safl(a) for a in ("test-cell", "test-size-weighted", "test-old-call")]
    table = sweep(cfgs, workers=2, store=store, progress=False)
    assert list(table["status"]) == ["done"] * 3, table.get("error")
    # each worker stored its run under the driver's key (the same code fingerprint) ...
    assert all(run(c, store=store, progress=False).cached for c in cfgs)
    # ... and ran the same rule as this process does
    here = run(cfgs[0], store=ResultStore(tmp_path / "here"), progress=False)
    assert here.history["accuracy"].equals(store.get(cfgs[0]).history["accuracy"])


def test_a_registration_that_cannot_reach_workers_is_one_clear_error(tmp_path):
    source = STRATEGY.replace("WEIGHT", "1.0").replace("test-edit-me", "test-locked") + \
        "\nimport threading\nLOCK = threading.Lock()\nEditMe.ready = lambda self, b, ctx: LOCK is not None and len(b) >= ctx.k\n"
    cls = notebook_cell(source.replace("        w = torch", "        assert LOCK\n        w = torch"), "EditMe")
    register(cls)
    with pytest.raises(FedlibError) as err:
        sweep([tiny_safl("test-locked", seed=s) for s in (0, 1)], workers=2, store=tmp_path / "s", progress=False)
    assert "safl/test-locked" in err.value.problem and "LOCK" in err.value.problem
    assert "workers=1" in err.value.fix
