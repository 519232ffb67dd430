"""Elementwise arithmetic functions (add, div, pow, maximum, clamp, where ...), and the argument checks and
broadcast errors the other elementwise functions share."""
import builtins

import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._scalar_range import check_fits, check_operands_fit
from .._ops import elementwise as E
from .._tensor import Tensor
from ._common import check_tensors, refuse_complex, result_dtype, scalar_or_tensor
from .._user_frames import warn_user


def _apply(op, *args, **static):
    # (apply raises PyTorch's error for shapes that do not broadcast: _broadcast_errors)
    return apply(op, *args, **static)


# ---- arithmetic ----------------------------------------------------------------------


def _deprecated_alpha(name, other, deprecated):
    """PyTorch's deprecated overload `name(input, alpha, other)`: (alpha, other), with its warning."""
    if len(deprecated) != 1:
        raise TypeError(f"{name}() takes from 2 to 3 positional arguments but {2 + len(deprecated)} were given")
    warn_user(f"This overload of {name} is deprecated:\n\t{name}(Tensor input, Number alpha, Tensor other, "
              f"*, Tensor out = None)\nConsider using one of the following signatures instead:\n\t{name}("
              "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)", UserWarning)
    return other, deprecated[0]


def add(input, other, *deprecated, alpha=1, out=None):
    if deprecated:
        alpha, other = _deprecated_alpha("add", other, deprecated)
    other = scalar_or_tensor(other)
    if alpha == 1:
        return _apply(E.add, input, other)
    _check_alpha(input, other, alpha)
    if result_dtype(input, other) is D.bool_:   # (PyTorch casts alpha to the result's dtype: bool)
        return _apply(E.add, input, other if alpha else other & False)
    return _apply(E.add_scaled, input, other, alpha)


def sub(input, other, *deprecated, alpha=1, out=None):
    if deprecated:
        alpha, other = _deprecated_alpha("sub", other, deprecated)
    other = scalar_or_tensor(other)
    _check_bool_subtraction(input, other)
    if alpha == 1:
        return _apply(E.sub, input, other)
    _check_alpha(input, other, alpha)
    return _apply(E.sub_scaled, input, other, alpha)


subtract = sub


def _is_bool(x):
    # (a Python bool is wrapped as a bool tensor for PyTorch's check)
    return isinstance(x, (builtins.bool, np.bool_)) or isinstance(x, Tensor) and x.dtype is D.bool_


