"""Profiles: the scale a notebook runs at, the knobs its parameters cell sets, the label of its runs.

- ``smoke``: seconds, for CI (nbval); numbers mean nothing, only that the pipeline works.
- ``cpu``: real data at a scale two CPU cores finish in minutes; reduced, never the paper.
- ``paper``: the paper's settings; needs a GPU for the vision and text tasks.
- ``long`` (issue 34): the ``cpu`` settings of the FedQS CIFAR-10 tables at the papers' horizon,
  T = 400 rounds, evaluated every 5th round and every round of the last 20 (:data:`DERIVED_PROFILES`:
  the ``cpu`` overlay of a task, then these overrides). Hours per run on a CPU, computed over several
  sittings; only the notebooks with a ``long`` entry in their ``SETTINGS`` have it
  (:data:`PARTIAL_PROFILES`), and ``auto`` never picks it. Its runs are labelled ``custom`` in the
  result store (a label, not hashed: ``RunConfig``'s labels are smoke / cpu / paper / custom).
  The SMoFi notebooks define their own ``long`` (issue 43), not by :data:`DERIVED_PROFILES` (the FedQS
  horizon) but in :data:`fedlib.reporting.smofi.SMOFI_PARTICIPATION` / :data:`LONG_DEFINITIONS` below: the
  ``sflv1-cifar10-cpu`` overlay with every scale knob set on top — all 50,000 CIFAR-10 training images
  and the 10,000 test images, the paper's 20 clients with 10 per round, Dirichlet 0.1 (and equal-size
  shards), a small CNN cut after ``conv1``, E = 1, B = 32, spec §4's optimizer, ``SMOFI_LONG_ROUNDS``
  rounds on a cadence like the FedQS one; the same partial-profile rules (never ``auto``).

``auto`` resolves to ``$FEDLIB_PROFILE`` when set, else ``paper`` on a CUDA machine and ``cpu`` otherwise.
"""

from __future__ import annotations

import os

import pandas as pd

from fedlib.core.errors import FedlibError, check_choice

from fedlib.core.profiles import REPORT_PROFILES as PROFILES  # noqa: E402  (one home for every layer)
# profiles only some notebooks define (a ``SETTINGS`` entry of that name): ``fedlib reproduce`` runs and
# lists only those notebooks at such a profile
PARTIAL_PROFILES = ("long",)
# profiles defined as another profile's preset overlay plus overrides [D, issue 34: the presets folder is
# capped at 20 entries (tests/test_presets_compose.py), so ``long`` has no overlay file of its own; the
# same runs from the command line: ``fedlib run --preset fedsgd-cifar10-cpu --set rounds=400 --set
# eval_every=5 --set eval_last=20`` (the profile label is not hashed: one stored result)]
DERIVED_PROFILES = {"long": ("cpu", ("rounds=400", "eval_every=5", "eval_last=20"))}
# [issue 43] where each paper's ``long`` profile is defined (for readers; the notebooks import their own)
LONG_DEFINITIONS = {"FedQS": "fedlib.reporting.profiles.DERIVED_PROFILES['long'] (the cpu overlay at T = 400)",
                    "SMoFi": "fedlib.reporting.smofi.SMOFI_PARTICIPATION['long'] (the sflv1-cifar10-cpu overlay, "
                             "all data, 20 clients / 10 per round, SMOFI_LONG_ROUNDS, SMOFI_LONG_CADENCE)"}


def resolve_profile(profile: str = "auto") -> str:
    """``auto`` -> $FEDLIB_PROFILE, else ``paper`` with CUDA, else ``cpu``. The resolved profile becomes the
    one whose cross-CPU drift the report's fragile marks read (:func:`fedlib.claims.words.use_profile`)."""
    from fedlib.claims.words import use_profile

    if profile == "auto":
        profile = os.environ.get("FEDLIB_PROFILE") or _hardware_profile()
    check_choice("profile", profile, PROFILES)
    return use_profile(profile)


def cadence_words(cfg) -> str:
    """The evaluation cadence of a run config in words, for a report's settings row: which rounds
    carry an accuracy and that every metric reads those rounds only (issue 34)."""
    from fedlib.core.utils import eval_rounds

    every, last, total = int(cfg.eval_every), int(getattr(cfg, "eval_last", 0)), int(cfg.rounds)
    if every == 1:
        return f"every round evaluated ({total})"
    n = len(eval_rounds(total, every, last))
    tail = f" and every round of the last {last}" if last else " and the last round"
    return (f"evaluated every {every}th round{tail} ({n} of {total} rounds); every metric (final, best, "
            "convergence accuracy, rounds to target, oscillations) reads the evaluated rounds only: rounds to "
            f"target resolve to the cadence before round {total - last + 1}, an oscillation is a drop between "
            "consecutive evaluated rounds")


def _hardware_profile() -> str:
    import torch

    return "paper" if torch.cuda.is_available() else "cpu"


def apply_knobs(defaults: dict, namespace: dict, lists=()) -> dict:
    """The profile's settings with every knob the parameters cell set (not ``None``) applied.

    A string given for a non-string setting is parsed as YAML (papermill passes ``-p tasks "[adult]"``
    as a string); a scalar given for a knob named in ``lists`` becomes a one-element list.
    """
    from fedlib.core.yaml_safe import load_yaml

    settings = dict(defaults)
    for key, default in defaults.items():
        value = namespace.get(key)
        if value is None:
            continue
        if isinstance(value, str) and not isinstance(default, str):
            value = load_yaml(value, f"notebook parameter {key!r}")
        if key in lists and not isinstance(value, (list, tuple)):
            value = [value]
        settings[key] = value
    return settings


def check_names(names, known, what: str, knob: str | None = None) -> list:
    """``names`` as a list, after checking that each is one of ``known`` (``what`` and ``knob`` name
    them in the error: ``unknown method 'x' in reduced_methods``)."""
    for name in names:
        if name not in known:
            raise FedlibError(f"unknown {what} {name!r}" + (f" in {knob}" if knob else ""),
                              f"choose from {list(known)}")
    return list(names)


def show_settings(settings: dict, profile: str) -> pd.DataFrame:
    """The settings a notebook runs with, as a one-column table printed in every report."""
    return pd.DataFrame({"value": {k: repr(v) for k, v in {"profile": profile, **settings}.items()}})


def run_label(profile: str, paper_scale: bool) -> str:
    """The ``profile`` label of a run in the result store: ``paper`` for a run at the paper's scale
    (whichever profile asked for it, so the cpu and paper reports share it), else the profile's
    name, or ``custom`` for a reduced run the ``paper`` profile was asked for and for a run of a
    :data:`DERIVED_PROFILES` profile (``long``: not one of ``RunConfig``'s labels)."""
    if paper_scale:
        return "paper"
    return "custom" if profile == "paper" or profile in DERIVED_PROFILES else profile
