"""SMoFi ablations (spec §5): the staleness rule and its readings, optimizers, the momentum paradox, the number
of clients, partial participation and architectures, each FedAvg (= SFLV1) against FedAvg + SMoFi on CIFAR-10,
Dirichlet 0.1, on paired seeds (``notebooks/smofi/ablations.ipynb``).

:class:`Ablations` holds a profile's grid (``cells``: family, setting, method, seed, config; ``configs`` the
distinct runs), measures them (:meth:`Ablations.measure`), pairs every variant with its base on the seeds
(:meth:`Ablations.paired`) and builds the paper-vs-measured and not-run rows (:meth:`Ablations.comparison`).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pandas as pd

from fedlib.claims.evidence import interval_note
from fedlib.core.errors import FedlibError
from fedlib.reporting import (SMOFI_SCALE_KNOBS, comparison, curve_metrics, not_run_table, paired_difference,
                              settings_row, show_settings, signed_verdict, smofi_configs, smofi_settings)
from fedlib.reporting.smofi import (LONG_ALPHA_SWEEP, PAPER_ALPHA, diverged_note, planned_not_run, run_cost,
                                    smofi_partition)
from fedlib.reporting.stats import early_accuracy, paired_evidence
from fedlib.split.readings import DEFAULT_SMOFI_READING, SMOFI_READINGS, reading_options

FAMILIES = ["staleness", "optimizers", "momentum", "clients", "participation", "architectures"]
ALL_ARCHS = ["vgg16", "mobilenetv2", "resnet18", "densenet121"]
OPTIMIZERS = ["SGDM", "NAG", "Adam", "AdamW"]
PAPER_RULE = f"reading {DEFAULT_SMOFI_READING}"  # fedlib's default reading of the open rule: label of its α rows
LONG_ALPHAS = sorted({PAPER_ALPHA, *LONG_ALPHA_SWEEP}, reverse=True)  # the long profile's planned α sweep (issue 43)
# the staleness rule's variants other than the default reading (α = −0.1): the other named readings
# (fedlib.split.readings) and the step-index variant of `text` -> SMoFi options
RULES = {**{name: r.overrides for name, r in SMOFI_READINGS.items() if name != DEFAULT_SMOFI_READING},
         "text, index from 0": {"options.stale_index": "from0"}}
CPU_RULES = [r for r in RULES if r in SMOFI_READINGS]  # the four other readings
RULE_BASES = {"fedprox": "FedProx", "fednar": "FedNAR"}  # the plug-in bases a reading can run on besides FedAvg
# the main table's momentum baselines a reading's SMoFi is paired with (`rivals`): their runs are main_accuracy's
RIVALS = {"+ FedAvgM": "fedavg+fedavgm", "+ SlowMo": "fedavg+slowmo"}
SETTINGS = {
    "smoke": dict(ablations=FAMILIES, alphas=[-0.1, -1.0], rules=list(RULES), rule_seeds={},
                  rule_bases={"fresh": ["fedprox"]}, reading_alphas={"data-share": [-1.0]},
                  rivals={"fresh": ["+ FedAvgM"]}, client_counts=[4, 8],
                  client_fraction=0.5, architectures=["cnn"], optimizers=["SGDM", "Adam"], adam_lr=0.001,
                  first_moment_only=True, seeds=[0], optimizer_seeds=[0], rounds=None,
                  model="cnn", cut="conv1", max_test=100, last=1, workers=1),
    # the readings at the seeds the scoreboard's power plan asked for (SMoFi − FedAvg, 3 seeds: ≈ 4–7 pairs)
    "cpu": dict(ablations=["staleness", "optimizers", "momentum", "clients", "participation"], alphas=[-0.1],
                rules=CPU_RULES, rule_seeds={"text-weighted": [0, 1, 2, 3, 4], "data-share": [0, 1, 2, 3, 4],
                                             "fresh": list(range(7)), "drop-J": list(range(7))},
                rule_bases={}, reading_alphas={}, rivals={},
                client_counts=[10, 20, 40], client_fraction=1.0, architectures=["cnn"], optimizers=OPTIMIZERS,
                adam_lr=0.001, first_moment_only=False, seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None,
                model="cnn", cut="conv1", max_test=5000, last=5, workers=2),
    "paper": dict(ablations=FAMILIES, alphas=[-0.01, -0.1, -0.5, -1.0], rules=list(RULES), rule_seeds={},
                  rule_bases={}, reading_alphas={}, rivals={},
                  client_counts=[10, 20, 50], client_fraction=0.5,
                  architectures=ALL_ARCHS, optimizers=OPTIMIZERS, adam_lr=0.001, first_moment_only=True,
                  seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None, model="resnet18", cut="layer1",
                  max_test=None, last=10, workers=1),
    # the long profile: the staleness question on all of CIFAR-10, 10 of 20 clients, Dirichlet 0.1 (main_accuracy's
    # long runs: FedAvg and α = −0.1 are shared); never picked by `auto`
    # the readings screen (issue 55): every reading on three paired seeds, `fresh` on the main table's five and on
    # the three bases (FedProx and FedNAR runs are main_accuracy's), the α sweep's two ends under `data-share` (the
    # text-consistent reading least far from FedAvg) on three seeds; α = −0.5 under it priced, not run (10–20
    # CPU-minutes a run on an AVX2 EPYC)
    "long": dict(ablations=["staleness"], alphas=[-0.05, -0.1, -0.5, -1.0], rules=CPU_RULES,
                 rule_seeds={"text-weighted": [0, 1, 2], "data-share": [0, 1, 2], "drop-J": [0, 1, 2],
                             "fresh": [0, 1, 2, 3, 4]},
                 rule_bases={"fresh": ["fedprox", "fednar"]}, reading_alphas={"data-share": [-0.05, -1.0]},
                 rivals={r: list(RIVALS) for r in CPU_RULES},
                 client_counts=[20], client_fraction=0.5, architectures=["cnn"], optimizers=["SGDM"], adam_lr=0.001,
                 first_moment_only=False, seeds=[0, 1, 2], optimizer_seeds=[0, 1, 2], rounds=None,
                 model="cnn3", cut="conv1", max_test=None, last=10, workers=2),
}
LISTS = {"ablations", "alphas", "rules", "client_counts", "architectures", "optimizers", "seeds", "optimizer_seeds"}
# the SMOFI_PARTICIPATION setting of every family but participation, and that of the participation family
PART = {"smoke": "full", "cpu": "full", "paper": "partial", "long": "partial"}
PARTIAL = {"smoke": "partial", "cpu": "partial", "paper": "partial", "long": "partial"}
CLAIMS = {"staleness": "paper: decay s_α with α = −0.1 by default (needs manual tuning), |J^n| momenta always "
                        "take part; normaliser and weighting not stated (no numbers in the spec)",
          "clients": "paper: gains grow with more clients (no numbers in the spec)",
          "participation": "paper: SMoFi above FedAvg with 10 of 20 clients per round (spec §4 setting; no "
                           "separate number in the spec)",
          "architectures": "paper: gains hold across VGG/MobileNet/ResNet/DenseNet, grow with depth",
          "optimizers": "paper: gains hold across SGDM/NAG/Adam/AdamW (no numbers in the spec)",
          "momentum": "paper (motivation): under non-IID data SGDM raises the final accuracy but slows convergence "
                      "(early accuracy: mean over the evaluated rounds of the run's first third; no numbers in the spec)"}
DIFF_COLUMNS = ["family", "setting", "variant", "base", "metric", "reading", "mean", "lo", "hi", "n", "per seed",
                "runs", "verdict"]


def opt_overrides(adam_lr: float) -> dict:
    """Optimizer name -> the run overrides of the optimizers family (the Adam family at lr ``adam_lr``)."""
    return {"SGDM": {},
            "NAG": {"local.nesterov": True},
            "Adam": {"local.optimizer": "adam", "local.momentum": 0.0, "local.lr": adam_lr},
            "AdamW": {"local.optimizer": "adamw", "local.momentum": 0.0, "local.lr": adam_lr}}


def diff_rows(fam: str, label: str, reading: str, variant: str, variant_runs: pd.DataFrame, base: str,
              base_runs: pd.DataFrame, metrics, sign: int) -> list:
    """``variant − base`` of row ``label`` on the seeds both ran (``*_runs``: their runs), one
    :data:`DIFF_COLUMNS` row per metric with its verdict against the paper's ``sign``."""
    pair = pd.concat([variant_runs.assign(who="variant"), base_runs.assign(who="base")])
    out = []
    for metric in metrics:
        r = paired_difference(pair, metric, "variant", "base", method_col="who")
        out.append({"family": fam, "setting": label, "variant": variant, "base": base, "metric": metric,
                    "reading": reading, "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"],
                    "per seed": r["diffs"], "runs": r.get("runs", ()), "verdict": signed_verdict(r, sign)})
    return out


