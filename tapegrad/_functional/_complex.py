"""Complex numbers: parts, conjugates, polar form, real views."""
from .. import _dtypes as D
from .._dispatch import apply
from ._common import SCALAR_NAME
from .._pointwise_layout import lay_out_like
from .._ops import bitcast as B, elementwise as E


def real(input):
    # As PyTorch: a select of view_as_real (SelectBackward0 over ViewAsRealBackward0); writes go through
    return apply(B.view_as_real, input)[..., 0] if input.dtype.is_complex else input


def imag(input):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(B.view_as_real, input)[..., 1]


def conj(input):
    # PyTorch's conj is a view with the input's strides (its conjugate bit): computed here, laid out alike
    return lay_out_like(apply(E.conj, input), input) if input.dtype.is_complex else input


def conj_physical(input, *, out=None):
    return apply(E.conj_physical, input) if input.dtype.is_complex else input


def resolve_conj(input):
    return input


def is_conj(input):
    return False


def angle(input, *, out=None):
    return apply(E.angle, input)


def _check_real_pair(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.name} but got scalar type {b.dtype.name} "
                           f"for second argument")
    if a.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {a.dtype.name} and "
                           f"{b.dtype.name}")


def complex(real, imag, *, out=None):
    _check_real_pair(real, imag, "complex")
    return apply(E.complex, real, imag)


def polar(abs, angle, *, out=None):
    _check_real_pair(abs, angle, "polar")
    return apply(E.polar, abs, angle)


def view_as_real(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(B.view_as_real, input)


def view_as_complex(input):
    if input.dtype is D.float16:
        raise RuntimeError("view_as_complex of a half tensor makes a complex32 (ComplexHalf) tensor, a dtype "
                           "tapegrad does not have. Convert it first, e.g. x.float().")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {SCALAR_NAME[input.dtype.name]}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return apply(B.view_as_complex, input)
