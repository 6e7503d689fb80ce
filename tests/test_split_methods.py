"""Split-FL base methods and add-ons as objects (fedlib.split.bases / addons / methods)."""

import inspect
from types import SimpleNamespace

import pytest
import torch

from fedlib.core.errors import FedlibError
from fedlib.split import sfl
from fedlib.split.addons import FedAvgM, ServerAddon, SlowMo, SMoFi
from fedlib.split.algorithms import CATALOG, NAMES, build_trainer
from fedlib.split.bases import FedAvg, FedNAG, FedNAR, FedProx
from fedlib.split.methods import (ADDONS, BASES, make_addon, make_method, option_values,
                                  options_class, parse_method)
from fedlib.split.smofi import SMoFiOptions
from fedlib.train import LocalConfig

torch.set_num_threads(1)


@pytest.mark.parametrize("name", NAMES)
def test_every_name_builds_its_objects_with_the_names_options(name):
    base, addon = parse_method(name)
    opts = options_class(base, addon)()
    method, extra = make_method(base, opts), make_addon(addon, opts)
    assert type(method) is {"fedavg": FedAvg, "fedprox": FedProx, "fednar": FedNAR,
                            "fednag": FedNAG}[base]
    assert type(extra) is {None: ServerAddon, "smofi": SMoFi, "fedavgm": FedAvgM,
                           "slowmo": SlowMo}[addon]
    assert (method.name, extra.name) == (base, addon or "none")
    # the two objects' options are the name's options, in the same order (summary columns)
    assert {**option_values(method.options), **option_values(extra.options)} == \
        option_values(opts)
    assert list({**option_values(method.options), **option_values(extra.options)}) == \
        list(option_values(opts))


def test_catalog_trainer_is_the_factory():
    assert {spec.trainer for spec in CATALOG} == {build_trainer}


def test_non_default_options_reach_the_objects():
    opts = options_class("fedprox", "fedavgm")(mu=0.3, server_momentum=0.5, server_lr=2.0)
    assert make_method("fedprox", opts).options.mu == 0.3
    m = make_addon("fedavgm", opts)
    assert (m.lr, m.momentum.beta, m.options.server_momentum) == (2.0, 0.5, 0.5)
    s = make_addon("smofi", options_class("fednar", "smofi")(alpha=-0.5, carry_momentum=True))
    assert s.options == SMoFiOptions(alpha=-0.5, carry_momentum=True)
    with pytest.raises(FedlibError, match="unknown base method"):
        make_method("fedfoo", opts)
    with pytest.raises(FedlibError, match="add-on"):
        make_addon("fedfoo", opts)


def test_local_configs_of_the_base_methods():
    local = LocalConfig(lr=0.05, momentum=0.9, weight_decay=5e-4)
    assert FedAvg().local_config(local, 3) is local
    nar = make_method("fednar", options_class("fednar", None)()).local_config(local, 2)
    assert nar.lr == pytest.approx(0.05 * 0.998 ** 2)
    assert (nar.weight_decay, nar.l2_in_loss, nar.clip_norm) == (0.0, 0.1, 10.0)
    nag = FedNAG().local_config(local, 0)
    assert (nag.momentum, nag.nesterov) == (0.9, True)
    with pytest.raises(FedlibError, match="momentum"):
        FedNAG().local_config(LocalConfig(lr=0.05, momentum=0.0), 0)


def test_fednag_averages_momentum_with_the_data_size_weights():
    m = FedNAG()
    assert m.initial_opt_state() is None
    results = [SimpleNamespace(opt_state={"momentum_buffer": {"w": torch.tensor([1.0, 0.0])}}),
               SimpleNamespace(opt_state={"momentum_buffer": {"w": torch.tensor([0.0, 4.0])}}),
               SimpleNamespace(opt_state=None)]
    global_state = {"w": torch.zeros(2, dtype=torch.float32), "b": torch.zeros(1)}
    m.after_aggregation(results, torch.tensor([1.0, 3.0, 4.0], dtype=torch.float64),
                        global_state, ["w", "b"])
    avg = m.initial_opt_state()["momentum_buffer"]
    assert set(avg) == {"w"}  # no client had a buffer for "b"
    # weights renormalised over the clients that have the buffer: 1/4 and 3/4
    assert torch.allclose(avg["w"], torch.tensor([0.25, 3.0]))
    assert avg["w"].dtype == torch.float32
    other = FedNAG()
    other.load_state_dict(m.state_dict())
    assert torch.equal(other.initial_opt_state()["momentum_buffer"]["w"], avg["w"])


def test_smofi_addon_carries_fused_momentum_only_when_asked():
    local = LocalConfig(lr=0.05, momentum=0.9)
    for carry in (False, True):
        s = SMoFi(SMoFiOptions(carry_momentum=carry))
        s.prepare(["head.weight"], local)
        assert s.engine_hook is s.hook and s.hook.names == ["head.weight"]
        s.start_round(2)
        s.hook.last_fused = {("momentum_buffer", "head.weight"): torch.ones(3)}
        s.after_round()
        assert bool(s.initial_opt_state()) is carry
        assert set(s.state_dict()) == ({"momentum_buffer"} if carry else set())
    restored = SMoFi(SMoFiOptions(carry_momentum=True))
    restored.load_state_dict(s.state_dict())
    assert torch.equal(restored.initial_opt_state()["momentum_buffer"]["head.weight"], torch.ones(3))
    with pytest.raises(FedlibError, match="SFLV2"):
        s.check_framework("sflv2")
    with pytest.raises(FedlibError, match="SFLV1"):
        FedNAG().check_framework("sflv2")


def test_check_setup_paths_and_errors():
    local = LocalConfig(lr=0.05, momentum=0.9)
    assert sfl.check_setup("sflv1", FedAvg(), ServerAddon(), local, "auto") == "engine"
    assert sfl.check_setup("sflv2", FedAvg(), FedAvgM(), local, "auto") == "split"
    # FedNAG and carried SMoFi momentum run on the engine: it takes an initial optimizer state
    assert sfl.check_setup("sflv1", FedNAG(), ServerAddon(), local, "auto") == "engine"
    with pytest.raises(FedlibError, match="path"):
        sfl.check_setup("sflv2", FedAvg(), ServerAddon(), local, "engine")
    with pytest.raises(FedlibError, match="framework"):
        sfl.check_setup("sflv3", FedAvg(), ServerAddon(), local, "auto")
    with pytest.raises(FedlibError, match="LocalConfig"):
        sfl.check_setup("sflv1", FedAvg(), ServerAddon(), {"lr": 0.1}, "auto")


def test_the_trainer_tests_no_method_name():
    """run_round and the rest of SplitTrainer only call the objects' hooks."""
    src = inspect.getsource(sfl.SplitTrainer)
    for name in BASES + ADDONS:
        assert f'"{name}"' not in src and f"'{name}'" not in src, name
