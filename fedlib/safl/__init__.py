"""Semi-asynchronous FL (spec fedqs.md §1-§6): one simulator, every algorithm a small strategy.

Modules (import them directly; this package imports nothing heavy):

``fedlib.safl.strategy``
    the contract: :class:`Update`, :class:`SimContext`, :class:`Strategy` (``start``,
    ``aggregate``; optional ``on_upload``, ``ready``, ``select``, ``history``) and the state
    helpers ``weighted_model_average``, ``apply_delta``, ``flatten``.
``fedlib.safl.delays``
    delay profiles: ``make_delays("uniform" | "official-100" | [..], N, ratio, seed)``.
``fedlib.safl.schedule``
    the clock as a pure state machine (:class:`Clock`) and :func:`replay` (ticks, local
    trainings, staleness under ``snapshot`` / ``overwrite`` uploads, dynamic scenarios).
``fedlib.safl.simulator``
    :class:`SAFLSimulator` (with :class:`SimSettings`): the clock with real training
    (``fedlib.train.train_clients``), evaluation after every round, a frozen ``SimContext`` per
    tick; implements the Trainer protocol (exact resume).
``fedlib.safl.runstats``
    :class:`RunStats`: the simulator's cost, timing, staleness and queue totals.
``fedlib.safl.baselines``
    ``BASELINES`` (name → class): FedAvg, SAFA, FedAT, M-step (KAFL) in ``model_aggregation``;
    FedSGD, FedBuff, WKAFL, FedAC, DeFedAvg, FADAS, CA²FL ("cfl") in ``gradient_aggregation``
    — each docstring states its rule, its paper and its differences from the official FedQS
    code.
``fedlib.safl.fedqs``
    FedQS-Avg / FedQS-SGD (written against the same contract), a package: ``modules`` (Mod①②③),
    ``rules`` (paper / official behaviours), ``options``, ``strategy``.
``fedlib.safl.algorithms``
    lists all of them in ``CATALOG`` (registered by ``fedlib.experiments.config.registry`` as
    ``paradigm="safl"``) and builds
    dataset, partition, model, delays, strategy and simulator from a ``RunConfig``.
``fedlib.safl.cli``
    ``fedlib safl schedule --delays official-100 --clients 100 --k 10 --rounds 400 --json``.

Quick start::

    from fedlib.experiments import run
    res = run("fedqs-avg-adult-gender")          # 100 clients, K=10, 400 rounds, E=2, B=50

Decisions (fedlib's, documented where they are made):

* staleness = round index at aggregation − version trained from (a fresh update has 0; the
  official code's file naming adds 1 for every non-initial version — ``replay`` reports both);
* clients train at their start tick (as the official code does), grouped per tick in one engine
  call, each with the random stream (seed, client, start tick);
* ``overwrite`` uploads aggregate the client's latest training (the official artefact);
* cost-model time: a tick costs the largest local step count among trainings started in it;
* dynamic scenarios: speed-change = ratio 1:50 → 1:100 at round 200 (rank-preserving
  rescale), random-time = each training's delay uniform in 1..50, dropout = half of the clients
  leave for good after round 100 (their in-flight work is lost);
* synchronous mode: K clients drawn uniformly per round, a round lasts max r + 1 ticks.
"""