def _check_bool_subtraction(input, other):
    """PyTorch's sub and rsub refuse bool tensors and Python bools (its sub_check)."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(E.BOOL_SUBTRACTION)


def _check_alpha(input, other, alpha):
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if isinstance(alpha, builtins.float) and all(not (t.dtype.is_floating_point or t.dtype.is_complex)
                                                   for t in tensors):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def rsub(input, other, *scalar_alpha, alpha=1):
    if scalar_alpha:   # rsub(Tensor input, Scalar other, Scalar alpha): positional where other is a number
        if isinstance(other, Tensor) or len(scalar_alpha) != 1:
            raise TypeError("rsub() takes 2 positional arguments (alpha is keyword-only for a Tensor other)")
        alpha = scalar_alpha[0]
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    other = scalar_or_tensor(other)
    _check_bool_subtraction(input, other)
    if alpha != 1:
        _check_alpha(input, other, alpha)
        return _apply(E.rsub, input, other, alpha)
    return _apply(E.rsub, input, other)


def mul(input, other, *, out=None):
    return _apply(E.mul, input, scalar_or_tensor(other))


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    other = scalar_or_tensor(other)
    if rounding_mode is None:
        return _apply(E.div, input, other)
    if rounding_mode in ("trunc", "floor"):
        _check_kernel(f"div_{rounding_mode}_cpu", input, other)
    _check_integer_division(input, other)
    if rounding_mode == "trunc":
        return _apply(E.div_trunc, input, other)
    if rounding_mode == "floor":
        return _apply(E.div_floor, input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


divide = true_divide = div


def _check_integer_division(input, other):
    # Integer division by zero raises in PyTorch; XLA would return garbage.
    dtype = result_dtype(input, other)
    if not (dtype.is_floating_point or dtype.is_complex):
        zero = (other == 0) if not isinstance(other, Tensor) else builtins.bool((other._value == 0).any())
        if zero:
            raise RuntimeError("ZeroDivisionError")


def _check_kernel(kernel, *operands, floating_only=False):
    """PyTorch has no bool (or, for some ops, integer) kernel: NotImplementedError, as it raises. (A kernel without a
    complex version says so in the op table: Op.no_kernel_for.)"""
    dtype = result_dtype(*operands)
    if dtype is D.bool_ or (floating_only and not (dtype.is_floating_point or dtype.is_complex)):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(dtype)}'. Convert the "
                                  "inputs first, e.g. x.float().")


def floor_divide(input, other, *, out=None):
    return _floor_divide(input, other, E.floor_divide)


def _floor_divide(input, other, op):
    # op: E.floor_divide, or E.floor_divide_ for the in-place method (its backward error names it)
    other = scalar_or_tensor(other)
    _check_kernel("div_floor_cpu", input, other)
    _check_integer_division(input, other)
    return _apply(op, input, other)


def remainder(input, other, *, out=None):
    other = scalar_or_tensor(other)
    _check_kernel("remainder_cpu", input, other)
    _check_integer_division(input, other)
    op = E.remainder if isinstance(input, Tensor) else E.remainder_scalar_self
    return _apply(op, scalar_or_tensor(input), other)


def fmod(input, other, *, out=None):
    other = scalar_or_tensor(other)
    _check_kernel("fmod_cpu", input, other)
    _check_integer_division(input, other)
    return _apply(E.fmod, input, other)


def pow(input, exponent, *, out=None):
    input, exponent = scalar_or_tensor(input), scalar_or_tensor(exponent)
    if isinstance(exponent, builtins.int) and exponent < 0 and isinstance(input, Tensor) \
            and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    # PyTorch's pow(Tensor, Scalar) fills ones for an exponent 0 or False and copies for 1 or True, without
    # a kernel: bool ** True is allowed
    if not (isinstance(input, Tensor) and not isinstance(exponent, Tensor) and exponent in (0, 1)):
        _check_kernel("pow", input, exponent)
    elif input.dtype is D.bool_ and isinstance(exponent, builtins.bool):   # (no bool pow to compute it with)
        from .._creation import ones_like
        return input.clone() if exponent else ones_like(input)
    return _pow(input, exponent)


def float_power(input, exponent, *, out=None):
    cast = D.complex128 if any(isinstance(x, Tensor) and x.dtype.is_complex or isinstance(x, builtins.complex)
                               for x in (input, exponent)) else D.float64
    input, exponent = (x.to(cast) if isinstance(x, Tensor) else x for x in (input, exponent))
    return _pow(input, exponent)


def _pow(input, exponent):
    # a floating tensor to a Python number is PyTorch's pow.Tensor_Scalar (PowBackward0), whose backward
    # branches on the exponent: an integer one is a static of the call (E._pow_scalar)
    if isinstance(input, Tensor) and input.dtype.is_floating_point and type(exponent) in (builtins.int, builtins.float):
        integer = builtins.int(exponent) if builtins.float(exponent).is_integer() and builtins.abs(exponent) < 2 ** 31 else None
        return _apply(E.pow_scalar, input, exponent, integer=integer)
    if isinstance(exponent, Tensor) and exponent.dtype is D.bool_ and isinstance(input, Tensor):
        return _apply(E.pow_bool_exponent, input, exponent)
    return _apply(E.pow, input, exponent)


def _binary(op, name=None):
    def f(input, other, *, out=None):
        return _apply(op, scalar_or_tensor(input), scalar_or_tensor(other))
    f.__name__ = name or op.name
    return f


def _tensor_arguments(name, other, other_name="other"):
    """PyTorch's refusal of a second argument that must be a Tensor (a number is not taken)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument '{other_name}' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _tensor_binary(op):
    def f(input, other, *, out=None):
        _tensor_arguments(op.name, other)
        if op.name in _ORDERED:   # (ordering complex values: PyTorch refuses)
            for t in (input, other):
                refuse_complex(t, message=f"{op.name} not implemented for complex tensors.", error=RuntimeError)
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


