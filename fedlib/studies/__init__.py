"""The paper tables as library specs: one module per notebook, ``fedlib/studies/<paper>/<name>.py``
beside ``notebooks/<paper>/<name>.ipynb``.

A study module declares what its notebook computes and leaves the notebook to display it:

* ``SETTINGS`` — a literal ``{profile: {knob: value}}`` dict (``fedlib reproduce`` reads its keys to
  know which profiles the notebook runs), and ``LISTS``, the knobs that hold lists;
* the grid — which methods, settings, readings and seeds run at a profile, as run configs;
* the measurement — the runs' per-seed numbers and curves as tables;
* the evidence — the comparison rows (``fedlib.claims.evidence`` records, verdicts from
  ``fedlib.claims.verdict``) that ``save_comparison`` writes beside the report.

The notebook keeps the markdown a student reads, its papermill ``parameters`` cell, and the tables
and figures. A report is stale when its study module or its parameters cell changes
(``fedlib.reproduce.report_key``), not when a figure title or a sentence of the notebook does.
"""
