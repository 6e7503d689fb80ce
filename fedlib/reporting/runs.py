"""A notebook's runs: the result store, running (or loading) a list of configs, missing datasets."""

from __future__ import annotations

from fedlib.core.paths import project_root, results_root


def results_store(root=None):
    """The :class:`~fedlib.experiments.ResultStore` the notebooks share: ``root``, else
    ``$FEDLIB_RESULTS``, else ``<project>/results``."""
    from fedlib.experiments import ResultStore

    if isinstance(root, ResultStore):
        return root
    return ResultStore(root or results_root(base=project_root()))


def run_all(cfgs: list, desc: str | None = "runs", workers: int | None = 1, store=None,
            progress: bool = True) -> list:
    """The :class:`~fedlib.experiments.RunResult` of every config, in order: finished runs come
    from the store; with ``workers > 1`` the missing ones first run in a local process pool (one
    one-thread process per worker, ``fedlib.experiments.running.sweep``); a lone missing run runs here.
    ``desc`` names an overall progress bar (``None``: none). A run that diverges is kept as its
    outcome (``diverged="record"``, [D] issue 43): a report counts the seed as the method's failure,
    labelled, instead of stopping or dropping the seed."""
    from fedlib.core.progress import progress_bar
    from fedlib.experiments import run, sweep
    from fedlib.experiments.running.runner import must_recompute

    from fedlib.reporting.stats import use_family_of

    use_family_of(cfgs)  # the fragile mark reads these runs' cross-CPU drift
    store = results_store(store)
    hashes = [c.config_hash() for c in cfgs]
    stored = {h for h in hashes if store.get(h) is not None and not must_recompute(h)}
    todo = {h: c for h, c in zip(hashes, cfgs) if h not in stored}
    if workers and workers > 1 and len(todo) > 1:
        sweep(list(todo.values()), workers=min(workers, len(todo)), store=store, progress=progress, diverged="record")
    each = cfgs if desc is None else progress_bar(cfgs, desc=desc, unit="run", disable=not progress)
    # a stored run is read quietly: one line below counts them, instead of a "(cached)" line each
    results = [run(c, store=store, progress=progress and h not in stored, diverged="record")
               for h, c in zip(hashes, each)]
    if progress:
        print(runs_line(len(set(hashes) & stored), len(set(hashes) - stored)))
    return results


def runs_line(read: int, trained: int) -> str:
    """The one line :func:`run_all` prints: how many distinct runs it read from the store, how many it trained."""
    return f"[fedlib] {read + trained} run(s): {read} read from the result store, {trained} trained"


def run_or_load(cfgs: list, store=None, workers: int = 1, progress: bool = True) -> list:
    """:func:`run_all` without the overall progress bar (each run still reports itself)."""
    return run_all(cfgs, desc=None, workers=workers, store=store, progress=progress)


def dataset_missing(name: str) -> str | None:
    """``None`` if dataset ``name`` loads here, else the text a table records instead of a number."""
    from fedlib.core.errors import FedlibError
    from fedlib.data import load_dataset

    try:
        load_dataset(name)
    except FedlibError:
        return f"needs download: fedlib data fetch {name}"
    return None
