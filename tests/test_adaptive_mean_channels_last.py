"""Adaptive average pooling to size 1 of a channels-last input against PyTorch: the mean, then PyTorch's
in-place as_strided_ to channels-last strides (AsStridedBackward1); and the in-place view ops (as_strided_,
t_, unsqueeze_) that leave a tensor which was no view without a ._base, as PyTorch's do."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both


def _chain(y):
    out, g = [], y.grad_fn
    while g is not None:
        out.append(g.name())
        g = g.next_functions[0][0] if g.next_functions else None
    return out


CASES = [(2, (2, 3, 4, 5), "channels_last", 1), (2, (2, 3, 4, 5), "channels_last", (1, 1)),
         (2, (2, 3, 4, 5), "channels_last", (1, 2)), (2, (2, 3, 4, 5), "contiguous_format", 1),
         (2, (2, 1, 4, 5), "channels_last", 1), (2, (2, 3, 1, 1), "channels_last", 1),
         (3, (2, 3, 4, 5, 3), "channels_last_3d", 1), (3, (2, 3, 4, 5, 3), "contiguous_format", 1)]


@pytest.mark.parametrize("nd, shape, fmt, size", CASES)
def test_adaptive_avg_pool_nodes_strides_grads(torch, nd, shape, fmt, size):
    data = np.random.default_rng(0).normal(size=shape)

    def build(lib):
        x = lib.tensor(data, dtype=lib.float64).contiguous(memory_format=getattr(lib, fmt)).requires_grad_()
        y = getattr(lib.nn.functional, f"adaptive_avg_pool{nd}d")(x, size)
        (y * y).sum().backward()
        return y, _chain(y), y.stride(), y._base is None, x.grad
    (y, chain, strides, baseless, g), (ty, tchain, tstrides, tbaseless, tg) = both(build)
    assert chain == tchain
    assert strides == tstrides
    assert baseless == tbaseless
    assert_close(y, ty)
    assert_close(g, tg)


def test_channels_last_mean_gradgradcheck():
    x = tapegrad.randn(2, 3, 4, 5, dtype=tapegrad.float64).contiguous(memory_format=tapegrad.channels_last)
    x.requires_grad_()
    fn = lambda t: tapegrad.nn.functional.adaptive_avg_pool2d(t, 1) ** 2
    assert tapegrad.autograd.gradcheck(fn, (x,))
    assert tapegrad.autograd.gradgradcheck(fn, (x,))


IN_PLACE_VIEWS = {
    "unsqueeze_": lambda y: y.unsqueeze_(0),
    "t_then_mul_": lambda y: y.t_().mul_(3),
    "unsqueeze_then_write": lambda y: _write_row(y.unsqueeze_(0)),
    "as_strided_": lambda y: y.as_strided_((3, 2), (1, 3)),
    "as_strided_then_mul_": lambda y: y.as_strided_((3, 2), (1, 3)).mul_(2),
}


def _write_row(y):
    y[0, 1].mul_(3)
    return y


@pytest.mark.parametrize("case", sorted(IN_PLACE_VIEWS))
@pytest.mark.parametrize("of_view", [False, True])
def test_in_place_view_ops_keep_base_as_pytorch(torch, case, of_view):
    def build(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x * 2
        t = y[:] if of_view else y
        IN_PLACE_VIEWS[case](t)
        (t * t).sum().backward()
        return t.grad_fn.name(), t._base is None, t._is_view(), tuple(t.shape), t.stride(), t, x.grad
    ours, theirs = both(build)
    assert ours[:5] == theirs[:5]
    assert_close(ours[5], theirs[5])
    assert_close(ours[6], theirs[6])
