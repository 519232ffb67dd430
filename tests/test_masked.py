"""tapegrad.masked against PyTorch's torch.masked: MaskedTensor printing, elementwise ops, views, reductions,
softmax, where and gradients (the cases of PyTorch's MaskedTensor tutorials), and the functional masked
reductions with mask=, values and gradients."""
import warnings

import numpy as np
import pytest
import torch
import torch.masked

import tapegrad as tg

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors:UserWarning",
                                        "ignore:It is not recommended to create a MaskedTensor:UserWarning")


def _both(fn):
    return fn(torch), fn(tg)


def _same(t, m):
    if isinstance(t, torch.masked.MaskedTensor):
        assert isinstance(m, tg.masked.MaskedTensor)
        assert repr(m) == repr(t), f"\n{m!r}\n!=\n{t!r}"
        t, m = t.get_data(), m.get_data()
        # masked-out values are unspecified; the repr above compared the rest
        return
    assert str(m.dtype).replace("tapegrad.", "torch.") == str(t.dtype)
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6, equal_nan=True)


def _tutorial(lib):
    data = lib.arange(24).reshape(2, 3, 4)
    mask = data % 2 == 0
    return lib.masked.masked_tensor(data.float(), mask)


@pytest.mark.parametrize("fn", [
    lambda lib, mt: mt,
    lambda lib, mt: mt.get_data() * 1,
    lambda lib, mt: mt[0],
    lambda lib, mt: mt[:, :, 2:4],
    lambda lib, mt: mt[1, 2],
    lambda lib, mt: mt.transpose(0, 1),
    lambda lib, mt: mt.sum(),
    lambda lib, mt: mt.sum(1),
    lambda lib, mt: mt.sum((0, 2), keepdim=True),
    lambda lib, mt: lib.sum(mt, 1),
    lambda lib, mt: mt.mean(),
    lambda lib, mt: mt.mean(0),
    lambda lib, mt: mt.amax(),
    lambda lib, mt: mt.amax(2),
    lambda lib, mt: lib.amin(mt, 1),
    lambda lib, mt: lib.argmax(mt, 1),
    lambda lib, mt: mt.argmin(2),
    lambda lib, mt: mt.argmax(),
    lambda lib, mt: mt.prod(2),
    lambda lib, mt: mt.var(),
    lambda lib, mt: mt.std(2),
    lambda lib, mt: mt.var(1),
    lambda lib, mt: mt.softmax(-1),
    lambda lib, mt: lib.exp(mt[0]),
    lambda lib, mt: mt * 2,
    lambda lib, mt: mt + mt,
    lambda lib, mt: mt / mt,
    lambda lib, mt: -mt,
    lambda lib, mt: mt.abs().sqrt(),
    lambda lib, mt: mt < 5,
    lambda lib, mt: (mt > 5).all(),
    lambda lib, mt: mt.to_tensor(-1.0),
    lambda lib, mt: lib.masked.masked_tensor(lib.arange(4), lib.tensor([True, False, True, False])),
])
def test_masked_tensor_matches_torch(fn):
    t, m = _both(lambda lib: fn(lib, _tutorial(lib)))
    _same(t, m)


def test_nan_free_gradients_through_where():
    # PyTorch's tutorial: exp's overflow on masked-out elements does not reach the visible gradient
    def run(lib):
        x = lib.tensor([-10.0, -5, 0, 5, 10, 50, 60, 70, 80, 90, 100])
        mask = x < 0
        mx = lib.masked.masked_tensor(x, mask, requires_grad=True)
        my = lib.masked.masked_tensor(lib.ones_like(x), ~mask, requires_grad=True)
        y = lib.where(mask, lib.exp(mx), my)
        s = y.sum()
        s.backward()
        return y, s, mx.grad, my.grad
    for t, m in zip(*_both(run)):
        _same(t, m)


def test_nanmean_replacement():
    torch.manual_seed(0)
    a = torch.randn(4, 5)
    a[:, 1] = float("nan")

    def run(lib):
        x = a if lib is torch else lib.tensor(a.numpy())
        mt = lib.masked.masked_tensor(x, ~lib.isnan(x))
        return mt.mean(1), mt.sum(0), mt.amax(1)
    for t, m in zip(*_both(run)):
        _same(t, m)
    _same(torch.nanmean(a, 1), run(tg)[0].get_data())   # what torch.nanmean gives


