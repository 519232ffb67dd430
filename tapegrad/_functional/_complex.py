"""Complex numbers: parts, conjugates, polar form, real views."""
from .. import _dtypes as D
from .._dispatch import apply
from ._common import SCALAR_NAME, check_tensors
from .._ops import bitcast as B, elementwise as E


def real(input):
    # As PyTorch: a select of view_as_real (SelectBackward0 over ViewAsRealBackward0); writes go through. A
    # conjugate view's parts are read from the stored values (conj again), the imaginary one negated (neg_view).
    return apply(B.view_as_real, _stored(input))[..., 0] if input.dtype.is_complex else input


def imag(input):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    parts = apply(B.view_as_real, _stored(input))
    return (apply(E.neg_view, parts) if is_conj(input) else parts)[..., 1]


def _stored(input):
    """The values a conjugate view reads, unconjugated (a view of it); any other tensor itself."""
    return apply(E.conj, input) if is_conj(input) else input


def conj(input):
    # a view (PyTorch's conjugate bit: _ops.elementwise.conj); a real tensor is its own conjugate
    return apply(E.conj, input) if input.dtype.is_complex else input


def conj_physical(input, *, out=None):
    return apply(E.conj_physical, input) if input.dtype.is_complex else input


def resolve_conj(input):
    # PyTorch materialises a conjugate view with clone (CloneBackward0); any other tensor is returned as is
    return input.clone() if is_conj(input) else input


def resolve_neg(input):
    return input.clone() if is_neg(input) else input


def is_conj(input):
    """PyTorch's conjugate bit: a complex view whose recipe conjugates an odd number of times."""
    return input.dtype.is_complex and _bit(input, E.conj)


def is_neg(input):
    """PyTorch's negative bit: a view whose recipe negates (neg_view) an odd number of times."""
    return _bit(input, E.neg_view)


def _bit(input, op):
    """Whether the view's recipe holds an odd number of `op` steps since its last step that reads other elements'
    bytes (a complex part or a bitcast: PyTorch refuses those on a view with a bit set, so the bytes carry none)."""
    info = input._view
    odd = False
    for step, _ in () if info is None else info.steps:
        if step is op:
            odd = not odd
        elif step.value_view is not None and step not in (E.conj, E.neg_view):
            odd = False
    return odd


def angle(input, *, out=None):
    return apply(E.angle, input)


def _check_real_pair(a, b, name):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {SCALAR_NAME[a.dtype.name]} but got scalar type "
                           f"{SCALAR_NAME[b.dtype.name]} for second argument")
    if a.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{SCALAR_NAME[a.dtype.name]} and {SCALAR_NAME[b.dtype.name]}")
    if a.dtype is D.float16:   # (PyTorch's polar has no half kernel; its complex makes a ComplexHalf tensor)
        if name == "polar":
            raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'. Convert the inputs first, e.g. "
                                      "abs.float().")
        raise RuntimeError(f"{name} of half tensors makes a complex32 (ComplexHalf) tensor, a dtype tapegrad does "
                           "not have. Convert them first, e.g. real.float().")


def complex(real, imag, *, out=None):
    check_tensors("complex", (real, "real"), (imag, "imag"))
    _check_real_pair(real, imag, "complex")
    return apply(E.complex, real, imag)


def polar(abs, angle, *, out=None):
    check_tensors("polar", (abs, "abs"), (angle, "angle"))
    _check_real_pair(abs, angle, "polar")
    return apply(E.polar, abs, angle)


def view_as_real(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):   # (its bytes are the unconjugated values)
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
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
