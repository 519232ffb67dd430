"""nn.Module API against PyTorch: registration, traversal, state_dict, modes, conversions, hooks, repr,
containers, and whole models trained a few steps from the same weights."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F


def _copy_weights(ref, mine):
    mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})


def _both(build):
    torch.manual_seed(0)
    ref, mine = build(torch.nn), build(nn)
    _copy_weights(ref, mine)
    return ref, mine


def _tr(s):
    return s.replace("torch.", "tapegrad.")


class Block(object):
    """The same user model written once, instantiated with either library's nn."""

    @staticmethod
    def build(n):
        class Net(n.Module):
            def __init__(self):
                super().__init__()
                self.features = n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(),
                                             n.MaxPool2d(2))
                self.heads = n.ModuleList([n.Linear(4 * 4 * 4, 8), n.Linear(8, 8), n.Linear(8, 8)])
                self.extra = n.ModuleDict({"drop": n.Dropout(0.0), "act": n.GELU()})
                self.scale = n.Parameter(n.init.ones_(n.Parameter(torch_like(n).empty(8))))
                self.register_buffer("offset", torch_like(n).zeros(8))
                self.register_buffer("scratch", torch_like(n).zeros(2), persistent=False)

            def forward(self, x):
                x = self.features(x).flatten(1)
                for layer in self.heads:
                    x = self.extra["act"](layer(x))
                return self.extra["drop"](x) * self.scale + self.offset
        return Net()


def torch_like(n):
    return torch if n is torch.nn else tg


def test_registration_traversal_and_repr():
    ref, mine = _both(Block.build)
    assert repr(mine) == _tr(repr(ref))
    for method in ("named_parameters", "named_buffers", "named_children", "named_modules"):
        assert [k for k, _ in getattr(mine, method)()] == [k for k, _ in getattr(ref, method)()]
    assert len(list(mine.parameters())) == len(list(ref.parameters()))
    assert len(list(mine.modules())) == len(list(ref.modules()))
    assert [type(m).__name__ for m in mine.children()] == [type(m).__name__ for m in ref.children()]
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert isinstance(mine.scale, nn.Parameter) and mine.scale.is_leaf and mine.scale.requires_grad
    assert repr(mine.scale).startswith("Parameter containing:\ntensor(")
    assert [k for k, _ in mine.named_parameters(prefix="m", recurse=False)] == ["m.scale"]


def test_module_list_compressed_repr_and_indexing():
    ref = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    mine = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    assert repr(mine) == repr(ref)
    assert repr(mine[1:]) == repr(ref[1:])
    assert isinstance(mine[-1], nn.ReLU)
    seq_ref = torch.nn.Sequential(OrderedDict(a=torch.nn.Linear(2, 3), b=torch.nn.Tanh(), c=torch.nn.Linear(3, 1)))
    seq = nn.Sequential(OrderedDict(a=nn.Linear(2, 3), b=nn.Tanh(), c=nn.Linear(3, 1)))
    assert repr(seq) == repr(seq_ref)
    assert repr(seq[1:]) == repr(seq_ref[1:])
    assert isinstance(seq[0], nn.Linear) and len(seq) == 3
    del seq[1]
    assert [k for k, _ in seq.named_children()] == ["0", "1"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]


def test_parameter_list_and_dict_repr():
    ref = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2, 3)), torch.nn.Parameter(torch.zeros(4))])
    mine = nn.ParameterList([nn.Parameter(tg.zeros(2, 3)), tg.zeros(4)])
    assert repr(mine) == _tr(repr(ref))
    assert [k for k, _ in mine.named_parameters()] == ["0", "1"]
    assert isinstance(mine[1], nn.Parameter)
    ref_d = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.zeros(2))})
    mine_d = nn.ParameterDict({"a": nn.Parameter(tg.zeros(2))})
    assert repr(mine_d) == _tr(repr(ref_d))


def test_every_layer_repr_matches_torch():
    builds = [
        lambda n: n.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, bias=False, padding_mode="reflect"),
        lambda n: n.Conv2d(2, 4, (3, 1), padding="same"), lambda n: n.ConvTranspose2d(2, 4, 3, 2, 1, 1),
        lambda n: n.MaxPool1d(3), lambda n: n.MaxPool2d((2, 3), stride=1, ceil_mode=True), lambda n: n.AvgPool1d(3),
        lambda n: n.AvgPool2d(2, padding=1), lambda n: n.AdaptiveAvgPool2d((2, None)),
        lambda n: n.AdaptiveMaxPool2d(3), lambda n: n.BatchNorm1d(3, affine=False, momentum=None),
        lambda n: n.LayerNorm([2, 3], elementwise_affine=False), lambda n: n.GroupNorm(2, 4, affine=False),
        lambda n: n.RMSNorm(4, eps=1e-6), lambda n: n.Dropout(0.2, inplace=True), lambda n: n.Embedding(5, 2, 1),
        lambda n: n.Embedding(5, 2, max_norm=1.0, scale_grad_by_freq=True), lambda n: n.EmbeddingBag(5, 2, mode="max"),
        lambda n: n.RNN(2, 3, 2, nonlinearity="relu", batch_first=True, dropout=0.1, bidirectional=True),
        lambda n: n.LSTM(2, 3, bias=False), lambda n: n.GRU(2, 3),
        lambda n: n.MultiheadAttention(4, 2, kdim=3, vdim=5),
        lambda n: n.TransformerEncoderLayer(4, 2, 8, activation="gelu"),
        lambda n: n.LeakyReLU(0.2, True), lambda n: n.ELU(), lambda n: n.GELU("tanh"), lambda n: n.SiLU(),
        lambda n: n.Mish(), lambda n: n.Softplus(), lambda n: n.Tanh(), lambda n: n.Sigmoid(), lambda n: n.Softmax(1),
        lambda n: n.LogSoftmax(dim=-1), lambda n: n.Hardtanh(), lambda n: n.ReLU6(), lambda n: n.Flatten(0),
        lambda n: n.Unflatten(1, (2, 3)), lambda n: n.Identity(), lambda n: n.Bilinear(2, 3, 4, bias=False),
    ]
    for build in builds:
        assert repr(build(nn)) == _tr(repr(build(torch.nn)))


