"""Shared pytest setup: one intra-op thread (2 shared cores), and the real-data location."""

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real datasets (``$FEDLIB_DATA``, default /work/shared/data; read-only); skip if absent."""
    root = Path(os.environ.get("FEDLIB_DATA") or "/work/shared/data")
    if not root.is_dir() or not any(root.iterdir()):
        pytest.skip(f"real data folder {root} not available (set FEDLIB_DATA)")
    return root
