"""SMoFi's staleness rule as named options (issue 18): normaliser × weighting × stale, each
against a fused buffer computed by hand; the defaults reproduce the old rule bit for bit."""


import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.experiments.config import RunConfig
from fedlib.split.smofi import (SMoFiHook, SMoFiOptions, fuse_momentum, fusion_weights,
                                staleness_weight)

torch.set_num_threads(1)

# 4 selected clients at fedlib step τ = 5: clients 1 and 3 finished after 2 and 4 steps
C, TAU, ALPHA = 4, 5, -0.5
ACTIVE = torch.tensor([True, False, True, False])
STEPS = torch.tensor([8, 2, 8, 4])
SIZES = torch.tensor([100, 20, 60, 20])  # N = 200: data shares 0.5, 0.1, 0.3, 0.1
# from1 reading: ages τ − |T| + 2 = 5 and 3
S1, S3 = 5.0 ** ALPHA, 3.0 ** ALPHA


def _bufs():
    g = torch.Generator().manual_seed(7)
    return torch.randn(C, 6, generator=g, dtype=torch.float64), torch.randn(C, 6, generator=g,
                                                                              dtype=torch.float64)


def _hand(act, fin, w, denom):
    m = [act[0], fin[1], act[2], fin[3]]
    return sum(wj * mj for wj, mj in zip(w, m)) / denom


CASES = {  # (stale, renormalise, weighting) -> (w_j, denominator) by hand
    ("decay", False, "uniform"): ([1, S1, 1, S3], C),  # the paper's reading (default)
    ("decay", True, "uniform"): ([1, S1, 1, S3], 2 + S1 + S3),
    ("decay", False, "samples"): ([2.0, 0.4 * S1, 1.2, 0.4 * S3], C),  # p_j = 4 n_j / 200
    ("decay", True, "samples"): ([2.0, 0.4 * S1, 1.2, 0.4 * S3], 3.2 + 0.4 * (S1 + S3)),
    ("drop", False, "uniform"): ([1, 0, 1, 0], C),
    ("drop", True, "uniform"): ([1, 0, 1, 0], 2),
    ("drop", True, "samples"): ([2.0, 0, 1.2, 0], 3.2),
}


@pytest.mark.parametrize("stale,renormalise,weighting", list(CASES), ids=lambda v: str(v))
def test_every_rule_gives_the_hand_computed_fused_buffer(stale, renormalise, weighting):
    act, fin = _bufs()
    w, denom = CASES[(stale, renormalise, weighting)]
    fused = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, alpha=ALPHA, renormalise=renormalise,
                          stale=stale, weighting=weighting, sizes=SIZES)
    assert torch.allclose(fused, _hand(act, fin, w, denom), atol=1e-12, rtol=0)
    coef = fusion_weights(ACTIVE, STEPS, TAU, ALPHA, renormalise=renormalise, stale=stale,
                          weighting=weighting, sizes=SIZES)
    assert torch.allclose(coef, torch.tensor(w, dtype=torch.float64) / denom, atol=1e-15, rtol=0)


def test_samples_weighting_with_everyone_active_is_the_data_weighted_mean():
    act, fin = _bufs()
    everyone = torch.ones(C, dtype=torch.bool)
    fused = fuse_momentum(act, everyone, fin, STEPS, 0, weighting="samples", sizes=SIZES)
    assert torch.allclose(fused, (SIZES.double() / 200) @ act, atol=1e-12, rtol=0)


def test_equal_sizes_make_samples_weighting_bit_identical_to_uniform():
    """Equal-size shards: p_j = C·n/(C·n) = 1 exactly, so the two weightings are one rule."""
    act, fin = _bufs()
    for stale in ("decay", "drop"):
        for ren in (False, True):
            u = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, renormalise=ren, stale=stale)
            s = fuse_momentum(act, ACTIVE, fin, STEPS, TAU, renormalise=ren, stale=stale,
                              weighting="samples", sizes=[400] * C)
            assert torch.equal(u, s)


