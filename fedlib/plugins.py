"""Your own algorithm in fedlib: everything a plug-in needs, from one module (issue 61).

    from dataclasses import dataclass
    from fedlib.plugins import Strategy, plugin, weighted_model_average

    @plugin
    class StalenessAvg(Strategy):
        \"\"\"FedAvg with each buffered model weighted by (1 + staleness)^-a.\"\"\"
        name = "staleness-avg"

        @dataclass
        class Options:
            a: float = 0.5

        def aggregate(self, global_state, updates, ctx): ...

A class declares ``name``, an ``Options`` dataclass (optional) and a ``description`` (optional: its
docstring's first paragraph); one call registers it (:func:`register`, or the :func:`plugin`
decorator): a :class:`Strategy` as SAFL algorithm ``name``, a :class:`ServerAddon` as split algorithm
``<base>+<name>`` on each base method of ``base`` (default ``"fedavg"``). Both take their options
instance as ``cls(options)``. Runs are keyed by the class's code as well as the config, registrations
reach sweep workers, and :mod:`fedlib.testing` checks a class against its identity case.
"""

from fedlib.core.errors import FedlibError, check
from fedlib.experiments import ResultStore, RunConfig, run, sweep
from fedlib.experiments.config.plugins import plugin, register
from fedlib.safl.strategy import SimContext, Strategy, Update, weighted_model_average
from fedlib.split.addons import ServerAddon

__all__ = ["register", "plugin", "Strategy", "ServerAddon", "Update", "SimContext", "weighted_model_average",
           "RunConfig", "run", "sweep", "ResultStore", "FedlibError", "check"]