def test_state_dict_load_errors_and_return_value():
    ref, mine = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    result = mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    assert repr(result) == repr(ref.load_state_dict(ref.state_dict())) == "<All keys matched successfully>"
    state = {"weight": tg.zeros(2, 3), "extra": tg.zeros(1)}
    t_state = {"weight": torch.zeros(2, 3), "extra": torch.zeros(1)}
    with pytest.raises(RuntimeError) as got:
        mine.load_state_dict(state)
    with pytest.raises(RuntimeError) as expect:
        ref.load_state_dict(t_state)
    assert str(got.value) == str(expect.value)
    assert tuple(mine.load_state_dict(state, strict=False)) == tuple(ref.load_state_dict(t_state, strict=False))
    with pytest.raises(RuntimeError) as got:
        mine.load_state_dict({"weight": tg.zeros(3, 3), "bias": tg.zeros(2)})
    with pytest.raises(RuntimeError) as expect:
        ref.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(2)})
    assert _tr(str(expect.value)).replace("tapegrad.Size", "Size") == str(got.value).replace("tapegrad.Size", "Size")
    assert mine.weight.is_leaf and (mine.weight.detach().numpy() == 0).all()


def test_setattr_errors():
    mine = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'tapegrad.FloatTensor' as parameter 'weight'"):
        mine.weight = tg.zeros(2, 2)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        mine.register_buffer("forward", tg.zeros(1))
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        mine.nope
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)
    mine.weight = nn.Parameter(tg.ones(2, 2))
    assert [k for k, _ in mine.named_parameters()] == ["weight", "bias"]
    del mine.bias
    assert [k for k, _ in mine.named_parameters()] == ["weight"]


def test_train_eval_zero_grad_requires_grad_apply():
    ref, mine = _both(Block.build)
    mine.eval()
    assert not any(m.training for m in mine.modules())
    mine.train()
    assert all(m.training for m in mine.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        mine.train("yes")
    mine.double()
    mine(tg.randn(2, 1, 8, 8, dtype=tg.float64)).sum().backward()
    assert all(p.grad is not None for p in mine.parameters())
    mine.zero_grad(set_to_none=False)
    assert all((p.grad.numpy() == 0).all() for p in mine.parameters())
    mine.zero_grad()
    assert all(p.grad is None for p in mine.parameters())
    mine.requires_grad_(False)
    assert not any(p.requires_grad for p in mine.parameters())
    names = []
    mine.apply(lambda m: names.append(type(m).__name__))
    ref_names = []
    ref.apply(lambda m: ref_names.append(type(m).__name__))
    assert names == ref_names


def test_dtype_conversions_keep_parameter_identity():
    mine = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    weight = mine[0].weight
    mine.double()
    assert mine[0].weight is weight and weight.dtype is tg.float64
    assert mine[1].num_batches_tracked.dtype is tg.int64
    mine.to(tg.float32)
    assert weight.dtype is tg.float32
    mine.half()
    assert weight.dtype is tg.float16 and isinstance(mine[0].weight, nn.Parameter)
    mine.float().to("cpu")
    assert weight.device == tg.device("cpu")


def test_forward_hooks():
    mine = nn.Linear(2, 2)
    calls = []

    def pre(module, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(module, args, output):
        calls.append("post")
        return output + 1

    h1 = mine.register_forward_pre_hook(pre)
    h2 = mine.register_forward_hook(post)
    out = mine(tg.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), mine.bias.detach().numpy()[None] + 1, rtol=1e-6)
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(mine(tg.zeros(1, 2)).detach().numpy(), mine.bias.detach().numpy()[None], rtol=1e-6)
    seen = []
    mine.register_forward_hook(lambda m, a, kw, out: seen.append(sorted(kw)), with_kwargs=True)
    mine(input=tg.zeros(1, 2))
    assert seen == [["input"]]


def _sgd_losses(model, batches, loss_fn, tensor, lr=0.1):
    losses = []
    for x, y in batches:
        loss = loss_fn(model(tensor(x)), tensor(y))
        model.zero_grad()
        loss.backward()
        with (torch.no_grad() if tensor is torch.tensor else tg.no_grad()):
            for p in model.parameters():
                p.sub_(lr * p.grad)
        losses.append(loss.item())
    return losses


def test_small_cnn_trains_like_torch():
    def build(n):
        return n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(), n.MaxPool2d(2),
                            n.Conv2d(4, 4, 3), n.AdaptiveAvgPool2d(1), n.Flatten(), n.Linear(4, 3))
    ref, mine = _both(build)
    ref.double(), mine.double()
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((4, 1, 8, 8)), rng.integers(0, 3, 4)) for _ in range(4)]
    expect = _sgd_losses(ref, batches, torch.nn.CrossEntropyLoss(), torch.tensor)
    got = _sgd_losses(mine, batches, nn.CrossEntropyLoss(), tg.tensor)
    np.testing.assert_allclose(got, expect, rtol=1e-6)
    for a, b in zip(ref.state_dict().values(), mine.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-9)


