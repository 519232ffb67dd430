"""Pooling kernels: max and average pooling over windows, and their adaptive forms (1-d to 3-d).

Max pooling that also returns where each maximum came from lives in `pooling_indices.py`.
"""
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._registry import overload
from .nn import _nn, _zero


# ---- pooling ------------------------------------------------------------------------------------
# `pads` are explicit (lo, hi) pairs per spatial dim; hi may be negative (floor mode drops a tail).


def _crop_negative(x, pads):
    nd = len(pads)
    lead = x.ndim - nd
    idx = (slice(None),) * lead + tuple(slice(0, x.shape[lead + i] + min(hi, 0)) for i, (_, hi) in
                                        enumerate(pads))
    return x[idx], ((0, 0),) * lead + tuple((lo, max(hi, 0)) for lo, hi in pads)


def _max_pool(x, kernel, stride, pads, dilation):
    x, full = _crop_negative(x, pads)
    lead = x.ndim - len(kernel)
    if any(d != 1 for d in dilation):
        return _dilated_max_pool(x, kernel, stride, full[lead:], dilation)
    # A Python-scalar init lets JAX recognise the max monoid, which has a derivative rule (integers, which
    # have none, take a typed init: a Python int would not fit int32 or uint8 operands).
    init = -float("inf") if jnp.issubdtype(x.dtype, jnp.floating) else jnp.array(jnp.iinfo(x.dtype).min, x.dtype)
    return lax.reduce_window(x, init, lax.max, (1,) * lead + kernel, (1,) * lead + stride,
                             full, window_dilation=(1,) * lead + dilation)


def _dilated_max_pool(x, kernel, stride, pads, dilation):
    # JAX has no VJP for dilated max windows: take the max over the kernel's strided shifted slices.
    nd = len(kernel)
    lead = x.ndim - nd
    x = lax.pad(x, jnp.asarray(-jnp.inf, x.dtype), [(0, 0, 0)] * lead + [(lo, hi, 0) for lo, hi in pads])
    spatial = x.shape[lead:]
    out_shape = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(spatial, kernel, stride, dilation)]
    result = None
    for offsets in np.ndindex(*kernel):
        start = [0] * lead + [o * d for o, d in zip(offsets, dilation)]
        limit = list(x.shape[:lead]) + [o * d + (m - 1) * s + 1 for o, d, m, s in
                                        zip(offsets, dilation, out_shape, stride)]
        piece = lax.slice(x, start, limit, [1] * lead + list(stride))
        result = piece if result is None else jnp.maximum(result, piece)
    return result


def _avg_pool(x, kernel, stride, pads, padding, count_include_pad, divisor_override):
    x, full = _crop_negative(x, pads)
    lead = x.ndim - len(kernel)
    window, strides = (1,) * lead + kernel, (1,) * lead + stride
    integer = not jnp.issubdtype(x.dtype, jnp.inexact)
    # PyTorch's integer (int64) average is the integer sum divided with truncation toward zero
    divide = (lambda a, b: lax.div(*jnp.broadcast_arrays(a, jnp.asarray(b, x.dtype)))) if integer else (
        lambda a, b: a / b)
    total = lax.reduce_window(x, _zero(x) if integer else 0.0, lax.add, window, strides, full)
    if divisor_override:
        return divide(total, divisor_override)
    # Count per window: real elements, plus the nominal padding when count_include_pad (never the
    # extra right padding ceil_mode adds), as PyTorch does.
    spatial = x.shape[lead:]
    ones = jnp.ones(spatial, x.dtype)
    if count_include_pad:
        ones = jnp.pad(ones, [(p, p) for p in padding], constant_values=1)
        extra = [(lo - p, hi - p) for (lo, hi), p in zip(full[lead:], padding)]
        ones = lax.pad(ones, _zero(x), [(lo, hi, 0) for lo, hi in extra])
    else:
        ones = lax.pad(ones, _zero(x), [(lo, hi, 0) for lo, hi in full[lead:]])
    count = lax.reduce_window(ones, _zero(x) if integer else 0.0, lax.add, kernel, stride, ((0, 0),) * len(kernel))
    return divide(total, count)


def _adaptive_matrix(n_in, n_out, dtype):
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -((-(i + 1) * n_in) // n_out)
        m[i, start:end] = 1.0 / (end - start)
    return jnp.asarray(m, dtype)


def _adaptive_avg_pool(x, output_size):
    nd = len(output_size)
    for i, n_out in enumerate(output_size):
        axis = x.ndim - nd + i
        m = _adaptive_matrix(x.shape[axis], n_out, x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, m, axes=([axis], [1])), -1, axis)
    return x


def _adaptive_max_pool(x, output_size):
    nd = len(output_size)
    for i, n_out in enumerate(output_size):
        axis = x.ndim - nd + i
        n_in = x.shape[axis]
        parts = []
        for j in range(n_out):
            start, end = (j * n_in) // n_out, -((-(j + 1) * n_in) // n_out)
            parts.append(jnp.max(lax.slice_in_dim(x, start, end, axis=axis), axis=axis, keepdims=True))
        x = jnp.concatenate(parts, axis=axis)
    return x


def _three(window):   # PyTorch names the 3-d kernels' nodes apart (AvgPool3DBackward0)
    return len(window) == 3


max_pool = _nn("max_pool", _max_pool, node="max_pool2d_with_indices", fused_backward=True, backward_name=True,
               overloads=[overload("MaxPool3DWithIndicesBackward0", kernel=_three)])
# PyTorch's backward kernels of the average pools and of the adaptive max pool take the input as a recorded
# argument (derivatives.yaml: `self: zeros_like(self)`): a gradient recorded through them depends on it
# (Op.fused_backward), as max_pool's does through its formula
avg_pool = _nn("avg_pool", _avg_pool, node="avg_pool2d", saves_inputs=(0,), fused_backward=True, backward_name=True,
               overloads=[overload("AvgPool3DBackward0", kernel=_three)])
adaptive_avg_pool = _nn("adaptive_avg_pool", _adaptive_avg_pool, node="adaptive_avg_pool2d", saves_inputs=(0,),
                        fused_backward=True, backward_name=True,
                        overloads=[overload("AdaptiveAvgPool3DBackward0", output_size=_three)])
adaptive_max_pool = _nn("adaptive_max_pool", _adaptive_max_pool, node="adaptive_max_pool2d", fused_backward=True,
                        backward_name=True, overloads=[overload("AdaptiveMaxPool3DBackward0", output_size=_three)])
