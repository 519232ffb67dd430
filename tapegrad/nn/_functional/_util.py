"""Argument parsing shared by the functional API: tuples, dtype checks, in-place results."""

from ..._arg_types import int_lists
from ..._dtypes import SCALAR_NAMES, cpp_name  # noqa: F401 (SCALAR_NAMES: the functional modules' import)
from ..._grad_mode import is_grad_enabled
from ..._inplace import check_inplace, commit
from ..._tensor import Tensor

def ntuple(value, n, name="argument", fname=None, position=None):
    """An int, or a list of one or n ints, as n ints (a convolution's stride, padding, dilation); anything that is
    not an int is the argument parser's TypeError (never truncated), naming `fname` and `position` where given."""
    return widened(int_lists(fname, [(name, value, position)])[0], n, name)


def widened(values, n, name):
    """Parsed ints (see _arg_types.int_lists) of one or n values as n values, or the convolutions' error."""
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match "
                           f"the convolution dimensions, but got {name}={list(values)}")
    return values


def check_tensor(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def check_float(x, op):
    if not (x.dtype.is_floating_point or x.dtype.is_complex):   # (PyTorch's dispatch: a NotImplementedError)
        raise NotImplementedError(f"\"{op}\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'. "
                           "Convert the input to a floating dtype first, e.g. x.float().")


def check_same_dtype(x, *others, what="weight"):
    for o in others:
        if o is not None and o.dtype is not x.dtype:
            raise RuntimeError(f"Input type ({cpp_name(x.dtype)}) and {what} type "
                               f"({cpp_name(o.dtype)}) should be the same. "
                               f"Convert one of them, e.g. input.to({what}.dtype).")


def check_mixed_params(input, *params):
    """PyTorch's CPU check of a normalisation's parameters (check_mixed_data_type): parameters of another
    dtype than the input must all be float32, and then the input half or bfloat16. Returns whether the
    call is such a mixed one."""
    params = [p for p in params if p is not None]
    if not params or params[0].dtype is input.dtype:
        return False
    if any(p.dtype.name != "float32" for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype.name not in ("float16", "bfloat16"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def check_param_dtypes(input, *params):
    """PyTorch's CPU kernels (convolutions, normalisations) refuse a parameter of another dtype than the input
    with this message."""
    for p in params:
        if p is not None and p.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {SCALAR_NAMES[input.dtype.name]} but found "
                               f"{SCALAR_NAMES[p.dtype.name]}")


def present(*tensors):
    return tuple(t for t in tensors if t is not None)


def maybe_inplace(input, out, inplace):
    """For inplace=True write `out` into `input` (PyTorch's relu_ etc.) and return input."""
    if not inplace:
        return out
    check_inplace(input)
    commit(input, out)
    return input


def check_float_kernel(x, kernel, complex=True, without=()):
    """PyTorch's NotImplementedError for a kernel without integer or bool versions (nor complex ones, with
    complex=False; nor those of the dtype names in `without`)."""
    if not (x.dtype.is_floating_point or complex and x.dtype.is_complex) or x.dtype.name in without:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'. "
                                  "Convert the input to a floating dtype first, e.g. x.float().")


def refuse_grad(function, name, t):
    """PyTorch's error for an argument its kernel does not differentiate (a class weight, a target)."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to argument '{name}'. "
                           f"This input cannot have requires_grad True. Pass {name}.detach().")
