"""Per-client delays r_i ("resources", spec fedqs.md §1, §8): integer ticks a local training takes.

Profiles
--------
``uniform``
    r_i ~ U{1, ..., ratio}, drawn once from ``fedlib.core.utils.generator(seed, "safl-delays", N, ratio)``
    — the paper's "resource ratio 1:ratio" (default 1:50; Table 4 also uses 1:20 and 1:100, and
    N = 50 / 200 clients).
``official-100``
    the exact 100 values of the official code (last row of
    ``resource/resources_No_100_max_50.csv``, spec §8); only valid for N = 100.

A list/tensor of integers is accepted as an explicit profile. Delays < 1 or of the wrong length
raise :class:`fedlib.core.errors.FedlibError`.
"""

from __future__ import annotations

from typing import Sequence

import torch

from fedlib.core.errors import FedlibError, check, check_choice
from fedlib.core.utils import generator

# spec §8 — do not edit
OFFICIAL_100 = (
    38, 27, 10, 25, 39, 37, 46, 1, 26, 11, 10, 7, 40, 28, 43, 13, 31, 3, 23, 24, 7, 22, 3, 50, 30,
    26, 49, 15, 32, 15, 49, 29, 10, 27, 36, 14, 5, 2, 41, 38, 4, 1, 26, 47, 28, 44, 4, 10, 12, 48,
    23, 2, 42, 8, 36, 20, 11, 35, 3, 45, 10, 24, 50, 10, 29, 10, 33, 50, 18, 44, 17, 4, 8, 7, 26,
    17, 6, 1, 15, 33, 3, 30, 46, 48, 4, 27, 16, 13, 26, 47, 5, 27, 40, 42, 1, 28, 31, 6, 21, 3,
)  # fmt: skip

PROFILES = ("uniform", "official-100")


def uniform_delays(n_clients: int, ratio: int, seed: int, *stream) -> torch.Tensor:
    """``n_clients`` integers uniform in [1, ratio] from the stream (seed, "safl-delays", *stream)."""
    check(int(ratio) >= 1, f"delay ratio must be >= 1, got {ratio}", "use e.g. safl.ratio=50 (1:50)")
    g = generator(seed, "safl-delays", int(n_clients), int(ratio), *stream)
    return torch.randint(1, int(ratio) + 1, (int(n_clients),), generator=g, dtype=torch.long)


def validate_delays(delays, n_clients: int) -> torch.Tensor:
    """Check an explicit delay vector: N integers, each >= 1. Returns a LongTensor."""
    t = torch.as_tensor(delays)
    if t.dim() != 1 or t.numel() != n_clients:
        raise FedlibError(
            f"need one delay per client: {n_clients} values, got shape {tuple(t.shape)}",
            "pass a list of N integers >= 1, or a profile name (uniform, official-100)",
        )
    if torch.is_floating_point(t):
        if not torch.equal(t, t.round()):
            raise FedlibError(f"delays must be integers (ticks), got {t.tolist()[:8]}...")
    t = t.to(torch.long)
    if bool((t < 1).any()):
        bad = [(i, int(v)) for i, v in enumerate(t.tolist()) if v < 1][:5]
        raise FedlibError(f"every delay must be >= 1 tick; (client, delay): {bad}")
    return t


def make_delays(profile: str | Sequence[int] = "uniform", n_clients: int = 100, ratio: int = 50,
                seed: int = 0) -> torch.Tensor:
    """The delay vector (LongTensor [N]) of a profile; see the module docstring."""
    check(int(n_clients) >= 1, f"need at least one client, got {n_clients}")
    if not isinstance(profile, str):
        return validate_delays(profile, n_clients)
    check_choice("delay profile", profile, PROFILES)
    if profile == "official-100":
        check(
            n_clients == len(OFFICIAL_100),
            f"delay profile 'official-100' has 100 values but the run has {n_clients} clients",
            "use safl.clients=100, or safl.delays=uniform with safl.ratio=R for other N",
        )
        return torch.tensor(OFFICIAL_100, dtype=torch.long)
    return uniform_delays(n_clients, ratio, seed)
