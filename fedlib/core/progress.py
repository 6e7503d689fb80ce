"""Progress bars and per-run log lines, one display for the whole package.

``FEDLIB_PROGRESS`` chooses how a bar looks (``auto`` when unset or empty):

- ``widget``: a Jupyter widget (``tqdm.notebook``) — what JupyterLab shows; needs ipywidgets;
- ``text``: on a terminal, tqdm's live bar on stderr; anywhere else (papermill, CI logs, a pipe)
  one plain line on stdout when the bar closes, with no carriage returns and no stderr block;
- ``off``: no bars (log lines are still printed);
- ``auto``: ``widget`` inside a Jupyter kernel where ipywidgets is installed, else ``text``.

[D] A kernel cannot tell whether its frontend renders widgets, and papermill sets nothing a kernel
could test, so ``fedlib reproduce`` sets ``FEDLIB_PROGRESS=text`` for the notebooks it executes
(unless the variable is already set): an executed report then holds plain text, not a widget
placeholder, and never tqdm's "IProgress not found" warning, which ``tqdm.auto`` prints (with the
path of the virtual environment) when ipywidgets is missing. fedlib never imports ``tqdm.auto``.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from tqdm.std import tqdm as _std_tqdm

from fedlib.core.errors import FedlibError, check_choice

PROGRESS_ENV = "FEDLIB_PROGRESS"
PROGRESS_MODES = ("auto", "widget", "text", "off")


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (the test ``tqdm.autonotebook`` uses)."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:  # noqa: BLE001 - a half-initialised IPython counts as no kernel
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _has_widgets() -> bool:
    return importlib.util.find_spec("ipywidgets") is not None


def progress_mode() -> str:
    """The display in effect: ``widget``, ``text`` or ``off`` (``auto`` resolved), from
    ``$FEDLIB_PROGRESS``."""
    mode = (os.environ.get(PROGRESS_ENV) or "auto").strip().lower()
    check_choice(f"{PROGRESS_ENV} value", mode, PROGRESS_MODES)
    if mode == "auto":
        return "widget" if _in_kernel() and _has_widgets() else "text"
    if mode == "widget" and not _has_widgets():
        raise FedlibError(f"{PROGRESS_ENV}=widget needs ipywidgets, which is not installed",
                          f"pip install ipywidgets, or set {PROGRESS_ENV}=text")
    return mode


class LineBar(_std_tqdm):
    """A bar that prints nothing while it runs and one plain line (stdout) when it closes.

    [D] For output that is kept rather than watched (papermill reports, logs): tqdm's ``\\r``
    redraws would be stored verbatim, and its stderr would show as an error block."""

    def __init__(self, *args, **kwargs):
        kwargs["file"] = kwargs.get("file") or sys.stdout
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None):  # noqa: ARG002 - nothing until close()
        return True

    def clear(self, nolock=False):  # noqa: ARG002 - tqdm.write() would otherwise print "\r"
        return None

    def refresh(self, nolock=False, lock_args=None):  # noqa: ARG002
        return None

    def close(self):
        if getattr(self, "disable", True):
            return
        line = str(self)
        self.disable = True
        self._decr_instances(self)
        if self.leave is not False:
            self.fp.write(line + "\n")
            self.fp.flush()


def bar_class(mode: str | None = None):
    """The tqdm class for ``mode`` (default: :func:`progress_mode`)."""
    mode = mode or progress_mode()
    if mode == "widget":
        from tqdm.notebook import tqdm as widget_tqdm

        return widget_tqdm
    if mode == "text" and not _isatty(sys.stderr):
        return LineBar
    return _std_tqdm


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_bar(iterable=None, *, disable: bool = False, **kwargs):
    """A tqdm bar in the display :func:`progress_mode` chooses (``off`` or ``disable``: silent)."""
    mode = progress_mode()
    if disable or mode == "off":
        return _std_tqdm(iterable, disable=True, **kwargs)
    cls = bar_class(mode)
    if cls is not _std_tqdm:
        kwargs.pop("dynamic_ncols", None)
    return cls(iterable, **kwargs)


def progress_write(line: str) -> None:
    """Print a log line (stdout) without breaking a live bar: through ``tqdm.write``."""
    mode = progress_mode()
    cls = _std_tqdm if mode == "off" else bar_class(mode)
    cls.write(line, file=sys.stdout)
