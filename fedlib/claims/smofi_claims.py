"""SMoFi (AAAI 2026): every claim of the paper (from its digest) as a record, with the paper's numbers.

The paper's numbers live here (``fedlib.reporting.smofi`` re-exports them for the notebooks).
The claims on SMoFi's own gain (main table, plug-in, speed-up) are judged per named **reading** of the
open fusion rule (``fedlib.split.readings``): ``text`` from the main-table reports, the other readings from
the ablations' staleness rows (SMoFi under that reading − FedAvg on the same seeds). A reading that ran on
fewer bases or settings than ``text`` counts the missing ones as open, with their price.
"""

from __future__ import annotations

import dataclasses

from fedlib.claims.model import Cell, Claim, ReadingGap
from fedlib.split.readings import DEFAULT_SMOFI_READING, SMOFI_READINGS

#: the SMoFi readings, the default (``text``) first
SMOFI_READINGS_RUN = tuple(SMOFI_READINGS)
OTHER_READINGS = tuple(r for r in SMOFI_READINGS if r != DEFAULT_SMOFI_READING)

# ------------------------------------------------------------------ the paper's numbers (spec §5)
# main table: base method FedAvg = SFLV1, Dirichlet α = 0.1, best top-1 %
PAPER_ACCURACY = {
    "cifar10": {"FedAvg": 77.16, "+ FedAvgM": 79.19, "+ SlowMo": 76.54, "+ SMoFi": 81.82},
    "cifar100": {"FedAvg": 48.10, "+ FedAvgM": 50.28, "+ SlowMo": 50.96, "+ SMoFi": 53.83},
    "tinyimagenet": {"FedAvg": 33.43, "+ FedAvgM": 33.58, "+ SlowMo": 33.82, "+ SMoFi": 39.73},
}
# frameworks table (Tiny-ImageNet): SFLV1 is the main table's FedAvg, SMoFi its FedAvg + SMoFi
PAPER_FRAMEWORKS = {"tinyimagenet": {"SFLV1": PAPER_ACCURACY["tinyimagenet"]["FedAvg"], "SFLV2": 34.72,
                                     "SMoFi": PAPER_ACCURACY["tinyimagenet"]["+ SMoFi"]}}
# rounds to SFLV1's best accuracy on Tiny-ImageNet: (number, what the paper says where it gives none)
PAPER_TINYIMAGENET_ROUNDS = {"SMoFi": (16, ""), "SFLV1": (float("nan"), "paper: > 400 rounds; ")}
# CIFAR-10 speed-ups of SMoFi over its bases (spec §5): the smallest and the largest stated
PAPER_CIFAR10_SPEEDUP = (4.61, 5.54)
PAPER_LARGEST_SPEEDUP = 10.25     # Tiny-ImageNet
PAPER_LARGEST_GAIN = 7.1          # "up to +7.1" accuracy
PAPER_PLUGIN_GAIN = (3.0, 7.0)    # SMoFi adds 3–7 points to FedAvg / FedProx / FedNAR
PAPER_ALPHA = -0.1                # the staleness exponent's default ("needs manual tuning")

MAIN, SPEED, FRAME, ABL = ("cpu/smofi/main_accuracy", "cpu/smofi/convergence_speedup", "cpu/smofi/frameworks",
                           "cpu/smofi/ablations")
SHARDS = "equal-size shards (the paper splits by Dirichlet 0.1)"
FAMILY = "split-cnn-cifar10"
SCALE = "cpu profile: small CNN cut after conv1, 4,000 CIFAR-10 images, 10 clients, 15 rounds, 3 seeds"
#: the main table's rows at the ``long`` profile (setting ``partial``: the paper's participation)
LONG_SCALE = ("long profile: cnn3 cut after conv1, all 50,000 CIFAR-10 images, 20 clients with 10 per round, "
              "Dirichlet 0.1, 50 rounds (paired seeds: the seeds column)")
