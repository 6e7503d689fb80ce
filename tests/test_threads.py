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
