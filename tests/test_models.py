"""The model zoo: shapes, parameter counts, cuts, the hand-written LSTM, split training identity."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from fedlib.core.errors import FedlibError
from fedlib.models import (LSTM, MODELS, StagedModel, build_model, count_parameters, cut_points,
                           default_cut, model_kwargs, split_model)
from fedlib.models.split import client_backward, client_forward, server_step, split_forward_backward

torch.set_num_threads(1)

IMAGE_MODELS = ("resnet18", "vgg16", "mobilenetv2", "densenet121", "cnn", "cnn3")
BN_MODELS = ("resnet18", "vgg16", "mobilenetv2", "densenet121")
# Parameters for 10 classes and the classifier's input width (count grows by fc_in + 1 per class).
PARAMS_10 = {"resnet18": (11_173_962, 512), "vgg16": (14_728_266, 512),
             "mobilenetv2": (2_236_682, 1280), "densenet121": (6_956_298, 1024),
             "cnn": (545_098, 128), "cnn3": (541_094, 500), "lstm": (204_682, 128), "fcn": (11_010, 500)}


def _classes(name):
    return {"lstm": 80, "fcn": 2}.get(name, 10)


def _input(name, batch=2, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    if name == "lstm":
        return torch.randint(0, 80, (batch, 80), generator=g)
    if name == "fcn":
        return torch.randn(batch, 11, generator=g)
    return torch.randn(batch, 3, size, size, generator=g)


# ------------------------------------------------------------------ registry, shapes, counts

def test_registry_names():
    assert set(MODELS) == {"resnet18", "vgg16", "mobilenetv2", "densenet121", "cnn", "cnn3", "lstm",
                           "fcn"}


def test_unknown_model_lists_valid_names():
    with pytest.raises(FedlibError) as e:
        build_model("resnet50", 10)
    for name in MODELS:
        assert name in str(e.value)


@pytest.mark.parametrize("kw,needle", [({"in_chanels": 1}, "in_channels"),
                                       ({"in_channels": 0}, "in_channels"),
                                       ({"in_channels": 2.5}, "in_channels")])
def test_bad_options(kw, needle):
    with pytest.raises(FedlibError, match=needle):
        build_model("resnet18", 10, **kw)


@pytest.mark.parametrize("num_classes", [0, -3, 2.0, True])
def test_bad_num_classes(num_classes):
    with pytest.raises(FedlibError, match="num_classes"):
        build_model("cnn", num_classes)


def test_reference_parameter_counts():
    assert count_parameters(build_model("resnet18", 10, seed=0)) == 11_173_962  # ≈ 11.17 M
    assert count_parameters(build_model("lstm", 80, seed=0)) == 213_712
    assert count_parameters(build_model("fcn", 2, seed=0)) == 7_002  # 11·500+500 + 500·2+2


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("num_classes", [10, 100, 200])
def test_shapes_and_parameter_counts(name, num_classes):
    model = build_model(name, num_classes, seed=0).eval()
    base, fc_in = PARAMS_10[name]
    assert count_parameters(model) == base + (num_classes - 10) * (fc_in + 1)
    with torch.no_grad():
        out = model(_input(name))
    assert out.shape == (2, num_classes)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", IMAGE_MODELS)
def test_image_models_take_64px_and_other_channel_counts(name):
    model = build_model(name, 200, seed=0).eval()
    with torch.no_grad():
        assert model(_input(name, batch=1, size=64)).shape == (1, 200)
        gray = build_model(name, 10, in_channels=1, seed=0).eval()
        assert gray(torch.randn(1, 1, 32, 32)).shape == (1, 10)


def test_fcn_in_features_and_lstm_layout():
    assert build_model("fcn", 2, in_features=7)(torch.randn(3, 7)).shape == (3, 2)
    m = build_model("lstm", 80)
    assert m.stage_names == ("embed", "lstm", "head")
    assert isinstance(m.embed, nn.Embedding) and m.embed.weight.shape == (80, 8)
    assert m.lstm.hidden_size == 128 and m.lstm.num_layers == 2
    assert not any(isinstance(x, nn.LSTM) for x in m.modules())
    assert model_kwargs("fcn")["in_features"] == 11


def test_cnn_has_no_buffers():
    assert list(build_model("cnn", 10).buffers()) == []


def test_count_parameters_counts_shared_once_and_trainable_only():
    model = build_model("fcn", 2)
    shared = nn.Sequential(model, model)
    assert count_parameters(shared) == count_parameters(model) == 7_002
    model.head.weight.requires_grad_(False)
    assert count_parameters(model, trainable_only=True) == 7_002 - 1_000


# ------------------------------------------------------------------ determinism

@pytest.mark.parametrize("name", ["resnet18", "lstm", "cnn"])
def test_deterministic_init(name):
    torch.manual_seed(123)
    a = build_model(name, 10).state_dict()
    torch.manual_seed(123)
    b = build_model(name, 10).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    c = build_model(name, 10, seed=7).state_dict()
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_seed_kwarg_is_independent_of_global_rng():
    torch.manual_seed(1)
    a = build_model("cnn", 10, seed=5).state_dict()
    after_a = torch.rand(1)
    torch.manual_seed(2)
    b = build_model("cnn", 10, seed=5).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    torch.manual_seed(1)
    assert torch.equal(torch.rand(1), after_a)  # building with seed= did not consume global RNG


# ------------------------------------------------------------------ cuts

def test_cut_points_and_defaults():
    m = build_model("resnet18", 10)
    assert m.stage_names == ("stem", "layer1", "layer2", "layer3", "layer4", "head")
    assert cut_points(m) == ["stem", "layer1", "layer2", "layer3", "layer4"]
    assert cut_points("resnet18") == cut_points(m)
    assert default_cut(m) == default_cut("resnet18") == "layer1"
    assert cut_points("lstm") == ["embed", "lstm"]
    assert cut_points("fcn") == ["fc1"]
    for name in MODELS:
        assert default_cut(name) in cut_points(name)


def test_unknown_cut_lists_valid_cut_points():
    m = build_model("resnet18", 10)
    for bad in ("layer5", "head"):  # "head" is the last stage: nothing would be left on the server
        with pytest.raises(FedlibError) as e:
            split_model(m, bad)
        assert all(c in str(e.value) for c in cut_points(m))


def test_split_rejects_unstaged_module_and_unknown_name():
    with pytest.raises(FedlibError, match="cannot cut"):
        split_model(nn.Linear(2, 2), "x")
    with pytest.raises(FedlibError, match="resnet18"):
        cut_points("resnet19")


def test_split_shares_parameters_unless_copied():
    m = build_model("resnet18", 10, seed=0)
    client, server = split_model(m)  # default cut: layer1
    assert client.stage_names == ("stem", "layer1")
    assert server.stage_names == ("layer2", "layer3", "layer4", "head")
    ids = {id(p) for p in m.parameters()}
    assert {id(p) for p in client.parameters()} | {id(p) for p in server.parameters()} == ids
    # keys survive the cut: the union of the parts' state dicts is the model's
    sd = m.state_dict()
    parts = {**client.state_dict(), **server.state_dict()}
    assert parts.keys() == sd.keys() and all(torch.equal(parts[k], sd[k]) for k in sd)
    c2, s2 = split_model(m, "layer1", copy=True)
    ptrs = {p.data_ptr() for p in m.state_dict().values()}
    assert not ptrs & {p.data_ptr() for p in c2.state_dict().values()}
    assert not ptrs & {p.data_ptr() for p in s2.state_dict().values()}
    assert all(torch.equal(v, sd[k]) for k, v in {**c2.state_dict(), **s2.state_dict()}.items())
    with torch.no_grad():
        c2.stem[0].weight.add_(1.0)
    assert not torch.equal(c2.stem[0].weight, m.stem[0].weight)


def test_slicing_keeps_staged_type():
    m = build_model("cnn", 10)
    part = m[1:3]
    assert isinstance(part, StagedModel) and part.stage_names == ("conv2", "fc1")


def _check_composition(model, x, cuts, train):
    for cut in cuts:
        ref = copy.deepcopy(model).train(train)
        whole = copy.deepcopy(ref)
        client, server = split_model(ref, cut)
        torch.manual_seed(0)
        expected = whole(x)
        torch.manual_seed(0)
        got = nn.Sequential(client, server)(x)
        assert torch.equal(got, expected), cut
        if train:  # BN running statistics moved identically
            a, b = whole.state_dict(), ref.state_dict()
            assert all(torch.equal(a[k], b[k]) for k in a), cut


@pytest.mark.parametrize("name", MODELS)
def test_split_composition_equals_model_eval(name):
    model = build_model(name, _classes(name), seed=0)
    with torch.no_grad():
        _check_composition(model, _input(name), cut_points(model), train=False)


@pytest.mark.parametrize("name", MODELS)
def test_split_composition_equals_model_train(name):
    model = build_model(name, _classes(name), seed=0)
    cuts = cut_points(model)
    if name in ("vgg16", "densenet121"):  # the expensive ones: first, default and last cuts
        cuts = sorted({cuts[0], default_cut(model), cuts[-1]}, key=cuts.index)
    with torch.no_grad():
        _check_composition(model, _input(name), cuts, train=True)


# ------------------------------------------------------------------ the hand-written LSTM

def test_lstm_matches_nn_lstm():
    torch.manual_seed(0)
    ref = nn.LSTM(8, 128, num_layers=2, batch_first=True)
    mine = LSTM(8, 128, num_layers=2)
    mine.load_state_dict(ref.state_dict())  # same names and shapes as nn.LSTM
    x = torch.randn(3, 20, 8, requires_grad=True)
    out_r, (h_r, c_r) = ref(x)
    x2 = x.detach().clone().requires_grad_(True)
    out_m, (h_m, c_m) = mine(x2)
    torch.testing.assert_close(out_m, out_r)
    torch.testing.assert_close(h_m, h_r)
    torch.testing.assert_close(c_m, c_r)
    # with an initial state, and gradients
    h0, c0 = torch.randn(2, 3, 128), torch.randn(2, 3, 128)
    (ref(x, (h0, c0))[0] ** 2).sum().backward()
    (mine(x2, (h0, c0))[0] ** 2).sum().backward()
    torch.testing.assert_close(x2.grad, x.grad)
    for (n, p), (n2, q) in zip(ref.named_parameters(), mine.named_parameters()):
        assert n == n2
        torch.testing.assert_close(q.grad, p.grad)


def test_lstm_init_follows_nn_lstm():
    torch.manual_seed(4)
    ref = nn.LSTM(8, 128, num_layers=2, batch_first=True)
    torch.manual_seed(4)
    mine = LSTM(8, 128, num_layers=2)
    assert all(torch.equal(p, q) for p, q in zip(ref.parameters(), mine.parameters()))


def test_lstm_model_uses_last_time_step():
    torch.manual_seed(0)
    model = build_model("lstm", 80, seed=0)
    ref = nn.LSTM(8, 128, num_layers=2, batch_first=True)
    ref.load_state_dict(model.lstm.state_dict())
    x = _input("lstm", batch=2)
    with torch.no_grad():
        expected = model.head(ref(model.embed(x))[0][:, -1])
        torch.testing.assert_close(model(x), expected)


# ------------------------------------------------------------------ torch.func

@pytest.mark.parametrize("name", MODELS)
def test_functional_call_matches_module(name):
    model = build_model(name, _classes(name), seed=0).eval()
    x = _input(name, batch=2)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    with torch.no_grad():
        assert torch.equal(functional_call(model, state, (x,)), model(x))


@pytest.mark.parametrize("name", ["cnn", "lstm", "fcn"])
def test_vmap_over_stacked_models(name):
    models = [build_model(name, _classes(name), seed=s).eval() for s in range(3)]
    params, buffers = stack_module_state(models)
    template = copy.deepcopy(models[0]).to("meta")
    x = _input(name, batch=2)

    def f(p, b, x):
        return functional_call(template, (p, b), (x,))

    with torch.no_grad():
        got = vmap(f, in_dims=(0, 0, None))(params, buffers, x)
        expected = torch.stack([m(x) for m in models])
    torch.testing.assert_close(got, expected)


# ------------------------------------------------------------------ split training (SMoFi §6 identity 6)

@pytest.mark.parametrize("name,cut", [("resnet18", "layer1"), ("resnet18", "stem"), ("cnn", "conv1"),
                                      ("cnn", "fc1"), ("lstm", "embed"), ("fcn", "fc1")])
def test_split_forward_backward_equals_full(name, cut):
    model = build_model(name, _classes(name), seed=0).train()
    if name == "fcn":
        model.eval()  # dropout would draw different masks; the identity is about the cut
    x = _input(name, batch=2)
    y = torch.randint(0, _classes(name), (2,), generator=torch.Generator().manual_seed(1))
    loss_fn = nn.CrossEntropyLoss()

    whole = copy.deepcopy(model)
    full_loss = loss_fn(whole(x), y)
    full_loss.backward()

    client, server = split_model(model, cut)
    loss, smashed = split_forward_backward(client, server, x, y, loss_fn)
    assert smashed.is_leaf and smashed.grad is not None and smashed.grad.shape == smashed.shape
    assert torch.equal(loss, full_loss.detach())
    g_full = {n: p.grad for n, p in whole.named_parameters()}
    g_split = {n: p.grad for n, p in model.named_parameters()}
    assert g_full.keys() == g_split.keys()
    for n in g_full:  # the same operations on the same tensors: bitwise equal on CPU
        assert torch.equal(g_split[n], g_full[n]), n
    # BN running statistics advanced identically (one forward on each side of the cut)
    a, b = whole.state_dict(), model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_split_pieces_equal_one_call():
    model = build_model("cnn", 10, seed=0)
    x, y = _input("cnn"), torch.tensor([3, 7])
    loss_fn = nn.CrossEntropyLoss()
    other = copy.deepcopy(model)
    c1, s1 = split_model(model, "conv2")
    loss1, smashed = split_forward_backward(c1, s1, x, y, loss_fn)
    c2, s2 = split_model(other, "conv2")
    acts = client_forward(c2, x)
    loss2, grad = server_step(s2, acts.detach().clone(), y, loss_fn)  # only tensors cross the cut
    client_backward(acts, grad)
    assert torch.equal(loss1, loss2) and torch.equal(grad, smashed.grad)
    for p, q in zip(model.parameters(), other.parameters()):
        assert torch.equal(p.grad, q.grad)


def test_split_step_rejects_unreduced_loss():
    c, s = split_model(build_model("cnn", 10), "conv1")
    with pytest.raises(FedlibError, match="scalar"):
        split_forward_backward(c, s, _input("cnn"), torch.tensor([1, 2]),
                               nn.CrossEntropyLoss(reduction="none"))


def test_cnn3_is_the_safl_gap_study_cnn():
    """Three conv blocks 16/32/64, a 1,024-wide flatten, dropout 0.3 before both linears (FedQS code [C])."""
    m = build_model("cnn3", 10, seed=0)
    assert m.stage_names == ("conv1", "conv2", "conv3", "fc1", "head")
    convs = [mod for mod in m.modules() if isinstance(mod, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [(3, 16, (3, 3)), (16, 32, (3, 3)),
                                                                                (32, 64, (3, 3))]
    linears = [mod for mod in m.modules() if isinstance(mod, torch.nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(1024, 500), (500, 10)]
    assert [d.p for d in m.modules() if isinstance(d, torch.nn.Dropout)] == [0.3, 0.3]
    assert m.default_cut == "conv1" and list(m.buffers()) == []
