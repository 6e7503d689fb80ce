"""What the notebooks share: profiles, their runs, paper-vs-measured tables, figures, statistics.

Modules (one job each):

- ``profiles``: resolve_profile, apply_knobs, check_names, show_settings, run_label;
- ``paths``: project_root, report_dir;
- ``tables``: comparison, save_comparison, markdown_table; not_run_table, save_not_run (the paper's
  rows a notebook does not run, with the reason, beside its comparison);
- ``figures``: save_figure, paired_interval_plot, show_paired;
- ``stats``: curve_metrics, paired_difference, verdict, signed_verdict, censored_speedup, speedup_label,
  censored_rounds, censored_extreme;
- ``runs``: results_store, run_all, run_or_load, dataset_missing;
- ``fedqs``: the FedQS notebooks' methods, tasks and per-profile scale (task_config, ...);
- ``smofi``: the SMoFi notebooks' runs (smofi_config, ...), the paper's numbers they share and its
  direction per claim (paper_expected_sign).

Every name below is importable as ``from fedlib.reporting import name``; the FedQS catalogue
(``METHODS``, ``TASKS``, ...) is imported from ``fedlib.reporting.fedqs``.
"""

from fedlib.reporting.figures import paired_interval_plot, save_figure, show_paired
from fedlib.reporting.paths import project_root, report_dir
from fedlib.reporting.profiles import (PROFILES, apply_knobs, check_names, resolve_profile, run_label,
                                       show_settings)
from fedlib.reporting.runs import dataset_missing, results_store, run_all, run_or_load
from fedlib.reporting.smofi import (PAPER_ACCURACY, PAPER_CIFAR10_SPEEDUP, PAPER_FRAMEWORKS, PAPER_TINYIMAGENET_ROUNDS,
                                    SMOFI_BATCH, paper_expected_sign,
                                    SMOFI_DATASETS, SMOFI_METHODS, SMOFI_PARTICIPATION, SMOFI_PRESET,
                                    SMOFI_SCALE_KNOBS, smofi_config, smofi_configs, smofi_label,
                                    smofi_participations, smofi_scale_note, smofi_settings)
from fedlib.reporting.stats import (censored_extreme, censored_rounds, censored_speedup, curve_metrics, paired_difference, signed_verdict, speedup_label,
                                   verdict)
from fedlib.reporting.tables import (COMPARISON_COLUMNS, NOT_RUN_COLUMNS, comparison, markdown_table, not_run_table,
                                    save_comparison, save_not_run)

__all__ = [
    "PROFILES", "apply_knobs", "check_names", "resolve_profile", "run_label", "show_settings",
    "project_root", "report_dir",
    "COMPARISON_COLUMNS", "comparison", "markdown_table", "save_comparison",
    "NOT_RUN_COLUMNS", "not_run_table", "save_not_run",
    "paired_interval_plot", "save_figure", "show_paired",
    "curve_metrics", "paired_difference", "verdict", "signed_verdict", "censored_speedup", "speedup_label",
    "censored_rounds", "censored_extreme",
    "dataset_missing", "results_store", "run_all", "run_or_load",
    "PAPER_ACCURACY", "PAPER_CIFAR10_SPEEDUP", "paper_expected_sign", "PAPER_FRAMEWORKS", "PAPER_TINYIMAGENET_ROUNDS", "SMOFI_BATCH", "SMOFI_DATASETS",
    "SMOFI_METHODS", "SMOFI_PARTICIPATION", "SMOFI_PRESET", "SMOFI_SCALE_KNOBS", "smofi_config", "smofi_configs",
    "smofi_label", "smofi_participations", "smofi_scale_note", "smofi_settings",
]
