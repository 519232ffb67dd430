"""Unary elementwise functions: signs and rounding, exponentials and logarithms, trigonometry, special
functions, predicates (isnan, signbit ...); and the copies clone and fill."""
import builtins

from .. import _dtypes as D
from .._ops import elementwise as E
from .._pointwise_layout import lay_out_like
from .._tensor import Tensor
from ._arith import _apply, _check_kernel, _scalar_name, pow
from ._common import check_tensors, scalar_or_tensor


def _unary(op, name=None, kernel=None, integers=False):
    """The function of a unary op; kernel: PyTorch's CPU kernel, which has no bool version (nor integer
    ones when `integers`), named in its NotImplementedError. (A kernel without a complex version says so in
    the op table: Op.no_kernel_for.)"""
    def f(input, *, out=None):
        if kernel is not None:
            _check_kernel(kernel, input, floating_only=integers)
        return _apply(op, input)
    f.__name__ = name or op.name
    return f


BOOL_NEGATION = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                 "mask, use the `~` or `logical_not()` operator instead.")


def neg(input, *, out=None):
    if input.dtype is D.bool_:
        raise RuntimeError(BOOL_NEGATION)
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
    check_tensors("is_same_size", (other, "other", 1))
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
    # PyTorch copies an integer tensor for round() alone; with decimals its kernels take floats only (decimals=0
    # runs the plain one)
    _check_kernel("round_cpu" if decimals else "round_vml_cpu", input, floating_only=decimals is not None)
    return _apply(E.round, input, decimals=decimals)


def logit(input, eps=None, *, out=None):
    return _apply(E.logit, input, eps=None if eps is None else builtins.float(eps))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _apply(E.nan_to_num, input, nan=builtins.float(nan), posinf=posinf, neginf=neginf)


# ---- copies ----------------------------------------------------------------------------------

def clone(input, *, memory_format=None):
    return lay_out_like(_apply(E.clone, input), input, memory_format)


def fill(input, value):
    """torch.fill: a new tensor of input's shape and dtype holding value (FillBackward0/1, as fill_)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    return _apply(E.fill, input, scalar_or_tensor(value))
