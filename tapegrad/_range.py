"""torch.range: PyTorch's deprecated arange that includes its end, computed as its range_cpu kernel computes.

start, end and step are converted to the kernel's accumulation type (double for float and double results,
float for half and bfloat16 ones, int64 for integer ones: 1.5 is 1 there), the size is (end - start) / step + 1
in that type, truncated, and element i is start + i * step in that type, cast to the result's dtype.
"""
import math

import numpy as np

from . import _dtypes as D
from ._creation import _jax_device, _leaf, check_requires_grad
from ._flags import type_name
from ._functional._common import SCALAR_NAME
from ._host_put import put
from ._tensor import Tensor
from ._user_frames import warn_user

__all__ = ["range"]

_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because its behavior is "
               "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
               "[start, end).")
# the result's dtype -> (the kernel's accumulation type, as NumPy's, and as PyTorch's conversion errors name it)
_ACC = {"float64": (np.float64, "double"), "float32": (np.float64, "double"), "float16": (np.float32, "float"),
        "bfloat16": (np.float32, "float")}


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values from start to end inclusive, step apart (deprecated: use arange, whose end is excluded)."""
    values = [_number(v, name, i) for i, (v, name) in enumerate(((start, "start"), (end, "end"), (step, "step")), 1)]
    warn_user(_DEPRECATED, UserWarning)
    dtype = D.as_dtype(dtype)
    if out is not None and dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {SCALAR_NAME[dtype.name]} does not match dtype of out parameter "
                           f"({SCALAR_NAME[out.dtype.name]})")
    dtype = dtype or (out.dtype if out is not None else D.get_default_dtype())
    if dtype is D.bool_ or dtype.is_complex:
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{SCALAR_NAME[dtype.name]}'")
    acc, acc_name = _ACC.get(dtype.name, (np.int64, "int64_t"))
    xstart, xend, xstep = (_to_acc(v, acc, acc_name) for v in values)
    if not (xstep > 0 or xstep < 0):   # (an integer step under 1 is 0 here: PyTorch's kernel divides by it)
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise RuntimeError(f"unsupported range: {float(xstart):g} -> {float(xend):g}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if acc is np.int64:
        size = abs(xend - xstart) // abs(xstep) + 1   # (C++'s integer division truncates; the signs agree)
        value = xstart + np.arange(size, dtype=np.int64) * xstep
    else:
        size = float(acc((acc(xend) - acc(xstart)) / acc(xstep)) + acc(1))
        if not size < 2 ** 63:
            raise RuntimeError("IntArrayRef contains an int that cannot be represented as a SymInt: "
                               "-9223372036854775808")
        size = int(size)
        value = acc(xstart) + np.arange(size).astype(acc) * acc(xstep)
    value = value.astype(dtype.np)
    check_requires_grad(dtype, requires_grad, "Pass a floating dtype, or requires_grad=False.")
    if out is None:
        return _leaf(put(value, _jax_device(device)), requires_grad)
    from ._grad_mode import no_grad
    with no_grad():
        if out.numel() != size:
            out.resize_(size)
        out.copy_(Tensor._wrap(put(value.reshape(tuple(out.shape)), _jax_device(out.device))))
    return out.requires_grad_() if requires_grad else out


def _number(value, name, position):
    """A Number argument as PyTorch's parser takes it: a Python or NumPy number, or a 0-d tensor that does not
    require grad."""
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        return value.item()
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        return value.item() if isinstance(value, (np.number, np.bool_)) else value
    raise TypeError(f"range(): argument '{name}' (position {position}) must be Number, not {type_name(value)}")


def _to_acc(value, acc, name):
    """value in the kernel's accumulation type, with PyTorch's error where it does not fit."""
    overflow = RuntimeError(f"value cannot be converted to type {name} without overflow")
    if isinstance(value, complex):
        if value.imag != 0:
            raise overflow
        value = value.real
    if acc is np.int64:
        if isinstance(value, float) and not (math.isfinite(value) and -2 ** 63 <= value < 2 ** 63):
            raise overflow
        return int(value)   # (truncated)
    value = float(value)
    if acc is np.float32 and math.isfinite(value) and abs(value) > float(np.finfo(np.float32).max):
        raise overflow
    return value
