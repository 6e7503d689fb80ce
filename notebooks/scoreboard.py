# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Which claims hold: the scoreboard at a glance
#
# Every claim of FedQS (NeurIPS 2025) and SMoFi (AAAI 2026) that fedlib records (`fedlib/claims/`), judged from
# the executed reports by the one verdict rule (`fedlib.claims.verdict`): the paired 95 % t-interval of each
# report row against the paper's sign. Two pictures:
#
# 1. **The grid**: one row per claim, one column per profile and *reading* (FedQS: which of its rules the runs
#    follow — the paper's text, or the official code's main or momentum scripts; SMoFi: which reading of the
#    digest's open fusion rule), coloured by verdict. A white cell: that reading did not run at that profile
#    (the scoreboard's to-decide table prices it).
# 2. **The forest**: each judged claim's key effect from its headline row (the profile closest to the paper,
#    the default reading), signed so the paper's direction points right; × marks the paper's own number.
#
# The tables behind them are `reports/SCOREBOARD.md` (summary first, then every row with its reason).
# Nothing here trains: the notebook reads the committed reports and `ledger/`.
#
# Specs: [`docs/spec/fedqs.md`](../docs/spec/fedqs.md) and [`docs/spec/smofi.md`](../docs/spec/smofi.md).

# %% tags=["parameters"]
# Edit a value here and Run All (JupyterLab), or run: fedlib reproduce --only scoreboard -p NAME=VALUE
profile = "auto"   # where the figures are saved (reports/<profile>/); the verdicts read every profile's reports

# %%
# NBVAL_CHECK_OUTPUT
from fedlib.reporting import resolve_profile, show_settings

profile = resolve_profile(profile)
SETTINGS = {"smoke": dict(), "cpu": dict()}  # the scoreboard reads every profile's reports; executed at cpu
show_settings({"reports read": "cpu, long and paper (committed)"}, profile)

# %%
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from fedlib.claims.evaluate import evaluate
from fedlib.claims.scoreboard import summary_markdown
from fedlib.reporting.figures import save_figure
from fedlib.reporting.scoreboard_figures import show_forest, show_verdict_grid

rows = evaluate()
display(Markdown("\n".join(summary_markdown(rows))))

# %%
fig = show_verdict_grid(rows, "Verdict per claim × profile · reading (claims with at least one judged row)")
save_figure(fig, "scoreboard_grid", profile)
plt.show()

# %%
fig = show_forest(rows, "Key effect of each judged claim (headline row, 95 % interval; colour = verdict)")
save_figure(fig, "scoreboard_forest", profile)
plt.show()
