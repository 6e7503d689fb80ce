"""What a profile does not run: the paper's tables, rows and panels without a measured number.

``fedlib reproduce`` writes these into ``reports/<profile>/README.md`` (section "Not run at this
profile"), so the index lists every table of the papers: measured, reduced (the notebook's own
notes say how), or **not run, with the reason**. A notebook adds its own ``not run`` rows for what
its knobs leave out (:func:`fedlib.reporting.fedqs.not_run_row`); the list below is what no notebook
of that profile runs at all.

Each entry: ``(paper, item, profiles it is not run at, reason)``.
"""

from __future__ import annotations

LOWER = ("smoke", "cpu")  # the profiles below `paper`
EVERY = ("smoke", "cpu", "paper", "long")

NOT_RUN = [
    # ---- FedQS: the CV settings only a GPU runs (ResNet-18, T = 400)
    ("FedQS", "Tables 1, 2, 4, 5 — CV cells with ResNet-18 at T = 400", LOWER,
     "ResNet-18 on CIFAR-10 for 400 rounds needs a GPU; cpu runs the FedQS authors' small CNN cnn3 for "
     "T = 30–50 rounds instead (each notebook's settings row says which)"),
    ("FedQS", "Table 3 — CV and NLP runtime columns, RWD Ethnicity", LOWER,
     "cpu measures runtime on RWD Gender only (one seed): ResNet-18 / LSTM wall times on a CPU say nothing "
     "about the paper's GPU runtimes"),
    ("FedQS", "Table 4 — x = 0.1 and x = 1 (the paper averages x = 0.1 / 0.5 / 1)", LOWER,
     "cpu runs x = 0.5 only, two seeds, T = 30 (budget ≤ 40 runs); `alphas=[0.1, 0.5, 1.0]` adds the others"),
    ("FedQS", "Table 5 — x = 0.1 and x = 1 (the paper averages x = 0.1 / 0.5 / 1)", LOWER,
     "cpu runs x = 0.5 only (three seeds); `alphas=[0.1, 0.5, 1.0]` adds the others (3× the runs)"),
    ("FedQS", "Table 6 — CV dynamic scenarios", LOWER,
     "cpu runs the three scenarios on UCI Adult (FCN) at the paper's scale, not on CIFAR-10"),
    ("FedQS", "Figure 4 — NLP panel (Shakespeare, R = 600)", LOWER,
     "cpu draws the CV (x = 0.5) and RWD Gender panels only; the paper's NLP panel is R = 600 roles, and "
     "cpu's Shakespeare runs (Table 2, the safl-shakespeare-cpu overlay) are a reduced task"),
    ("FedQS", "Figure 5 — CV hyperparameter grids", LOWER,
     "cpu runs the grids on UCI Adult (FCN, T = 200): a CIFAR-10 grid is ~40 runs"),
    # ---- the long profile (issue 34): three FedQS notebooks at T = 400, the cpu settings otherwise
    ("FedQS", "Tables 1, 2, 5 — CV cells with ResNet-18", ("long",),
     "the long profile runs the cpu settings (the FedQS authors' small CNN cnn3, 100 clients, K = 10, "
     "official-100 delays) at the paper's T = 400, not ResNet-18 (a GPU's work)"),
    ("FedQS", "Table 2 — x = 0.1, x = 1, NLP and RWD columns; Table 5 — the similarity functions and "
     "w/o momentum; Table 1 — the synchronous cells", ("long",),
     "long runs at T = 400 only the cells whose claims need the paper's horizon, on two CPU cores (hours a "
     "run): Table 1's four "
     "semi-asynchronous cells, Table 2's x = 0.5 column (FedQS-SGD, FedSGD, FedQS-Avg, FedAvg; WKAFL and "
     "M-step as an extra sitting) and Table 5's without-feedback pair; the cpu reports hold the rest at "
     "T = 50 (each notebook lists its own not-run rows)"),
    ("FedQS", "Tables 3, 4, 6 and Figures 4, 5", ("long",),
     "no long entry in these notebooks: the cpu reports hold them at their reduced horizon"),
    ("SMoFi", "CIFAR-100 and Tiny-ImageNet columns, FedNAG, the optimizer / client-count / architecture ablations, "
     "the equal-size shards", ("long",),
     "long runs only the CIFAR-10 questions at the paper's participation (all 50,000 images, 10 of 20 clients, "
     "Dirichlet 0.1, a small "
     "CNN): main_accuracy's eight methods and convergence_speedup on five seeds, ablations' alpha sweep and "
     "drop + ÷Σ on three, frameworks' SFLV2 vs SFLV1 on five; the rest stays in the cpu reports "
     "(-p participations=[partial,shards] adds the shards)"),
    # ---- FedQS: the appendix (no notebook at any profile)
    ("FedQS", "Appendix Table 9 / Figure 10 — convergence stability", EVERY,
     "appendix table not in the paper text available to fedlib (only its mention in §5.2); no notebook"),
    ("FedQS", "Appendix Table 10 — complete robustness results", EVERY,
     "appendix table not in the available paper text; Table 4's notebook runs its main-text settings"),
    ("FedQS", "Appendix Tables 11–14 — hyperparameter grids in detail", EVERY,
     "appendix tables not in the available paper text; Figure 5's notebook runs the grids it summarises"),
    ("FedQS", "Appendix Figures 8, 9 — latency between aggregation rounds", EVERY,
     "appendix figures not in the available paper text; Table 3 reports virtual time per round"),
    ("FedQS", "Appendix C — scalability", EVERY, "appendix section not in the available paper text; no notebook"),
]


def not_run(profile: str) -> list[dict]:
    """The entries of :data:`NOT_RUN` that ``profile`` does not run, as rows
    ``{"paper", "item", "reason"}``."""
    return [{"paper": paper, "item": item, "reason": reason}
            for paper, item, profiles, reason in NOT_RUN if profile in profiles]
