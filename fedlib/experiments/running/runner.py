"""``run(cfg)``: drive one trainer round by round, with caching, checkpoints and exact resume.

    result = run(RunConfig.from_preset("toy-smoke"))
    result.history      # DataFrame, one row per global round
    result.clients      # DataFrame of per-client rows (may be empty)
    result.summary      # metrics (fedlib.experiments.metrics.summarize) + trainer extras + provenance

What happens (docs/ARCHITECTURE.md, "The data path of one run"):

1. The config is validated; its hash addresses the result store.
2. A finished, intact result is returned from the store without running anything.
3. Otherwise the global torch/numpy/random RNGs are seeded from ``cfg.seed`` (so even code that
   uses them is reproducible), the trainer is built (``registry.get_algorithm(...).trainer(cfg,
   options)``, with the options object the config's one resolution built)
   and, if a checkpoint exists, restored from it: trainer state, history and client rows so far,
   and the global RNG states. The resumed run ends with exactly the history of an uninterrupted
   one (wall time aside).
4. Every ``cfg.checkpoint_every`` rounds a checkpoint (with the sha256 of its payload) is written
   atomically; at the end the result is written as one folder renamed into place, which replaces
   the run's checkpoints and any temporary file a killed write left behind.

Nothing already computed is lost (issue 33): the whole invocation — threads, ``$FEDLIB_THREADS``,
``$FEDLIB_PROGRESS``, the device — is checked before the store is touched; ``resume=False``
recomputes beside the stored result, which the new one replaces in one step at the end (a failed
recompute leaves it in place); a damaged store entry is moved aside (:meth:`ResultStore.repair`). A
round whose evaluated loss is not finite stops the run with a :class:`FedlibError` naming the round
(the run diverged; no NaN history is stored as done) — unless ``diverged="record"``: then the divergence
is the run's outcome [D, issue 43]. Training stops at that round, every later round repeats its
evaluation (the model it diverged with is the model the run ends with; no later round trains), and the
result is stored as done with ``summary["diverged_round"]``. A comparison over seeds then counts the
seed as the method's failure instead of dropping it (dropping a seed where a method breaks down biases
the comparison toward that method).

A checkpoint that cannot be used (damaged, edited, another format, missing a part, a round outside
``1..total-1`` or not matching its history, a trainer state the trainer refuses) is discarded with a
:class:`~fedlib.experiments.results.store.CorruptResultWarning` and the run starts again from round 0
(issue 19): a stuck checkpoint never makes a run fail forever.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from fedlib.core.errors import FedlibError, check_choice
from fedlib.core.progress import progress_bar, progress_write
from fedlib.core.protocols import check_trainer
import fedlib.experiments.metrics as metrics
from fedlib.experiments.config import ResolvedRun, RunConfig
from fedlib.experiments.results.store import ResultStore, RunResult
from fedlib.core.utils import check_device, check_threads, default_threads, derive_seed, set_threads

__all__ = ["run", "RunResult", "DIVERGED", "as_config", "build_trainer", "rng_state", "set_rng_state"]

#: what a diverged run does: ``raise`` a FedlibError (nothing stored as done), or ``record`` the divergence
DIVERGED = ("raise", "record")

CHECKPOINT_KEYS = ("round", "trainer", "history", "clients", "rng")


def as_config(cfg) -> RunConfig:
    """A RunConfig from a RunConfig, a dict, a preset name or a YAML path."""
    if isinstance(cfg, RunConfig):
        return cfg
    if isinstance(cfg, dict):
        return RunConfig.from_dict(cfg)
    if isinstance(cfg, (str, Path)):
        p = Path(cfg)
        if p.suffix in (".yaml", ".yml") or p.is_file():
            return RunConfig.from_yaml(p)
        return RunConfig.from_preset(str(cfg))
    raise FedlibError(f"cannot make a run configuration from {type(cfg).__name__}",
                      "pass a RunConfig, a dict, a preset name or a YAML path")


def build_trainer(resolved: ResolvedRun | RunConfig, trainer=None):
    """The trainer of a resolved run (a RunConfig is resolved first): ``trainer`` itself if it is
    one, ``trainer(cfg, options)`` if it is a factory, else the registered factory of
    ``cfg.paradigm/cfg.algorithm`` — given the config and the options object of its resolution."""
    if trainer is not None and hasattr(trainer, "run_round"):
        return check_trainer(trainer, "the trainer passed to run()")
    if trainer is not None and not callable(trainer):
        raise FedlibError(f"trainer must be a Trainer object or a factory trainer(cfg, options), got "
                          f"{type(trainer).__name__} {trainer!r:.60}",
                          "leave trainer out (the registered algorithm) or pass e.g. trainer=MyTrainer")
    if isinstance(resolved, RunConfig):
        resolved = resolved.resolve(data_fingerprint=None)
    cfg = resolved.config
    where = "the trainer factory passed to run()"
    if trainer is None:
        from fedlib.experiments.config.registry import get_algorithm

        trainer = get_algorithm(cfg.paradigm, cfg.algorithm).trainer
        where = f"the factory of {cfg.paradigm}/{cfg.algorithm}"
    return check_trainer(trainer(cfg, resolved.options), where)


# ---------------------------------------------------------------------------- RNG states
def seed_global_rngs(seed: int) -> None:
    """Seed torch (CPU+CUDA), numpy and random from the run seed (never from process state)."""
    torch.manual_seed(derive_seed(seed, "global", "torch"))
    np.random.seed(derive_seed(seed, "global", "numpy") % (2**32))
    random.seed(derive_seed(seed, "global", "random"))


def rng_state() -> dict:
    """The global RNG states as weights_only-loadable data (tensors, ints, floats, lists)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, pystate, pygauss = random.getstate()
    out = {
        "torch": torch.get_rng_state(),
        "numpy": {"keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "gauss": float(gauss)},
        "random": {"version": int(version), "state": list(pystate), "gauss": pygauss},
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        out["cuda"] = torch.cuda.get_rng_state_all()
    return out


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    npst = state["numpy"]
    np.random.set_state(("MT19937", npst["keys"].numpy().astype(np.uint32), npst["pos"],
                         npst["has_gauss"], npst["gauss"]))
    rs = state["random"]
    random.setstate((rs["version"], tuple(rs["state"]), rs["gauss"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# ---------------------------------------------------------------------------- helpers
def _scalar(v):
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _clean_row(row: dict, where: str) -> dict:
    if not isinstance(row, dict):
        raise TypeError(f"{where} must return a dict, got {type(row).__name__}")
    return {str(k): _scalar(v) for k, v in row.items()}


def _fmt(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"


def _report(result: RunResult, cfg: RunConfig, how: str) -> None:
    s = result.summary
    line = (f"[fedlib] {cfg.paradigm}/{cfg.algorithm} profile={cfg.profile} seed={cfg.seed} "
            f"hash={result.config_hash[:12]} rounds={s.get('rounds')} "
            f"final_acc={_fmt(s.get('final_accuracy'))} conv_acc={_fmt(s.get('convergence_accuracy'))}"
            f" ({how})")
    if how == "quiet":
        print(line, file=sys.stderr)
    else:
        progress_write(line)  # through the progress display: no stderr block between bars


def as_store(store) -> ResultStore:
    """A ResultStore from a ResultStore, a folder (str / Path) or None (``$FEDLIB_RESULTS``)."""
    if isinstance(store, ResultStore):
        return store
    if store is None or isinstance(store, (str, Path)):
        return ResultStore(store)
    raise FedlibError(f"store must be a ResultStore, a folder path or None, got {type(store).__name__}",
                      "pass e.g. store='results' or leave it out ($FEDLIB_RESULTS / ./results)")


def _checkpoint_problem(ckpt: dict, total: int) -> str | None:
    """Why a loaded checkpoint cannot be resumed from (None when it can)."""
    missing = [k for k in CHECKPOINT_KEYS if k not in ckpt]
    if missing:
        return f"it lacks its {', '.join(missing)} part(s)"
    r = ckpt["round"]
    if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r < total:
        return f"its round {r!r} is outside 1..{total - 1} of this run"
    if not isinstance(ckpt["history"], list) or len(ckpt["history"]) != r:
        return f"its history does not hold one row per round up to round {r}"
    if not isinstance(ckpt["clients"], list):
        return "its client rows are not a list"
    return None


@dataclass
class _RunState:
    """A run in progress: its trainer, the rows so far and the wall time (a resumed run's rows and
    wall time start from its checkpoint)."""

    trainer: object
    total: int  # rounds of the whole run
    history: list[dict] = field(default_factory=list)
    clients: list[dict] = field(default_factory=list)
    start: int = 0  # rounds done before this process (the checkpoint's round)
    elapsed: float = 0.0  # wall time of those rounds
    t0: float = 0.0  # perf_counter when this process's rounds began
    diverged_round: int | None = None  # the round whose evaluated loss was not finite (diverged="record")

    def wall_time(self) -> float:
        return self.elapsed + (time.perf_counter() - self.t0)


def _restore(resolved: ResolvedRun, store: ResultStore, tr, trainer, total: int) -> _RunState:
    """The run restored from its checkpoint, or a fresh start (with a warning if it was unusable)."""
    h = resolved.hash
    ckpt = store.load_checkpoint(h)
    if ckpt is None:
        return _RunState(tr, total)
    problem = _checkpoint_problem(ckpt, total)
    if problem is None:
        try:
            tr.load_state_dict(ckpt["trainer"])
            set_rng_state(ckpt["rng"])
        except Exception as err:  # noqa: BLE001 - e.g. a state saved by another trainer version
            problem = (f"the trainer refused its state ({type(err).__name__}: {str(err)[:200]}); "
                       "`--no-resume` / run(..., resume=False) also starts over")
    if problem is not None:
        store.discard_checkpoint(h, problem)
        seed_global_rngs(resolved.config.seed)  # the failed restore may have touched the trainer and RNGs
        return _RunState(build_trainer(resolved, trainer), total)
    return _RunState(tr, total, list(ckpt["history"]), list(ckpt["clients"]), int(ckpt["round"]),
                     float(ckpt.get("wall_time", 0.0)))


# ---------------------------------------------------------------------------- run
def run(cfg, store: ResultStore | str | Path | None = None, progress: bool = True,
        resume: bool = True, trainer=None, threads: int | None = None, diverged: str = "raise") -> RunResult:
    """Run (or load, or resume) one configuration; see the module docstring.

    Parameters
    ----------
    cfg : RunConfig, dict, preset name or YAML path.
    store : a ResultStore, a root folder, or None for ``$FEDLIB_RESULTS`` / ``./results``.
    progress : show a tqdm progress bar and print a one-line summary.
    resume : reuse a finished result and resume from a checkpoint. ``False`` discards both and
        recomputes from round 0 (the new result replaces the old one).
    trainer : optional trainer object or factory ``trainer(cfg, options)`` to drive instead of the
        registered one (a trainer is still keyed by ``cfg``'s hash: pass the matching config).
    threads : torch intra-op threads for this run (``None``: :func:`fedlib.core.utils.default_threads`,
        i.e. ``$FEDLIB_THREADS`` or 1; ``0``: leave torch's setting). Speed only: the result and
        its hash do not depend on it. Use the second core with a second process (``sweep``).
    diverged : ``"raise"`` (a round whose evaluated loss is not finite stops the run with a FedlibError)
        or ``"record"`` (the divergence is stored as the run's outcome; see the module docstring).
    """
    check_choice("diverged", diverged, DIVERGED)
    check_threads(threads)
    _check_invocation(threads, progress, trainer)  # before anything touches the store (issue 33)
    resolved = as_config(cfg).resolve()  # validated, options built, hashed: once (issue 21)
    cfg, fp, h = resolved.config, resolved.fingerprint, resolved.hash
    check_device(cfg.device)
    store = as_store(store)
    store.repair(h)  # a damaged entry (symlink, wrong file types) is moved aside, kept
    resume = resume and not must_recompute(h)
    cached = _cached_result(cfg, store, h, resume, progress)
    if cached is not None:
        return _log_read(cached, store)
    st = _start(resolved, store, resume, trainer, threads)
    store.write_config(cfg, fp, config_hash=h)
    _train_rounds(cfg, store, h, st, progress, diverged)
    result = _write_result(cfg, store, h, fp, st, progress)
    _mark_recomputed(h)
    return _log_read(result, store)


RUNS_LOG_ENV = "FEDLIB_RUNS_LOG"
RECOMPUTE_ENV = "FEDLIB_RECOMPUTE_LOG"
TRAINING_LOG_ENV = "FEDLIB_TRAINING_LOG"


def _log_training(cfg: RunConfig, h: str, text: str) -> None:
    """Append ``<hash8> <algorithm> seed <s>: <text>`` to ``$FEDLIB_TRAINING_LOG`` when it is set:
    ``fedlib reproduce`` prints these lines, so a notebook that trains for hours says what it trains
    (:class:`fedlib.reproduce_watch.TrainingWatch`)."""
    path = os.environ.get(TRAINING_LOG_ENV)
    if path:
        with open(path, "a") as f:
            f.write(f"{h[:8]} {cfg.algorithm} seed {cfg.seed}: {text}\n")


def must_recompute(h: str) -> bool:
    """True when ``$FEDLIB_RECOMPUTE_LOG`` names a file that does not list ``h``: ``fedlib reproduce
    --recompute`` sets it so that every run its notebooks read is trained once in the batch (its stored
    copy replaced), however many notebooks or calls read it."""
    log = os.environ.get(RECOMPUTE_ENV)
    if not log:
        return False
    try:
        return h not in Path(log).read_text().split()
    except FileNotFoundError:
        return True


def _mark_recomputed(h: str) -> None:
    """Add ``h`` to ``$FEDLIB_RECOMPUTE_LOG`` (when set): trained in this batch, read from now on."""
    log = os.environ.get(RECOMPUTE_ENV)
    if log:
        with open(log, "a") as f:
            f.write(h + "\n")


def _log_read(result: RunResult, store: ResultStore) -> RunResult:
    """Append ``<hash> store|trained`` (read from the store, or trained here) to ``$FEDLIB_RUNS_LOG``
    when it is set: ``fedlib reproduce`` sets it to learn which runs a notebook read (its
    ``<report>.runs.json``, issue 28) and which it trained (its summary). Only runs of the
    shared result store (the one the ledger is filled from) are a report's record: a notebook's store
    of its own (the practitioners' tutorial, whose algorithms exist only in the notebook) is not."""
    from fedlib.core.paths import project_root, results_root

    log = os.environ.get(RUNS_LOG_ENV)
    if log and Path(store.root).resolve() == results_root(base=project_root()).resolve():
        with open(log, "a") as f:
            f.write(f"{result.config_hash} {'store' if result.cached else 'trained'}\n")
    return result


def _check_invocation(threads, progress: bool, trainer) -> None:
    """Every setting of this call that could fail later, checked now: the environment
    (``$FEDLIB_THREADS``, ``$FEDLIB_PROGRESS``), the thread count and the trainer argument."""
    from fedlib.core.progress import progress_mode

    if threads is None:
        check_threads(default_threads(), "FEDLIB_THREADS")
    if progress:
        progress_mode()
    if trainer is not None and not callable(trainer) and not hasattr(trainer, "run_round"):
        build_trainer(None, trainer)  # raises its FedlibError


def _cached_result(cfg: RunConfig, store: ResultStore, h: str, resume: bool, progress: bool) -> RunResult | None:
    """With ``resume``, the finished, intact result already stored (None if there is none);
    without it None: the run recomputes and its result replaces the stored one at the end (step 2
    of the module docstring; until then the old result stays readable)."""
    if not resume:
        return None
    cached = store.get(h)
    if cached is not None and progress:
        _report(cached, cfg, "cached")
    return cached


def _start(resolved: ResolvedRun, store: ResultStore, resume: bool, trainer, threads) -> _RunState:
    """Checks, threads, seeded global RNGs and the trainer, restored from its checkpoint when
    resuming (step 3)."""
    cfg, h = resolved.config, resolved.hash
    check_device(cfg.device)
    store.check_writable()
    if not resume:
        store.clear_checkpoint(h)
    set_threads(default_threads() if threads is None else threads)
    seed_global_rngs(cfg.seed)
    tr = build_trainer(resolved, trainer)
    total = int(getattr(tr, "total_rounds", cfg.rounds) or cfg.rounds)
    if resume:
        return _restore(resolved, store, tr, trainer, total)
    return _RunState(tr, total)


def _train_rounds(cfg: RunConfig, store: ResultStore, h: str, st: _RunState, progress: bool,
                  diverged: str = "raise") -> None:
    """The rounds after ``st.start``, with a progress bar and a checkpoint every
    ``cfg.checkpoint_every`` rounds (step 4); a failure is recorded in the store, then raised — a
    divergence too, unless ``diverged="record"`` (:func:`_record_divergence`)."""
    bar = progress_bar(total=st.total, initial=st.start, disable=not progress, unit="round", leave=True,
                       desc=f"{cfg.algorithm} seed={cfg.seed}", dynamic_ncols=True)
    st.t0 = time.perf_counter()
    r = st.start
    _log_training(cfg, h, f"training {st.total} rounds" + (f", resuming at round {st.start}" if st.start else ""))
    try:
        for r in range(st.start + 1, st.total + 1):
            _one_round(st, r, bar)
            if cfg.checkpoint_every and r % cfg.checkpoint_every == 0 and r < st.total:
                _save_checkpoint(store, h, st, r)
                _log_training(cfg, h, f"round {r}/{st.total} (checkpoint written)")
    except Diverged as err:
        if diverged != "record":
            store.write_error(h, r, err)
            raise
        _record_divergence(st, r)
        progress_write(f"[fedlib] {cfg.algorithm} seed={cfg.seed} diverged at round {r}: stored as its outcome "
                       f"(rounds {r + 1}..{st.total} repeat round {r}'s evaluation)")
    except Exception as err:
        store.write_error(h, r, err)  # `fedlib results list` shows it; a rerun resumes
        raise
    finally:
        bar.close()
    took = time.perf_counter() - st.t0
    _log_training(cfg, h, f"trained in {took / 60:.1f} min" if took >= 60 else f"trained in {took:.0f} s")


def _record_divergence(st: _RunState, r: int) -> None:
    """Round ``r`` diverged: the rounds after it repeat its evaluation (accuracy, loss) and train
    nothing (no train loss, steps or time), so the history has every round of the run."""
    last = st.history[-1]
    st.history += [{"round": k, "accuracy": last.get("accuracy"), "loss": last.get("loss"),
                    "wall_time": last.get("wall_time")} for k in range(r + 1, st.total + 1)]
    st.diverged_round = r


def _one_round(st: _RunState, r: int, bar) -> None:
    """Round ``r``: its history row and client rows appended, the progress bar advanced."""
    tr = st.trainer
    row = _clean_row(tr.run_round(), "Trainer.run_round()")
    row.setdefault("round", r)
    if "wall_time" not in row:
        row["wall_time"] = st.wall_time()
    st.history.append(row)
    for c in (tr.client_rows() or []) if hasattr(tr, "client_rows") else []:
        c = _clean_row(c, "Trainer.client_rows()")
        c.setdefault("round", r)
        st.clients.append(c)
    _check_finite(row, r)
    bar.update(1)
    acc = row.get("accuracy")
    if isinstance(acc, (int, float)) and not math.isnan(acc):
        bar.set_postfix(acc=f"{acc:.4f}", refresh=False)


class Diverged(FedlibError):
    """A round's evaluated loss is not finite (the run diverged)."""


def _check_finite(row: dict, r: int) -> None:
    """:class:`Diverged` when round ``r`` was evaluated (a numeric accuracy) and its loss is not finite."""
    acc, loss = row.get("accuracy"), row.get("loss")
    evaluated = isinstance(acc, (int, float)) and not isinstance(acc, bool) and not math.isnan(acc)
    if evaluated and isinstance(loss, (int, float)) and not math.isfinite(loss):
        raise Diverged(f"the run diverged: its loss is {loss} at round {r} (not finite), so the "
                       "model holds no usable numbers; nothing is stored as done",
                       "lower local.lr (or set local.clip_norm), then run it again; or, to compare methods "
                       "over seeds, keep the divergence as the run's outcome: run(cfg, diverged='record')")


def _save_checkpoint(store: ResultStore, h: str, st: _RunState, r: int) -> None:
    """The checkpoint after round ``r``: trainer state, rows so far, global RNG states."""
    store.save_checkpoint(h, {
        "config_hash": h,
        "round": r,
        "trainer": st.trainer.state_dict(),
        "history": st.history,
        "clients": st.clients,
        "rng": rng_state(),
        "wall_time": st.wall_time(),
    }, round=r, total=st.total)


def _summary(cfg: RunConfig, h: str, hist_df: pd.DataFrame, st: _RunState) -> dict:
    """Metrics of the history, the trainer's extras and the run's provenance."""
    summary = metrics.summarize(hist_df)
    extra = st.trainer.summary()
    summary.update({k: _scalar(v) for k, v in (extra or {}).items()})
    from fedlib import __version__

    summary.update({
        "config_hash": h,
        "profile": cfg.profile,
        "paradigm": cfg.paradigm,
        "algorithm": cfg.algorithm,
        "seed": cfg.seed,
        "fedlib": __version__,
        "resumed_from_round": st.start,
        "total_wall_time": st.wall_time(),
    })
    if st.diverged_round is not None:
        summary["diverged_round"] = st.diverged_round
    return summary


def _write_result(cfg: RunConfig, store: ResultStore, h: str, fp, st: _RunState, progress: bool) -> RunResult:
    """The result written as one folder renamed into place (it replaces the checkpoint, error.json
    and stale temp files), reported on the progress display."""
    hist_df = pd.DataFrame(st.history)
    summary = _summary(cfg, h, hist_df, st)
    result = store.write_result(cfg, hist_df, pd.DataFrame(st.clients), summary, data_fingerprint=fp,
                                config_hash=h)
    if progress:
        how = f"resumed from round {st.start}" if st.start else "computed"
        _report(result, cfg, f"{how}, {summary['total_wall_time']:.1f}s")
    return result
