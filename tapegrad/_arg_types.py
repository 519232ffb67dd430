"""Int and bool arguments (dims, sizes, counts, flags) as PyTorch's argument parser takes them.

An int, or anything with `__index__` (a NumPy integer, a one-element integer tensor), is an int; a
bool, a float or any other tensor is PyTorch's TypeError. In an int list (a size, a permutation) a bool
is an int too, but as the first element or alone. A bool argument is a Python bool and nothing else.
Without these checks a float dim, k or size was truncated silently (`ones(2.5)` had 2 elements), `keepdim=1.0` or a
bool dim was taken as given, and a tensor failed deep inside with another error.
"""
import operator


_NOT_AN_INT = object()


def _index(value, bool_ok=False):
    """value as an int (what has __index__: NumPy integers, one-element integer tensors), or _NOT_AN_INT; a
    bool is an int only where bool_ok (PyTorch takes one inside an int list, past its first element)."""
    if type(value) is int:
        return value
    if bool_ok or type(value) is not bool:
        try:
            return operator.index(value)
        except TypeError:
            pass
    return _NOT_AN_INT


def as_int(value, name="dim", fname=None, position=None):
    out = _index(value)
    if out is _NOT_AN_INT:
        raise TypeError(f"{_argument(name, fname, position)} must be int, not {type(value).__name__}")
    return out


def as_bool(value, name, fname=None, position=None):
    if type(value) is bool:
        return value
    raise TypeError(f"{_argument(name, fname, position)} must be bool, not {type(value).__name__}")


def _argument(name, fname, position):
    """How PyTorch's parser names an argument: `f(): argument 'x' (position 2)`, the function and the
    position where known (the position only for an argument passed by position)."""
    where = f" (position {position})" if position is not None else ""
    return f"{fname + '(): ' if fname else ''}argument '{name}'{where}"


def as_size(value, position, name="size", fname=None):
    """One element of an int-list argument (a shape, a permutation) at 1-based `position` (see `int_list`)."""
    return value if type(value) is int else _element(value, position - 1, name, fname, 1)


def int_list(values, name="size", fname=None, position=1):
    """An int-list argument (a size, dims, a kernel size) read as PyTorch's parser reads it: its first element
    decides whether the argument is an int list at all (a bool there is not an int), the later ones are
    unpacked (a bool is an int); anything else is its TypeError, in its words. `fname` and `position`: the
    function and the argument's place in the call, which PyTorch's message names."""
    return tuple(v if type(v) is int else _element(v, i, name, fname, position) for i, v in enumerate(values))


def int_lists(fname, arguments):
    """Several int-list arguments of one call, [(name, value, position)], each a list or one int (given as a
    1-tuple), with PyTorch's errors in its order: its parser checks each argument's type and first element
    while it matches the signature (left to right), then the kernel's arguments are unpacked as C++ evaluates
    them (right to left), so a bad later element of the last argument is the one reported."""
    out = [None] * len(arguments)
    for k, (name, value, position) in enumerate(arguments):
        if isinstance(value, (tuple, list)):
            int_list(value[:1], name, fname, position)
        else:
            out[k] = (_lone(value, name, fname, position),)
    for k in reversed(range(len(arguments))):
        name, value, position = arguments[k]
        if out[k] is None:
            out[k] = int_list(value, name, fname, position)
    return out


def _lone(value, name, fname, position):
    out = _index(value)
    if out is _NOT_AN_INT:
        raise TypeError(lone_error(value, name, fname, position))
    return out


def _element(value, index, name, fname, position):
    out = _index(value, bool_ok=index > 0)
    if out is _NOT_AN_INT:
        raise TypeError(_element_error(value, index, name, fname, position))
    return out


def _element_error(value, index, name, fname, position=1):
    kind = type(value).__name__
    if index == 0:
        return f"{_argument(name, fname, position)} must be tuple of ints, but found element of type {kind} at pos 0"
    return (f"{_argument(name, fname, None)} failed to unpack the object at pos {index + 1} with error \"type must "
            f"be tuple of ints,but got {kind}\"")


def check_lone_size(sizes, name="size", fname=None):
    """A size given as one value must be an int (or have __index__) or a list of them; given as several
    values, the first must be an int, or PyTorch's parser does not take them as the list at all."""
    if len(sizes) > 1 and type(sizes[0]) is not int and fname and (
            isinstance(sizes[0], (float, complex, str)) or sizes[0] is None or type(sizes[0]) is bool):
        raise TypeError(f"{fname}() takes 1 positional argument but {len(sizes)} were given")
    if len(sizes) == 1 and type(sizes[0]) is not int and not isinstance(sizes[0], (tuple, list)):
        _lone(sizes[0], name, fname, 1)


def lone_error(value, name, fname=None, position=1):
    """PyTorch's error for an int-list argument given as one value that is not an int (a float, None ...)."""
    return f"{_argument(name, fname, position)} must be tuple of ints, not {type(value).__name__}"
