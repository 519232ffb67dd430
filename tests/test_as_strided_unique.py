"""as_strided (values, views, gradients, errors), unique(dim=...) and writable real/imag views, against
PyTorch."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _eq(got, expect):
    assert tuple(got.shape) == tuple(expect.shape)
    assert str(got.dtype).split(".")[1] == str(expect.dtype).split(".")[1]
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-12, atol=0)


# ---- as_strided ----------------------------------------------------------------------------------

CASES = [((2, 3), (3, 1), None), ((3, 3), (1, 1), 1), ((2, 2), (1, 2), 2), ((4,), (0,), 3),
         ((2, 2, 2), (4, 1, 2), 0), ((0, 3), (1, 1), 0), ((3,), (2,), 1)]


@pytest.mark.parametrize("size, stride, offset", CASES)
def test_as_strided_values_layout_and_grads(size, stride, offset):
    x = torch.arange(12, dtype=torch.float64)
    tx, mx = x.clone().requires_grad_(), _tg(x, True)
    t, m = tx.as_strided(size, stride, offset), tg.as_strided(mx, size, stride, offset)
    _eq(m, t)
    assert m.stride() == t.stride() and m.storage_offset() == t.storage_offset()
    assert type(m.grad_fn).__name__ == type(t.grad_fn).__name__ == "AsStridedBackward0"
    g = torch.randn(size, dtype=torch.float64)
    t.backward(g)
    m.backward(_tg(g))
    _eq(mx.grad, tx.grad)   # overlapping elements' gradients summed


def test_as_strided_of_a_view_and_writes_through_it():
    for lib in (torch, tg):
        base = lib.arange(12.0).reshape(3, 4)
        y = base[1:, 1:]
        inside = y.as_strided((2, 2), (1, 1))            # offset defaults to y's own (5)
        outside = y.as_strided((2,), (1,), 0)            # storage elements before y
        v = base.as_strided((2, 2), (4, 1), 1)
        v[0, 0] = 100.0
        v.mul_(2)
        result = [inside.numpy().copy(), outside.numpy().copy(), base.numpy().copy(), v.stride(), v.storage_offset(),
                  y.storage_offset()]
        if lib is torch:
            expect = result
    for a, b in zip(result, expect):
        np.testing.assert_array_equal(a, b)


def test_as_strided_gradcheck_float64():
    x = tg.randn(10, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x: x.as_strided((3, 3), (2, 1), 1), (x,))
    y = tg.randn(3, 4, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda y: (y * 2).as_strided((2, 3), (1, 4), 1).exp(), (y,))


@pytest.mark.parametrize("args", [((3, 3), (1, 1)), ((2,), (-1,)), ((2, 2), (1, 1), 3), ((2,), (1,), -1),
                                  ((2, 2), (1,))])
def test_as_strided_errors(args):
    with pytest.raises(RuntimeError) as t_err:
        torch.arange(4.0).as_strided(*args)
    with pytest.raises(RuntimeError) as m_err:
        tg.arange(4.0).as_strided(*args)
    assert str(t_err.value) in str(m_err.value)


# ---- unique(dim=...) ------------------------------------------------------------------------------

@pytest.mark.parametrize("x", [
    torch.tensor([[1, 2, 1], [0, 5, 0], [1, 2, 1]]),
    torch.tensor([[2.0, 1], [1, 3], [2, 0], [-1, 5], [-1, -2], [1, 3]]),
    torch.randint(0, 2, (3, 4, 5), generator=torch.Generator().manual_seed(0)),
    torch.tensor([[True, False], [True, False], [False, False]]),
    torch.ones(0, 3),
])
@pytest.mark.parametrize("sorted_", [True, False])
def test_unique_dim(x, sorted_):
    for d in range(x.ndim):
        if any(n == 0 for i, n in enumerate(x.shape) if i != d):
            continue
        t = torch.unique(x, sorted=sorted_, return_inverse=True, return_counts=True, dim=d)
        m = tg.unique(_tg(x), sorted=sorted_, return_inverse=True, return_counts=True, dim=d)
        for a, b in zip(m, t):
            _eq(a, b)
        _eq(tg.unique(_tg(x), dim=d - x.ndim), torch.unique(x, dim=d - x.ndim))
        t2 = torch.unique(x, return_counts=True, dim=d)
        m2 = tg.unique(_tg(x), return_counts=True, dim=d)
        for a, b in zip(m2, t2):
            _eq(a, b)


def test_unique_dim_errors():
    for make, exc in ((lambda lib: lib.unique(lib.ones(0, 3), dim=1), RuntimeError),
                      (lambda lib: lib.unique(lib.ones(2, 3), dim=2), IndexError)):
        with pytest.raises(exc) as t_err:
            make(torch)
        with pytest.raises(exc) as m_err:
            make(tg)
        assert str(t_err.value) in str(m_err.value)


# ---- real / imag as views -------------------------------------------------------------------------

def test_real_imag_are_writable_views():
    for lib in (torch, tg):
        z = lib.tensor([1 + 2j, 3 - 4j, -5 + 6j], dtype=lib.complex128)
        r, i = z.real, z.imag
        r[0] = 10.0
        i.mul_(2)
        z.real[2] = 0.5
        lib.view_as_real(z)[1, 1] = 9.0
        vr = lib.view_as_real(z)
        result = [z.numpy().copy(), r.numpy().copy(), i.numpy().copy(), r.stride(), i.stride(), i.storage_offset(),
                  vr.stride(), str(r.dtype).split(".")[1], z.real[1:].storage_offset()]
        if lib is torch:
            expect = result
    for a, b in zip(result, expect):
        np.testing.assert_array_equal(a, b)


def test_real_imag_grads_and_inplace_with_history():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex128)
    w = torch.tensor([0.5, -1.5], dtype=torch.float64)
    outs = []
    for lib, wrap in ((torch, lambda t: t.clone().requires_grad_()), (tg, lambda t: _tg(t, True))):
        zz, ww = wrap(z), wrap(w)
        y = zz * 2
        y.imag.mul_(ww)              # recorded on y through the view
        loss = (y.real * 3 + y.imag ** 2).sum()
        loss.backward()
        outs.append((y.detach().numpy(), zz.grad.numpy(), ww.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_real_imag_gradcheck_float64():
    z = tg.tensor([1 + 2j, 3 - 4j], dtype=tg.complex128)
    x = tg.tensor([0.3, -0.7], dtype=tg.float64, requires_grad=True)

    def f(x):
        y = z * x            # complex with history from the real x
        y.real.add_(x ** 2)  # written through the view
        return y.imag * y.real
    assert tg.autograd.gradcheck(f, (x,))
