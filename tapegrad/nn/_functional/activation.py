"""Activation functions and softmax family."""
import warnings

from ... import _functional as TF
from ..._dispatch import apply
from ..._ops import nn as K
from ._util import check_float, maybe_inplace


def relu(input, inplace=False):
    return maybe_inplace(input, TF.relu(input), inplace)


def relu_(input):
    return relu(input, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return maybe_inplace(input, apply(K.leaky_relu, input, float(negative_slope)), inplace)


def elu(input, alpha=1.0, inplace=False):
    check_float(input, "elu")
    return maybe_inplace(input, apply(K.elu, input, float(alpha), 1.0, 1.0), inplace)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    check_float(input, "elu")
    return maybe_inplace(input, apply(K.elu, input, alpha, scale, 1.0), inplace)


def celu(input, alpha=1.0, inplace=False):
    check_float(input, "elu")
    return maybe_inplace(input, apply(K.elu, input, float(alpha), 1.0, 1.0 / alpha), inplace)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}.")
    check_float(input, "GeluKernelImpl")
    return apply(K.gelu, input, approximate=approximate)


def silu(input, inplace=False):
    check_float(input, "silu")
    return maybe_inplace(input, apply(K.silu, input), inplace)


def mish(input, inplace=False):
    check_float(input, "mish")
    return maybe_inplace(input, apply(K.mish, input), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    check_float(input, "softplus")
    return apply(K.softplus, input, float(beta), float(threshold))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return maybe_inplace(input, apply(K.hardtanh, input, min_val, max_val), inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


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
    check_float(input, f"{name}_lastdim_kernel_impl")
    from ..._tensor import _wrap_dim
    return apply(op, input, dim=_wrap_dim(dim, input.ndim))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.softmax, "softmax", input, dim, dtype, _stacklevel)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.log_softmax, "log_softmax", input, dim, dtype, _stacklevel)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax_like(K.softmax, "softmin", -input, dim, dtype, _stacklevel)
