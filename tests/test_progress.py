"""Progress display (fedlib.core.progress): widget in JupyterLab, plain text elsewhere, log lines
through the display, FEDLIB_PROGRESS for papermill (issue 20)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
import torch

from fedlib.core import progress
from fedlib.core.errors import FedlibError
from fedlib.core.progress import LineBar, progress_bar, progress_mode, progress_write
from fedlib.experiments import ResultStore, RunConfig, run

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]


def test_mode_from_the_environment(monkeypatch):
    monkeypatch.delenv("FEDLIB_PROGRESS", raising=False)
    assert progress_mode() == "text"  # a test process is no Jupyter kernel
    for mode in ("text", "off", "TEXT "):
        monkeypatch.setenv("FEDLIB_PROGRESS", mode)
        assert progress_mode() == mode.strip().lower()
    monkeypatch.setenv("FEDLIB_PROGRESS", "fancy")
    with pytest.raises(FedlibError, match="FEDLIB_PROGRESS"):
        progress_mode()


def test_auto_is_a_widget_in_a_kernel_with_ipywidgets(monkeypatch):
    monkeypatch.delenv("FEDLIB_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "_in_kernel", lambda: True)
    monkeypatch.setattr(progress, "_has_widgets", lambda: True)
    assert progress_mode() == "widget"
    monkeypatch.setattr(progress, "_has_widgets", lambda: False)
    assert progress_mode() == "text"  # never tqdm's IProgress warning
    monkeypatch.setenv("FEDLIB_PROGRESS", "widget")
    with pytest.raises(FedlibError, match="ipywidgets"):
        progress_mode()


def test_line_bar_prints_one_plain_line_when_it_closes():
    out = io.StringIO()
    bar = LineBar(total=5, desc="fedavg seed=0", unit="round", file=out)
    for _ in range(5):
        bar.update(1)
        bar.set_postfix(acc="0.5")
    LineBar.write("[fedlib] a log line", file=out)  # clears nothing: no "\r"
    assert out.getvalue() == "[fedlib] a log line\n"
    bar.close()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in out.getvalue()
    assert lines[1].startswith("fedavg seed=0: 100%") and "5/5" in lines[1] and "acc=0.5" in lines[1]


def test_off_and_disable_are_silent(monkeypatch, capsys):
    monkeypatch.setenv("FEDLIB_PROGRESS", "off")
    assert list(progress_bar(range(3), desc="x")) == [0, 1, 2]
    monkeypatch.setenv("FEDLIB_PROGRESS", "text")
    bar = progress_bar(total=2, desc="y", disable=True)
    bar.update(2)
    bar.close()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_a_run_logs_through_the_display_not_stderr(tmp_path, monkeypatch, capsys):
    """Outside a terminal (papermill, a pipe) the bar and the [fedlib] line are stdout lines."""
    monkeypatch.setenv("FEDLIB_PROGRESS", "text")
    cfg = RunConfig.from_preset("toy-smoke").with_overrides(["rounds=3"])
    run(cfg, store=ResultStore(tmp_path), progress=True)
    run(cfg, store=ResultStore(tmp_path), progress=True)  # cached
    captured = capsys.readouterr()
    assert captured.err == "" and "\r" not in captured.out
    lines = captured.out.splitlines()
    assert re.match(r".* seed=\d+: 100%.*3/3", lines[0]), lines
    assert lines[1].startswith("[fedlib] ") and lines[1].endswith("s)")
    assert lines[2].startswith("[fedlib] ") and lines[2].endswith("(cached)")
    progress_write("done")
    assert capsys.readouterr().out == "done\n"


def test_reproduce_runs_notebooks_with_text_progress(tmp_path, monkeypatch):
    """The kernel papermill starts inherits FEDLIB_PROGRESS=text (unless the user set it)."""
    import papermill

    from fedlib.reproduce import execute

    seen = []
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda *a, **k: seen.append(os.environ.get("FEDLIB_PROGRESS")))
    (tmp_path / "notebooks").mkdir()
    book = tmp_path / "notebooks" / "a.ipynb"
    book.write_text("{}")
    monkeypatch.delenv("FEDLIB_PROGRESS", raising=False)
    execute(book, tmp_path, tmp_path / "out", "smoke")
    monkeypatch.setenv("FEDLIB_PROGRESS", "off")
    execute(book, tmp_path, tmp_path / "out", "smoke")
    assert seen == ["text", "off"] and os.environ["FEDLIB_PROGRESS"] == "off"


def test_fedlib_never_imports_tqdm_auto():
    """tqdm.auto warns 'IProgress not found' (with the venv's path) in a kernel without ipywidgets."""
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "fedlib").rglob("*.py")
                 if re.search(r"tqdm\.auto|tqdm\.autonotebook", p.read_text())
                 and p.name != "progress.py"]
    assert offenders == []
