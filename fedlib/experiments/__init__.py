"""Experiments: typed run configs, ``run()``, the crash-safe result store, sweeps (local or Ray).

    from fedlib.experiments import RunConfig, run, sweep, ResultStore

    cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=40"])
    res = run(cfg)                       # cached / resumed / computed; res.history is a DataFrame
    table = sweep([cfg], seeds=[0, 1, 2])  # process pool; backend="ray" for Ray
    ResultStore().list()                 # what is stored (also: fedlib results list)

Three rooms (README.md): ``config/`` (what a run is: ``RunConfig``, presets, overrides, the
algorithm registry), ``results/`` (what a run leaves: the result store, the ledger, provenance,
rehash, the ``fedlib results`` / ``verify`` commands), ``running/`` (``run``, ``sweep``, the split-FL
speed-up ``compare``, the ``toy`` paradigm); beside them ``metrics`` (convergence metrics of a
history, imported by the notebooks) and ``cli`` (``fedlib run | sweep | presets``).
"""

from fedlib.experiments.config import (AlgorithmEntry, DataConfig, ModelConfig, RunConfig, SAFLConfig,
                                       SplitConfig, algorithms, get_algorithm, list_presets, paradigms,
                                       register_algorithm)
from fedlib.experiments.results import CorruptResultWarning, ResultStore, RunResult
from fedlib.experiments.running import grid, run, sweep

__all__ = [
    "DataConfig", "ModelConfig", "SAFLConfig", "SplitConfig", "RunConfig", "list_presets",
    "AlgorithmEntry", "algorithms", "get_algorithm", "paradigms", "register_algorithm",
    "run", "ResultStore", "RunResult", "CorruptResultWarning", "sweep", "grid",
]
