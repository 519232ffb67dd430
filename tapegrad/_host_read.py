"""One element of a view read on the host, from its storage, without running a program.

`out[0].item()` on a concrete tensor records the view's value as pending work, and reading it runs that
work as an XLA program (tens of microseconds of dispatch, per read, on CPU). When the storage holds a
concrete CPU array, NumPy can apply the view's recipe (its view ops, evaluated by `_numpy_eval`'s lax
rules: clamped starts, the same dtypes) to the storage's array as it is now -- what reading the view
would compute -- in a few microseconds. Anything else (a pending or traced storage, an array on
another device, an op without a NumPy rule, a view whose value was read before) returns None: the
caller reads the view as before.
"""
import jax
import numpy as np

from .device import MIXED_DEVICES, device_of
from ._lazy import Pending
from ._numpy_eval import _Unsupported, compile_jaxpr
from ._views import compose

_ArrayImpl = jax._src.array.ArrayImpl
_recipes = {}   # (steps, shape, dtype, number of positions) -> NumPy evaluator, or None (unsupported)
MAX_RECIPES = 1024


def view_element(t):
    """The value of one-element view `t` as a Python scalar, or None where it cannot be read so."""
    raw = t._storage._raw
    if type(raw) is not _ArrayImpl or (MIXED_DEVICES[0] and device_of(raw).type != "cpu"):
        return None
    info = t._view
    if info.version == t._storage.version and type(info.value) is not Pending:
        return None   # read before: its value is at hand
    positions = info.positions
    key = (info.steps, raw.shape, raw.dtype, len(positions))
    run = _recipes.get(key, False)
    if run is False:
        if len(_recipes) >= MAX_RECIPES:
            _recipes.clear()
        run = _recipes[key] = _evaluator(info.steps, raw, positions)
    if run is None:
        return None
    try:
        return run(np.asarray(raw), *positions)[0].reshape(()).item()
    except _Unsupported:   # a rule that declines these values (a bitcast it has no exact rule for)
        _recipes[key] = None
        return None


def _evaluator(steps, raw, positions):
    try:
        spec = jax.ShapeDtypeStruct(raw.shape, raw.dtype)
        closed = jax.make_jaxpr(compose(steps))(spec, *[np.int64(p) for p in positions])
    except Exception:   # a recipe that does not trace on its own: the usual read serves it
        return None
    return compile_jaxpr(closed)
