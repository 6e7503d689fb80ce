"""What the experiment layer asks of an algorithm: a :class:`Trainer` and an :class:`AlgorithmSpec`.

A paradigm package (``fedlib.safl``, ``fedlib.split``) lists its algorithms as ``AlgorithmSpec``s in
its ``algorithms.CATALOG``; ``fedlib.experiments.catalog`` registers them. The paradigms therefore
never import the experiment layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

__all__ = ["Trainer", "AlgorithmSpec", "check_trainer"]


@runtime_checkable
class Trainer(Protocol):
    """One run in progress; the runner calls ``run_round`` ``cfg.rounds`` times.

    ``run_round`` returns the round's history row (``round``, ``accuracy``, ``loss``, ...);
    ``state_dict``/``load_state_dict`` hold everything needed to resume bit-identically;
    ``summary`` adds run-level numbers to the result's summary.
    """

    def run_round(self) -> dict: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...

    def summary(self) -> dict: ...


def check_trainer(obj: Any, where: str) -> Any:
    """``obj`` if it has every :class:`Trainer` method, else a TypeError naming the missing ones."""
    missing = [m for m in ("run_round", "state_dict", "load_state_dict", "summary")
               if not callable(getattr(obj, m, None))]
    if missing:
        raise TypeError(f"{where} returned {type(obj).__name__}, which lacks the Trainer method(s) "
                        f"{', '.join(missing)} (fedlib.core.protocols.Trainer)")
    return obj


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm of a paradigm: ``trainer(cfg) -> Trainer`` and its options dataclass."""

    name: str
    trainer: Callable[[Any], Trainer]
    options: type | None = None
    description: str = ""