MAIN_SCALE = f"{SCALE}; {LONG_SCALE}"
#: [D] spec §4: FedNAR's L2-in-loss at the long profile (its official 0.1 keeps FedNAR at chance under long's SGDM)
LONG_FEDNAR_L2 = 0.01
#: FedNAR's L2 at each profile: the plug-in rows name the reading they were judged under
_NAR_L2 = (f"FedNAR's L2: the official 0.1 at cpu; {LONG_FEDNAR_L2:g} at long, a fedlib reading (the official 0.1 "
           "keeps FedNAR at chance under long's SGDM: main_accuracy's seed-0 row)")


def _main(setting: str, m: str, b: str, sign: int, window: str = "final") -> Cell:
    """The main table's paired row ``m − b`` on ``setting``: ``full`` / ``shards`` at cpu, ``partial`` at long.
    A SMoFi row is the ``text`` reading (the main table runs the default options)."""
    other = SHARDS if setting == "shards" else ""
    metric = f"paired gain in {window}"
    report, last = (MAIN.replace("cpu/", "long/", 1), 10) if setting == "partial" else (MAIN, 5)
    return Cell(report, f"cifar10, {setting}, {m} − {b}", metric, sign, label=f"{setting}: {m} − {b}",
                window=f"final (last {last})" if window == "final" else "auc", other_setting=other, family=FAMILY,
                windows=(("auc", "paired gain in auc"), ("best", "paired gain in best")) if window == "final" else (),
                reading=DEFAULT_SMOFI_READING if "SMoFi" in m else "")


def _reading_row(reading: str, long: bool, window: str = "final") -> Cell:
    """SMoFi under ``reading`` − FedAvg (the ablations' staleness rows, α = −0.1) at cpu (Dirichlet 0.1, ``full``)
    or ``long`` (``partial``), labelled as the main table's ``+ SMoFi − FedAvg`` row it stands beside."""
    report, last = (ABL.replace("cpu/", "long/", 1), 10) if long else (ABL, 5)
    setting = "partial" if long else "full"
    return Cell(report, f"reading {reading}, α=-0.1, SMoFi − FedAvg", f"paired gain in {window} accuracy", 1,
                label=f"{setting}: + SMoFi − FedAvg", window=f"final (last {last})" if window == "final" else window,
                family=FAMILY, reading=reading,
                windows=(("auc", "paired gain in auc"), ("best", "paired gain in best")) if window == "final" else ())


#: the readings the long ablations also run on FedProx and FedNAR (their ``rule_bases``): the plug-in bases
READING_BASES = {"fresh": ("FedProx", "FedNAR")}


def _reading_base_row(reading: str, base: str, window: str = "final") -> Cell:
    """``base`` + SMoFi under ``reading`` − ``base`` at long (the ablations' staleness rows on that base),
    labelled as the main table's long row it stands beside."""
    return Cell(ABL.replace("cpu/", "long/", 1), f"reading {reading}, α=-0.1, {base} + SMoFi − {base}",
                f"paired gain in {window} accuracy", 1, label=f"partial: {base} + SMoFi − {base}",
                window="final (last 10)" if window == "final" else window, family=FAMILY, reading=reading,
                windows=(("auc", "paired gain in auc"), ("best", "paired gain in best")) if window == "final" else ())


def _rival_row(reading: str, rival: str) -> Cell:
    """SMoFi under ``reading`` − a momentum baseline at long (the ablations' ``rivals`` rows), labelled as the main
    table's long row it stands beside."""
    return Cell(ABL.replace("cpu/", "long/", 1), f"reading {reading}, α=-0.1, SMoFi − {rival}",
                "paired gain in final accuracy", 1, label=f"partial: + SMoFi − {rival}", window="final (last 10)",
                family=FAMILY, reading=reading, windows=(("auc", "paired gain in auc"), ("best", "paired gain in best")))


