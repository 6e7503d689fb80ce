"""FedQS Table 4 (Li et al., NeurIPS 2025, §5.3): robustness to the number of clients N and the
resource ratio — FedAvg, FedQS-Avg, FedSGD, FedQS-SGD at N = 50 / 200 (1:50) and 1:20 / 1:100 (N = 100),
with the SAFL queue regime of every run (spec ``docs/spec/fedqs.md``, Table 4).

``Table4(profile, settings)``: ``configs`` (the grid), ``measure(results)`` (one row per run),
``differences()`` (FedQS − its foundation, paired), ``curves()``, ``comparison()`` (the rows of the report).
"""

from __future__ import annotations

import pandas as pd

from fedlib.core.errors import check_choice
from fedlib.reporting import censor, check_names
from fedlib.reporting.fedqs import (CORE_METHODS, METHODS, Study, alpha_variants, check_readings, claim_row,
                                    interval_note, paired_evidence, paired_rows, readings_of, readings_run, row_name,
                                    run_metrics, settings_row)

SYSTEMS = {"N50": (50, 50), "N200": (200, 50), "R20": (100, 20), "R100": (100, 100)}  # name: (clients, ratio)
ALL_METHODS = ["fedavg", "fedqs-avg", "fedsgd", "fedqs-sgd"]
SETTINGS = {
    "smoke": dict(task="adult", alphas=[0.5], systems=["N50", "R100"], methods=ALL_METHODS,
                  uploads=["snapshot", "overwrite"], seeds=[0, 1], rounds=5, eval_every=1, workers=1,
                  clients_scale=0.1, reduce=["safl.k=3", "data.max_train=2000"], readings=["code-main"]),
    "cpu": dict(task="cifar10", alphas=[0.5], systems=list(SYSTEMS), methods=ALL_METHODS,
                uploads=["overwrite"], seeds=[0, 1], rounds=30, eval_every=2, workers=2,
                clients_scale=1.0, reduce=[], readings=["code-main"]),
    "paper": dict(task="cifar10", alphas=[0.1, 0.5, 1.0], systems=list(SYSTEMS), methods=ALL_METHODS,
                  uploads=["snapshot", "overwrite"], seeds=[0], rounds=400, eval_every=1, workers=1,
                  clients_scale=1.0, reduce=[], readings=["code-main"]),
}
LISTS = {'alphas', 'seeds', 'systems', 'methods', 'uploads', 'readings'}  # knobs that hold lists

COLS = ["accuracy", "final", "best", "rounds_to_95", "oscillations", "uploads/tick", "backlog (final)", "staleness (mean)",
        "replaced"]
UPLOAD_NOTE = {"snapshot": "snapshot uploads (the update as uploaded waits in the buffer)",
               "overwrite": "overwrite uploads (the official code's file buffer: a newer training replaces it)"}
MEASURES = {"final": "final accuracy (points)", "rounds_to_95": "rounds to 95% (rounds)",
            "oscillations": "oscillations (count)"}


def shown(settings: dict) -> dict:
    """The settings as the notebook displays them, with the SAFL regime in words."""
    return {**settings, "SAFL regime": f"upload={' and '.join(settings['uploads'])} (each reported); delays=uniform "
            "1:ratio in every system (official-100 holds 100 delays of 1:50)"}


