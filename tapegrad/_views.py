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

import jax.numpy as jnp
import numpy as np

from . import _dispatch
from ._op_functions import pure_fn
from ._view_info import ViewInfo, grad_views as _grad_views  # noqa: F401 (ViewInfo re-exported)
from ._view_layout import (  # noqa: F401 (re-exported: a view's layout is read as _views.layout...)
    MAX_LAYOUTS, _host_positions, _offsets, _strides_from_positions, contiguous_strides, is_contiguous, layout,
    strides, traced_offsets, view_strides)


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
    source = base
    for v in list(views):
        if v is skip or v._view is None or v._view.base is not base or (with_history and v._grad_fn is None):
            continue
        if v._view.creation is not None:
            v._requires_grad = True   # its history is not regenerated: using it raises (check_rebase)
            continue
        if not source._requires_grad:
            source = _gradless(base)
        replay = replayed(source, *relative_steps(v))
        if replay._grad_fn is not None:
            v._view.unread = v._view.unread or v._grad_fn is None
            v._attach(replay._grad_fn, 0)


def replayed(source, steps, positions):
    """source read through a view's (steps, positions), recorded as PyTorch regenerates the history of a view
    whose base changed: each run of steps that select elements as one as_strided of what it reads (view_replay,
    AsStridedBackward0), each step that changes values (Op.value_view: ConjBackward0, ViewAsRealBackward0) as
    itself."""
    from ._ops.indexing import positions_in, view_replay
    x, run, start, i = source, (), 0, 0
    for op, static in steps:
        n = positions_in(static)
        if op.value_view is None:
            run += ((op, static),)
        else:
            if run:
                x = _dispatch.apply(view_replay, x, *positions[start:i], steps=run)
            x = _dispatch.apply(op, x, *positions[i:i + n], **dict(static))
            run, start = (), i + n
        i += n
    return _dispatch.apply(view_replay, x, *positions[start:], steps=run) if run else x


def _gradless(base):
    """A stand-in for a base that does not require grad, under its views that have a history (views of a
    leaf that is itself a view): PyTorch regenerates their grad_fn as as_strided of the base with no edge,
    so their gradient is dropped. The stand-in's goes to NOWHERE."""
    stand_in = base.detach()
    stand_in._requires_grad = True
    stand_in._accumulator = weakref.ref(NOWHERE)
    return stand_in


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
    """PyTorch's error for a view made with grad mode off, by a function returning several views or by a custom
    Function (`creation`), output `nr` of `node` (None: a view with no history), when it (indirect: its base or
    another view of its base) is modified in place, or its history is read after."""
    if creation == "multi_output":
        prefix = (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view and" if node is not None
                  else "A view was created in no_grad mode and")
        what = ("its base or another view of its base has been modified inplace." if indirect
                else "is being modified inplace" + ("." if node is not None else " with grad mode enabled."))
        return (f"{prefix} {what} This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should replace the inplace "
                "operation by an out-of-place one.")
    if creation == "custom_function":
        what = "its base or another view of its base has been modified inplace." if indirect else \
            "is being modified inplace."
        return (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view and {what} This view was "
                "created inside a custom Function (or because an input was returned as-is) and the autograd logic to "
                "handle view+inplace would override the custom backward associated with the custom Function, leading "
                "to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
                "custom Function.")
    # PyTorch names the node here without its "Backward0" suffix
    prefix = (f"Output {nr} of {re.sub(r'Backward[0-9]*$', '', node.name())} is a view of a view which was created "
              "in" if node is not None else "A view was created in")
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
