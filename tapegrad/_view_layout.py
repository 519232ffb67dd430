"""Layouts of views: strides and storage offsets as PyTorch would report them.

tapegrad's views are recipes over a base array, not strided memory; PyTorch's strides and offsets are read
off the recipe applied to an iota of the base (the storage positions of the view's elements), and the
strides of size-1 dimensions, which positions cannot show, follow PyTorch's rule for each view op
(Op.stride_rule).
"""
import jax
import jax.numpy as jnp
import numpy as np


def _offsets(positions):
    # (while tapegrad.compile traces, the host-side offsets of the traced call: see traced_offsets)
    return tuple(traced_offsets.get(id(p), p) for p in positions) if traced_offsets else positions


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
    from ._views import compose
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
    """(shape, strides) of a recipe applied to a contiguous base, as PyTorch's view ops compute them (each
    step's Op.stride_rule); None for a step without a rule."""
    shape, strides = list(base_shape), list(contiguous_strides(base_shape))
    for op, static in steps:
        followed = None if op.stride_rule is None else op.stride_rule(dict(static), shape, strides)
        if followed is None:
            return None
        shape, strides = followed
    return tuple(shape), tuple(strides)


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
    if 0 in shape:
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
