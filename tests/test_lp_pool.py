"""lp_pool1d/2d/3d and LPPool1d/2d/3d against PyTorch: values, gradients and node names (its composite of
avg_pool, max_pool for p = ±inf), float64 finite differences, module reprs, errors for bad inputs."""
import math

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, raised

F = tapegrad.nn.functional


def _input(lib, nd, batched, dtype="float32", zeros=False, seed=0):
    shape = ([2] if batched else []) + [3] + [7, 6, 5][:nd]
    value = np.zeros(shape) if zeros else np.random.default_rng(seed + nd).normal(size=shape)
    return lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=True)


def _run(lib, nd, p, kernel, stride, ceil_mode, batched=True, zeros=False):
    x = _input(lib, nd, batched, zeros=zeros)
    y = getattr(lib.nn.functional, f"lp_pool{nd}d")(x, p, kernel, stride, ceil_mode)
    (y.nan_to_num() * y.nan_to_num()).sum().backward()
    return y, x.grad, y.grad_fn.name()


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p", [2, 1, 1.5, 3.0, math.inf, -math.inf])
@pytest.mark.parametrize("stride, ceil_mode", [(None, False), (2, True)])
def test_values_grads_and_node(torch, nd, p, stride, ceil_mode):
    kernel = 3 if nd == 1 else (3, 2, 2)[:nd]
    (y, g, name), (ty, tg, tname) = both(lambda lib: _run(lib, nd, p, kernel, stride, ceil_mode, batched=nd < 3))
    assert name == tname
    assert_close(y, ty, atol=1e-5, rtol=1e-5)
    assert_close(g, tg, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_zero_windows_give_zero_gradients(torch, nd):
    (y, g, _), (ty, tg, _) = both(lambda lib: _run(lib, nd, 2, 2, None, False, zeros=True))
    assert_close(y, ty)
    assert_close(g, tg)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("p", [2, 3.0, math.inf])
def test_gradcheck_float64(nd, p):
    # positive inputs away from window ties: p-th powers and the max are smooth there
    x = tapegrad.tensor(np.random.default_rng(nd).uniform(0.5, 2.0, size=[2, 5, 4, 4][:nd + 1]),
                        dtype=tapegrad.float64, requires_grad=True)
    fn = getattr(F, f"lp_pool{nd}d")
    assert tapegrad.autograd.gradcheck(lambda t: fn(t, p, 2, 1), (x,))
    if p == 2:
        assert tapegrad.autograd.gradgradcheck(lambda t: fn(t, p, 2, 1), (x,))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_modules_match_functional_and_repr(torch, nd):
    def build(lib):
        cls = getattr(lib.nn, f"LPPool{nd}d")
        mods = [cls(2, 2), cls(1.5, 3, stride=2, ceil_mode=True), cls(float("inf"), (2,) * nd, (1,) * nd)]
        x = _input(lib, nd, True)
        return [repr(m) for m in mods], [m(x) for m in mods]
    (reprs, outs), (t_reprs, t_outs) = both(build)
    assert reprs == t_reprs
    for y, ty in zip(outs, t_outs):
        assert_close(y, ty, atol=1e-5, rtol=1e-5)


def test_module_in_sequential_repr(torch):
    ours = tapegrad.nn.Sequential(tapegrad.nn.LPPool2d(2, 3))
    assert repr(ours) == repr(torch.nn.Sequential(torch.nn.LPPool2d(2, 3)))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4, 5, 6])
def test_bad_ranks_raise_as_pytorch(torch, nd, rank):
    def call(lib):
        return lambda: getattr(lib.nn.functional, f"lp_pool{nd}d")(lib.ones([4] * rank), 2, 1)
    ours, theirs = raised(call(tapegrad)), raised(call(torch))
    if theirs is None:
        assert ours is None
        return
    assert ours[0] is theirs[0]
    assert ours[1].startswith(theirs[1])


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_window_larger_than_input_raises_as_pytorch(torch, nd):
    def call(lib):
        return lambda: getattr(lib.nn.functional, f"lp_pool{nd}d")(lib.ones([2, 3] + [5] * (nd - 1) + [2]), 2, 3)
    ours, theirs = raised(call(tapegrad)), raised(call(torch))
    assert ours[0] is theirs[0] and ours[1].startswith(theirs[1].rstrip("."))


def test_one_d_kernel_tuple_raises_type_error_as_pytorch(torch):
    # PyTorch's 1-d form multiplies by kernel_size as given, so a tuple fails there
    ours = raised(lambda: F.lp_pool1d(tapegrad.ones(1, 6), 2, (3,)))
    theirs = raised(lambda: torch.nn.functional.lp_pool1d(torch.ones(1, 6), 2, (3,)))
    assert ours[0] is theirs[0] is TypeError
