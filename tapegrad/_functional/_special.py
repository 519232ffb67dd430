"""Special elementwise functions (xlogy, sinc, copysign, logaddexp, heaviside, gcd, ldexp, frexp, polygamma,
i0, igamma ...), and diff, the n-th difference along a dim."""
import builtins

from .. import _dtypes as D
from .._ops import elementwise as E
from .._ops import elementwise as S
from .._ops import special_functions as SF
from .._tensor import Tensor
from ._arith import _apply, _binary, _check_kernel, _scalar_name, _tensor_arguments
from ._common import result_dtype, scalar_or_tensor
from ._return_types import frexp as frexp_result
from ._comparison import logical_xor
from ._unary import _unary


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


# ---- log-sum-exp of two tensors, heaviside, gcd and lcm, ldexp, nextafter, frexp --------------------


def _floating_kernel(op, kernel):
    def f(input, other, *, out=None):
        _tensor_arguments(op.name, other)
        _check_kernel(kernel, input, other, floating_only=True)
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


logaddexp = _floating_kernel(S.logaddexp, "logaddexp_cpu")
logaddexp2 = _floating_kernel(S.logaddexp2, "logaddexp2_cpu")
nextafter = _floating_kernel(S.nextafter, "nextafter_cpu")


def heaviside(input, values, *, out=None):
    _tensor_arguments("heaviside", values, "values")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes. Convert `values` "
                           "first, e.g. values.to(input.dtype).")
    return _apply(S.heaviside, input, values)


def _integer_kernel(op):
    def f(input, other, *, out=None):
        _tensor_arguments(op.name, other)
        dtype = result_dtype(input, other)
        if dtype is D.bool_ or dtype.is_floating_point or dtype.is_complex:
            raise NotImplementedError(f"\"{op.name}_cpu\" not implemented for '{_scalar_name(dtype)}'. "
                                      f"{op.name} takes integer tensors.")
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


gcd = _integer_kernel(S.gcd)
lcm = _integer_kernel(S.lcm)


def ldexp(input, other, *, out=None):
    _tensor_arguments("ldexp", other)
    integer = not (other.dtype.is_floating_point or other.dtype.is_complex)
    return _apply(S.ldexp, input, other, integer_exponent=integer)


def frexp(input, *, out=None):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes. Convert the input first, e.g. "
                           "x.float().")
    return frexp_result(*_apply(S.frexp, input))


# ---- special functions --------------------------------------------------------------------------------


def polygamma(n, input, *, out=None, _op=S.polygamma):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _apply(_op, input, n=builtins.int(n))


def mvlgamma(input, p, *, out=None):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _apply(S.mvlgamma, input, p=builtins.int(p))


i0 = _unary(S.i0)


def _incomplete_gamma(op, input, other, name):
    """igamma / igammac (special.gammainc / gammaincc, `name` in PyTorch's errors): two floating tensors."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    _tensor_arguments(name, other)
    _check_kernel(f"{op.name}_cpu", input, other, floating_only=True)
    return _apply(op, input, other)


def igamma(input, other, *, out=None):
    return _incomplete_gamma(SF.igamma, input, other, "igamma")


def igammac(input, other, *, out=None):
    return _incomplete_gamma(SF.igammac, input, other, "igammac")


# ---- predicates ---------------------------------------------------------------------------------------


def isreal(input):
    """True where an element's imaginary part is 0 (everywhere, for a real tensor)."""
    if input.dtype.is_complex:
        from ._complex import imag
        return imag(input) == 0
    from .._creation import ones_like
    return ones_like(input, dtype=D.bool_)


def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous. Use .any() or .all() "
                           "to reduce it to one value.")
    return builtins.bool(input.item() != 0)
