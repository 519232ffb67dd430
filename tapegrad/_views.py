"""Views: tensors that share a base's Storage and read it through a recipe.

A view's recipe is the sequence of view ops (op, statics) applied to the base
array. Reading applies it (one jitted call, cached by recipe, and the result
cached until the storage version changes). Writing through a view rewrites
the base functionally: the recipe applied to an iota of the base gives the
flat base positions of the view's elements, and the new values are scattered
there. One mechanism serves every view op.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np

from . import _dispatch
from ._op_functions import pure_fn
from ._view_info import ViewInfo, grad_views as _grad_views  # noqa: F401 (ViewInfo re-exported)


def relative_steps(info):
    """(steps, positions) from the view's base (which may itself read the storage through a recipe) to
    the view: the base's own recipe is a prefix of the view's."""
    base_view = info.base._view
    if base_view is None:
        return info.steps, info.positions
    return info.steps[len(base_view.steps):], info.positions[len(base_view.positions):]


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
    for v in list(views):
        if v is skip or v._view is None or v._view.base is not base or (with_history and v._grad_fn is None):
            continue
        if v._view.creation is not None:
            v._requires_grad = True   # its history is not regenerated: using it raises (check_rebase)
            continue
        steps, positions = relative_steps(v._view)
        replay = _dispatch.apply(view_replay, base, *positions, steps=steps)
        if replay._grad_fn is not None:
            v._attach(replay._grad_fn, 0)


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
    if traced_offsets:
        positions = tuple(traced_offsets.get(id(p), p) for p in positions)
    key = (t._view.steps, positions, base_shape)
    found = _layouts.get(key)
    if found is None:
        if len(_layouts) >= MAX_LAYOUTS:   # (a loop slicing at a new offset each step makes a key per offset)
            _layouts.clear()
        found = _layouts[key] = _strides_from_positions(_host_positions(t._view.steps, positions, base_shape))
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
        found = _view_strides[key] = _strides_from_positions(_host_positions(info.steps, zeros, base_shape))[0]
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
    _grad = property(lambda self: None, lambda self, value: None)


def _nowhere():
    from .autograd._node import AccumulateGrad
    return AccumulateGrad(_Nowhere())


NOWHERE = _nowhere()   # where the gradient of a view made with grad mode off goes (PyTorch: no edge)


def no_grad_view_message(t, indirect):
    info = t._view
    node = t._grad_fn
    if info.creation == "multi_output":
        nr = info.output_nr if info.output_nr is not None else t._out_idx
        prefix = (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view and" if node is not None
                  else "A view was created in no_grad mode and")
        what = ("its base or another view of its base has been modified inplace." if indirect
                else "is being modified inplace" + ("." if node is not None else " with grad mode enabled."))
        return (f"{prefix} {what} This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should replace the inplace "
                "operation by an out-of-place one.")
    # PyTorch names the node here without its "Backward0" suffix
    prefix = (f"Output {t._out_idx} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view of a view which was created in" if node is not None
              else "A view was created in")
    what = "its base or another view of its base has been" if indirect else "is being"
    if info.creation == "inference":
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