def _readings_rows(window: str = "final", bases: bool = False) -> tuple:
    """SMoFi − FedAvg under every reading other than ``text``, at cpu and long; with ``bases``, also the
    FedProx and FedNAR rows of the readings that ran on them (:data:`READING_BASES`)."""
    return (*(_reading_row(r, long, window) for r in OTHER_READINGS for long in (False, True)),
            *(_reading_base_row(r, b, window) for r, bs in READING_BASES.items() if bases for b in bs))


#: [D] the momentum baselines' hyper-parameters (spec §3 "typical values"; the paper's own are not in the material):
#: each baseline row names them, and the values not run are priced
_BASELINE_HP = ("{name} at {values} (spec §3's typical values; the SMoFi paper's own are not in the material here); "
                "not run at long: {others}, 5 paired seeds each ≈ {runs} runs of 12–20 CPU-minutes (≈ {hours} core-h)")
FEDAVGM_NOTE = _BASELINE_HP.format(name="FedAvgM", values="server momentum β_g 0.9, server lr η_g 1",
                                   others="β_g ∈ {0.5, 0.7}", runs=10, hours="2–3.3")
SLOWMO_NOTE = _BASELINE_HP.format(name="SlowMo", values="slow momentum β 0.7, slow lr α 1", others="β = 0.5",
                                  runs=5, hours="1–1.7")

#: seeds the long profile plans per pair (main_accuracy's LONG_SEEDS)
LONG_PAIRS = 5


def _plugin_gap(reading: str) -> ReadingGap:
    """What the plug-in / speed-up claims need under ``reading`` at long beyond the FedAvg pair: FedProx and
    FedNAR + SMoFi under it at the plan's five seeds (their bases are main_accuracy's runs)."""
    return ReadingGap(f"the {reading} reading ran on the FedAvg base only (ablations' staleness rows, three seeds or "
                      f"fewer); FedProx and FedNAR + SMoFi under it at {LONG_PAIRS} paired seeds, and the FedAvg pair's "
                      "seeds 3 and 4",
                      ((MAIN.replace("cpu/", "long/", 1), 2 * LONG_PAIRS), (ABL.replace("cpu/", "long/", 1), 2)))


PER_READING_GAPS = {("long", r): _plugin_gap(r) for r in OTHER_READINGS if r not in READING_BASES}


def _main3(m: str, b: str, sign: int, window: str = "final") -> tuple:
    """``m − b`` on the cpu splits (Dirichlet 0.1 and the shards) and on the long profile's ``partial``."""
    return tuple(_main(setting, m, b, sign, window) for setting in ("full", "shards", "partial"))


def _abl(setting: str, sign: int = 1, other: str = "", long: bool = False, parts: int = 1, label: str = "",
         kind: str = "sign") -> Cell:
    """An ablations row: at cpu (mean of the last 5 rounds) or, ``long``, on the long profile's setting (last 10);
    labelled by the first ``parts`` comma-separated parts of its setting."""
    report, last = (ABL.replace("cpu/", "long/", 1), 10) if long else (ABL, 5)
    return Cell(report, setting, "paired gain in final accuracy", sign,
                label=label or ", ".join(setting.split(", ")[:parts]), window=f"final (last {last})",
                family=FAMILY, other_setting=other, kind=kind)


#: the α values the long profile's ablations sweep besides the default PAPER_ALPHA [issue 43]
LONG_ALPHA_SWEEP = (-0.05, -0.5, -1.0)


#: the α values the long ablations sweep per reading (``text``, and ``data-share``: the text-consistent reading
#: least far from FedAvg at α = −0.1, the ablations' ``reading_alphas``; its α = −0.5 is priced, not run)
ALPHA_SWEEPS = {DEFAULT_SMOFI_READING: LONG_ALPHA_SWEEP, "data-share": (-0.05, -1.0)}
ALPHA_READINGS = tuple(ALPHA_SWEEPS)


def _alpha(a: float, reading: str = DEFAULT_SMOFI_READING) -> Cell:
    """SMoFi at staleness exponent ``a`` − SMoFi at the default −0.1 under the same ``reading`` (long ablations):
    a claim without a direction ("needs tuning"), so an interval excluding 0 either way is on the paper's side."""
    cell = _abl(f"reading {reading}, α={a:g}, SMoFi − SMoFi, reading {reading}", 1, long=True,
                label=f"α = {a:g} − α = −0.1".replace("-", "−"), kind="differs")
    return dataclasses.replace(cell, reading=reading)


def _claim(id, where, claim, metric, window, sign, cells=(), **kw) -> Claim:
    return Claim(id, "SMoFi", where, claim, metric, window, sign, kw.pop("scale", SCALE), tuple(cells), **kw)


def _per_reading(id, where, claim, metric, window, sign, cells=(), **kw) -> Claim:
    """A claim on SMoFi's own gain: one verdict per reading; a reading with fewer bases than ``text`` is partial."""
    kw.setdefault("reading_gaps", PER_READING_GAPS)
    return _claim(id, where, claim, metric, window, sign, cells, readings=SMOFI_READINGS_RUN, all_cells=True, **kw)


_DL = ("no run on CIFAR-100 or Tiny-ImageNet yet: they need a download "
       "(`fedlib data fetch cifar100` / `tinyimagenet`, into $FEDLIB_DATA)")
CLAIMS = (
    _per_reading("smofi-main-smofi", "Main table", "FedAvg + SMoFi is more accurate than FedAvg on CIFAR-10.",
           "final accuracy", "final (last 5); paper: best", 1,
           (*_main3("+ SMoFi", "FedAvg", 1), *_readings_rows()), scale=MAIN_SCALE,
           paper_number="81.82 % vs 77.16 % (+4.66)",
           paper_effect=PAPER_ACCURACY["cifar10"]["+ SMoFi"] - PAPER_ACCURACY["cifar10"]["FedAvg"]),
    _claim("smofi-main-fedavgm", "Main table", "FedAvgM is more accurate than FedAvg on CIFAR-10.", "final accuracy",
           "final (last 5)", 1, _main3("+ FedAvgM", "FedAvg", 1), scale=MAIN_SCALE,
           paper_number="79.19 % vs 77.16 % (+2.03)",
           paper_effect=PAPER_ACCURACY["cifar10"]["+ FedAvgM"] - PAPER_ACCURACY["cifar10"]["FedAvg"], note=FEDAVGM_NOTE, reading_label="— (no fusion)"),
    _claim("smofi-main-slowmo", "Main table", "SlowMo is less accurate than FedAvg on CIFAR-10.", "final accuracy",
           "final (last 5)", -1, _main3("+ SlowMo", "FedAvg", -1), scale=MAIN_SCALE,
           paper_number="76.54 % vs 77.16 % (−0.62)",
           paper_effect=PAPER_ACCURACY["cifar10"]["+ SlowMo"] - PAPER_ACCURACY["cifar10"]["FedAvg"], note=SLOWMO_NOTE, reading_label="— (no fusion)"),
    _claim("smofi-main-other-datasets", "Main table", "The CIFAR-100 and Tiny-ImageNet columns (SMoFi 53.83 % and "
           "39.73 %, above every other method).", "best accuracy", "best", 1,
           paper_number="53.83 % / 39.73 %", not_run=_DL),
    _claim("smofi-up-to-7", "Abstract", "SMoFi improves accuracy by up to 7.1 points.", "best accuracy", "best", 1,
           paper_number="+7.1 points", not_run=_DL + "; the largest gain is on those datasets"),
    _claim("smofi-speedup-10x", "Abstract / speed-up", "SMoFi converges up to 10.25× faster (Tiny-ImageNet).",
           "speed-up (×)", "rounds to target", 1, paper_number="10.25×", not_run=_DL),
    _claim("smofi-16-rounds", "Frameworks table", "On Tiny-ImageNet SMoFi reaches the target in 16 rounds, SFLV1 "
           "needs more than 400.", "rounds to target", "rounds to target", -1, paper_number="16 vs > 400",
           not_run=_DL),
    _per_reading("smofi-speedup-cifar10", "Speed-up", "On CIFAR-10 SMoFi converges 4.61–5.54× faster than its "
           "bases.", "AUC gain (mean accuracy over the run) and speed-up", "auc", 1,
           (*_main3("+ SMoFi", "FedAvg", 1, "auc"), *_main3("FedProx + SMoFi", "FedProx", 1, "auc"),
            *_main3("FedNAR + SMoFi", "FedNAR", 1, "auc"), *_readings_rows("auc", bases=True),
            Cell(SPEED, "cifar10, full, SMoFi over FedAvg / FedProx / FedNAR", "smallest SMoFi speed-up", 1,
                 label="smallest speed-up, Dirichlet 0.1", kind="info", family=FAMILY),
            Cell(SPEED, "cifar10, shards, SMoFi over FedAvg / FedProx / FedNAR", "largest SMoFi speed-up", 1,
                 label="largest speed-up, shards", kind="info", family=FAMILY, other_setting=SHARDS),
            # the long profile's censored speed-ups (a 50-round budget, target = the base's final accuracy), per reading:
            # shown beside the AUC verdict, so the magnitude is read next to the direction
            *(Cell(SPEED.replace("cpu/", "long/", 1), f"cifar10, partial, SMoFi{tag} over FedAvg / FedProx / FedNAR",
                   f"{end} SMoFi speed-up", 1, label=f"{end} speed-up, 50 rounds", kind="info", family=FAMILY,
                   reading=r) for r, tag in ((DEFAULT_SMOFI_READING, ""), ("fresh", " · fresh"))
              for end in ("smallest", "largest"))),
           paper_number="4.61–5.54×", scale=MAIN_SCALE,
           note="a speed-up has no paired interval (censored seeds); the AUC gain is the paired test of 'faster'; "
                + _NAR_L2),
    _claim("smofi-sflv2", "Frameworks table", "SFLV2 is more accurate than SFLV1 (Tiny-ImageNet).", "final accuracy",
           "final (last 5)", 1,
           (Cell(FRAME, "cifar10, full, SFLV2 − SFLV1", "paired gain in final", 1, label="CIFAR-10, Dirichlet 0.1",
                 window="final (last 5)", family=FAMILY, windows=(("auc", "paired gain in auc"),),
                 other_setting="CIFAR-10 (the paper reports SFLV2 on Tiny-ImageNet only)"),
            Cell(FRAME, "cifar10, iid, SFLV2 − SFLV1", "paired gain in final", 1, label="CIFAR-10, IID",
                 window="final (last 5)", family=FAMILY, windows=(("auc", "paired gain in auc"),),
                 other_setting="CIFAR-10, IID (the paper reports SFLV2 on Tiny-ImageNet only)")),
           paper_number="34.72 % vs 33.43 %"),
    _per_reading("smofi-plugin", "Plug-in", "SMoFi adds 3–7 points to each base (FedAvg, FedProx, FedNAR).",
           "final accuracy", "final (last 5)", 1,
           (*_main3("+ SMoFi", "FedAvg", 1), *_main3("FedProx + SMoFi", "FedProx", 1),
            *_main3("FedNAR + SMoFi", "FedNAR", 1), *_readings_rows(bases=True)), scale=MAIN_SCALE,
           paper_number="+3 to +7 points", paper_effect=PAPER_PLUGIN_GAIN[0], note=_NAR_L2),
    _claim("smofi-optimizers", "Optimizers", "SMoFi gains over FedAvg with SGDM, NAG, Adam and AdamW.",
           "final accuracy", "final (last 5)", 1,
           tuple(_abl(f"{o}, SMoFi − FedAvg") for o in ("SGDM", "NAG", "Adam", "AdamW")), reading_label="text"),
    _claim("smofi-clients", "Clients", "SMoFi's gain grows with more clients.", "gain(N = 40) − gain(N = 10)",
           "final (last 5)", 1,
           (Cell(ABL, "gain at N=40, 40 per round − gain at N=10, 10 per round, SMoFi − FedAvg − the same at fewer "
                      "clients", "paired gain in final accuracy", 1, label="gain(40) − gain(10)",
                 window="final (last 5)", family=FAMILY, runs_per_pair=4),),
           note="SMoFi − FedAvg at N = 20 and 40 alone are not the claim's test: the claim is about the change", reading_label="text"),
    _claim("smofi-architectures", "Architectures", "SMoFi gains across architectures (VGG-16, MobileNetV2, ResNet-18, "
           "DenseNet-121) and more with larger models.", "accuracy", "best", 1,
           not_run="the architecture sweep needs the paper's models on full CIFAR-10: GPU-scale, not in any profile run"),
    _claim("smofi-alpha", "Staleness factor", "The staleness exponent α needs manual tuning (default −0.1).",
           "final accuracy over α", "final (last 10)", 0,
           tuple(_alpha(a, r) for r, values in ALPHA_SWEEPS.items() for a in values), readings=ALPHA_READINGS,
           paper_number="α = −0.1", scale=LONG_SCALE,
           not_run="the α sweep runs at the long profile only (ablations, -p 'alphas=[...]'); the cpu profile "
                   "runs α = −0.1",
           note="no direction: accuracy that moves with α (an interval excluding 0 either way) is the paper's side; "
                "one verdict per reading the sweep ran under"),
    _claim("smofi-staleness-rule", "Staleness factor", "Keeping finished clients' decayed momenta in the fusion "
           "(the staleness factor) is better than dropping them.", "final accuracy", "final (last 5)", -1,
           tuple(_abl(f"reading {r}, α=-0.1, SMoFi − SMoFi, reading text", -1, long=long, label=f"{r} − text")
                 for long in (False, True) for r in ("drop-J", "fresh")),
           scale=f"{SCALE}; {LONG_SCALE}", reading_label="drop-J, fresh − text"),
    _per_reading("smofi-above-momentum-baselines", "Main table", "FedAvg + SMoFi is more accurate than FedAvgM and "
                 "SlowMo on CIFAR-10 (the point of the main table).", "final accuracy", "final (last 5); paper: best", 1,
                 (*_main3("+ SMoFi", "+ FedAvgM", 1), *_main3("+ SMoFi", "+ SlowMo", 1),
                  *(_rival_row(r, b) for r in OTHER_READINGS for b in ("+ FedAvgM", "+ SlowMo"))), scale=MAIN_SCALE,
                 paper_number="81.82 % vs 79.19 % / 76.54 % (+2.63 / +5.28)",
                 paper_effect=PAPER_ACCURACY["cifar10"]["+ SMoFi"] - PAPER_ACCURACY["cifar10"]["+ FedAvgM"],
                 reading_gaps={}),
    _claim("smofi-fednag", "Main text", "FedNAG's periodic momentum aggregation lowers accuracy in some settings.",
           "final accuracy", "final (last 5)", -1,
           (_main("full", "FedNAG", "FedAvg", -1), _main("shards", "FedNAG", "FedAvg", -1))),
    _claim("smofi-momentum-paradox", "Motivation", "Under non-IID data, momentum (SGDM) raises final accuracy but "
           "slows convergence.", "final and early accuracy", "final (last 5) / early (first third)", 1,
           (_abl("FedAvg, SGDM − SGD (no momentum)", 1, label="FedAvg: SGDM − SGD, final"),
            Cell(ABL, "FedAvg, SGDM − SGD (no momentum)", "paired gain in early accuracy", -1,
                 label="FedAvg: SGDM − SGD, early (first third)", window="early (first third)", family=FAMILY)),
           note="slower convergence read as lower accuracy over the run's first third of rounds (no SMoFi in it)"),
    _claim("smofi-theory", "Theory", "SMoFi converges at O(1/N) under strong convexity.", "convergence bound", "—", 1,
           not_run="a theorem, not an experiment"),
    _claim("smofi-transparent", "Design", "SMoFi needs no client change and no extra communication.",
           "design property", "—", 1, not_run="a property of the algorithm (server-side only), not a measurement"),
)
