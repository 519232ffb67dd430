"""Normalisation kernels: batch norm (training statistics or running ones), layer norm and group norm,
each with its optional affine weight and bias."""
import functools
import math

import jax.numpy as jnp
from jax import lax

from ._signed_zero import plus_zero
from ._registry import overload
from .nn import _nn


def _in_float32(kernel):
    """PyTorch's CPU kernels normalise half and bfloat16 input in float32 (its parameters and statistics
    too, of the input's dtype or float32) and round the result to the input's dtype once; the batch
    statistics stay in float32 (the running statistics' update rounds them to its own dtype)."""
    @functools.wraps(kernel)
    def run(x, *rest, **static):
        if x.dtype != jnp.bfloat16 and x.dtype != jnp.float16:
            return kernel(x, *rest, **static)
        out = kernel(x.astype(jnp.float32), *(None if r is None else r.astype(jnp.float32) for r in rest), **static)
        return (out[0].astype(x.dtype),) + tuple(out[1:]) if type(out) is tuple else out.astype(x.dtype)
    return run


# ---- normalisation ---------------------------------------------------------------------------


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _channel_shape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


@_in_float32
def _batch_norm_train(x, weight, bias, *, eps, stats_dtype=None):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    centre, scale = mean, lax.rsqrt(var + eps)
    if stats_dtype is not None:   # PyTorch keeps the batch's mean and invstd in the input's dtype
        centre, scale = (a.astype(stats_dtype).astype(x.dtype) for a in (centre, scale))
    y = (x - centre) * scale
    n = x.shape[0] * math.prod(x.shape[2:])   # (values per channel, with no channel or no batch too)
    unbiased = var * (n / max(n - 1, 1))
    return _affine(y, weight, bias, _channel_shape(x)), mean.reshape(-1), unbiased.reshape(-1)


@_in_float32
def _batch_norm_eval(x, running_mean, running_var, weight, bias, *, eps):
    shape = _channel_shape(x)
    y = (x - running_mean.reshape(shape)) * lax.rsqrt(running_var.reshape(shape) + eps)
    return _affine(y, weight, bias, shape)


def _row_moments(x, axes):
    """Mean and biased variance over `axes`, taken about each slice's first value: exact for a constant slice
    (mean that value, variance 0), as PyTorch's Welford kernels of layer and group norm are, where sum / n may
    miss the value by an ulp that the normalisation then scales up (a constant row gave 1e-5 instead of 0).
    The shift is a constant to autograd: the moments do not depend on it."""
    if any(x.shape[a] == 0 for a in axes):
        shift = jnp.zeros((), x.dtype)
    else:
        shift = lax.stop_gradient(x[tuple(slice(0, 1) if a in axes else slice(None) for a in range(x.ndim))])
    centred = jnp.mean(x - shift, axis=axes, keepdims=True)
    mean = shift + centred
    return mean, jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)


@_in_float32
def _layer_norm(x, weight, bias, *, ndim, eps):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    mean, var = _row_moments(x, axes)
    y = _affine((x - mean) * lax.rsqrt(var + eps), weight, bias, x.shape[x.ndim - ndim:])
    return y if bias is not None else plus_zero(y)   # (PyTorch's kernel adds a bias of +0 when there is none)


@_in_float32
def _group_norm(x, weight, bias, *, groups, eps):
    n = x.shape[0]
    g = x.reshape((n, groups, math.prod(x.shape[1:]) // groups))   # (not -1: an empty batch leaves it open)
    mean, var = _row_moments(g, (2,))
    y = ((g - mean) * lax.rsqrt(var + eps)).reshape(x.shape)
    return _affine(y, weight, bias, _channel_shape(x))


# (their backwards are fused kernels reading the input, the weight and the statistics: Op.fused_backward,
# whose double backward gives what a gradient does not depend on no gradient: Op.tie_undefined). The weight and
# bias are `Tensor?` arguments: passed as None when absent, and listed in next_functions as (None, 0).
batch_norm_train = _nn("batch_norm_train", _batch_norm_train, nout=3, node="native_batch_norm",
                       fused_backward=True, backward_name="NativeBatchNormBackwardBackward0", saves_inputs=(0, 1),
                       tie_undefined=True, overloads=[overload("NativeBatchNormBackward0", optional=(1, 2))])
batch_norm_eval = _nn("batch_norm_eval", _batch_norm_eval, diff=(0, 3, 4), node="native_batch_norm",
                      fused_backward=True, backward_name="NativeBatchNormBackwardBackward0", saves_inputs=(0, 1, 2, 3),
                      tie_undefined=True, overloads=[overload("NativeBatchNormBackward0", optional=(3, 4))])
layer_norm = _nn("layer_norm", _layer_norm, node="native_layer_norm",
                 fused_backward=True, backward_name="NativeLayerNormBackwardBackward0", saves_inputs=(0, 1, 2),
                 tie_undefined=True, overloads=[overload("NativeLayerNormBackward0", optional=(1, 2))])
group_norm = _nn("group_norm", _group_norm, node="native_group_norm", saves_inputs=(0, 1),
                 overloads=[overload("NativeGroupNormBackward0", optional=(1, 2))])
