"""Pooling over the dtypes PyTorch's CPU kernels take, against PyTorch: integer averages (integer sums
divided with truncation toward zero), integer max pools of every width, and PyTorch's NotImplementedError for
the others (avg_pool3d has no half-precision kernel; no pool takes bool or, but max_pool1d, complex)."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised

DTYPES = ["float16", "bfloat16", "float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64"]


def _data(nd):
    return np.random.default_rng(nd).integers(-9, 10, size=[2, 3] + [5] * nd)


def _call(lib, kind, nd, dtype, kwargs):
    data = _data(nd)
    if dtype in ("uint8", "bool"):
        data = np.abs(data) % (2 if dtype == "bool" else 256)
    x = lib.tensor(data).to(getattr(lib, dtype))
    return getattr(lib.nn.functional, f"{kind}{nd}d")(x, 3, **kwargs)


CONFIGS = {"avg_pool": [dict(stride=2, padding=1, ceil_mode=True), dict(stride=1, padding=1, count_include_pad=False)],
           "max_pool": [dict(stride=2, padding=1, ceil_mode=True), dict(return_indices=True)]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["avg_pool", "max_pool"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_pool_dtypes_as_pytorch(torch, kind, nd, dtype):
    for kwargs in CONFIGS[kind]:
        theirs = raised(lambda: _call(torch, kind, nd, dtype, kwargs))
        ours = raised(lambda: _call(tapegrad, kind, nd, dtype, kwargs))
        if theirs is not None:
            assert ours is not None and ours[0] is theirs[0], (kwargs, ours, theirs)
            assert ours[1].startswith(theirs[1].rstrip(".")), (ours, theirs)
            continue
        assert ours is None, ours
        out, t_out = _call(tapegrad, kind, nd, dtype, kwargs), _call(torch, kind, nd, dtype, kwargs)
        for a, b in zip(out if isinstance(out, tuple) else (out,), t_out if isinstance(t_out, tuple) else (t_out,)):
            assert_close(a, b)


def test_integer_divisor_override_truncates(torch):
    data = np.array([[[[-7, 5], [-3, 2]]]])
    ours = tapegrad.nn.functional.avg_pool2d(tapegrad.tensor(data), 2, divisor_override=3)
    assert_close(ours, torch.nn.functional.avg_pool2d(torch.tensor(data), 2, divisor_override=3))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lp_pool_of_integers_as_pytorch(torch, nd):
    x = _data(nd)
    ours = getattr(tapegrad.nn.functional, f"lp_pool{nd}d")(tapegrad.tensor(x), 2, 2)
    assert_close(ours, getattr(torch.nn.functional, f"lp_pool{nd}d")(torch.tensor(x), 2, 2))
