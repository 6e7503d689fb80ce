"""Why a reading of SMoFi's open rule helps or hurts: who feeds the fused momentum at each step of a round.

For one round of a run (its selected clients' local step counts |T_j|, from the config alone: no training),
:func:`fusion_profile` gives, per step τ and reading (``fedlib.split.readings``), how many surrogates are
active and finished, the share of the fused buffer's coefficient mass that comes from frozen final momenta,
and the coefficient of one active client's own signal — the quantities of spec §2's
m̄ = (Σ_active m_j + Σ_finished s_α m_h) / |J^n| under each reading. :func:`show_fusion_mechanism` draws
them beside the readings' accuracy curves.
"""

from __future__ import annotations

import pandas as pd
import torch


def round_steps(cfg, round_index: int = 0) -> tuple[list[int], list[int]]:
    """(|T_j|, samples n_j) of the clients selected in round ``round_index`` of split run ``cfg``."""
    from fedlib.split.sfl import prepare_data, selected_clients
    from fedlib.train.config import batches_per_epoch

    _, parts = prepare_data(cfg)
    sel = selected_clients(cfg.seed, round_index, len(parts), cfg.split.per_round)
    sizes = [len(parts[j]) for j in sel]
    steps = [cfg.local.epochs * batches_per_epoch(n, cfg.local.batch_size, cfg.local.drop_last) for n in sizes]
    return steps, sizes


def fusion_profile(steps, sizes, readings, alpha: float = -0.1) -> pd.DataFrame:
    """Per reading and step τ: ``active``, ``finished``, ``frozen_share`` (the coefficient mass of the finished
    clients' final momenta over the total) and ``own_weight`` (the coefficient of one active client's signal)."""
    from fedlib.split.readings import smofi_reading
    from fedlib.split.smofi import SMoFiOptions

    h = torch.as_tensor(list(steps), dtype=torch.long)
    rows = []
    for name in readings:
        rule = SMoFiOptions(alpha=alpha, **dict(smofi_reading(name).options)).staleness_rule()
        n, shares = rule.round_shares(len(h), len(h), torch.as_tensor(list(sizes), dtype=torch.float64))
        for tau in range(int(h.max())):
            active = h > tau
            if not bool(active.any()):
                break
            w = rule.weights(active, torch.minimum(h, torch.tensor(tau + 1)), tau, n, shares)
            frozen, total = float(w[~active].sum()), float(w.sum())
            rows.append({"reading": name, "step": tau + 1, "active": int(active.sum()), "finished": int((~active).sum()),
                         "frozen_share": frozen / total if total else 0.0,
                         "own_weight": float(w[active].mean())})
    return pd.DataFrame(rows)


def show_fusion_mechanism(profile_df: pd.DataFrame, curves: pd.DataFrame, title: str, name: str, profile: str,
                          group: str = "smofi") -> None:
    """Three panels: active / finished surrogates per step; the frozen momenta's share of the fused buffer per
    reading; the readings' accuracy curves (``curves``: reading, round, accuracy)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from fedlib.reporting.figures import save_figure

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    one = profile_df[profile_df["reading"] == profile_df["reading"].iloc[0]]
    axes[0].stackplot(one["step"], one["active"], one["finished"], labels=["active", "finished"],
                      colors=["#4c72b0", "#c44e52"], alpha=0.8)
    axes[0].set(xlabel="local step τ of round 1", ylabel="surrogates", title="who is still training")
    axes[0].legend(loc="center right")
    sns.lineplot(data=profile_df, x="step", y="frozen_share", hue="reading", ax=axes[1])
    axes[1].set(xlabel="local step τ of round 1", ylabel="share of the fused buffer's weight",
                title="weight of frozen final momenta in m̄", ylim=(-0.02, 1.02))
    if len(curves):
        sns.lineplot(data=curves, x="round", y="accuracy", hue="reading", ax=axes[2], errorbar=("pi", 100), seed=0)
    axes[2].set(xlabel="round", ylabel="test accuracy (%)", title="accuracy (band: range over seeds)")
    for ax in axes[1:]:
        ax.legend(fontsize=8, title="reading")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save_figure(fig, name, profile, group)
    plt.show()
