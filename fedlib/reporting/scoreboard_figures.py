"""The scoreboard as pictures: a claim × (profile, reading) grid coloured by verdict, and a forest plot of each
claim's key effect beside the paper's number. Both read :func:`fedlib.claims.evaluate.evaluate`'s rows."""

from __future__ import annotations

import pandas as pd

from fedlib.claims.model import VERDICTS
from fedlib.claims.summary import PROFILE_ORDER, headline

#: verdict -> colour (paper's side green, against red, open greys/ambers)
COLOURS = {"reproduced": "#1a9850", "mixed": "#fdae61", "partial": "#a6d96a", "against": "#d73027",
           "unresolved": "#d9d9d9", "other setting": "#80b1d3", "not a test": "#bc80bd", "not run": "#ffffff"}


def verdict_grid(rows) -> pd.DataFrame:
    """Claim × ``profile · reading`` table of verdict words (claims with at least one judged row)."""
    recs = [{"claim": r.claim.id, "column": f"{r.profile} · {r.reading if r.claim.per_reading else '—'}",
             "word": r.word, "paper": r.claim.paper} for r in rows if r.profile in PROFILE_ORDER]
    df = pd.DataFrame(recs)
    if df.empty:
        return df
    judged = set(df.loc[df["word"] != "not run", "claim"])
    df = df[df["claim"].isin(judged)]
    readings = ["—", *dict.fromkeys(x for r in rows for x in r.claim.readings)]  # each paper's default first
    order = sorted(set(df["column"]), key=lambda c: (PROFILE_ORDER.index(c.split(" · ")[0]),
                                                     readings.index(c.split(" · ")[1])))
    return df.pivot_table(index="claim", columns="column", values="word", aggfunc="first", sort=False)[order]


def show_verdict_grid(rows, title: str):
    """The grid as a coloured table, one panel per paper; returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    grids = {p: verdict_grid([r for r in rows if r.claim.paper == p]) for p in ("FedQS", "SMoFi")}
    grids = {p: g for p, g in grids.items() if len(g)}
    heights = [max(2.0, 0.32 * len(g) + 1.5) for g in grids.values()]
    fig, axes = plt.subplots(len(grids), 1, figsize=(13, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    cmap = ListedColormap([COLOURS[v] for v in VERDICTS])
    for ax, (paper, g) in zip(axes[:, 0], grids.items()):
        codes = g.apply(lambda col: col.map(lambda w: VERDICTS.index(w) if isinstance(w, str) else VERDICTS.index(
            "not run")))
        ax.imshow(codes.to_numpy(dtype=float), cmap=cmap, vmin=-0.5, vmax=len(VERDICTS) - 0.5, aspect="auto")
        ax.set_xticks(range(g.shape[1]), g.columns, rotation=35, ha="right", fontsize=8)
        ax.set_yticks(range(g.shape[0]), g.index, fontsize=8)
        ax.set_xticks([x - 0.5 for x in range(1, g.shape[1])], minor=True)
        ax.set_yticks([y - 0.5 for y in range(1, g.shape[0])], minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        ax.set_title(f"{paper}: verdict per claim, profile and reading", fontsize=10, loc="left")
    fig.legend(handles=[Patch(facecolor=COLOURS[v], edgecolor="grey", label=v) for v in VERDICTS],
               loc="upper right", fontsize=8, ncol=4, frameon=False)
    fig.suptitle(title, fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def forest_table(rows) -> pd.DataFrame:
    """Each judged claim's key effect from its headline row: the row against it, else its first row (points or the
    row's unit), with the paper's effect where the paper states one."""
    by: dict = {}
    for r in rows:
        by.setdefault(r.claim.id, []).append(r)
    out = []
    for cid, rs in by.items():
        h = headline(rs)
        if h.word in ("not run", "not a test") or not h.decided:
            continue
        own = [c for c in h.decided if c.cell.kind == "sign" and not (c.cell.other_setting and h.word != "other setting")]
        if not own:  # a 'small' or no-direction claim has no paper's direction to sign by
            continue
        cell = next((c for c in own if c.side == "opposite"), own[0])
        iv = cell.iv
        if iv is None or not iv.has_interval:
            continue
        out.append({"claim": cid, "paper": h.claim.paper, "row": f"{h.profile}: {cell.cell.label or cell.cell.setting}",
                    "mean": iv.mean * cell.cell.sign, "lo": min(iv.lo * cell.cell.sign, iv.hi * cell.cell.sign),
                    "hi": max(iv.lo * cell.cell.sign, iv.hi * cell.cell.sign), "n": iv.n, "word": h.word,
                    "paper_effect": abs(h.claim.paper_effect) if h.claim.paper_effect is not None else float("nan")})
    return pd.DataFrame(out)


def show_forest(rows, title: str):
    """Forest plot: each directional claim's key effect signed so that the paper's direction is to the right of 0
    (95 % interval; colour = verdict), the paper's number as a cross where it states one; claims judged by a bound
    ('small', 'robust') or without a direction are in the grid only. Returns the figure."""
    import matplotlib.pyplot as plt

    df = forest_table(rows)
    fig, ax = plt.subplots(figsize=(11, max(3.0, 0.34 * len(df) + 1.2)))
    for i, r in enumerate(df.itertuples()):
        ax.plot([r.lo, r.hi], [i, i], color=COLOURS[r.word], linewidth=3, solid_capstyle="butt")
        ax.plot(r.mean, i, "o", color="black", markersize=3.5)
        if r.paper_effect == r.paper_effect:
            ax.plot(r.paper_effect, i, "x", color="black", markersize=7)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(df)), [f"{c} — {w}" for c, w in zip(df["claim"], df["word"])], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("effect in the paper's direction (points unless the row says otherwise); × = the paper's number")
    ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig
