"""Int and bool arguments (dims, sizes, counts, flags) as PyTorch's argument parser takes them.

An int, or anything with `__index__` (a NumPy integer, a one-element integer tensor), is an int; a
bool, a float or any other tensor is PyTorch's TypeError. A bool argument is a Python bool and nothing
else. Without these checks a float dim or k was truncated silently, `keepdim=1.0` or a bool dim was
taken as given, and a tensor failed deep inside with another error.
"""
import operator


def as_int(value, name="dim"):
    if type(value) is int:
        return value
    if type(value) is not bool:
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"argument '{name}' must be int, not {type(value).__name__}")


def as_bool(value, name):
    if type(value) is bool:
        return value
    raise TypeError(f"argument '{name}' must be bool, not {type(value).__name__}")
