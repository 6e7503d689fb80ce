"""One torch thread per run by default (the second core goes to a second process), FEDLIB_THREADS overrides."""

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.experiments import ResultStore, RunConfig, run
from fedlib.core.utils import default_threads


def test_default_is_one_thread(monkeypatch):
    monkeypatch.delenv("FEDLIB_THREADS", raising=False)
    assert default_threads() == 1


def test_env_overrides_and_zero_leaves_torch_alone(monkeypatch):
    monkeypatch.setenv("FEDLIB_THREADS", "2")
    assert default_threads() == 2
    monkeypatch.setenv("FEDLIB_THREADS", "0")
    assert default_threads() == 0


@pytest.mark.parametrize("bad", ["two", "-1", "1.5"])
def test_bad_env_value_names_the_variable_and_the_fix(monkeypatch, bad):
    monkeypatch.setenv("FEDLIB_THREADS", bad)
    with pytest.raises(FedlibError, match="FEDLIB_THREADS must be an integer >= 0") as err:
        default_threads()
    assert "unset it" in str(err.value)


def test_run_uses_one_thread_unless_asked(monkeypatch, tmp_path):
    monkeypatch.delenv("FEDLIB_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=1"])
        run(cfg, store=ResultStore(tmp_path / "a"), progress=False)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        run(cfg, store=ResultStore(tmp_path / "b"), progress=False, threads=0)  # leave torch's setting
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------- issue 18: thread-independent results
def test_one_math_thread_pins_cpu_and_restores():
    from fedlib.split.sfl import one_math_thread

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_math_thread("cpu"):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with one_math_thread("meta"):  # not a CPU: left alone
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


_RUN = """
import sys, torch
from fedlib.experiments import ResultStore, run
res = run("smofi-cifar10-smoke", store=ResultStore(sys.argv[1]), progress=False)
print(torch.get_num_threads())
"""


@pytest.mark.slow
def test_smofi_smoke_history_is_byte_identical_with_one_and_two_threads(tmp_path, data_root):
    """issue 18: FEDLIB_THREADS=1 and 2 give the same history (accuracy, loss, train_loss) bytes."""
    import os
    import subprocess
    import sys

    import pandas as pd

    files = {}
    for threads in ("1", "2"):
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        env.update(FEDLIB_THREADS=threads, FEDLIB_DATA=str(data_root))
        root = tmp_path / f"t{threads}"
        out = subprocess.run([sys.executable, "-c", _RUN, str(root)], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split()[-1] == threads  # the run really had that many threads
        (h,) = root.glob("*/history.csv")
        files[threads] = pd.read_csv(h, dtype=str)  # the CSV text, not parsed floats
    cols = ["round", "accuracy", "loss", "train_loss"]
    assert files["1"][cols].equals(files["2"][cols])
