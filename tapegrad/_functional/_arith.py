"""Elementwise functions: arithmetic, comparison, logic, unary maths."""
import builtins
import warnings

from .. import _dtypes as D
from .._dispatch import apply
from .._pointwise_layout import lay_out_like
from .._scalar_range import check_fits, check_operands_fit
from .._ops import elementwise as E
from .._tensor import Tensor
from ._common import scalar_or_tensor, result_dtype


def _apply(op, *args, **static):
    # JAX reports incompatible shapes as ValueError (TypeError from some primitives, lt in maximum);
    # PyTorch raises RuntimeError naming the dim.
    try:
        return apply(op, *args, **static)
    except (ValueError, TypeError):
        error = _broadcast_error(args)
        if error is None:
            raise
        raise error from None


def _broadcast_error(args):
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            for k in range(1, min(len(a), len(b)) + 1):
                if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                    return RuntimeError(f"The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) "
                                        f"at non-singleton dimension {max(len(a), len(b)) - k}")
    return None


# ---- arithmetic ----------------------------------------------------------------------


def _deprecated_alpha(name, other, deprecated):
    """PyTorch's deprecated overload `name(input, alpha, other)`: (alpha, other), with its warning."""
    if len(deprecated) != 1:
        raise TypeError(f"{name}() takes from 2 to 3 positional arguments but {2 + len(deprecated)} were given")
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Tensor input, Number alpha, Tensor other, "
                  f"*, Tensor out = None)\nConsider using one of the following signatures instead:\n\t{name}("
                  "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)", UserWarning, stacklevel=3)
    return other, deprecated[0]


def add(input, other, *deprecated, alpha=1, out=None):
    if deprecated:
        alpha, other = _deprecated_alpha("add", other, deprecated)
    other = scalar_or_tensor(other)
    if alpha == 1:
        return _apply(E.add, input, other)
    _check_alpha(input, other, alpha)
    return _apply(E.add_scaled, input, other, alpha)


def sub(input, other, *deprecated, alpha=1, out=None):
    if deprecated:
        alpha, other = _deprecated_alpha("sub", other, deprecated)
    other = scalar_or_tensor(other)
    if isinstance(input, Tensor) and input.dtype is D.bool_ and isinstance(other, Tensor) \
            and other.dtype is D.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if any(isinstance(t, Tensor) and t.dtype is D.bool_ for t in (input, other)):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if alpha == 1:
        return _apply(E.sub, input, other)
    _check_alpha(input, other, alpha)
    return _apply(E.sub_scaled, input, other, alpha)


subtract = sub


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
    other = scalar_or_tensor(other)
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
    """PyTorch has no bool (or, for some ops, integer) kernel: NotImplementedError, as it raises."""
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
    _check_kernel("pow", input, exponent)
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
    return _apply(E.pow, input, exponent)


def _binary(op, name=None):
    def f(input, other, *, out=None):
        return _apply(op, scalar_or_tensor(input), scalar_or_tensor(other))
    f.__name__ = name or op.name
    return f


def _tensor_binary(op):
    def f(input, other, *, out=None):
        if not isinstance(other, Tensor):
            raise TypeError(f"{op.name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


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
    return _apply(E.lerp, input, end, scalar_or_tensor(weight))


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _apply(E.addcmul, input, tensor1, tensor2, scalar_or_tensor(value))


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                           "addcdiv will perform a true division of tensor1 and tensor2. Use "
                           "input + value * (tensor1 / tensor2) instead.")
    return _apply(E.addcdiv, input, tensor1, tensor2, scalar_or_tensor(value))


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [None if b is None else scalar_or_tensor(b) for b in (min, max)]
    check_operands_fit([input] + [b for b in bounds if b is not None])
    return _apply(E.clamp, input, *bounds)


clip = clamp


def clamp_min(input, min):
    min = scalar_or_tensor(min)
    check_operands_fit((input, min))
    return _apply(E.clamp_min, input, min)


def clamp_max(input, max):
    max = scalar_or_tensor(max)
    check_operands_fit((input, max))
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


# ---- unary ----------------------------------------------------------------------------------

def _unary(op, name=None, kernel=None, integers=False):
    """The function of a unary op; kernel: PyTorch's CPU kernel, which has no bool version (nor integer
    ones when `integers`), named in its NotImplementedError."""
    def f(input, *, out=None):
        if kernel is not None:
            _check_kernel(kernel, input, floating_only=integers)
        return _apply(op, input)
    f.__name__ = name or op.name
    return f


def neg(input, *, out=None):
    if input.dtype is D.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return _apply(E.neg, input)


negative = neg
abs = absolute = _unary(E.abs, kernel="abs_cpu")
sign = _unary(E.sign)
sgn = _unary(E.sgn)
exp = _unary(E.exp)
exp2 = _unary(E.exp2)
expm1 = _unary(E.expm1)
log = _unary(E.log)
log2 = _unary(E.log2)
log10 = _unary(E.log10)
log1p = _unary(E.log1p)
sqrt = _unary(E.sqrt)
rsqrt = _unary(E.rsqrt)
sin = _unary(E.sin)
cos = _unary(E.cos)
tan = _unary(E.tan)
asin = arcsin = _unary(E.asin)
acos = arccos = _unary(E.acos)
atan = arctan = _unary(E.atan)
sinh = _unary(E.sinh)
cosh = _unary(E.cosh)
tanh = _unary(E.tanh)
asinh = arcsinh = _unary(E.asinh)
acosh = arccosh = _unary(E.acosh)
atanh = arctanh = _unary(E.atanh)
sigmoid = _unary(E.sigmoid)
erf = _unary(E.erf)
erfc = _unary(E.erfc)
erfinv = _unary(E.erfinv)
lgamma = _unary(E.lgamma)
digamma = _unary(E.digamma)
def relu(input, *, out=None):
    if input.dtype is D.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _apply(E.relu, input)
