"""Activation functions and softmax family."""
import warnings

import jax

from ... import _dtypes as D, _functional as TF
from ..._argument_errors import reraise
from ..._dispatch import apply
from ..._ops import nn as K
from ...random import _key
from ._util import check_float, check_float_kernel, maybe_inplace
from ..._autocast import policy
from ..._functional._arith import _check_kernel
from ..._functional._common import check_tensors


def _kernel(inplace):
    # the static choosing PyTorch's in-place kernel's node (*Backward1), passed only for it
    return {"inplace": True} if inplace else {}


def relu(input, inplace=False):
    return maybe_inplace(input, TF.relu(input), inplace)


def relu_(input):
    return relu(input, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    check_float_kernel(input, "leaky_relu_cpu", complex=False)
    return maybe_inplace(input, apply(K.leaky_relu, input, float(negative_slope), **_kernel(inplace)), inplace)


def elu(input, alpha=1.0, inplace=False):
    check_float(input, "elu_cpu")
    return maybe_inplace(input, apply(K.elu, input, float(alpha), 1.0, 1.0, **_kernel(inplace)), inplace)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    check_float(input, "elu_cpu")
    return maybe_inplace(input, apply(K.elu, input, alpha, scale, 1.0, **_kernel(inplace)), inplace)


def celu(input, alpha=1.0, inplace=False):
    check_float(input, "elu_cpu")
    return maybe_inplace(input, apply(K.elu, input, float(alpha), 1.0, 1.0 / alpha, celu=True, **_kernel(inplace)),
                         inplace)


_VECTORISED_GELU = (D.float32, D.bfloat16)   # (float64 and float16's vectorised erf keep erf(+inf) = 1)


def gelu(input, approximate="none"):
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}.")
    check_float(input, "GeluKernelImpl")
    if approximate == "none" and input.dtype in _VECTORISED_GELU and input.numel() > 1 and input.is_contiguous() \
            and input.device.type == "cpu":
        # (PyTorch's CPU kernel runs its vectorised loop over a contiguous input of two or more elements)
        return apply(K.gelu, input, approximate=approximate, vectorized=True)
    return apply(K.gelu, input, approximate=approximate)


def silu(input, inplace=False):
    check_float(input, "silu_cpu")
    return maybe_inplace(input, apply(K.silu, input), inplace)


def mish(input, inplace=False):
    check_float(input, "mish_cpu")
    return maybe_inplace(input, apply(K.mish, input), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    check_float(input, "softplus_cpu")
    return apply(K.softplus, input, float(beta), float(threshold))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh. Convert first, e.g. x.float().")
    return maybe_inplace(input, apply(K.hardtanh, input, min_val, max_val), inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):
    _check_kernel("threshold_cpu", input)   # (integer versions, no bool one)
    return maybe_inplace(input, apply(K.threshold, input, threshold, value, **_kernel(inplace)), inplace)


def threshold_(input, threshold, value):
    _check_kernel("threshold_cpu", input)   # (integer versions, no bool one)
    return maybe_inplace(input, apply(K.threshold, input, threshold, value, **_kernel(True)), True)


def hardsigmoid(input, inplace=False):
    check_float_kernel(input, "hardsigmoid_cpu")
    return maybe_inplace(input, apply(K.hardsigmoid, input), inplace)


def hardswish(input, inplace=False):
    check_float_kernel(input, "hardswish_cpu")
    return maybe_inplace(input, apply(K.hardswish, input), inplace)


def _check_lambd(input, lambd):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{'Double' if input.dtype.name == 'float64' else 'Float'}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    _check_lambd(input, lambd)
    check_float_kernel(input, "softshrink_check")
    return apply(K.softshrink, input, float(lambd))


def hardshrink(input, lambd=0.5):
    check_float_kernel(input, "hardshrink_cpu")
    return apply(K.hardshrink, input, float(lambd))


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)   # PyTorch's composite: its nodes are DivBackward0, AddBackward0, AbsBackward0


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    # PyTorch's eval rrelu is leaky_relu with the mean slope; training has its own kernel, without float16
    check_float_kernel(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", complex=False,
                       without=("float16",) if training else ())
    if training:
        # One slope per element, drawn here so the kernel stays pure (as dropout's mask).
        from ..._creation import _leaf
        drawn = _host_slopes(input, lower, upper)
        if drawn is None:
            drawn = jax.random.uniform(_key(None), tuple(input.shape), input.dtype.np, lower, upper)
        slope = _leaf(drawn)
    else:
        slope = (lower + upper) / 2
    return maybe_inplace(input, apply(K.rrelu, input, slope, **_kernel(inplace)), inplace)


