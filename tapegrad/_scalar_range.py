"""PyTorch's check that a Python number fits the tensor it is written into (c10::checked_convert).

fill_, setitem with a number, masked_fill and full convert the number to the tensor's dtype first and
refuse one that does not fit: "value cannot be converted to type int8_t without overflow"; a complex
number with an imaginary part never fits a real dtype. (Arithmetic with a number does not check: `t + 300`
wraps, in PyTorch and here.)
"""
import math

import jax.numpy as jnp
import numpy as np

# PyTorch's name of each checked dtype's C type. float64 and complex128 have a Python float's range; half
# and bfloat16 are range-checked only where a number is converted to them directly (fill_, masked_fill,
# full): setitem converts it to double first, and so does the fill of a one-element CPU tensor (scalar_fill).
_C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>"}
_REDUCED = ("float16", "bfloat16")
# the largest finite value of each checked floating dtype (jnp's finfo: NumPy has no bfloat16)
_FLOAT_LIMITS = {n: float(jnp.finfo(n).max) for n in ("float32", "float16", "bfloat16")}
_FLOAT_LIMITS["complex64"] = _FLOAT_LIMITS["float32"]


def check_fits(value, dtype, via_double=False):
    """Raise PyTorch's overflow error when the Python number `value` does not fit `dtype` (a tapegrad dtype):
    out of its range, or a complex number with an imaginary part written into a real (non-bool) dtype.
    via_double: the number goes through double first (setitem's), which half and bfloat16 then take
    without a check (an overflow becomes inf)."""
    name = dtype.name
    if via_double and name in _REDUCED:
        name = "float64"
    c_name = _C_NAMES.get(name)
    if c_name is None or isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return
    if isinstance(value, complex) and value.imag != 0 and not name.startswith("complex"):
        raise RuntimeError(f"value cannot be converted to type {c_name} without overflow")
    if name != "float64" and _overflows(value, name):
        raise RuntimeError(f"value cannot be converted to type {c_name} without overflow")


def _overflows(value, name):
    limit = _FLOAT_LIMITS.get(name)
    if limit is not None:
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