def test_as_masked_tensor_passes_gradients_to_its_data():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        mt = lib.masked.as_masked_tensor(x * 2, lib.tensor([True, False, True, True]))
        mt.sum().backward()
        return x.grad
    t, m = _both(run)
    # PyTorch hands the leaf a MaskedTensor gradient; tapegrad's is the plain data gradient (0 where masked out)
    assert isinstance(t, torch.masked.MaskedTensor) and not isinstance(m, tg.masked.MaskedTensor)
    np.testing.assert_allclose(m.numpy(), np.where(t.get_mask().numpy(), t.get_data().numpy(), 0))


def test_errors():
    for lib in (torch, tg):
        m = lib.masked
        with pytest.raises(TypeError, match="data must be a Tensor"):
            m.masked_tensor([1.0], lib.tensor([True]))
        with pytest.raises(TypeError, match="mask must have dtype bool"):
            m.masked_tensor(lib.ones(2), lib.ones(2))
        with pytest.raises(ValueError, match="data.size\\(\\) must equal mask.size\\(\\)"):
            m.masked_tensor(lib.ones(2), lib.ones(3, dtype=lib.bool))
        a = m.masked_tensor(lib.ones(2), lib.tensor([True, False]))
        b = m.masked_tensor(lib.ones(2), lib.tensor([False, True]))
        with pytest.raises(ValueError, match="Input masks must match"):
            a + b
    with pytest.raises(TypeError, match="data layout of tapegrad.sparse_coo is not supported.*to_dense"):
        tg.masked.masked_tensor(tg.ones(2).to_sparse(), tg.tensor([True, False]).to_sparse())
    with pytest.warns(UserWarning, match="The PyTorch API of MaskedTensors is in prototype stage"):
        tg.masked.masked_tensor(tg.ones(2), tg.tensor([True, False]))


# ---- functional torch.masked.<op>(input, dim, mask=...) ----

_X = np.array([[0.5, -1.0, 2.0, 3.0], [1.5, -2.5, 0.25, -0.75], [4.0, 1.0, -3.0, 2.0]])
_MASK = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])


@pytest.mark.parametrize("name,args,kwargs", [
    ("sum", (1,), {}), ("sum", (None,), {}), ("sum", ((0, 1),), {"keepdim": True}),
    ("prod", (1,), {}), ("amax", (1,), {}), ("amin", (0,), {}), ("argmax", (1,), {}), ("argmin", (0,), {}),
    ("mean", (1,), {}), ("mean", (None,), {}), ("norm", (2.0, 1), {}), ("norm", (1.0, 0), {}),
    ("var", (1,), {}), ("var", (0,), {"unbiased": False}), ("std", (1,), {"keepdim": True}),
    ("softmax", (1,), {}), ("log_softmax", (0,), {}), ("softmin", (1,), {}), ("logsumexp", (1,), {}),
    ("normalize", (2.0, 1), {}),
])
def test_functional_reductions(name, args, kwargs):
    out, grads = [], []
    for lib in (torch, tg):
        x = lib.tensor(_X, requires_grad=True)
        y = getattr(lib.masked, name)(x, *args, mask=lib.tensor(_MASK), **kwargs)
        out.append(y)
        if y.requires_grad:
            finite = lib.where(lib.isfinite(y), y, lib.zeros_like(y))
            (finite * lib.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape)).sum().backward()
            grads.append(x.grad)
    _same(*out)
    if grads:
        _same(*grads)


def test_functional_mask_broadcasts_and_integer_sum():
    def run(lib):
        x = lib.arange(12, dtype=lib.int32).reshape(3, 4)
        return lib.masked.sum(x, 1, mask=lib.tensor([True, False, True, False])), \
            lib.masked.amax(x, 0, mask=lib.tensor([[True], [False], [True]]))
    for t, m in zip(*_both(run)):
        _same(t, m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, tg):
            with pytest.raises(ValueError, match="mean\\(\\): Could not infer output dtype"):
                lib.masked.mean(lib.arange(3), mask=lib.tensor([True, False, True]))