def _host_slopes(input, lower, upper):
    """PyTorch's CPU slopes, or None where a key draws them: a uniform double in [lower, upper] (as the
    input's floats) for each element <= 0, in order, and 1 elsewhere. How many it draws depends on the
    values, so the input is read; under a trace (tapegrad.compile too) keys draw them."""
    import numpy as np
    from ... import random
    stream = random.host_stream(None, input.device, value_dependent=True)
    if stream is None:
        return None
    x = np.asarray(input.detach().contiguous().numpy()).reshape(-1)
    opmath = np.float64 if x.dtype == np.float64 else np.float32   # the bounds as PyTorch's kernel holds them
    low, high = opmath(lower), opmath(upper)
    slopes = np.ones(x.shape, x.dtype)
    below = x <= 0
    slopes[below] = stream.uniform(int(below.sum()), np.float64, float(low), float(high))
    return random.placed(slopes.reshape(tuple(input.shape)), input.device)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def logsigmoid(input):
    check_float_kernel(input, "log_sigmoid_cpu")
    return apply(K.logsigmoid, input)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    from ..._tensor import _wrap_dim
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    check_float_kernel(input, "glu_cpu")
    return apply(K.glu, input, dim=d)


@policy("prelu")
def prelu(input, weight):
    check_tensors("prelu", (input, "input"), (weight, "weight"))
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if input.ndim != weight.ndim:
        # PyTorch reshapes the weight to broadcast over dim 1 (a view, recorded as such).
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return apply(K.prelu, input, weight)


def tanh(input):
    return TF.tanh(input)


def sigmoid(input):
    return TF.sigmoid(input)


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                  "dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(op, name, input, dim, dtype, stacklevel=3):
    if dim is None:
        dim = _implicit_dim(name, input.ndim, stacklevel + 1)
    if dtype is not None:
        input = input.to(dtype)
    from ..._tensor import _wrap_dim
    method = "log_softmax" if name == "log_softmax" else "softmax"   # (softmin is softmax of -input)
    try:
        dim = _wrap_dim(dim, input.ndim)
    except TypeError as e:   # (PyTorch's calls input.softmax(dim[, dtype=]): that method's parser error)
        reraise(e, "method", method, (dim,), {} if dtype is None else {"dtype": dtype})
    if input.numel() == 0 and not input.dtype.is_floating_point:
        return input.clone()   # (PyTorch's CPU softmax returns an empty input's empty result before its dtype check)
    # PyTorch's CPU kernels: one along the last dim, one along others; neither for integers or complex
    along = "_lastdim" if dim == input.ndim - 1 or input.ndim == 0 else ""
    check_float_kernel(input, f"{method}{along}_kernel_impl", complex=False)
    return apply(op, input, dim=dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.softmax, "softmax", input, dim, dtype, _stacklevel)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.log_softmax, "log_softmax", input, dim, dtype, _stacklevel)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.softmax, "softmin", -input, dim, dtype, _stacklevel)


# torch.softmax / torch.log_softmax: dim is required there.
def softmax_function(input, dim, dtype=None):
    return softmax(input, dim, dtype=dtype)


def log_softmax_function(input, dim, dtype=None):
    return log_softmax(input, dim, dtype=dtype)
