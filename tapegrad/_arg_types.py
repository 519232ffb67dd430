"""Int and bool arguments (dims, sizes, counts, flags) as PyTorch's argument parser takes them.

An int, or anything with `__index__` (a NumPy integer, a one-element integer tensor), is an int; a
bool, a float or any other tensor is PyTorch's TypeError. In an int list (a size, a permutation) a bool
is an int too; a lone one is not. A bool argument is a Python bool and nothing else. Without these
checks a float dim, k or size was truncated silently (`ones(2.5)` had 2 elements), `keepdim=1.0` or a
bool dim was taken as given, and a tensor failed deep inside with another error.
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


def as_size(value, position, name="size"):
    """One element of an int-list argument (a shape, a permutation): an int or what has `__index__`; a
    bool counts as an int there, as in PyTorch's lists (a lone bool does not: see `check_lone_size`)."""
    if type(value) is int:
        return value
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"argument '{name}' must be tuple of ints, but found element of type "
                        f"{type(value).__name__} at pos {position}") from None


def check_lone_size(sizes, name="size"):
    if len(sizes) == 1 and type(sizes[0]) in (bool, float):
        raise TypeError(f"argument '{name}' (position 1) must be tuple of ints, not {type(sizes[0]).__name__}")
