"""What the notebooks share: profiles, their runs, paper-vs-measured tables, figures, statistics.

Modules (one job each):

- ``profiles``: resolve_profile, apply_knobs, check_names, show_settings, run_label;
- ``paths``: project_root, report_dir;
- ``tables``: comparison, save_comparison, markdown_table, full_table, show_paper_claims (the paper's claims
  rendered from fedlib.claims); not_run_table, save_not_run (the
  paper's rows a notebook does not run, with the reason, beside its comparison);
- ``figures``: save_figure, forest_plot / show_forest, paired_interval_plot / show_paired (legend, fragile
  marks, a note where columns keep their own x-scale), runs_caption (seeds, T, model);
- ``smofi_figures``: the SMoFi notebooks' paired and speed-up figures with the paper's band and numbers;
- ``curves``: ``<report>.curves.csv`` / ``.clients.csv`` beside each executed report;
- ``machine_paths``: no path of the executing machine in an executed report;
- ``notebook_params``: what ``fedlib reproduce -p`` may pass to a notebook;
- ``stats``: curve_metrics, paired_difference, verdict; the claim verdicts (side, claim_verdict, censor:
  verdicts from resolved differences only, unreached targets censored); signed_verdict,
  censored_speedup, speedup_label, censored_rounds, censored_extreme (the SMoFi notebooks');
- ``coverage``: not_run — what a profile does not run, with the reason (the reports index lists it);
- ``runs``: results_store, run_all, run_or_load, dataset_missing;
- ``fedqs``: the FedQS notebooks' methods, tasks and per-profile scale (task_config, ...);
- ``smofi``: the SMoFi notebooks' runs (smofi_config, ...), the paper's numbers they share and its
  direction per claim (paper_expected_sign).

Every name below is importable as ``from fedlib.reporting import name``; the FedQS catalogue
(``METHODS``, ``TASKS``, ...) is imported from ``fedlib.reporting.fedqs``.
"""

from fedlib.reporting.coverage import not_run
from fedlib.reporting.display import show_table
from fedlib.reporting.figures import (forest_plot, gap_curve_plot, paired_interval_plot, runs_caption, save_figure,
                                      show_forest, show_gap_curves, show_paired)
from fedlib.reporting.paths import project_root, report_dir
from fedlib.reporting.profiles import (DERIVED_PROFILES, PARTIAL_PROFILES, PROFILES, apply_knobs, cadence_words,
                                       check_names, resolve_profile, run_label, show_settings)
from fedlib.reporting.runs import dataset_missing, results_store, run_all, run_or_load
from fedlib.reporting.smofi import (PAPER_ACCURACY, PAPER_CIFAR10_SPEEDUP, PAPER_FRAMEWORKS, PAPER_TINYIMAGENET_ROUNDS,
                                    SMOFI_BATCH, paper_expected_sign,
                                    SMOFI_DATASETS, SMOFI_METHODS, SMOFI_PARTICIPATION, SMOFI_PRESET,
                                    SMOFI_SCALE_KNOBS, smofi_config, smofi_configs, smofi_label,
                                    smofi_participations, smofi_scale_note, smofi_setting_title,
                                    smofi_settings)
from fedlib.reporting.stats import (censor, censored_extreme, censored_rounds, censored_speedup, claim_verdict,
                                    curve_metrics, interval_text, number_text, paired_difference, side,
                                    signed_verdict, speedup_label, verdict)
from fedlib.reporting.tables import (COMPARISON_COLUMNS, NOT_RUN_COLUMNS, comparison, full_table, markdown_table,
                                     not_run_table, save_comparison, save_not_run, settings_row,
                                     show_paper_claims)

__all__ = [
    "PROFILES", "PARTIAL_PROFILES", "DERIVED_PROFILES", "apply_knobs", "cadence_words", "check_names", "resolve_profile", "run_label",
    "show_settings",
    "project_root", "report_dir",
    "COMPARISON_COLUMNS", "comparison", "full_table", "markdown_table", "save_comparison",
    "NOT_RUN_COLUMNS", "not_run_table", "save_not_run", "settings_row", "show_paper_claims",
    "forest_plot", "gap_curve_plot", "paired_interval_plot", "runs_caption", "save_figure", "show_forest", "show_gap_curves",
    "show_paired",
    "censor", "claim_verdict", "curve_metrics", "interval_text", "number_text", "paired_difference", "side", "verdict",
    "signed_verdict", "censored_speedup", "speedup_label", "censored_rounds", "censored_extreme",
    "not_run",
    "dataset_missing", "results_store", "run_all", "run_or_load", "show_table",
    "PAPER_ACCURACY", "PAPER_CIFAR10_SPEEDUP", "paper_expected_sign", "PAPER_FRAMEWORKS", "PAPER_TINYIMAGENET_ROUNDS", "SMOFI_BATCH", "SMOFI_DATASETS",
    "SMOFI_METHODS", "SMOFI_PARTICIPATION", "SMOFI_PRESET", "SMOFI_SCALE_KNOBS", "smofi_config", "smofi_configs",
    "smofi_label", "smofi_participations", "smofi_scale_note", "smofi_setting_title", "smofi_settings",
]
