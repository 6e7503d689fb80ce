"""nbval under CI (``make test`` runs ``pytest --nbval-lax notebooks``): wait longer for a cell's outputs.

nbval reads a cell's outputs after the kernel's reply with a fixed 5-second timeout per message
(``IPyNbCell.output_timeout``, not an option). On a loaded 2-core machine a cell that streams many
progress updates can leave a gap longer than that and fail with "Timeout of 5 seconds exceeded waiting
for output" although it ran correctly (seen once on ``fedqs/table4_robustness``). The cell's own time
limit stays nbval's ``--nbval-cell-timeout``.
"""

OUTPUT_TIMEOUT_S = 60

try:
    import nbval.plugin
except ImportError:  # the unit tests alone do not need nbval
    nbval = None

if nbval is not None:
    _init = nbval.plugin.IPyNbCell.__init__

    def _patient_init(self, *args, **kwargs):
        _init(self, *args, **kwargs)
        self.output_timeout = OUTPUT_TIMEOUT_S

    nbval.plugin.IPyNbCell.__init__ = _patient_init
