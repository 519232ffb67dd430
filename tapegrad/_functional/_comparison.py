"""Elementwise comparison and logic: eq, lt ..., logical_and ..., bitwise_and ..., isclose, allclose, equal."""
import builtins

from .._broadcast_errors import broadcast_error
from .._dispatch import edges_before_kernel
from .._ops import elementwise as E
from .._tensor import Tensor
from ._arith import _apply, _binary
from ._common import SCALAR_NAME, check_tensors, scalar_or_tensor
from ._unary import _check_integral


eq = _binary(E.eq)
ne = not_equal = _binary(E.ne)
lt = less = _binary(E.lt)
le = less_equal = _binary(E.le)
gt = greater = _binary(E.gt)
ge = greater_equal = _binary(E.ge)
logical_and = _binary(E.logical_and)
logical_or = _binary(E.logical_or)
logical_xor = _binary(E.logical_xor)


def _bitwise(op, kernel=None):
    kernel = kernel or op.name   # (PyTorch's shifts run its lshift / rshift kernels; bool << bool: the op table)

    def f(input, other, *, out=None):
        other = scalar_or_tensor(other)
        try:
            for x in (input, other):
                if isinstance(x, Tensor):
                    _check_integral(x, kernel)
                elif isinstance(x, builtins.float):
                    raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Float'")
        except NotImplementedError as refused:
            # PyTorch's autograd takes the operands' edges, then its TensorIterator sizes them, before the
            # kernel refuses them
            edges_before_kernel((input, other))
            raise broadcast_error((input, other)) or refused from None
        return _apply(op, input, other)
    f.__name__ = op.name
    return f


bitwise_and = _bitwise(E.bitwise_and)
bitwise_or = _bitwise(E.bitwise_or)
bitwise_xor = _bitwise(E.bitwise_xor)
bitwise_left_shift = _bitwise(E.bitwise_left_shift, "lshift")
bitwise_right_shift = _bitwise(E.bitwise_right_shift, "rshift")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_tensors("isclose", (input, "input"), (other, "other"))
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{SCALAR_NAME[input.dtype.name]} did not match {SCALAR_NAME[other.dtype.name]}. "
                           "Convert one first, e.g. other.to(input.dtype).")
    return _apply(E.isclose, input, other, rtol=builtins.float(rtol), atol=builtins.float(atol),
                 equal_nan=builtins.bool(equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_tensors("allclose", (input, "input"), (other, "other"))
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    check_tensors("equal", (input, "input"), (other, "other"))
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(eq(input, other).all())
