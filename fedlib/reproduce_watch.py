"""What a notebook trains, said while ``fedlib reproduce`` executes it.

A notebook's kernel (and its sweep processes) append one line per event to ``$FEDLIB_TRAINING_LOG``
(:func:`fedlib.experiments.running.runner._log_training`): a run starts (or resumes at its checkpoint),
reaches a checkpoint, is trained. :class:`TrainingWatch` sets that variable for one notebook and prints
the lines as they come, prefixed with the report's name, at most one checkpoint line per run every
``every`` seconds. Without it a notebook that trains a 400-round run shows nothing for an hour and
looks hung.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from fedlib.core.progress import progress_write
from fedlib.experiments.running.runner import TRAINING_LOG_ENV


class TrainingWatch:
    """``with TrainingWatch(report):`` — print the training lines of the notebook executed inside."""

    def __init__(self, report: str, poll: float = 2.0, every: float = 60.0, write=progress_write):
        self.report, self.poll, self.every, self.write = report, poll, every, write
        self.path: Path | None = None
        self._offset, self._last, self._partial = 0, {}, ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "TrainingWatch":
        fd, name = tempfile.mkstemp(prefix="fedlib-training-", suffix=".log")
        os.close(fd)
        self.path = Path(name)
        os.environ[TRAINING_LOG_ENV] = name
        self._thread = threading.Thread(target=self._loop, name="fedlib-training-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        os.environ.pop(TRAINING_LOG_ENV, None)
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.read()  # what came after the last poll
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            self.read()

    def read(self) -> None:
        """Print the complete lines written since the last read."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        self._offset += len(chunk)
        text = self._partial + chunk.decode("utf-8", "replace")
        *lines, self._partial = text.split("\n")
        for line in lines:
            if line.strip() and self._shown(line):
                self.write(f"fedlib reproduce: {self.report}: {line}")

    def _shown(self, line: str) -> bool:
        """Every start and end line; a checkpoint line only ``every`` seconds after the run's last line."""
        run, now = line.split(" ", 1)[0], time.monotonic()
        if "checkpoint written" in line and now - self._last.get(run, -self.every) < self.every:
            return False
        self._last[run] = now
        return True