def test_defaults_are_the_old_rule_bit_for_bit():
    o = SMoFiOptions()
    assert (o.stale, o.renormalise, o.weighting, o.stale_index) == ("decay", False, "uniform", "from1")
    act, fin = _bufs()
    one = torch.ones((), dtype=torch.float64)  # the pre-issue-18 arithmetic, step by step
    old = torch.where(ACTIVE, one, staleness_weight(TAU, STEPS, ALPHA)) / torch.tensor(float(C),
                                                                                    dtype=torch.float64)
    new = fusion_weights(ACTIVE, STEPS, TAU, ALPHA, sizes=SIZES)  # sizes ignored when uniform
    assert torch.equal(new, old)


def test_samples_weighting_needs_sizes_and_rejects_bad_values():
    with pytest.raises(FedlibError, match="weighting"):
        SMoFiOptions(weighting="data")
    with pytest.raises(FedlibError, match="sample counts"):
        fusion_weights(ACTIVE, STEPS, TAU, weighting="samples")
    with pytest.raises(FedlibError, match="3 sample counts for 4"):
        fusion_weights(ACTIVE, STEPS, TAU, weighting="samples", sizes=[1, 2, 3])
    with pytest.raises(FedlibError, match="positive total"):
        fusion_weights(ACTIVE, STEPS, TAU, weighting="samples", sizes=[0, 0, 0, 0])


def test_hook_uses_the_sizes_given_at_start_round():
    """The hook fuses with the round's sample counts (SplitTrainer passes them)."""
    hook = SMoFiHook(["s.w"], "sgd", SMoFiOptions(weighting="samples"))
    hook.start_round(2, sizes=[30, 10])

    class Bufs:
        kinds = ("momentum_buffer",)
        data = torch.tensor([[1.0], [5.0]])

        def get(self, kind, name):
            return self.data.clone()

        def set(self, kind, name, value, mask):
            self.data = torch.where(mask.view(-1, 1), value, self.data)

    b = Bufs()
    hook(0, torch.tensor([True, True]), b)
    assert hook.last_fused[("momentum_buffer", "s.w")].item() == pytest.approx(0.75 * 1 + 0.25 * 5)


def test_options_reachable_from_a_run_config_and_hashed():
    base = RunConfig.from_preset("smofi-cifar10-cpu")
    assert base.options["weighting"] == "uniform" and base.options["renormalise"] is False
    cfg = RunConfig.from_preset("smofi-cifar10-cpu", ["options.weighting=samples",
                                                      "options.renormalise=true"])
    assert (cfg.options["weighting"], cfg.options["renormalise"]) == ("samples", True)
    assert cfg.short_hash != base.short_hash
    with pytest.raises(FedlibError, match="weighting"):
        RunConfig.from_preset("smofi-cifar10-cpu", ["options.weighting=data"])


def test_trainer_passes_the_round_sizes_to_the_hook(tiny_smofi_trainer):
    t = tiny_smofi_trainer(["options.weighting=samples"])
    parts = tiny_smofi_trainer.parts
    t.run_round()
    sel = t.selected(0)
    assert t.addon.engine_hook.sizes.tolist() == [len(parts[c]) for c in sel]


def test_notebook_settings_shards_and_dirichlet_differ_only_in_the_partition():
    """issue 18: main_accuracy's `shards` setting = the `full` (Dirichlet 0.1) runs on equal-size
    label-skew shards; the Dirichlet config is unchanged (same hash as the preset's partition)."""
    from fedlib.reporting.smofi import smofi_config, smofi_partition

    kw = dict(label="cpu", model="cnn", cut="conv1", max_test=5000)
    full = smofi_config("cpu", "cifar10", "fedavg+smofi", 0, "full", **kw)
    shards = smofi_config("cpu", "cifar10", "fedavg+smofi", 0, "shards", **kw)
    assert (full.data.partition, full.data.alpha) == ("dirichlet", 0.1)
    assert (shards.data.partition, shards.data.shards_per_client) == ("shards", 2)
    assert full.replace(data=shards.data).to_dict() == shards.to_dict()
    explicit = smofi_config("cpu", "cifar10", "fedavg+smofi", 0, "full", **kw, **{"data.partition": "dirichlet"})
    assert explicit.config_hash() == full.config_hash()
    assert smofi_partition("cpu", "shards").startswith("equal-size")