reciprocal = _unary(E.reciprocal)
def square(input, *, out=None):
    # PyTorch's square is pow(input, 2): a bool tensor squares to int64 (bool ** int promotes)
    if input.dtype is D.bool_:
        return pow(input, 2)
    return _apply(E.square, input)
floor = _unary(E.floor, kernel="floor_vml_cpu")
ceil = _unary(E.ceil, kernel="ceil_vml_cpu")
trunc = fix = _unary(E.trunc, kernel="trunc_vml_cpu")
frac = _unary(E.frac, kernel="frac_cpu", integers=True)
isnan = _unary(E.isnan)
isfinite = _unary(E.isfinite)
isinf = _unary(E.isinf)


def _real_only(op, message, error=RuntimeError):
    def f(input, *, out=None):
        if input.is_complex():
            raise error(f"{message} Apply it to .real and .imag separately.")
        return _apply(op, input)
    f.__name__ = op.name
    return f


isposinf = _real_only(E.isposinf, "isposinf does not support complex inputs.")
isneginf = _real_only(E.isneginf, "isneginf does not support complex inputs.")
signbit = _real_only(E.signbit, "signbit is not implemented for complex tensors.", NotImplementedError)
deg2rad = _real_only(E.deg2rad, "deg2rad is not supported for complex tensors.")
rad2deg = _real_only(E.rad2deg, "rad2deg is not supported for complex tensors.")


def positive(input):
    """+x: the tensor itself, as PyTorch's (no node); PyTorch refuses it on bool tensors."""
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported. Use a bitwise or logical op, "
                           "or convert to an integer dtype first.")
    return input


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)
logical_not = _unary(E.logical_not)


def bitwise_not(input, *, out=None):
    _check_integral(input, "bitwise_not")
    return _apply(E.bitwise_not, input)


def _check_integral(t, name):
    if t.dtype.is_floating_point or t.dtype.is_complex:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_scalar_name(t.dtype)}'. "
                                  "Bitwise ops need integer or bool tensors; use the logical_* ops for masks.")


def round(input, *, decimals=None, out=None):
    _check_kernel("round_vml_cpu" if decimals is None else "round_cpu", input)
    return _apply(E.round, input, decimals=decimals)


def logit(input, eps=None, *, out=None):
    return _apply(E.logit, input, eps=None if eps is None else builtins.float(eps))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _apply(E.nan_to_num, input, nan=builtins.float(nan), posinf=posinf, neginf=neginf)


# ---- comparison and logic ---------------------------------------------------------------------
eq = _binary(E.eq)
ne = not_equal = _binary(E.ne)
lt = less = _binary(E.lt)
le = less_equal = _binary(E.le)
gt = greater = _binary(E.gt)
ge = greater_equal = _binary(E.ge)
logical_and = _binary(E.logical_and)
logical_or = _binary(E.logical_or)
logical_xor = _binary(E.logical_xor)


def _bitwise(op):
    def f(input, other, *, out=None):
        other = scalar_or_tensor(other)
        for x in (input, other):
            if isinstance(x, Tensor):
                _check_integral(x, op.name)
            elif isinstance(x, builtins.float):
                raise NotImplementedError(f"\"{op.name}_cpu\" not implemented for 'Float'")
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


bitwise_and = _bitwise(E.bitwise_and)
bitwise_or = _bitwise(E.bitwise_or)
bitwise_xor = _bitwise(E.bitwise_xor)
bitwise_left_shift = _bitwise(E.bitwise_left_shift)
bitwise_right_shift = _bitwise(E.bitwise_right_shift)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    return _apply(E.isclose, input, other, rtol=builtins.float(rtol), atol=builtins.float(atol),
                 equal_nan=builtins.bool(equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(eq(input, other).all())


def clone(input, *, memory_format=None):
    return lay_out_like(_apply(E.clone, input), input, memory_format)


def fill(input, value):
    """torch.fill: a new tensor of input's shape and dtype holding value (FillBackward0/1, as fill_)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    return _apply(E.fill, input, scalar_or_tensor(value))


# ---- special functions -------------------------------------------------------------------------
xlogy = _binary(E.xlogy)
sinc = _unary(E.sinc)


def copysign(input, other, *, out=None):
    return _apply(E.copysign, input, scalar_or_tensor(other))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    from ._joins import cat
    from ._splits import narrow
    from ._common import wrap_dim
    d = wrap_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    result = cat(parts, d) if len(parts) > 1 else input
    if n == 0:
        return result.clone()
    # Each order is the later slice minus the earlier one (logical_xor for bool), as PyTorch computes it.
    size = result.shape[d]
    for _ in range(builtins.min(n, size)):
        size -= 1
        later, earlier = narrow(result, d, 1, size), narrow(result, d, 0, size)
        result = logical_xor(later, earlier) if result.dtype is D.bool_ else later - earlier
    return result
