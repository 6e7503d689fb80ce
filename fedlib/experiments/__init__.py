"""Experiments: typed run configs, ``run()``, the crash-safe result store, sweeps (local or Ray).

    from fedlib.experiments import RunConfig, run, sweep, ResultStore

    cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=40"])
    res = run(cfg)                       # cached / resumed / computed; res.history is a DataFrame
    table = sweep([cfg], seeds=[0, 1, 2])  # process pool; backend="ray" for Ray
    ResultStore().list()                 # what is stored (also: fedlib results list)

Modules: ``config`` (RunConfig and its sections), ``registry`` (register_algorithm),
``runner`` (run), ``store`` (ResultStore), ``sweep`` (sweep, grid), ``metrics`` (convergence
metrics), ``toy`` (a complete example trainer), ``cli`` (the commands).
"""

from fedlib.experiments.config import (DataConfig, ModelConfig, RunConfig, SAFLConfig,
                                       SplitConfig, list_presets)
from fedlib.experiments.registry import (AlgorithmEntry, algorithms, get_algorithm, paradigms,
                                         register_algorithm)
from fedlib.experiments.runner import run
from fedlib.experiments.store import CorruptResultWarning, ResultStore, RunResult
from fedlib.experiments.sweep import grid, sweep

__all__ = [
    "DataConfig", "ModelConfig", "SAFLConfig", "SplitConfig", "RunConfig", "list_presets",
    "AlgorithmEntry", "algorithms", "get_algorithm", "paradigms", "register_algorithm",
    "run", "ResultStore", "RunResult", "CorruptResultWarning", "sweep", "grid",
]
