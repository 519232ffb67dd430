"""The trapezoidal rule: trapezoid (trapz) and cumulative_trapezoid, composed as PyTorch composes them."""
import builtins

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import elementwise as E
from .._tensor import Tensor
from ._common import wrap_dim_of_dims


def trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(y, x, dx, dim, False)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(y, x, dx, dim, True)


def trapz(y, x=None, *, dx=None, dim=-1):
    return _trapezoid(y, x, dx, dim, False)


def _trapezoid(y, x, dx, dim, cumulative):
    name = "cumulative_trapezoid" if cumulative else "trapezoid"
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: give x or dx, not both")
    if y.ndim == 0 and cumulative:   # (where PyTorch's composition first meets the missing dim)
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim_of_dims(dim, y.ndim)
    if not cumulative and y.shape[d] == 0:   # numpy's integral over no samples
        from .._creation import zeros
        return zeros(tuple(y.shape[:d] + y.shape[d + 1:]), dtype=y.dtype, device=y.device)
    if y.dtype is D.bool_ or (isinstance(x, Tensor) and x.dtype is D.bool_):
        raise RuntimeError(f"{name}: received a bool input for `{'y' if y.dtype is D.bool_ else 'x'}`, but bool is "
                           "not supported")
    n = builtins.max(y.shape[d] - 1, 0)
    left, right = y.narrow(d, 0, n), y.narrow(d, builtins.min(1, y.shape[d]), n)
    if isinstance(x, Tensor):
        if x.ndim == 1:
            if x.shape[0] != y.shape[d]:
                raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
            x = x.view([x.shape[0] if k == d else 1 for k in range(y.ndim)])
        elif x.ndim < y.ndim:
            x = x.view((1,) * (y.ndim - x.ndim) + tuple(x.shape))
        n = x.shape[d] - 1
        step = x.narrow(d, 1, n) - x.narrow(d, 0, n)
        total = ((left + right) * step).cumsum(d) if cumulative else ((left + right) * step).sum(d)
        return apply(E.div_scalar, total, 2.0)
    step = 1 if dx is None else dx
    if isinstance(step, (builtins.bool, builtins.complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    step = builtins.float(step)
    if cumulative:
        return apply(E.mul_scalar, left + right, step / 2.0).cumsum(d)
    ends = apply(E.mul_scalar, y.select(d, 0) + y.select(d, -1), 0.5)
    return apply(E.mul_scalar, y.sum(d) - ends, step)
