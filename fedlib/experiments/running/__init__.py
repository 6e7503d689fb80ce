"""Running configs: one run with its store and checkpoints (``runner``: :func:`run`), a grid of
configs x seeds on a process pool or Ray (``sweep``), the split-FL speed-up comparison
(``compare``, also ``fedlib split compare``) and the complete toy paradigm (``toy``).

    from fedlib.experiments.running import run, sweep, grid
"""

from fedlib.experiments.running.runner import run
from fedlib.experiments.running.sweep import grid, sweep

__all__ = ["run", "sweep", "grid"]
