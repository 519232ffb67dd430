"""Window functions (hann, hamming, blackman, bartlett, kaiser): factories, as PyTorch's.

Each value is computed as PyTorch composes it: an arange in the window's dtype, then one step after another,
each in the dtype's compute precision (float for half and bfloat16) and rounded back to the dtype. Float and
double windows are PyTorch's; half and bfloat16 ones can differ from them in the last place or two, where
PyTorch's vectorized and scalar kernels round differently.
"""
import builtins
import math
import numbers

import numpy as np

from .. import _dtypes as D
from ._common import SCALAR_NAME
from .._host_put import put

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]

# C++'s names of the integer types, as PyTorch prints them in a TensorOptions
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _options(name, dtype, layout):
    # (hann_window checks its options before the default dtype is filled in, the others after)
    default = "float (default)" if name == "hann_window" else "float"
    chosen = default if dtype is None else _CPP_NAMES.get(dtype.name, dtype.name)
    kind = "Strided (default)" if layout is None or "strided" in str(layout) else "Sparse"
    return (f"TensorOptions(dtype={chosen}, device=cpu, layout={kind}, requires_grad=false (default), "
            "pinned_memory=false, memory_format=(nullopt))")


def _rounded(dtype):
    """step(fn, *values): fn computed in dtype's compute precision (float for half and bfloat16), the result
    rounded to dtype, as one PyTorch kernel."""
    compute = np.float64 if dtype is D.float64 else np.float32
    return lambda fn, *values: fn(*(v.astype(compute) for v in values)).astype(dtype.np)


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, fill):
    """The checks and the cases every window shares; fill(arange, n, step) computes a symmetric window of n
    points from arange(n) in the window's dtype."""
    if not isinstance(window_length, numbers.Integral) or isinstance(window_length, builtins.bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    chosen = D.as_dtype(dtype)
    if layout is not None and "sparse" in str(layout):
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {_options(name, chosen, layout)}")
    if chosen is not None and not (chosen.is_floating_point or chosen.is_complex):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_options(name, chosen, layout)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = chosen or D.get_default_dtype()
    if dtype.is_complex:   # (PyTorch's arange has no complex kernel)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{SCALAR_NAME[dtype.name]}'")
    if window_length <= 1:
        value = np.ones(window_length, dtype.np)
    else:
        n = window_length + 1 if periodic else window_length
        value = fill(np.arange(n).astype(dtype.np), n, _rounded(dtype))[:n - 1 if periodic else n]
    from .._creation import _jax_device, _leaf   # (_creation imports the functional API: not at module level)
    return _leaf(put(value, _jax_device(device)), requires_grad)


def _cosine_sum(alpha, beta):
    def fill(k, n, step):
        w = step(np.cos, step(lambda w: w * (2 * math.pi / (n - 1)), k))
        return step(lambda w: w + alpha, step(lambda w: w * -beta, w))
    return fill


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   _cosine_sum(alpha, beta))


def _blackman(k, n, step):
    w = step(lambda w: w * (math.pi / (n - 1)), k)
    first = step(lambda v: v * 0.08, step(np.cos, step(lambda v: v * 4, w)))
    second = step(lambda v: v * 0.5, step(np.cos, step(lambda v: v * 2, w)))
    return step(lambda v: v + 0.42, step(np.subtract, first, second))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad, _blackman)


def _bartlett(k, n, step):
    w = step(lambda w: w * (2.0 / (n - 1)), k)
    half = ((n - 1) >> 1) + 1
    return np.concatenate([w[:half], step(lambda v: 2 - v, w[half:])])


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad, _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    def fill(k, n, step):
        # i0(beta * sqrt(|1 - ((k - alpha) / alpha) ** 2|)) / i0(beta), alpha = (n - 1) / 2, per element
        alpha = (n - 1) / 2.0
        return step(lambda k: (np.i0(beta * np.sqrt(np.abs(1 - ((k - alpha) / alpha) ** 2))) / np.i0(beta)), k)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad, fill)
