"""fftfreq, rfftfreq (factories, as PyTorch's) and fftshift, ifftshift (rolls)."""
import builtins

import numpy as np

from .. import _dtypes as D
from .._creation import _jax_device, _leaf
from .._host_put import put
from .._functional._common import SCALAR_NAME
from .._functional._rearrange import roll
from ._transforms import _wrap


def _frequencies(fname, count, values, n, d, dtype, device, requires_grad):
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dtype.is_complex:   # (PyTorch fills them with arange, which has no complex kernel)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{SCALAR_NAME[dtype.name]}'")
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    with np.errstate(divide="ignore", invalid="ignore"):   # d = 0: inf (and 0 * inf = nan), as PyTorch's
        scale = np.float64(1.0) / np.float64(n * d)
        # PyTorch multiplies in the tensor's dtype by the scale rounded to it
        value = values.astype(dtype.np) * np.asarray(scale).astype(dtype.np)
    return _leaf(put(value.astype(dtype.np), _jax_device(device)), requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    n = builtins.int(n)
    values = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) if n > 0 else np.arange(0)
    return _frequencies("fftfreq", n, values, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    n = builtins.int(n)
    count = builtins.int(n / 2) + 1   # (C++'s division, truncating toward zero)
    return _frequencies("rfftfreq", count, np.arange(builtins.max(count, 0)), n, d, dtype, device, requires_grad)


def _shift(input, dim, amount):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_wrap(k, input.ndim) for k in ((dim,) if isinstance(dim, builtins.int) else dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    return roll(input, [amount(input.shape[k]) for k in dims], dims)


def fftshift(input, dim=None):
    return _shift(input, dim, lambda size: size // 2)


def ifftshift(input, dim=None):
    return _shift(input, dim, lambda size: (size + 1) // 2)
