"""Views: tensors that share a base's Storage and read it through a recipe.

A view's recipe is the sequence of view ops (op, statics) applied to the base
array. Reading applies it (one jitted call, cached by recipe, and the result
cached until the storage version changes). Writing through a view rewrites
the base functionally: the recipe applied to an iota of the base gives the
flat base positions of the view's elements, and the new values are scattered
there. One mechanism serves every view op.
"""
import re
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _dispatch
from ._op_functions import pure_fn
from ._view_info import ViewInfo, grad_views as _grad_views  # noqa: F401 (ViewInfo re-exported)


def relative_steps(t):
    """(steps, positions) from the view t's base (which may itself read the storage through a recipe) to t.
    The base's recipe is a prefix of the view's, unless an in-place view op (t_, unsqueeze_...) changed the
    base's geometry since the view was made. Then the view's elements are found by their storage positions,
    as PyTorch regenerates such a view with as_strided of its base: the view's steps up to the first whose
    elements are no selection (a bitcast, a complex part) become one as_strided step of the base, the rest
    follow as they are."""
    info = t._view
    base_view = info.base._view
    if base_view is None:
        return info.steps, info.positions
    if _follows_base(info):
        return info.steps[len(base_view.steps):], info.positions[len(base_view.positions):]
    from ._ops import shape as S
    selected, (rest, rest_positions) = _selected_positions(t)
    stride, offset = _strides_from_positions(selected)
    at = (("size", selected.shape), ("stride", stride), ("offset", offset), ("source", layout(info.base)))
    return ((S.as_strided, at),) + rest, rest_positions


def _follows_base(info):
    """Whether the view's recipe starts with its base's (the base's geometry did not change since)."""
    steps, positions = info.base._view.steps, info.base._view.positions
    return (info.steps[:len(steps)] == steps and len(info.positions) >= len(positions)
            and all(a is b for a, b in zip(info.positions, positions)))


def _selected_positions(t):
    """(storage positions of the elements t's recipe selects before its first step that selects none,
    (that step and the rest, their position arguments))."""
    info = t._view
    split = _split_at_value_view(info.steps, info.positions)
    if split is None:
        selected, rest = (info.steps, info.positions), ((), ())
    else:
        selected, step, (after, after_positions) = split
        rest = ((step,) + after, after_positions)
    return _host_positions(selected[0], _offsets(selected[1]), tuple(t._storage._raw.shape)), rest


def _offsets(positions):
    # (while tapegrad.compile traces, the host-side offsets of the traced call: see traced_offsets)
    return tuple(traced_offsets.get(id(p), p) for p in positions) if traced_offsets else positions


def outside_base(t):
    """Whether the view t holds storage elements its base does not (as_strided_ shrank the base since): a write
    through t then goes through t's own recipe, and its base's history sees only the part it holds."""
    info = t._view
    base_view = info.base._view
    if base_view is None or _follows_base(info):
        return False
    held = _host_positions(base_view.steps, _offsets(base_view.positions), tuple(t._storage._raw.shape))
    return not np.isin(_selected_positions(t)[0], held).all()