def check_reading_knob(knob: str, reading: str, names, known: dict, what: str) -> None:
    """A ``{reading: names}`` knob's entry: a named reading and names of ``known`` (FedlibError naming both)."""
    if reading not in SMOFI_READINGS or not set(names) <= set(known):
        raise FedlibError(f"{knob}: unknown reading or {what} in {reading!r}: {names}",
                          f"readings {list(SMOFI_READINGS)}, {what}s {list(known)}")


class Ablations:
    """The ablations at ``profile`` with the notebook's knobs (``knobs``: its namespace; a knob not ``None``
    overrides the profile's :data:`SETTINGS`).

    ``S`` the settings, ``label`` the run label (the profile's name at its own scale, ``custom`` once a scale
    knob or ``adam_lr`` changes), ``part``/``partial`` the participation settings, ``plan`` (family, setting
    label, method, algorithm, overrides, seeds[, participation]) per row set, ``cells`` (family, label, method,
    seed, config) per run of a row and ``configs`` the distinct runs by config hash.
    """

    paper_label = f"{PAPER_RULE}, α=-0.1"  # the paper's reading at its default α: the staleness rows' reference

    def __init__(self, profile: str, knobs: dict):
        self.profile = profile
        self.S, _, self.label = smofi_settings(SETTINGS, profile, knobs, LISTS, (*SMOFI_SCALE_KNOBS, "adam_lr"))
        self.part, self.partial = PART[profile], PARTIAL[profile]
        # split_config(dataset, algorithm, seed, participation, **overrides)
        self.split_config = smofi_configs(profile, self.label, self.S)
        self.clients_of = {}  # clients-family setting label -> N
        self.plan = self._plan()
        self.arch_skipped = [a for a in ALL_ARCHS
                             if a not in self.S["architectures"] or "architectures" not in self.S["ablations"]]
        self.cells = [(fam, label, method, seed, self.config(algo, seed, *(rest or (self.part,)), **over))
                      for fam, label, method, algo, over, seeds, *rest in self.plan for seed in seeds]
        self.configs = {c.config_hash(): c for *_, c in self.cells}
        self.done = self.runs = self.diffs = None

    def settings_table(self) -> pd.DataFrame:
        """The settings the notebook runs with, its participation settings and run label."""
        return show_settings({**self.S, "participation setting": self.part,
                              "participation family's setting": self.partial, "run label": self.label}, self.profile)

    def config(self, algorithm: str, seed: int, part: str | None = None, **extra):
        """CIFAR-10 run of ``algorithm`` at this profile in setting ``part`` (default: the families' setting;
        ``extra``: more overrides)."""
        return self.split_config("cifar10", algorithm, seed, part or self.part, **extra)

    def _plan(self) -> list:
        """(family, setting label, method, algorithm, overrides, seeds[, participation]) for every run of the
        chosen families."""
        S, plan = self.S, []
        rule_seeds = S["rule_seeds"] or {}
        if "staleness" in S["ablations"]:
            # FedAvg on every seed a staleness row runs (`seeds`, and the readings' `rule_seeds`), so each row has
            # its pair
            base_seeds = sorted({*S["seeds"], *(x for r in S["rules"] for x in rule_seeds.get(r, ()))})
            plan.append(("staleness", "FedAvg (no fusion)", "FedAvg", "fedavg", {}, base_seeds))
            for rule, bases in (S["rule_bases"] or {}).items():  # a reading on FedProx / FedNAR: their no-fusion pair
                check_reading_knob("rule_bases", rule, bases, RULE_BASES, "base")
                for b in bases:
                    plan.append(("staleness", f"{RULE_BASES[b]} (no fusion)", RULE_BASES[b], b, {},
                                 rule_seeds.get(rule, S["seeds"])))
            for a in S["alphas"]:
                plan.append(("staleness", f"{PAPER_RULE}, α={a:g}", "SMoFi", "fedavg+smofi",
                             {"options.alpha": float(a)}, S["seeds"]))
            for rule in S["rules"]:
                if rule not in RULES:
                    raise FedlibError(f"unknown staleness rule {rule!r}", f"use some of {list(RULES)}")
                label = f"reading {rule}" if rule in SMOFI_READINGS else rule
                plan.append(("staleness", f"{label}, α=-0.1", "SMoFi", "fedavg+smofi",
                             {"options.alpha": -0.1, **RULES[rule]}, rule_seeds.get(rule, S["seeds"])))
                for b in (S["rule_bases"] or {}).get(rule, ()):
                    plan.append(("staleness", f"{label}, α=-0.1", f"{RULE_BASES[b]} + SMoFi", f"{b}+smofi",
                                 {"options.alpha": -0.1, **RULES[rule]}, rule_seeds.get(rule, S["seeds"])))
            rival_seeds = {}  # a momentum baseline on every seed a reading naming it runs (main_accuracy's runs)
            for rule, names in (S["rivals"] or {}).items():
                check_reading_knob("rivals", rule, names, RIVALS, "baseline")
                for name in names:
                    rival_seeds.setdefault(name, set()).update(rule_seeds.get(rule, S["seeds"]))
            for name, seeds in rival_seeds.items():
                plan.append(("staleness", f"{name} (no fusion)", name, RIVALS[name], {}, sorted(seeds)))
            for rule, values in (S["reading_alphas"] or {}).items():  # α swept under another reading than text
                for a in values:
                    plan.append(("staleness", f"reading {rule}, α={a:g}", "SMoFi", "fedavg+smofi",
                                 {**reading_options(rule), "options.alpha": float(a)},
                                 rule_seeds.get(rule, S["seeds"])))
        if "momentum" in S["ablations"]:  # the paradox: FedAvg with and without momentum (SGDM: the main table's)
            plan.append(("momentum", "SGD (no momentum)", "FedAvg", "fedavg", {"local.momentum": 0.0}, S["seeds"]))
            plan.append(("momentum", "SGDM", "FedAvg", "fedavg", {}, S["seeds"]))
        if "clients" in S["ablations"]:
            P = self.config("fedavg", 0).split  # the setting's own clients: their runs are the other notebooks'
            for n in S["client_counts"]:
                k = max(1, int(round(n * S["client_fraction"])))
                over = {} if (n, k) == (P.clients, P.per_round) else {"split.clients": n, "split.per_round": k}
                self.clients_of[f"N={n}, {k} per round"] = n
                for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
                    plan.append(("clients", f"N={n}, {k} per round", method, algo, over, S["seeds"]))
        if "participation" in S["ablations"]:
            P = self.config("fedavg", 0, self.partial)
            for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
                plan.append(("participation", f"{P.split.per_round} of {P.split.clients} clients per round, "
                             f"{P.rounds} rounds", method, algo, {}, S["seeds"], self.partial))
        if "architectures" in S["ablations"]:
            for arch in S["architectures"]:
                arch_cut = S["cut"] if arch == S["model"] else None  # None = the model's default cut
                for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
                    plan.append(("architectures", arch, method, algo, {"model.name": arch, "model.cut": arch_cut},
                                 S["seeds"]))
        if "optimizers" in S["ablations"]:
            over = opt_overrides(S["adam_lr"])
            for opt in S["optimizers"]:
                for method, algo in (("FedAvg", "fedavg"), ("SMoFi", "fedavg+smofi")):
                    plan.append(("optimizers", opt, method, algo, over[opt], S["optimizer_seeds"]))
            if "Adam" in S["optimizers"] and S["first_moment_only"]:
                plan.append(("optimizers", "Adam", "SMoFi, first moment only", "fedavg+smofi",
                             {**over["Adam"], "options.fuse_second_moment": False}, S["optimizer_seeds"]))
        return plan

    def step_spread(self) -> pd.DataFrame:
        """Per seed, the spread of the clients' local step counts |T_j| = E · ⌈n_j / B⌉ (no training)."""
        from fedlib.split.sfl import prepare_data
        from fedlib.split.smofi import step_count_spread
        from fedlib.train.config import batches_per_epoch

        spread = []
        for seed in sorted({c[3] for c in self.cells}):
            cfg = self.config("fedavg+smofi", seed)
            _, parts = prepare_data(cfg)
            steps = [cfg.local.epochs * batches_per_epoch(len(p), cfg.local.batch_size, cfg.local.drop_last)
                     for p in parts]
            spread.append({"seed": seed, **step_count_spread(steps), "steps per client": steps})
        return pd.DataFrame(spread)

    @staticmethod
    @contextlib.contextmanager
    def first_moment_warnings():
        """Around the runs: prints, once each, the warnings of the first-moment-only run (by design)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in {str(w.message) for w in caught if "first moment" in str(w.message).lower()}:
            print("warning:", w)

    def measure(self, results: list) -> pd.DataFrame:
        """Per cell (``results``: the runs of :attr:`configs`, in order): final accuracy, AUC, best, early
        accuracy, wall time, the round it diverged at (kept, counted) and ``run``, its config hash."""
        self.done = dict(zip(self.configs, results))
        rows = []
        for fam, label, method, seed, cfg in self.cells:
            res = self.done[cfg.config_hash()]
            rows.append({"family": fam, "setting": label, "method": method, "seed": seed, "run": cfg.config_hash(),
                         **curve_metrics(res.history, last=self.S["last"]), "early": early_accuracy(res.history),
                         "wall_s": float(res.summary.get("total_wall_time", np.nan)),
                         "diverged": res.summary.get("diverged_round", np.nan)})
        self.runs = pd.DataFrame(rows)  # "run": the config hash, named per seed in the evidence
        return self.runs

    @property
    def families(self) -> list:
        """The families with runs, in :data:`FAMILIES` order."""
        runs = self.runs
        return [f for f in FAMILIES if f in set(runs["family"])] if len(runs) else []

    def figure(self):
        """Final accuracy per setting and method, one panel per family (mean with 95% CI, dots = seeds);
        None when nothing ran."""
        import matplotlib.pyplot as plt
        import seaborn as sns

        fams, runs = self.families, self.runs
        if not fams:
            return None
        ncols = min(3, len(fams))  # at most three panels a row: readable at a notebook's width
        nrows = -(-len(fams) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, 4.4 * nrows), squeeze=False)
        for ax in axes.flat[len(fams):]:
            ax.set_visible(False)
        for ax, fam in zip(axes.flat, fams):
            sub = runs[runs["family"] == fam].assign(variant=lambda t: t["setting"] + ", " + t["method"])
            order = list(dict.fromkeys(sub["variant"]))
            sns.pointplot(data=sub, y="variant", x="final", order=order, errorbar=("ci", 95), seed=0,
                          linestyle="none", ax=ax)
            sns.stripplot(data=sub, y="variant", x="final", order=order, color="grey", size=4, ax=ax)
            ax.set_title(f"{fam} ({self.profile} profile; dots = seeds)")
            ax.set_xlabel(f"final accuracy (%), mean of last {self.S['last']} rounds")
            ax.set_ylabel("")
        fig.tight_layout()
        return fig

    def mechanism(self, name: str = "ablations_mechanism") -> pd.DataFrame | None:
        """Draws who feeds the fused momentum (``fedlib.reporting.smofi_mechanism``: round 1 of the first
        seed, every reading at α −0.1 on FedAvg, with their accuracy curves) and saves it as ``name``;
        returns per reading the mean frozen share and own weight (None without such runs)."""
        from fedlib.reporting.smofi_mechanism import fusion_profile, round_steps, show_fusion_mechanism

        stale_runs = [(label, seed, cfg) for fam, label, method, seed, cfg in self.cells
                      if fam == "staleness" and method == "SMoFi" and label.startswith("reading ")
                      and label.endswith(", α=-0.1")]  # every reading at α −0.1, on FedAvg
        if not stale_runs:
            return None
        seed0 = min(seed for _, seed, _ in stale_runs)
        steps, sizes = round_steps(self.config("fedavg+smofi", seed0))
        shown = [DEFAULT_SMOFI_READING] + [r for r in self.S["rules"] if r in SMOFI_READINGS]
        mech = fusion_profile(steps, sizes, shown)

        def curve(reading: str, seed: int, cfg) -> pd.DataFrame:
            h = self.done[cfg.config_hash()].history
            return pd.DataFrame({"reading": reading, "seed": seed, "round": h["round"],
                                 "accuracy": 100 * pd.to_numeric(h["accuracy"], errors="coerce")}).dropna()

        curves = [curve(label.split(",")[0].removeprefix("reading "), seed, cfg) for label, seed, cfg in stale_runs]
        curves += [curve("FedAvg (no fusion)", seed, cfg) for fam, label, method, seed, cfg in self.cells
                   if fam == "staleness" and method == "FedAvg"]
        show_fusion_mechanism(mech, pd.concat(curves, ignore_index=True),
                              f"SMoFi's readings of the open rule ({self.profile} profile, seed {seed0}: |T_j| of "
                              f"round 1 = {sorted(steps)}; accuracy over {len({s for _, s, _ in stale_runs})} seed(s))",
                              name, self.profile)
        return (mech.groupby("reading", sort=False)[["frozen_share", "own_weight"]].mean().round(3)
                .rename(columns={"frozen_share": "mean share of frozen momenta over the round's steps",
                                 "own_weight": "mean weight of an active client's own signal"}))

    def _rival_diffs(self) -> list:
        """SMoFi under each reading of ``rivals`` − the momentum baselines it names (the main table's point, judged
        per reading), on the seeds both ran."""
        out = []
        if "staleness" not in self.families:
            return out
        sub = self.runs[self.runs["family"] == "staleness"]
        for rule, names in (self.S["rivals"] or {}).items():
            label = f"reading {rule}, α=-0.1"
            for name in names:
                out += diff_rows("staleness", label, rule, "SMoFi", sub[(sub["setting"] == label)
                                                                        & (sub["method"] == "SMoFi")],
                                 name, sub[sub["method"] == name], ("final", "auc", "best"), 1)
        return out

    def paired(self) -> pd.DataFrame:
        """Each SMoFi variant − its base (FedAvg, or FedProx / FedNAR for a reading on them) on the same seeds,
        the clients gain's growth, the momentum paradox (SGDM − SGD, final and early) and each staleness rule
        against the paper's reading (or an α row against its reading at −0.1), with 95% t-intervals and the
        verdict against the paper's sign."""
        runs, diffs = self.runs, []
        for fam in self.families:
            sub = runs[runs["family"] == fam]
            for label in dict.fromkeys(sub["setting"]):
                here = sub[sub["setting"] == label]
                base = here[here["method"] == "FedAvg"]
                if fam == "momentum":  # one method (FedAvg), two optimizers: paired below
                    continue
                # a staleness row names its reading of the open rule (the α rows run `text`); the paper's metric
                # is the best accuracy, so the readings are compared on final, AUC and best
                reading = label.split(",")[0].removeprefix("reading ") if fam == "staleness" else ""
                for method in [m for m in dict.fromkeys(here["method"])
                               if m not in ("FedAvg", *RULE_BASES.values(), *RIVALS)]:
                    base_name = method.removesuffix(" + SMoFi") if fam == "staleness" and method != "SMoFi" \
                        else "FedAvg"
                    if fam == "staleness":
                        base = sub[sub["method"] == base_name]
                    # the paper: SMoFi above FedAvg in every family (the first-moment-only rule: no claim)
                    diffs += diff_rows(fam, label, reading if reading in SMOFI_READINGS else "", method,
                                       here[here["method"] == method], base_name, base,
                                       ("final", "auc", "best") if fam == "staleness" else ("final",),
                                       0 if "first moment only" in method else 1)
        diffs += self._rival_diffs()
        # the gain's growth with the number of clients: (SMoFi − FedAvg at the largest N) − (the same at the
        # smallest N), paired on the seeds (the paper: gains grow with more clients, so expected > 0)
        if "clients" in self.families and len(self.clients_of) >= 2:
            sub = runs[runs["family"] == "clients"]
            gain = sub.pivot_table(index=["setting", "seed"], columns="method", values="final")
            gain = (gain["SMoFi"] - gain["FedAvg"]).rename("gain").reset_index()
            small = min(self.clients_of, key=self.clients_of.get)
            large = max(self.clients_of, key=self.clients_of.get)
            r = paired_difference(gain, "gain", large, small, method_col="setting")
            diffs.append({"family": "clients", "setting": f"gain at {large} − gain at {small}",
                          "variant": "SMoFi − FedAvg", "base": "the same at fewer clients", "mean": r["mean"],
                          "lo": r["lo"], "hi": r["hi"], "n": r["n"], "per seed": r["diffs"],
                          "runs": r.get("runs", ()), "verdict": signed_verdict(r, 1)})
        # the momentum paradox: SGDM − SGD for FedAvg, on the final accuracy (paper: > 0) and the early one (< 0)
        if "momentum" in self.families:
            sub = runs[runs["family"] == "momentum"]
            for metric, sign in (("final", 1), ("early", -1)):
                r = paired_difference(sub, metric, "SGDM", "SGD (no momentum)", method_col="setting")
                diffs.append({"family": "momentum", "setting": "FedAvg", "variant": "SGDM",
                              "base": "SGD (no momentum)", "metric": metric, "mean": r["mean"], "lo": r["lo"],
                              "hi": r["hi"], "n": r["n"], "per seed": r["diffs"], "runs": r.get("runs", ()),
                              "verdict": signed_verdict(r, sign)})
        # the staleness rule's variants against the paper's reading (decay, ÷|J^n|, α = −0.1) on the same seeds
        stale = runs[runs["family"] == "staleness"] if len(runs) else runs
        if len(stale) and self.paper_label in set(stale["setting"]):
            stale = stale[stale["method"] == "SMoFi"]  # on the FedAvg base
            for label in [x for x in dict.fromkeys(stale["setting"]) if x != self.paper_label]:
                # an α row against its own reading at α = −0.1; a reading at α = −0.1 against the paper's reading
                own = label.split(",")[0]
                ref_label = self.paper_label if label.endswith("α=-0.1") or own not in {
                    f"reading {r}" for r in SMOFI_READINGS} else f"{own}, α=-0.1"
                if ref_label not in set(stale["setting"]):
                    continue
                pair = pd.concat([stale[stale["setting"] == label].assign(who="variant"),
                                  stale[stale["setting"] == ref_label].assign(who="base")])
                r = paired_difference(pair, "final", "variant", "base", method_col="who")
                diffs.append({"family": "staleness", "setting": label, "variant": "SMoFi",
                              "base": f"SMoFi, {ref_label.split(',')[0]}", "mean": r["mean"], "lo": r["lo"],
                              "hi": r["hi"], "n": r["n"], "per seed": r["diffs"], "runs": r.get("runs", ()),
                              "verdict": signed_verdict(r, 0)})  # the paper compares no variant of its rule
        self.diffs = pd.DataFrame([{"metric": "final", "reading": "", **d} for d in diffs],  # final unless named
                                  columns=DIFF_COLUMNS)
        return self.diffs

    def scale_note(self) -> str:
        """What the comparison rows say about the scale they were measured at."""
        S = self.S
        if self.label == "paper":
            return f"paper profile (spec §4), {len(S['seeds'])} seed(s)"
        cfg = self.config("fedavg", 0)
        return (f"{self.profile} profile: {S['model']} on {cfg.data.max_train or 'all'} training images of cifar10 "
                f"split by {smofi_partition(self.profile, self.part)}, "
                f"{cfg.split.per_round} of {cfg.split.clients} clients per round, {cfg.rounds} rounds unless stated "
                f"(participation: setting {self.partial!r}), test on {S['max_test'] or 'all'} images — not the "
                "paper's setting")

    def diverged_in(self, fam: str, labels) -> str:
        """The note on runs of family ``fam`` with a setting in ``labels`` that diverged ("" if none)."""
        runs = self.runs
        sub = runs[(runs["family"] == fam) & runs["setting"].isin(list(labels))]
        return diverged_note(sub, sub["method"].unique())

    def comparison(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(paper vs measured rows: each setting's mean final accuracy and each paired difference with its
        evidence; the paper's rows not run here, with the reason), as ``comparison`` / ``not_run_table``."""
        S, runs, diffs, profile = self.S, self.runs, self.diffs, self.profile
        out = [settings_row("ablations", self.scale_note())]
        mean = runs.groupby(["family", "setting", "method"], sort=False)["final"].agg(["mean", "std", "count"]) \
            if len(runs) else pd.DataFrame()
        for (fam, label, method), r in mean.iterrows():
            notes = [f"{int(r['count'])} seed(s), sd {r['std']:.2f}", CLAIMS[fam], self.diverged_in(fam, [label])]
            out.append({"table": f"ablation: {fam}", "setting": f"{label}, {method}",
                        "metric": f"final accuracy (%), mean of last {S['last']}", "paper": np.nan,
                        "measured": round(float(r["mean"]), 2), "note": "; ".join(n for n in notes if n)})
        for _, r in diffs.iterrows():
            out.append({"table": f"ablation: {r['family']}", "setting": f"{r['setting']}, {r['variant']} − {r['base']}",
                        "metric": f"paired gain in {r['metric']} accuracy (points)", "paper": np.nan,
                        "reading": r["reading"], "measured": round(r["mean"], 2), "evidence": paired_evidence(r),
                        "note": "; ".join(n for n in (interval_note(paired_evidence(r)), r["verdict"],
                                                      CLAIMS[r["family"]],
                                                      self.diverged_in(r["family"], [r["setting"], self.paper_label]))
                                          if n)})
        return comparison(out, profile), not_run_table(self.not_run_rows(), profile)

    def not_run_rows(self) -> list:
        """The paper's ablation rows not run here, with the reason (the reports index lists them)."""
        S, runs, profile, rows = self.S, self.runs, self.profile, []
        if profile == "long" and "staleness" in S["ablations"]:  # the plan's α values this execution leaves out
            minutes = runs["wall_s"].mean() / 60 if len(runs) else float("nan")
            for a in [a for a in LONG_ALPHAS if a not in S["alphas"]]:
                rows.append(planned_not_run("ablation: staleness", f"{PAPER_RULE}, α={a:g}, SMoFi", "alphas",
                                            run_cost(len(S["seeds"]), minutes), note=CLAIMS["staleness"]))
            for rule, values in (S["reading_alphas"] or {}).items():  # the plan's α values not run under a reading
                for a in [a for a in LONG_ALPHAS if a not in values and a != PAPER_ALPHA]:
                    seeds_r = (S["rule_seeds"] or {}).get(rule, S["seeds"])
                    rows.append(planned_not_run("ablation: staleness", f"reading {rule}, α={a:g}, SMoFi",
                                                "reading_alphas", run_cost(len(seeds_r), minutes),
                                                note=CLAIMS["staleness"],
                                                adds=f'reading_alphas={{"{rule}": [..., {a:g}]}}'))
            for rule in S["rules"]:  # a reading run on fewer seeds than the FedAvg pair
                left = [x for x in S["seeds"] if x not in (S["rule_seeds"] or {}).get(rule, S["seeds"])]
                if left:
                    rows.append(planned_not_run("ablation: staleness", f"reading {rule}, α=-0.1, SMoFi, seeds {left}",
                                                "rule_seeds", run_cost(len(left), minutes), note=CLAIMS["staleness"]))
        for arch in self.arch_skipped:
            rows.append({"table": "ablation: architectures", "setting": f"{arch}, FedAvg and SMoFi", "paper": np.nan,
                         "reason": f"not run at the {profile} profile: a CPU does not finish it (profile=paper, a "
                                   "GPU); " + CLAIMS["architectures"]})
        if self.arch_skipped:
            rows.append({"table": "ablation: architectures", "setting": "gain vs model depth", "paper": np.nan,
                         "reason": "needs the four architectures above (profile=paper); paper: gains grow with depth"})
        for fam in [f for f in FAMILIES if f not in S["ablations"] and f != "architectures"]:
            rows.append({"table": f"ablation: {fam}", "setting": "every row", "paper": np.nan,
                         "reason": f"family not selected at this run (ablations={S['ablations']}); " + CLAIMS[fam]})
        for opt in [o for o in OPTIMIZERS if "optimizers" in S["ablations"] and o not in S["optimizers"]]:
            rows.append({"table": "ablation: optimizers", "setting": opt, "paper": np.nan,
                         "reason": f"not selected (optimizers={S['optimizers']}); " + CLAIMS["optimizers"]})
        rows.append({"table": "ablations", "setting": "cifar100, tinyimagenet", "paper": np.nan,
                     "reason": "the ablations run on CIFAR-10 only here (the paper's datasets per ablation are not "
                               "in the spec)"})
        return rows
