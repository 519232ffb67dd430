"""Argument parsing shared by the functional API: tuples, dtype checks, in-place results."""
import builtins

from ..._inplace import check_inplace, commit
from ..._tensor import Tensor

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int"}
SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def ntuple(value, n, name="argument"):
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(builtins.int(value[0]) for _ in range(n))
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match "
                               f"the convolution dimensions, but got {name}={list(value)}")
        return tuple(builtins.int(v) for v in value)
    return (builtins.int(value),) * n


def check_tensor(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def check_float(x, op):
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"\"{op}\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'. "
                           "Convert the input to a floating dtype first, e.g. x.float().")


def check_same_dtype(x, *others, what="weight"):
    for o in others:
        if o is not None and o.dtype is not x.dtype:
            raise RuntimeError(f"Input type ({_C_NAMES.get(x.dtype.name, x.dtype.name)}) and {what} type "
                               f"({_C_NAMES.get(o.dtype.name, o.dtype.name)}) should be the same. "
                               f"Convert one of them, e.g. input.to({what}.dtype).")


def present(*tensors):
    return tuple(t for t in tensors if t is not None)


def maybe_inplace(input, out, inplace):
    """For inplace=True write `out` into `input` (PyTorch's relu_ etc.) and return input."""
    if not inplace:
        return out
    check_inplace(input)
    commit(input, out)
    return input


def check_float_kernel(x, kernel):
    """PyTorch's NotImplementedError for a kernel without integer or bool versions."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'. "
                                  "Convert the input to a floating dtype first, e.g. x.float().")
