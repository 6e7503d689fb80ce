"""Semi-asynchronous FL (spec fedqs.md §1-§6): the simulator, the strategy contract, FedQS and the
eleven SAFL baselines. Import submodules directly (``fedlib.safl.strategy``,
``fedlib.safl.schedule``, ``fedlib.safl.simulator``, ``fedlib.safl.baselines``); this package
itself imports nothing heavy."""