def test_small_transformer_classifier_trains_like_torch():
    def build(n):
        class Classifier(n.Module):
            def __init__(self):
                super().__init__()
                self.embed = n.Embedding(11, 8, padding_idx=0)
                self.encoder = n.TransformerEncoder(n.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                              batch_first=True), 2,
                                                    enable_nested_tensor=False)
                self.head = n.Linear(8, 2)

            def forward(self, tokens):
                return self.head(self.encoder(self.embed(tokens)).mean(dim=1))
        return Classifier()
    ref, mine = _both(build)
    ref.double(), mine.double()
    rng = np.random.default_rng(1)
    batches = [(rng.integers(0, 11, (3, 5)), rng.integers(0, 2, 3)) for _ in range(3)]
    expect = _sgd_losses(ref, batches, torch.nn.CrossEntropyLoss(), torch.tensor)
    got = _sgd_losses(mine, batches, nn.CrossEntropyLoss(), tg.tensor)
    np.testing.assert_allclose(got, expect, rtol=1e-6)


def test_functional_module_interplay():
    lin = nn.Linear(3, 2)
    x = tg.randn(4, 3)
    np.testing.assert_allclose(lin(x).detach().numpy(), F.linear(x, lin.weight, lin.bias).detach().numpy())


def _state_dict_story(lib):
    """Every state-dict hook and a module's extra state through a save, loads strict and not, and refusals."""
    log = []

    class WithExtra(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.count = 3

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]
    m = lib.nn.Sequential(WithExtra(), lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(2, 1)))
    m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", type(mod).__name__, prefix, keep)))
    m[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", prefix, sorted(sd), meta)))
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, meta, strict, missing, unexpected, errors: log.append(
        ("load pre", type(mod).__name__, prefix, strict, sorted(sd))))
    inner = m[1].register_load_state_dict_post_hook(lambda mod, keys: log.append(("inner", list(keys.missing_keys))))
    outer = m.register_load_state_dict_post_hook(lambda mod, keys: log.append(("outer", list(keys.unexpected_keys))))
    sd = m.state_dict()
    log += [sorted(sd), sd["0._extra_state"]]
    sd["0._extra_state"] = {"count": 7}
    log.append((str(m.load_state_dict(sd)), m[0].count))
    partial = {k: v for k, v in sd.items() if k != "0._extra_state"}
    partial["extra"] = lib.zeros(1)
    log.append(str(m.load_state_dict(partial, strict=False)))
    try:
        m.load_state_dict(partial)
    except RuntimeError as e:
        log.append(str(e).replace("tapegrad", "torch"))
    inner.remove()
    outer.remove()
    bad = m.register_load_state_dict_post_hook(lambda mod, keys: 1)
    try:
        m.load_state_dict(sd)
    except AssertionError as e:
        log.append(str(e))
    bad.remove()
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
    try:
        m.state_dict()
    except RuntimeError as e:
        log.append(str(e))
    return log


def test_state_dict_hooks_and_extra_state_as_pytorch():
    assert [str(x) for x in _state_dict_story(tg)] == [str(x) for x in _state_dict_story(torch)]


def test_get_buffer_and_set_submodule_as_pytorch():
    def story(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        out = [tuple(m.get_buffer("1.running_mean").shape)]
        for f in [lambda: m.get_buffer("1.weight"), lambda: m.get_buffer("1.nothing"), lambda: m.get_buffer("2.x"),
                  lambda: m.set_submodule("", lib.nn.ReLU()), lambda: m.set_submodule("0", 3),
                  lambda: m.set_submodule("1.running_mean", lib.nn.ReLU()),
                  lambda: m.set_submodule("5", lib.nn.ReLU(), strict=True),
                  lambda: m.set_submodule("0.weight", lib.nn.ReLU()), lambda: m.set_submodule("3.a", lib.nn.ReLU())]:
            try:
                f()
                out.append("ok")
            except (AttributeError, ValueError) as e:
                out.append((type(e).__name__, str(e)))
        m.set_submodule("0", lib.nn.Tanh())
        m.set_submodule("2", lib.nn.ReLU())
        return out + [repr(m)]
    assert story(tg) == story(torch)