def storage_error(t):
    """PyTorch's error when the CopySlices of a write through the view t lays t out in a gradient of its
    base's geometry and t overruns that storage (t outside its base: see outside_base); None if it fits."""
    base = t._view.base
    item = t.dtype.itemsize
    size, (stride, offset) = tuple(t.shape), layout(t)
    offset -= layout(base)[1]
    needed = 0 if 0 in size else (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * item
    base_size = tuple(base.shape)
    available = 0 if 0 in base_size else (sum((n - 1) * s for n, s in zip(base_size, layout(base)[0])) + 1) * item
    if needed <= available:
        return None
    return (f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize {item} "
            f"requiring a storage size of {needed} are out of bounds for storage of size {available}")


def compose(steps):
    """read(x, *positions): the view's array from the base's, taking each step's position arguments."""
    from ._ops.indexing import positions_in
    fns = [(pure_fn(op, static, None), positions_in(static)) for op, static in steps]

    def read(x, *positions):
        i = 0
        for f, n in fns:
            x = f(x, *positions[i:i + n])
            i += n
        return x
    return read


def _split_at_value_view(steps, view_positions):
    """(before, the first step whose elements are not a selection (Op.value_view), after), with the
    position arguments of each side; None if there is no such step."""
    from ._ops.indexing import positions_in
    used = 0
    for k, (op, static) in enumerate(steps):
        if op.value_view is not None:
            return (steps[:k], view_positions[:used]), (op, static), (steps[k + 1:], view_positions[used:])
        used += positions_in(static)
    return None


def scatter_into(steps, base, new, view_positions=()):
    """The base array with the elements selected by `steps` replaced by `new` (pure)."""
    split = _split_at_value_view(steps, view_positions)
    if split is not None:
        # a bitcast or complex part: write below it, turn the result back with the step's own rule
        (before, pos_before), (op, static), (after, pos_after) = split
        inner = compose(before)(base, *pos_before)
        changed = scatter_into(after, compose(((op, static),))(inner), new, pos_after)
        return scatter_into(before, base, op.value_view[0](inner, changed, **dict(static)), pos_before)
    positions = compose(steps)(jnp.arange(base.size, dtype=jnp.int64).reshape(base.shape), *view_positions)
    new = jnp.broadcast_to(jnp.asarray(new, base.dtype), positions.shape)
    return base.reshape(-1).at[positions.reshape(-1)].set(new.reshape(-1)).reshape(base.shape)


def read(t):
    info, storage = t._view, t._storage
    if info.version != storage.version:
        from ._ops.indexing import view_replay
        info.value = _dispatch.compute(view_replay, (("steps", info.steps),), [storage._raw, *info.positions])
        info.version = storage.version
    return info.value


def write(t, value):
    from ._ops.indexing import copy_slices
    info, storage = t._view, t._storage
    storage.write(_dispatch.compute(copy_slices, (("steps", info.steps),),
                                    [storage._raw, value, *info.positions]))
    # elements that share an address hold the last write to it, not `value`: read them back
    info.value, info.version = value, storage.version if not shares_addresses(info.steps) else -1


def shares_addresses(steps):
    """Whether an as_strided step puts several elements at one address."""
    for op, static in steps:
        if op.name == "as_strided":
            static = dict(static)
            reach = 1
            for stride, size in sorted((s, n) for n, s in zip(static["size"], static["stride"]) if n > 1):
                if stride < reach:
                    return True
                reach = stride * size
    return False


def refresh_views(base, skip=None, with_history=False):
    """Point the gradient of every live view of `base` at base's current history (with_history: only of
    the views that have one)."""
    views = _grad_views.get(base._storage)
    if not views:
        return
    from ._ops.indexing import view_replay
    source = base
    for v in list(views):
        if v is skip or v._view is None or v._view.base is not base or (with_history and v._grad_fn is None):
            continue
        if v._view.creation is not None:
            v._requires_grad = True   # its history is not regenerated: using it raises (check_rebase)
            continue
        if not source._requires_grad:
            source = _gradless(base)
        steps, positions = relative_steps(v)
        replay = _dispatch.apply(view_replay, source, *positions, steps=steps)
        if replay._grad_fn is not None:
            v._attach(replay._grad_fn, 0)


def _gradless(base):
    """A stand-in for a base that does not require grad, under its views that have a history (views of a
    leaf that is itself a view): PyTorch regenerates their grad_fn as as_strided of the base with no edge,
    so their gradient is dropped. The stand-in's goes to NOWHERE."""
    stand_in = base.detach()
    stand_in._requires_grad = True
    stand_in._accumulator = weakref.ref(NOWHERE)
    return stand_in


# ---- layout: strides and offsets as PyTorch would report them ------------------------------------

_layouts = {}
_view_strides = {}
MAX_LAYOUTS = 4096
# While tapegrad.compile traces, the offsets of view arguments are tracers (program inputs); a layout
# is still a host-side fact of the traced call, read with that call's offsets: id(tracer) -> int.
traced_offsets = {}


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def layout(t):
    """(strides, storage_offset) in elements. A view's are read off its recipe applied to an iota of the base."""
    if t._view is None:
        return contiguous_strides(tuple(t.shape)), 0
    op, static = t._view.steps[-1]
    if op.name == "as_strided":   # its layout is the one asked for (size-1 and empty dims included)
        static = dict(static)
        return static["stride"], static["offset"]
    base_shape = tuple(t._storage._raw.shape)
    positions = t._view.positions
    positions = _offsets(positions)
    key = (t._view.steps, positions, base_shape)
    found = _layouts.get(key)
    if found is None:
        if len(_layouts) >= MAX_LAYOUTS:   # (a loop slicing at a new offset each step makes a key per offset)
            _layouts.clear()
        strides, offset = _strides_from_positions(_host_positions(t._view.steps, positions, base_shape))
        found = _layouts[key] = (_with_unit_strides(t._view.steps, base_shape, strides), offset)
    return found


def strides(t):
    """t's strides alone. A view's positions (slice starts, select indices) move its offset, never its
    strides, so these are computed once per recipe and base shape, at positions 0: a loop slicing at a new
    offset each step reuses them."""
    info = t._view
    if info is None:
        return contiguous_strides(tuple(t.shape))
    op, static = info.steps[-1]
    if op.name == "as_strided":
        return dict(static)["stride"]
    base_shape = tuple(t._storage._raw.shape)
    key = (info.steps, len(info.positions), base_shape)
    found = _view_strides.get(key)
    if found is None:
        if len(_view_strides) >= MAX_LAYOUTS:
            _view_strides.clear()
        zeros = (0,) * len(info.positions)
        strides = _strides_from_positions(_host_positions(info.steps, zeros, base_shape))[0]
        found = _view_strides[key] = _with_unit_strides(info.steps, base_shape, strides)
    return found


def _host_positions(steps, positions, base_shape):
    """The recipe applied to an iota of the base, computed on the host (even while tapegrad.compile
    traces a function), with NumPy where it has the view ops' primitives: no XLA compile per layout."""
    from ._numpy_eval import compile_jaxpr
    read = _compose_positions(steps)
    spec = jax.ShapeDtypeStruct(base_shape, jnp.int64)
    iota = np.arange(int(np.prod(base_shape, dtype=np.int64)), dtype=np.int64).reshape(base_shape)
    run = compile_jaxpr(jax.make_jaxpr(lambda x: read(x, *positions))(spec))
    if run is not None:
        return run(iota)[0]
    with jax.ensure_compile_time_eval():
        return np.asarray(read(jnp.asarray(iota), *positions))


def _compose_positions(steps):
    """compose(steps) for an iota of storage positions: steps with their own position rule (Op.value_view)
    apply it instead of their function."""
    if not any(op.value_view is not None for op, _ in steps):
        return compose(steps)
    from ._ops.indexing import positions_in

    def read(x, *positions):
        i = 0
        for op, static in steps:
            n = positions_in(static)
            if op.value_view is not None:
                x = op.value_view[1](x, **dict(static))
            else:
                x = compose(((op, static),))(x, *positions[i:i + n])
            i += n
        return x
    return read


def _with_unit_strides(steps, base_shape, strides):
    """`strides` (read off positions) with PyTorch's strides of the size-1 dims, which positions cannot show
    (x.t() of a 1 x n tensor has strides (1, n), not (1, 1)): followed through the recipe step by
    step with PyTorch's rules, where each step has one."""
    followed = _follow_strides(steps, base_shape)
    if followed is None or len(followed[0]) != len(strides):
        return strides
    shape, unit = followed
    return tuple(u if size == 1 else s for size, s, u in zip(shape, strides, unit))


def _follow_strides(steps, base_shape):
    """(shape, strides) of a recipe applied to a contiguous base, as PyTorch's view ops compute them; None
    for a step without a rule here."""
    shape, strides = list(base_shape), list(contiguous_strides(base_shape))
    for op, static in steps:
        static = dict(static)
        name = op.name
        if name in ("select", "slice", "index_unsqueeze", "index_alias", "split", "unbind"):
            if not _follow_index(static["spec"], shape, strides):
                return None
        elif name in ("view", "reshape_alias"):
            new = view_strides(tuple(shape), tuple(strides), tuple(static["shape"]))
            if new is None:
                return None
            shape, strides = list(static["shape"]), list(new)
        elif name == "expand":
            new = list(static["shape"])
            lead = len(new) - len(shape)
            strides = [0] * lead + [st if size == n else 0 for size, st, n in zip(shape, strides, new[lead:])]
            shape = new
        elif name in ("transpose", "t"):
            if len(shape) < 2:
                continue
            d0, d1 = (static["dim0"] % len(shape), static["dim1"] % len(shape)) if name == "transpose" else (0, 1)
            shape[d0], shape[d1] = shape[d1], shape[d0]
            strides[d0], strides[d1] = strides[d1], strides[d0]
        elif name == "permute":
            dims = [d % len(shape) for d in static["dims"]]
            shape, strides = [shape[d] for d in dims], [strides[d] for d in dims]
        elif name == "unsqueeze":
            d = static["dim"] % (len(shape) + 1)
            _unsqueeze(shape, strides, d)
        elif name == "squeeze":
            dims = static["dim"]
            dims = range(len(shape)) if dims is None else dims if isinstance(dims, tuple) else (dims,)
            drop = {d % len(shape) for d in dims if len(shape) and shape[d % len(shape)] == 1}
            shape = [n for d, n in enumerate(shape) if d not in drop]
            strides = [st for d, st in enumerate(strides) if d not in drop]
        elif name == "diagonal":
            d1, d2, offset = static["dim1"] % len(shape), static["dim2"] % len(shape), static["offset"]
            size = max(min(shape[d1], shape[d2] - offset) if offset >= 0 else min(shape[d1] + offset, shape[d2]), 0)
            stride = strides[d1] + strides[d2]
            keep = [d for d in range(len(shape)) if d not in (d1, d2)]
            shape, strides = [shape[d] for d in keep] + [size], [strides[d] for d in keep] + [stride]
        elif name == "as_strided":
            shape, strides = list(static["size"]), list(static["stride"])
        elif name != "alias":
            return None
    return tuple(shape), tuple(strides)


def _unsqueeze(shape, strides, d):
    # PyTorch's unsqueeze: the new dim's stride spans the dim it is put before (1 at the end)
    strides.insert(d, shape[d] * strides[d] if d < len(shape) else 1)
    shape.insert(d, 1)


def _follow_index(spec, shape, strides):
    """Basic indexing (a spec of _ops.indexing) applied to shape and strides in place, as PyTorch's
    applySlicing does item by item; False for an item without a rule here."""
    skipped = len(shape) - sum(1 for item in spec if item is not None and item is not Ellipsis)
    d = 0
    for item in spec:
        if item is None:
            _unsqueeze(shape, strides, d)
            d += 1
        elif item is Ellipsis:
            d += skipped
        elif type(item) is int or item == ("i",):
            del shape[d], strides[d]
        elif type(item) is tuple and len(item) == 3 and item[0] == "s":
            shape[d], strides[d] = item[1], strides[d] * item[2]
            d += 1
        elif type(item) is tuple and len(item) == 3:
            shape[d], strides[d] = len(range(*slice(*item).indices(shape[d]))), strides[d] * (item[2] or 1)
            d += 1
        else:
            return False
    return True


def _strides_from_positions(pos):
    shape = pos.shape
    if pos.size == 0:
        return contiguous_strides(shape), 0
    origin = int(pos.reshape(-1)[0])
    strides = [0] * len(shape)
    for d in reversed(range(len(shape))):
        if shape[d] > 1:
            strides[d] = int(pos[(0,) * d + (1,) + (0,) * (len(shape) - d - 1)]) - origin
        else:
            strides[d] = strides[d + 1] * max(shape[d + 1], 1) if d + 1 < len(shape) else 1
    return tuple(strides), origin


def is_contiguous(t):
    if t._view is None or 0 in t.shape:   # PyTorch: an empty tensor is contiguous, whatever its strides
        return True
    expected = 1
    for size, stride in zip(reversed(tuple(t.shape)), reversed(strides(t))):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def view_strides(shape, strides, new_shape):
    """PyTorch's computeStride: the strides `new_shape` would have as a view, or None if impossible."""
    if not shape:
        return contiguous_strides(new_shape)
    if int(np.prod(shape)) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = strides[-1]
    tensor_numel, view_numel = 1, 1
    for d in reversed(range(len(shape))):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base_stride = strides[d - 1]
                tensor_numel, view_numel = 1, 1
    return tuple(new_strides) if view_d == -1 else None


# ---- views made with grad mode off ---------------------------------------------------------------

class _Nowhere:
    """The variable behind NOWHERE: gradients sent to it are dropped."""
    __slots__ = ()
    _hooks = None
    _view = None   # a plain variable: its (dropped) gradient needs no layout
    _requires_grad = False   # the gradients sent to it are never written
    _grad = property(lambda self: None, lambda self, value: None)


def _nowhere():
    from .autograd._node import AccumulateGrad
    return AccumulateGrad(_Nowhere())


NOWHERE = _nowhere()   # where the gradient of a view made with grad mode off goes (PyTorch: no edge)


def no_grad_view_message(t, indirect):
    info = t._view
    nr = info.output_nr if info.output_nr is not None and info.creation == "multi_output" else t._out_idx
    return view_creation_message(info.creation, t._grad_fn, nr, indirect)


def view_creation_message(creation, node, nr, indirect):
    """PyTorch's error for a view made with grad mode off or by a function returning several views (`creation`),
    output `nr` of `node` (None: a view with no history), when it (indirect: its base or another view of its
    base) is modified in place, or its history is read after."""
    if creation == "multi_output":
        prefix = (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view and" if node is not None
                  else "A view was created in no_grad mode and")
        what = ("its base or another view of its base has been modified inplace." if indirect
                else "is being modified inplace" + ("." if node is not None else " with grad mode enabled."))
        return (f"{prefix} {what} This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should replace the inplace "
                "operation by an out-of-place one.")
    # PyTorch names the node here without its "Backward0" suffix
    prefix = (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view of a view which was created in" if node is not None
              else "A view was created in")
    what = "its base or another view of its base has been" if indirect else "is being"
    if creation == "inference":
        return (f"{prefix} inference mode and {what} modified inplace in normal mode. Given that this use case "
                "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
                "and the inplace either both inside the inference_mode block (if you don't want the inplace to be "
                "tracked) or both outside (if you want the inplace to be tracked).")
    return (f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled. Given that this use case is "
            "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
            "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")


def check_rebase(t):
    """PyTorch's check when the history of a view made with grad mode off is read: refused once the view or
    its base was modified in place (its history would have to be regenerated)."""
    info = t._view
    if t._storage.version != info.grad_version and (t._grad_fn is not None or info.base._requires_grad):
        raise RuntimeError(no_grad_view_message(t, indirect=True))