_ORDERED = ("maximum", "minimum", "fmax", "fmin")
maximum = _tensor_binary(E.maximum)
minimum = _tensor_binary(E.minimum)
fmax = _tensor_binary(E.fmax)
fmin = _tensor_binary(E.fmin)
atan2 = arctan2 = _binary(E.atan2)


def hypot(input, other, *, out=None):
    _check_kernel("hypot_cpu", input, other, floating_only=True)
    return _tensor_binary(E.hypot)(input, other)


def lerp(input, end, weight, *, out=None):
    # PyTorch's lerp does not promote: end (and a weight tensor with dims; a 0-d one binds as a number)
    # must have input's dtype
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and (name == "end" or t.ndim) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {D.cpp_name(input.dtype)} for `{name}` but got dtype "
                               f"{D.cpp_name(t.dtype)}")
    # (a number weight keeps input's dtype; a 0-d tensor's takes part in promotion: lerp(i, i, tensor(0.5)) is float)
    if isinstance(weight, Tensor):
        _check_kernel("lerp_kernel_tensor", input, end, weight, floating_only=True)
    else:
        _check_kernel("lerp_kernel_scalar", input, end, floating_only=True)
    return _apply(E.lerp, input, end, scalar_or_tensor(weight))


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    _check_kernel("addcmul_cpu_out", input, tensor1, tensor2)
    dtype = result_dtype(input, tensor1, tensor2)
    if isinstance(value, builtins.float) and not (dtype.is_floating_point or dtype.is_complex):
        value = builtins.int(value)   # (PyTorch casts the value to the integer dtype: 1.9 is 1, 0.5 is 0)
    return _apply(E.addcmul, input, tensor1, tensor2, scalar_or_tensor(value))


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    check_tensors("addcdiv", (input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (tensor1, tensor2)):
        # (PyTorch's text, its double space too)
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release "
                           "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
                           "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter implementation: "
                           "(input + value * tensor1 / tensor2), for all dtypes.")
    if tensor2.dtype.is_floating_point or tensor2.dtype.is_complex:
        return _apply(E.addcdiv, input, tensor1, tensor2, scalar_or_tensor(value))
    from .._inplace import refused_cast
    refused = str(refused_cast(D.get_default_dtype(), tensor2.dtype))
    return _apply(E.addcdiv, input, tensor1, tensor2, scalar_or_tensor(value), divisor_refused=refused)


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [None if b is None else scalar_or_tensor(b) for b in (min, max)]
    check_operands_fit([input] + [b for b in bounds if b is not None])
    _check_clamp_kernel(input, *bounds)
    return _apply(E.clamp, input, *bounds)


def _check_clamp_kernel(input, min, max):
    """PyTorch's clamp has no bool kernel, but for one tensor bound (its maximum or minimum)."""
    tensors = [b for b in (min, max) if isinstance(b, Tensor)]
    if tensors and (min is None or max is None):
        return
    kernel = ("clamp_cpu" if tensors else "clamp_scalar_cpu" if min is not None and max is not None
              else "clamp_min_scalar_cpu" if min is not None else "clamp_max_scalar_cpu")
    _check_kernel(kernel, input, *(b for b in (min, max) if b is not None))


clip = clamp


def clamp_min(input, min):
    min = scalar_or_tensor(min)
    check_operands_fit((input, min))
    _check_clamp_kernel(input, min, None)
    return _apply(E.clamp_min, input, min)


def clamp_max(input, max):
    max = scalar_or_tensor(max)
    check_operands_fit((input, max))
    _check_clamp_kernel(input, None, max)
    return _apply(E.clamp_max, input, max)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from ._index import nonzero
        return nonzero(condition, as_tuple=True)
    if condition.dtype is not D.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_scalar_name(condition.dtype)}. Use condition.bool() or condition != 0.")
    input, other = scalar_or_tensor(input), scalar_or_tensor(other)
    dtype = result_dtype(input, other)
    for v in (input, other):
        check_fits(v, dtype)
    from .._creation import tensor
    vals = [v.to(dtype) if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in (input, other)]
    return _apply(E.where, condition, *vals)


def _scalar_name(d):
    from ._common import SCALAR_NAME
    return SCALAR_NAME[d.name]
