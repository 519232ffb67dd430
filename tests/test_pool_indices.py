"""max_pool*/adaptive_max_pool* with return_indices and max_unpool* against PyTorch: values, indices (ties
and NaNs resolved as PyTorch's kernel does), gradients, dtypes, errors; float64 finite differences."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import gradcheck


def _data(shape, seed, ties=False, nan=False, dtype="float64"):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape).astype(dtype) if ties else rng.standard_normal(shape).astype(dtype)
    if nan:
        x.reshape(-1)[rng.choice(x.size, max(1, x.size // 6), replace=False)] = np.nan
    return x


def _run(lib, fn, x, grad=True):
    t = lib.tensor(x, requires_grad=grad)
    out, idx = fn(lib.nn.functional, t)
    if grad:
        w = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
    return out, idx, (t.grad if grad else None)


def _same(fn, x, grad=True):
    theirs = _run(torch, fn, x, grad)
    ours = _run(tg, fn, x, grad)
    for o, t in zip(ours, theirs):
        if t is None:
            continue
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, equal_nan=True)
    return ours


POOLS = [
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    (1, (3, 10), dict(kernel_size=2, dilation=3, ceil_mode=True)),
    (2, (2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (3, 8, 9), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    (3, (1, 2, 5, 6, 4), dict(kernel_size=2, stride=(2, 1, 2), padding=(1, 0, 1))),
    (3, (2, 6, 5, 5), dict(kernel_size=(3, 2, 2), dilation=(1, 2, 1), ceil_mode=True)),
]


@pytest.mark.parametrize("nd,shape,kw", POOLS)
@pytest.mark.parametrize("kind", ["random", "ties", "nan"])
def test_max_pool_indices_values_and_grads(nd, shape, kw, kind):
    x = _data(shape, nd, ties=kind != "random", nan=kind == "nan")
    _same(lambda F, t: getattr(F, f"max_pool{nd}d")(t, return_indices=True, **kw), x)


ADAPTIVE = [(1, (2, 3, 10), 4), (1, (3, 7), 7), (2, (2, 2, 7, 5), (3, 4)), (2, (3, 5, 9), (None, 2)),
            (3, (1, 2, 5, 6, 7), (2, 3, 4)), (3, (2, 4, 3, 5), 2)]


@pytest.mark.parametrize("nd,shape,size", ADAPTIVE)
@pytest.mark.parametrize("kind", ["random", "ties", "nan"])
def test_adaptive_max_pool_indices_values_and_grads(nd, shape, size, kind):
    x = _data(shape, nd + 7, ties=kind != "random", nan=kind == "nan")
    _same(lambda F, t: getattr(F, f"adaptive_max_pool{nd}d")(t, size, return_indices=True), x)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_indices_of_other_dtypes(dtype):
    x = _data((2, 3, 6, 5), 3, ties=True, dtype=dtype)
    grad = dtype == "float32"
    _same(lambda F, t: F.max_pool2d(t, 2, 1, return_indices=True), x, grad)
    _same(lambda F, t: F.max_pool1d(t[0], 2, 1, return_indices=True), x, grad)
    if grad:
        _same(lambda F, t: F.adaptive_max_pool2d(t, 3, return_indices=True), x, grad)


def test_modules_return_indices():
    x = _data((2, 3, 6, 5, 4), 4)
    for name, args in (("MaxPool3d", (2,)), ("AdaptiveMaxPool3d", ((3, 2, 2),))):
        _same(lambda F, t: getattr(torch.nn if F is torch.nn.functional else tg.nn, name)(
            *args, return_indices=True)(t), x)
    assert repr(tg.nn.MaxUnpool2d(3, 2)) == repr(torch.nn.MaxUnpool2d(3, 2))
    assert repr(tg.nn.MaxUnpool1d(2)) == repr(torch.nn.MaxUnpool1d(2))


UNPOOLS = [
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1), None),
    (1, (3, 8), dict(kernel_size=2), [9]),
    (2, (2, 2, 7, 6), dict(kernel_size=2), None),
    (2, (3, 7, 8), dict(kernel_size=3, stride=2, padding=1), [2, 3, 7, 8]),
    (3, (1, 2, 5, 6, 4), dict(kernel_size=2, stride=(2, 1, 2)), (5, 6, 5)),
    (3, (2, 4, 4, 6), dict(kernel_size=(1, 2, 3)), None),
]


@pytest.mark.parametrize("nd,shape,kw,output_size", UNPOOLS)
def test_max_unpool_values_and_grads(nd, shape, kw, output_size):
    x = _data(shape, nd + 3)

    def fn(F, t):
        y, i = getattr(F, f"max_pool{nd}d")(t, **kw, return_indices=True)
        return getattr(F, f"max_unpool{nd}d")(y, i, output_size=output_size, **kw), i
    _same(fn, x)


def test_max_unpool_module_and_repeated_indices():
    # Overlapping windows repeat indices: every pooled value gets the gradient at its index, as in PyTorch.
    x = _data((2, 3, 7, 7), 5)

    def fn(F, t):
        nn = torch.nn if F is torch.nn.functional else tg.nn
        y, i = nn.MaxPool2d(3, 1, return_indices=True)(t)
        y = y * 2
        return nn.MaxUnpool2d(3, 1)(y, i, output_size=t.shape), i
    _same(fn, x)


def test_gradcheck_float64():
    F = tg.nn.functional
    x = tg.tensor(_data((1, 1, 5, 4), 11), requires_grad=True)
    assert gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True)[0], (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 3), return_indices=True)[0], (x,))
    y, i = F.max_pool2d(x.detach(), 2, return_indices=True)
    y.requires_grad_(True)
    assert gradcheck(lambda t: F.max_unpool2d(t, i, 2, output_size=(5, 4)), (y,))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  the error PyTorch raises is the oracle
        return e
    raise AssertionError("no error raised")


@pytest.mark.parametrize("case", ["int adaptive 1d", "int adaptive 3d", "int max_pool1d", "adaptive 1d rank",
                                  "adaptive 3d rank", "bad index", "int32 indices", "indices shape",
                                  "output_size range", "output_size length", "3d index", "rank 2d", "rank 1d"])
def test_max_unpool_errors(case):
    def call(lib):
        F = lib.nn.functional
        if case.startswith("int "):
            xi = lib.zeros((1, 2, 3, 3, 3), dtype=lib.int64)
            return {"int adaptive 1d": lambda: F.adaptive_max_pool1d(xi[0, 0], 2, True),
                    "int adaptive 3d": lambda: F.adaptive_max_pool3d(xi, 2),
                    "int max_pool1d": lambda: F.max_pool1d(xi[0, 0], 2)}[case]()
        if case.startswith("adaptive"):
            nd = int(case[-4])
            return getattr(F, f"adaptive_max_pool{nd}d")(lib.zeros((1,) * (nd + 3)), 1)
        if case.startswith("rank"):
            nd = int(case[-2])
            z = lib.zeros((4,) * nd)   # one dim short of unbatched
            return getattr(F, f"max_unpool{nd}d")(z, z.long(), 2)
        x = lib.tensor(_data((1, 2, 4, 4), 0))
        y, i = F.max_pool2d(x, 2, return_indices=True)
        if case == "bad index":
            return F.max_unpool2d(y, i * 10, 2)
        if case == "int32 indices":
            return F.max_unpool2d(y, i.int(), 2)
        if case == "indices shape":
            return F.max_unpool2d(y, i[..., :1], 2)
        if case == "output_size range":
            return F.max_unpool2d(y, i, 2, output_size=(9, 9))
        if case == "output_size length":
            return F.max_unpool2d(y, i, 2, output_size=(1, 4, 4))
        x3 = lib.tensor(_data((1, 1, 4, 4, 4), 0))
        y3, i3 = F.max_pool3d(x3, 2, return_indices=True)
        return F.max_unpool3d(y3, i3 + 100, 2)
    theirs, ours = _error(lambda: call(torch)), _error(lambda: call(tg))
    assert type(ours) is type(theirs)
    # which bad index is named depends on PyTorch's thread order: compare the message around it
    head, _, tail = str(theirs).partition("index: ")
    assert str(ours).startswith(head) and str(ours).endswith(tail.split(" ", 1)[-1]), (ours, theirs)


FRACTIONAL = [
    (2, (2, 3, 7, 9), 2, (4, 5), False), (2, (3, 6, 8), (3, 2), (4, 7), True), (2, (1, 2, 9, 9), 3, (7, 1), False),
    (3, (2, 2, 5, 6, 7), 2, (3, 4, 5), True), (3, (2, 6, 5, 4), (1, 2, 2), (5, 2, 1), False),
]


@pytest.mark.parametrize("nd,shape,kernel,out,ties", FRACTIONAL)
def test_fractional_max_pool_against_pytorch(nd, shape, kernel, out, ties):
    x = _data(shape, nd + 21, ties=ties)
    planes = (shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd)
    samples = np.random.default_rng(nd).random(planes)
    _same(lambda F, t: getattr(F, f"fractional_max_pool{nd}d")(
        t, kernel, output_size=out, return_indices=True, _random_samples=(torch if F is torch.nn.functional else
                                                                          tg).tensor(samples)), x)


def test_fractional_modules_and_random_samples():
    assert repr(tg.nn.FractionalMaxPool2d(3, output_size=2)) == repr(torch.nn.FractionalMaxPool2d(3, output_size=2))
    pool = tg.nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True)
    values, indices = pool(tg.randn(2, 3, 8, 6, 4))
    assert tuple(values.shape) == (2, 3, 4, 3, 2) and indices.dtype == tg.int64
    out = tg.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.4))(tg.randn(3, 10, 10))
    assert tuple(out.shape) == (3, 5, 4)


@pytest.mark.parametrize("case", ["no size", "too large 2d", "too large 3d", "samples dtype", "samples batch",
                                  "samples channels", "rank", "float ratio 2d", "module ratio"])
def test_fractional_errors(case):
    def call(lib):
        F = lib.nn.functional
        x, s = lib.zeros(2, 3, 5, 6), lib.rand(2, 3, 2)
        return {"no size": lambda: F.fractional_max_pool2d(x, 2, _random_samples=s),
                "too large 2d": lambda: F.fractional_max_pool2d(x, 3, output_size=(3, 5), _random_samples=s),
                "too large 3d": lambda: F.fractional_max_pool3d(lib.zeros(1, 1, 5, 5, 5), 2, output_size=4,
                                                                _random_samples=lib.rand(1, 1, 3)),
                "samples dtype": lambda: F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s.double()),
                "samples batch": lambda: F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s[:1]),
                "samples channels": lambda: F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=s[:, :2]),
                "rank": lambda: F.fractional_max_pool2d(x[0, 0], 2, output_size=2, _random_samples=s),
                "float ratio 2d": lambda: F.fractional_max_pool2d(x, 2, output_ratio=0.5, _random_samples=s),
                "module ratio": lambda: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)}[case]()
    theirs, ours = _error(lambda: call(torch)), _error(lambda: call(tg))
    assert type(ours) is type(theirs)
    assert str(ours).startswith(str(theirs)), (ours, theirs)
