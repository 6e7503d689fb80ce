"""Named readings of SMoFi's open fusion rule (spec §2, "Readings of the open rule").

The fusion formula comes from a digest of the paper; the paper's full text is not available, so
what the digest leaves open is a choice fedlib names. What the digest fixes: fusion after every
step; finished clients keep contributing their final momentum, decayed by s_α; "the number of
aligned momenta stays |J^n|". What it leaves open: the normaliser, data-share weights, the step
indexing, which buffer is "final", the per-round reset. A *reading* is one set of those choices as
the SMoFi options it sets (:class:`fedlib.split.smofi.SMoFiOptions`), so every reading is an
ordinary, hashed run on any base (``fedavg+smofi``, ``fedprox+smofi``, ``fednar+smofi``):

* ``text`` — decay, ÷|J^n|, uniform weights: fedlib's default, the digest's formula as written;
* ``text-weighted`` — decay, ÷Σ weights: the same signals as a weighted mean (keeps m̄'s scale);
* ``data-share`` — decay, ÷|J^n|, each signal weighted by its client's share of the round's samples;
* ``fresh`` — finished momenta dropped, mean over the active surrogates (departs from "kept");
* ``drop-J`` — finished momenta dropped, ÷|J^n| (departs from "kept"; m̄ shrinks as clients finish).

A verdict under ``text`` is a verdict on fedlib's reading of the paper, not on the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from fedlib.core.errors import check_choice

__all__ = ["SMOFI_READINGS", "DEFAULT_SMOFI_READING", "Reading", "smofi_reading", "reading_options",
           "reading_of_options"]


@dataclass(frozen=True)
class Reading:
    """One reading: its SMoFi options, a short label, and which sentence of the digest it honours or departs from."""

    name: str
    options: tuple  # ((option, value), ...) set on top of the SMoFi defaults
    label: str
    honours: str
    departs: str = ""

    @property
    def overrides(self) -> dict:
        """The run-config overrides (``{"options.stale": "drop", ...}``) of this reading."""
        return {f"options.{k}": v for k, v in self.options}


_KEPT = "finished clients' final momenta kept, decayed by s_α"
SMOFI_READINGS: dict[str, Reading] = {r.name: r for r in (
    Reading("text", (), "decay, ÷|J^n|, uniform",
            f"{_KEPT}; the sum divided by |J^n| (\"the number of aligned momenta stays |J^n|\")"),
    Reading("text-weighted", (("renormalise", True),), "decay, ÷Σ weights",
            f"{_KEPT}; every signal counted", "the sum divided by the weights' total, not by |J^n|"),
    Reading("data-share", (("weighting", "samples"),), "decay, ÷|J^n|, data-share weights",
            f"{_KEPT}; ÷|J^n|", "each signal weighted by its client's share of the round's samples"),
    Reading("fresh", (("stale", "drop"), ("renormalise", True)), "drop, ÷Σ weights (mean of the active)",
            "fusion after every step over the active surrogates",
            "finished momenta dropped (the digest keeps them); mean over the active surrogates, not |J^n|"),
    Reading("drop-J", (("stale", "drop"),), "drop, ÷|J^n|",
            "fusion after every step; ÷|J^n|", "finished momenta dropped (the digest keeps them)"),
)}
#: the reading a SMoFi run follows unless told otherwise (the SMoFi options' defaults)
DEFAULT_SMOFI_READING = "text"


def smofi_reading(name: str) -> Reading:
    """The :class:`Reading` called ``name`` (one of :data:`SMOFI_READINGS`)."""
    check_choice("SMoFi reading", name, SMOFI_READINGS)
    return SMOFI_READINGS[name]


def reading_options(name: str) -> dict:
    """The run-config overrides of SMoFi reading ``name``."""
    return smofi_reading(name).overrides


def reading_of_options(options: dict) -> str | None:
    """The reading a run's SMoFi ``options`` follow (α and the other options aside), or None when they
    match none (e.g. the ``from0`` step index)."""
    from fedlib.split.smofi import SMoFiOptions

    base = SMoFiOptions()
    keys = ("stale", "renormalise", "weighting", "stale_index")
    got = {k: options.get(k, getattr(base, k)) for k in keys}
    for r in SMOFI_READINGS.values():
        want = {k: getattr(base, k) for k in keys} | dict(r.options)
        if got == want:
            return r.name
    return None
