"""PyTorch's check that a Python number fits the tensor it is written into (c10::checked_convert).

fill_, setitem with a number, masked_fill and full convert the number to the tensor's dtype first and
refuse one that does not fit: "value cannot be converted to type int8_t without overflow". (Arithmetic
with a number does not check: `t + 300` wraps, in PyTorch and here.)
"""
import math

import numpy as np

# PyTorch's name of each checked dtype's C type; half and bfloat16 are not checked, nor float64 and
# complex128, whose range is a Python float's.
_C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "complex64": "c10::complex<float>"}


def check_fits(value, dtype):
    """Raise PyTorch's overflow error when the Python number `value` does not fit `dtype` (a tapegrad dtype)."""
    name = _C_NAMES.get(dtype.name)
    if name is None or isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return
    if _overflows(value, dtype.name):
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _overflows(value, name):
    if name in ("float32", "complex64"):
        limit = float(np.finfo(np.float32).max)
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        return any(not math.isinf(p) and not math.isnan(p) and abs(p) > limit for p in parts)
    info = np.iinfo(name)
    if isinstance(value, complex):
        value = value.real
    if isinstance(value, float):   # a float: within the type's range (NaN and infinities never are)
        return math.isnan(value) or not info.min <= value <= info.max
    if info.min == 0:              # an integer into an unsigned type: down to -max too (C's wrap-around)
        return value > info.max or -value > info.max
    return not info.min <= value <= info.max


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def may_overflow(value):
    """Whether the number `value` could fail check_fits for some result dtype: an integer outside int8's
    range, or a float outside float32's (a float never makes an integer result). Lets clamp and where skip
    working out their result dtype for the usual bounds."""
    t = type(value)
    if t is int:
        return not -128 <= value <= 127
    if t is float:
        return abs(value) > _FLOAT32_MAX and not math.isinf(value)
    return t is complex


def check_operands_fit(operands):
    """check_fits for each number among `operands` against their promoted dtype (clamp's bounds, where's
    values), as PyTorch converts them to the result's type."""
    if not any(may_overflow(v) for v in operands):
        return
    from ._functional._common import result_dtype
    dtype = result_dtype(*operands)
    for v in operands:
        check_fits(v, dtype)
