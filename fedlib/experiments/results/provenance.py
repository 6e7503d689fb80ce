"""Where a result was computed (issue 28): code revision, CPU and library versions.

Recorded in every finished result's DONE marker (``provenance``) and so in the results ledger.
The CPU matters: one thread gives byte-identical histories on one CPU type, but oneDNN and MKL pick
kernels by instruction set, so an AVX2-only AMD and an AVX-512/AMX Intel machine differ from the
8th significant digit on (README, "Reproducibility").
"""

from __future__ import annotations

import functools
import platform
import subprocess
from pathlib import Path

__all__ = ["provenance", "cpu_type"]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


@functools.lru_cache(maxsize=1)
def cpu_type() -> str:
    """``"<model name> [<torch's CPU capability>]"``, e.g. ``"AMD EPYC [AVX2]"``: two machines of one
    type run the same kernels."""
    import torch

    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001 — an old torch without the probe
        cap = "unknown"
    return f"{_cpu_model()} [{cap}]"


@functools.lru_cache(maxsize=1)
def _revision() -> str | None:
    """The git revision of the fedlib source tree (``+dirty`` when ``fedlib/`` has uncommitted
    changes), or None outside a git checkout."""
    src = Path(__file__).resolve().parents[2]  # fedlib/
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", str(src)], cwd=src, capture_output=True,
                               text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty else "") if rev else None


def provenance() -> dict:
    """Code revision, fedlib / torch / Python versions and the CPU type of this process."""
    import torch

    from fedlib import __version__

    return {"revision": _revision(), "fedlib": __version__, "torch": torch.__version__,
            "python": platform.python_version(), "cpu": cpu_type(), "threads": torch.get_num_threads()}


#: a SAFL dataset -> the drift family of its model (``benchmarks/results/cross_cpu.json``)
DRIFT_FAMILIES = {"cifar10": "cnn3-safl-cifar10", "adult": "fcn-safl-adult", "shakespeare": "lstm-safl-shakespeare"}
#: split FL's family (SMoFi's CNN on CIFAR-10)
SPLIT_FAMILY = "split-cnn-cifar10"


def drift_family(cfg) -> str | None:
    """The cross-CPU drift family of a run config: split FL, or the SAFL dataset's model (None: unknown)."""
    if getattr(cfg, "paradigm", None) == "split":
        return SPLIT_FAMILY
    return DRIFT_FAMILIES.get(getattr(getattr(cfg, "data", None), "dataset", None))