class Table4:
    """The Table 4 grid at ``profile`` with ``settings`` (``SETTINGS[profile]`` with the knobs applied)."""

    def __init__(self, profile: str, settings: dict):
        S = self.settings = settings
        self.profile = profile
        check_names(S["systems"], SYSTEMS, "system setting")
        self.methods = {m: METHODS[m] for m in check_names(S["methods"], CORE_METHODS, "method")}
        for u in S["uploads"]:
            check_choice("upload", u, ("snapshot", "overwrite"))
        self.read_on = check_readings(S["readings"])  # FedQS also runs under these readings (rows tagged " · code-main")
        # CIFAR-10 below `paper`: the SAFL-gap study's small CNN cnn3 (a CPU cannot train ResNet-18 in minutes)
        self.study = Study(S["task"], profile, S["rounds"], S["reduce"],
                           paper_knobs=S["clients_scale"] == 1.0 and S["eval_every"] == 1)
        self.data_variants = alpha_variants(S["task"], S["alphas"])
        self.cells, self.configs = self._grid()

    def clients(self, system: str) -> tuple:
        """(N, ratio) of ``system`` at this profile's client scale."""
        n, ratio = SYSTEMS[system]
        return max(int(round(n * self.settings["clients_scale"])), 4), ratio

    def _grid(self):
        from fedlib.safl.fedqs.readings import reading_overrides

        S, cells, cfgs = self.settings, [], []
        for system in S["systems"]:
            n, ratio = self.clients(system)
            for method in self.methods:
                for reading in readings_of(method, self.read_on):
                    for upload in S["uploads"]:
                        for data in self.data_variants:
                            for seed in S["seeds"]:
                                cfgs.append(self.study.config(method, [
                                    f"safl.clients={n}", "safl.delays=uniform", f"safl.ratio={ratio}",
                                    f"safl.upload={upload}", *data, f"eval_every={S['eval_every']}",
                                    *reading_overrides(reading)], seed))
                                cells.append((system, n, ratio, method, reading, upload, data[0] if data else "", seed))
        return cells, cfgs

    def describe(self) -> str:
        return f"{len(self.configs)} runs on {self.settings['task']}" + (
            f", FedQS also under {self.read_on}" if self.read_on else "")

    def measure(self, results) -> pd.DataFrame:
        """One row per run (``self.runs``); returns the mean per system × upload × method."""
        rows = []
        self.results = results
        for (system, n, ratio, method, reading, upload, data, seed), res in zip(self.cells, results):
            s = res.summary
            rows.append({"system": system, "N": n, "ratio": f"1:{ratio}", "upload": upload,
                         "method": row_name(method, reading), "reading": reading,
                         "aggregation": self.methods[method][1], "data": data, "seed": seed,
                         "run": res.config_hash,  # named per pair in the evidence
                         "accuracy": 100 * s["convergence_accuracy"], "best": 100 * s["best_accuracy"],
                         "final": run_metrics(res)["final"], "pair": f"{data} seed {seed}",
                         "censored": s["rounds_to_95"] is None,  # never reached 95%: censored at T, not dropped
                         "rounds_to_95": censor([s["rounds_to_95"]], self.settings["rounds"])[0].iloc[0],
                         "oscillations": s["oscillations"],
                         "uploads/tick": s.get("uploads_per_tick"), "K": s.get("k"),
                         "buffer keeps up": s.get("buffer_keeps_up"), "backlog (final)": s.get("backlog_final"),
                         "staleness (mean)": s.get("staleness_mean_all"), "replaced": s.get("replaced_share")})
        self.runs = runs = pd.DataFrame(rows)
        return runs.groupby(["system", "N", "ratio", "upload", "method"], sort=False)[COLS].mean()

    def differences(self) -> pd.DataFrame:
        """FedQS − its foundation per setting and pooled over the settings (pairs = setting × seed):
        final accuracy (paper: higher), rounds to 95% and oscillations (paper: fewer)."""
        S, runs, methods = self.settings, self.runs, self.methods
        self.pairs = [(row_name(a, r), METHODS[b][0], 1) for r in readings_run(self.read_on)
                      for a, b in (("fedqs-avg", "fedavg"), ("fedqs-sgd", "fedsgd")) if a in methods and b in methods]
        uploads = len(S["uploads"]) > 1
        runs["where"] = runs["system"] + (", " + runs["upload"] if uploads else "")
        pooled_runs = runs.assign(pair=runs["system"] + " " + runs["pair"])
        pooled_name = f"pooled over {len(S['systems'])} settings"
        self.per_setting = paired_rows(runs, self.pairs, by=["where"], metrics=("final",), pair_col="pair")
        self.pooled = paired_rows(pooled_runs, self.pairs, by=["upload"], metrics=("final",), pair_col="pair")
        if len(self.pooled):
            self.pooled["where"] = pooled_name + (", " + self.pooled["upload"] if uploads else "")
        lower = [(m, b, -1) for m, b, _ in self.pairs]  # rounds and oscillations: fewer is the paper's side
        slow = paired_rows(runs, lower, by=["where"], metrics=("rounds_to_95", "oscillations"), pair_col="pair")
        self.slow_pooled = paired_rows(pooled_runs, lower, by=["upload"], metrics=("rounds_to_95", "oscillations"),
                                       pair_col="pair")
        if len(self.slow_pooled):
            self.slow_pooled["where"] = pooled_name + (", " + self.slow_pooled["upload"] if uploads else "")
        diffs = pd.concat([self.per_setting, self.pooled, slow, self.slow_pooled], ignore_index=True)
        if len(diffs):
            diffs["panel"] = diffs["comparison"]
            diffs["measure"] = diffs["metric"].map(MEASURES)
        self.diffs = diffs
        return diffs

    def curves(self) -> pd.DataFrame:
        """Test accuracy (%) and the mean staleness of what is aggregated, per round of each run."""
        curves = []
        for (system, n, ratio, method, reading, upload, data, seed), res in zip(self.cells, self.results):
            h = res.history
            curves.append(pd.DataFrame({"round": h["round"], "accuracy": 100 * h["accuracy"],
                                        "staleness": h["staleness_mean"], "setting": f"{system} (N = {n}, 1:{ratio})",
                                        "method": row_name(method, reading), "upload": upload, "seed": seed}))
        return pd.concat(curves, ignore_index=True)

    def curves_figure(self, curves: pd.DataFrame):
        """Accuracy (top) and staleness (bottom) against the round, one column per system setting."""
        import matplotlib.pyplot as plt
        import seaborn as sns

        systems = self.settings["systems"]
        fig, axes = plt.subplots(2, len(systems), figsize=(6.5 * len(systems), 7), squeeze=False)
        for j, system in enumerate(systems):
            sub = curves[curves["setting"].str.startswith(system + " ")]
            sns.lineplot(data=sub.dropna(subset=["accuracy"]), x="round", y="accuracy", hue="method", style="upload",
                         errorbar=None, ax=axes[0][j])
            sns.lineplot(data=sub, x="round", y="staleness", hue="method", style="upload", errorbar=None, ax=axes[1][j],
                         legend=False)
            axes[0][j].set_title(sub["setting"].iloc[0] if len(sub) else system)
            axes[0][j].set_ylabel("test accuracy (%)")
            axes[1][j].set_ylabel("mean staleness of the aggregated updates")
        fig.tight_layout()
        return fig

    def _scale_note(self) -> str:
        S, profile = self.settings, self.profile
        note = ("paper scale" if self.study.paper_scale and S["task"] == "cifar10" else
                f"{profile} profile: {'UCI Adult (FCN)' if S['task'] == 'adult' else 'CIFAR-10, small CNN (cnn3)'}"
                + (f", x = {', '.join(map(str, S['alphas']))}" if S["task"] == "cifar10" else "")
                + f", T = {S['rounds']}, evaluation every {S['eval_every']} round(s), {len(S['seeds'])} seed(s); not the "
                "paper's CIFAR-10 / ResNet-18 / 400 rounds / x = 0.1, 0.5, 1 averaged")
        return note + (f"; FedQS-Avg / FedQS-SGD also under the reading(s) {', '.join(self.read_on)} of FedQS (spec "
                       "\"Readings\"), each row tagged and paired with the same foundation runs" if self.read_on else "")

    def comparison(self) -> list:
        """The rows of the report: settings, one verdict per claim, the paired differences, the regime
        of each setting and each method's numbers (the paper states no numbers: ``paper`` is empty)."""
        from fedlib.safl.delays import make_delays
        from fedlib.safl.schedule import replay

        S, runs, diffs = self.settings, self.runs, self.diffs
        mean = runs.groupby(["system", "upload", "method"])[COLS].mean()
        n_pairs = len(S["seeds"]) * len(self.data_variants)  # pairs per setting: seed (× x where several are averaged)
        k_run = runs["K"].dropna().iloc[0] if runs["K"].notna().any() else float("nan")
        out = [settings_row("Table 4", f"{self._scale_note()}; K = {k_run:g} and uniform 1:ratio delays in every setting; "
                            "final = mean of the last 10 evaluated rounds; rounds to 95% censored at T where never "
                            "reached; oscillations = drops of more than 15 points between evaluated rounds; a verdict "
                            "needs a 95% t-interval that excludes 0 on the paper's side; "
                            f"{n_pairs} pair(s) per setting (a t-interval "
                            f"with {n_pairs - 1} degree(s) of freedom), {n_pairs * len(S['systems'])} pooled over the settings")]
        acc, pooled, slow_pooled = self.per_setting, self.pooled, self.slow_pooled
        for m, b, _ in self.pairs:
            sel = acc[acc["method"] == m] if len(acc) else acc
            if len(sel):
                out.append(claim_row("Table 4", f"{m} more accurate than {b} in every setting", sel, label_col="where"))
            pool = pooled[pooled["method"] == m] if len(pooled) else pooled
            if len(pool):
                out.append(claim_row("Table 4", f"{m} more accurate than {b}, pooled over the settings", pool,
                                     label_col="where", note=f"{int(pool['n'].iloc[0])} pairs (setting × seed)"))
            for metric, words in (("rounds_to_95", "converges in fewer rounds"), ("oscillations", "oscillates less")):
                sp = (slow_pooled[(slow_pooled["method"] == m) & (slow_pooled["metric"] == metric)]
                      if len(slow_pooled) else slow_pooled)
                if len(sp):
                    out.append(claim_row("Table 4", f"{m} {words} than {b}, pooled over the settings", sp,
                                         label_col="where", note=f"T = {S['rounds']}: a short run, see the settings row"))
        for _, r in diffs.iterrows() if len(diffs) else []:
            unit = "pairs (setting × seed)" if r["where"].startswith("pooled") else "seeds"
            out.append({"table": "Table 4", "setting": f"{r['where']}: {r['comparison']}",
                        "metric": f"paired difference, {r['measure']}", "paper": float("nan"), "measured": r["mean"],
                        "evidence": paired_evidence(r, unit),
                        "note": ("paper: FedQS better (lower); " if r["sign"] == -1 else "paper: FedQS better (higher); ")
                        + interval_note(r, unit)})
        for system in S["systems"]:
            sub = runs[runs["system"] == system]
            label = f"{system} (N = {sub['N'].iloc[0]}, {sub['ratio'].iloc[0]})"
            for upload in S["uploads"]:
                here = mean.loc[(system, upload)]
                upt = float(here["uploads/tick"].iloc[0]) if here["uploads/tick"].notna().any() else float("nan")
                k = runs["K"].dropna().iloc[0] if runs["K"].notna().any() else float("nan")
                stal = ", ".join(f"{m} {here.loc[m, 'staleness (mean)']:.1f}" for m in here.index)
                n_, ratio_ = self.clients(system)
                long = replay(make_delays("uniform", n_, ratio_, S["seeds"][0]), int(k), 400)
                out.append({"table": "Table 4", "setting": f"{label}, {upload}: regime", "metric": "uploads per tick",
                            "paper": float("nan"), "measured": round(upt, 2),
                            "note": f"K = {k:g}: over these {S['rounds']} rounds the buffer "
                                    f"{'cannot keep up' if upt > k else 'keeps up on average'}; the clock replayed for "
                                    f"the paper's 400 rounds (no training) gives {long['uploads_per_tick']:.2f} uploads "
                                    f"per tick, final backlog {long['backlog_final']}; mean staleness aggregated: {stal}; "
                                    f"{UPLOAD_NOTE[upload]}"})
                for m in here.index:  # each method's own numbers
                    n_cens = int(runs[(runs["system"] == system) & (runs["upload"] == upload)
                                      & (runs["method"] == m)]["censored"].sum())
                    out.append({"table": "Table 4", "setting": f"{label}, {upload}: {m}",
                                "metric": "convergence accuracy (%)", "paper": float("nan"),
                                "measured": round(float(here.loc[m, "accuracy"]), 2),
                                "note": f"final {here.loc[m, 'final']:.2f}, best {here.loc[m, 'best']:.2f}; rounds to 95% "
                                        f"{here.loc[m, 'rounds_to_95']:.1f}" + (f" ({n_cens} censored at T)" if n_cens else "")
                                        + f"; oscillations {here.loc[m, 'oscillations']:.1f}"})
        return out
