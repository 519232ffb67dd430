"""One element of a view read on the host, from its storage, without running a program.

`out[0].item()` on a concrete tensor records the view's value as pending work, and reading it runs that
work as an XLA program (tens of microseconds of dispatch, per read, on CPU). When the storage holds a
concrete CPU array, NumPy can apply the view's recipe (its view ops, evaluated by `_numpy_eval`'s lax
rules: clamped starts, the same dtypes) to the storage's array as it is now -- what reading the view
would compute -- in a few microseconds. A recipe whose steps all select elements (indexing, slicing,
transposes, reshapes: no `Op.value_view`) on a small storage picks one storage element: its flat
position, the recipe applied to an iota of the storage once per recipe, shape and positions, is read by
`ndarray.item` (one C call) at every later read. Anything else (a pending or traced storage, an array
on another device, an op without a NumPy rule, a view whose value was read before) returns None: the
caller reads the view as before.
"""
import jax
import numpy as np

from . import _faults
from .device import MIXED_DEVICES, device_of
from ._lazy import Pending
from ._numpy_eval import _Unsupported, compile_jaxpr
from ._views import compose

_ArrayImpl = jax._src.array.ArrayImpl
_recipes = {}    # (steps, shape, dtype, number of positions) -> NumPy evaluator, or None (unsupported)
_pickers = {}    # (steps, shape, number of positions) -> evaluator of a selection's storage position, or None
_elements = {}   # (steps, shape, positions) -> the storage position the selection picks
_iotas = {}      # shape -> the storage positions of a storage of that shape
MAX_RECIPES = 1024
SMALL = 1 << 14  # storages up to this many elements have their positions (an iota) kept for selections


def view_element(t):
    """The value of one-element view `t` as a Python scalar, or None where it cannot be read so."""
    if _faults._in_flight[0] is not None:   # the storage may hold a program's result not yet awaited
        _faults.confirm()
    raw = t._storage._raw
    if type(raw) is not _ArrayImpl or (MIXED_DEVICES[0] and device_of(raw).type != "cpu"):
        return None
    info = t._view
    if info.version == t._storage.version and type(info.value) is not Pending:
        return None   # read before: its value is at hand
    positions = info.positions
    at = _elements.get((info.steps, raw.shape, positions))
    if at is None and raw.size <= SMALL:
        at = _element_position(info.steps, raw.shape, positions)
    if at is not None:
        return np.asarray(raw).item(at)
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


def _element_position(steps, shape, positions):
    """The flat storage position a selection recipe picks at these positions (cached), or None for a
    recipe with a step that is not a selection, or one that does not run on NumPy."""
    key = (steps, shape, len(positions))
    run = _pickers.get(key, False)
    if run is False:
        if len(_pickers) >= MAX_RECIPES:
            _pickers.clear()
        selects = all(op.value_view is None for op, _ in steps)
        run = _pickers[key] = _evaluator(steps, jax.ShapeDtypeStruct(shape, np.int64), positions) if selects \
            else None
    if run is None:
        return None
    iota = _iotas.get(shape)
    if iota is None:
        if len(_iotas) >= 64:
            _iotas.clear()
        size = int(np.prod(shape, dtype=np.int64))
        iota = _iotas[shape] = np.arange(size, dtype=np.int64).reshape(shape)
    try:
        at = int(run(iota, *positions)[0].reshape(()))
    except (_Unsupported, ValueError):   # (ValueError: more than one element)
        _pickers[key] = None
        return None
    if not 0 <= at < iota.size:
        return None
    if len(_elements) >= MAX_RECIPES:
        _elements.clear()
    _elements[(steps, shape, positions)] = at
    return at


def _evaluator(steps, raw, positions):
    try:
        spec = jax.ShapeDtypeStruct(raw.shape, raw.dtype)
        closed = jax.make_jaxpr(compose(steps))(spec, *[np.int64(p) for p in positions])
    except Exception:   # a recipe that does not trace on its own: the usual read serves it
        return None
    return compile_jaxpr(closed)
