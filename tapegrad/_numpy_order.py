"""NumPy rules for lax's total order: the `*_to` comparisons, `sort` and `top_k`.

lax compares floats in sort and searchsorted by IEEE total order (-nan < -inf < ... < -0 < +0 < ... < inf
< nan), which NumPy's comparisons and sorts do not follow (they treat -0 as +0 and order nan by other
means). Each float is mapped to an integer with the same order (its bits, the magnitude bits of a negative
one flipped), and those integers are compared or sorted. `sort` first makes -0 into +0 and every nan
the one positive nan, as lax's comparator does, so ties between them keep their places. `top_k` takes the
k greatest in total order as they are (+nan first, then inf, ..., +0 before -0, ..., -nan last), the lower
index first among equals, as XLA's TopK does.
"""
import numpy as np

RULES = {}

_SIGNED = {2: np.int16, 4: np.int32, 8: np.int64}


class _Unordered(ValueError):
    """A dtype or sort lax orders in a way this module does not reproduce (the kernel compiles instead)."""


def _total_key(x):
    """Integers ordered as x's values in IEEE total order (x itself when it is not a float)."""
    x = np.asarray(x)
    if x.dtype.kind in "iub":
        return x
    if x.dtype.kind != "f" or x.dtype.itemsize not in _SIGNED:
        raise _Unordered(x.dtype)
    signed = _SIGNED[x.dtype.itemsize]
    bits = np.ascontiguousarray(x).view(signed).reshape(x.shape)   # (ascontiguousarray makes 0-d arrays 1-d)
    return np.where(bits < 0, bits ^ np.iinfo(signed).max, bits)


def _compare(op):
    def make(params):
        return lambda x, y: op(_total_key(x), _total_key(y))
    return make


RULES["lt_to"] = _compare(np.less)
RULES["le_to"] = _compare(np.less_equal)
RULES["eq_to"] = _compare(np.equal)


def _sort_keys(x):
    """The keys lax's sort comparator compares x by: -0 as +0 and every nan as +nan, then total order;
    a complex number by its real part, then its imaginary part."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return _sort_keys(x.real) + _sort_keys(x.imag)
    if x.dtype.kind == "f":
        x = np.where(x == 0, np.zeros((), x.dtype), x)
        x = np.where(np.isnan(x), np.array(np.nan, x.dtype), x)
    return [_total_key(x)]


def _sort(params):
    dim, num_keys = params["dimension"], params["num_keys"]
    if not params["is_stable"]:   # which of equal keys comes first is XLA's choice: left to it
        raise _Unordered("unstable sort")

    def run(*operands):
        operands = [np.moveaxis(np.asarray(o), dim, -1) for o in operands]
        keys = [k for o in operands[:num_keys] for k in _sort_keys(o)]
        order = np.lexsort(keys[::-1], axis=-1)   # (lexsort's last key is its primary one; it is stable)
        return tuple(np.moveaxis(np.take_along_axis(o, order, -1), -1, dim) for o in operands)
    return run


RULES["sort"] = _sort


def _top_k(params):
    k, axis = params["k"], params.get("axis", -1)   # (older lax: always the last axis)

    def run(x):
        x = np.moveaxis(np.asarray(x), axis, -1)
        order = np.argsort(~_total_key(x), axis=-1, kind="stable")[..., :k]   # (~ reverses the order, exactly)
        values, indices = np.take_along_axis(x, order, -1), order.astype(np.int32)
        return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)
    return run


RULES["top_k"] = _top_k
