"""NumPy rules for lax's gather and scatter primitives (indexing, embeddings, take_along_axis and their
gradients), with lax's semantics: windows clamped or filled and dropped as the mode says. Registered into
_numpy_rules' table."""
import functools

import numpy as np


def _mode_name(mode):
    return getattr(mode, "name", str(mode)).upper()


def _window_indices(operand_shape, indices, out_shape, window_dims, window_sizes, fixed_dims, start_map,
                    operand_batching, indices_batching, clamp):
    """Per operand dimension, an index array (broadcastable to out_shape) of the element each output
    (gather) or update (scatter) position reads or writes, and a mask of the in-bounds windows.

    window_dims: output dims that run along a window; fixed_dims: operand dims without a window (size 1:
    collapsed or inserted, and the batching dims). Indices hold their index vector in the last dim."""
    indices = np.asarray(indices)
    batch_shape = indices.shape[:-1]
    batch_positions = [p for p in range(len(out_shape)) if p not in window_dims]
    placed = [1] * len(out_shape)
    for j, p in enumerate(batch_positions):
        placed[p] = batch_shape[j]

    def along_batch(a):
        return np.reshape(a, placed)

    window_operand_dims = [d for d in range(len(operand_shape)) if d not in fixed_dims]
    inside = np.ones(batch_shape, bool)
    index = []
    for d, size in enumerate(operand_shape):
        if d in start_map:
            start = indices[..., start_map.index(d)].astype(np.int64)
        elif d in operand_batching:
            axis = indices_batching[operand_batching.index(d)]
            shape = [1] * len(batch_shape)
            shape[axis] = batch_shape[axis]
            start = np.broadcast_to(np.arange(batch_shape[axis]).reshape(shape), batch_shape)
        else:
            start = np.zeros(batch_shape, np.int64)
        width = window_sizes[d]
        if clamp:
            start = np.clip(start, 0, size - width)
        else:
            ok = (start >= 0) & (start <= size - width)
            inside &= ok
            start = np.where(ok, start, 0)
        idx = along_batch(start)
        if d in window_operand_dims:
            out_dim = window_dims[window_operand_dims.index(d)]
            shape = [1] * len(out_shape)
            shape[out_dim] = out_shape[out_dim]
            idx = idx + np.arange(out_shape[out_dim]).reshape(shape)
        index.append(idx)
    return tuple(np.broadcast_arrays(*index)), along_batch(inside)


def _fill_value(dtype, value):
    if value is not None:
        return value
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _gather(params):
    dn, sizes = params["dimension_numbers"], tuple(params["slice_sizes"])
    offset_dims, collapsed = tuple(dn.offset_dims), tuple(dn.collapsed_slice_dims)
    start_map = tuple(dn.start_index_map)
    operand_batching = tuple(getattr(dn, "operand_batching_dims", ()))
    indices_batching = tuple(getattr(dn, "start_indices_batching_dims", ()))
    fill = _mode_name(params["mode"]).endswith("FILL_OR_DROP")

    take_axis = collapsed[0] if (len(collapsed) == 1 and start_map == collapsed and not operand_batching) else None
    windowed = not collapsed and not operand_batching and offset_dims == tuple(range(len(sizes)))
    along = _along_axis(len(sizes), offset_dims, collapsed, start_map, operand_batching, indices_batching, sizes)

    def gather(x, indices):
        x, indices = np.asarray(x), np.asarray(indices)
        if along is not None:
            out = _take_along(x, indices, along, fill, params.get("fill_value"))
            if out is not None:
                return out
        if take_axis is not None:
            out = _take(x, indices, take_axis, sizes, offset_dims, fill)
            if out is not None:
                return out
        elif windowed and indices.ndim == 1:
            out = _window(x, indices, start_map, sizes, fill)
            if out is not None:
                return out
        batch_shape = list(indices.shape[:-1])
        windows = [sizes[d] for d in range(x.ndim) if d not in collapsed and d not in operand_batching]
        out_shape = []
        for p in range(len(batch_shape) + len(offset_dims)):
            out_shape.append(windows[offset_dims.index(p)] if p in offset_dims else batch_shape.pop(0))
        index, inside = _window_indices(x.shape, indices, out_shape, offset_dims, sizes,
                                        collapsed + operand_batching, start_map, operand_batching,
                                        indices_batching, clamp=not fill)
        out = np.broadcast_to(x[index], out_shape)
        if fill:
            out = np.where(inside, out, np.asarray(_fill_value(x.dtype, params.get("fill_value")), x.dtype))
        return out
    return gather


def _take(x, indices, axis, sizes, offset_dims, fill):
    """The gather of an embedding or `x[index_tensor]`: whole slices along one axis, by np.take (the
    general path below builds an index array per operand dimension, ten times the cost); None where the
    gather is not that one."""
    n = x.shape[axis]
    if indices.shape[-1:] != (1,) or any(sizes[d] != (1 if d == axis else x.shape[d]) for d in range(x.ndim)):
        return None
    i = indices[..., 0]
    if fill:
        if i.size and (i.min() < 0 or i.max() >= n):   # (out of bounds fills: the general path's business)
            return None
    else:
        i = np.clip(i, 0, n - 1)
    out = np.take(x, i, axis=axis)
    # np.take puts the index's dims where `axis` was; the gather puts the windows at offset_dims
    windows = [d if d < axis else d - 1 + i.ndim for d in range(x.ndim) if d != axis]
    batch = iter(range(axis, axis + i.ndim))
    order = [windows[offset_dims.index(p)] if p in offset_dims else next(batch) for p in range(out.ndim)]
    return out if order == sorted(order) else out.transpose(order)


def _along_axis(ndim, window_dims, fixed, start_map, operand_batching, indices_batching, sizes):
    """The axis of a take_along_axis-shaped gather or scatter (cross_entropy's pick of each row's target
    and its gradient): one element per index, every other operand dimension a batching dimension at the
    same place in the indices; None for any other."""
    if window_dims or len(start_map) != 1 or tuple(fixed) != start_map or any(s != 1 for s in sizes):
        return None
    axis = start_map[0]
    others = tuple(d for d in range(ndim) if d != axis)
    return axis if operand_batching == others and indices_batching == others else None


def _along_index(shape, indices, axis, clamp):
    """The operand position each index picks, as a tuple of broadcasting index arrays, and the mask of the
    in-bounds ones (None when clamped or all in bounds); None when the indices are not one per position of
    a batch."""
    if indices.ndim != len(shape) + 1 or indices.shape[-1] != 1 or any(
            indices.shape[d] != shape[d] for d in range(len(shape)) if d != axis):
        return None
    i = indices[..., 0]
    n = shape[axis]
    inside = None
    if clamp:
        i = np.clip(i, 0, n - 1)
    elif i.size and (i.min() < 0 or i.max() >= n):
        inside = (i >= 0) & (i < n)
        i = np.where(inside, i, 0)
    index = list(_grid(shape))
    index[axis] = i
    return tuple(index), inside


@functools.lru_cache(maxsize=256)
def _grid(shape):
    """Per dimension of `shape`, its positions as an array along that dimension (for broadcasting)."""
    return tuple(np.arange(d).reshape((1,) * k + (d,) + (1,) * (len(shape) - k - 1)) for k, d in enumerate(shape))


def _take_along(x, indices, axis, fill, fill_value):
    """np.take_along_axis with lax's out-of-bounds rule: clamped, or filled."""
    found = _along_index(x.shape, indices, axis, clamp=not fill)
    if found is None:
        return None
    index, inside = found
    out = x[index]
    if inside is not None:
        out = np.where(inside, out, np.asarray(_fill_value(x.dtype, fill_value), x.dtype))
    return out


def _window(x, starts, start_map, sizes, fill):
    """A gather that is a dynamic slice (one window, starts given for some dimensions), as a slice of x."""
    index = []
    for d, width in enumerate(sizes):
        start = int(starts[start_map.index(d)]) if d in start_map else 0
        if not 0 <= start <= x.shape[d] - width:
            if fill:
                return None
            start = min(max(start, 0), x.shape[d] - width)
        index.append(slice(start, start + width))
    return x[tuple(index)]


def _scatter(combine):
    def make(params):
        dn = params["dimension_numbers"]
        window_dims, inserted = tuple(dn.update_window_dims), tuple(dn.inserted_window_dims)
        start_map = tuple(dn.scatter_dims_to_operand_dims)
        operand_batching = tuple(getattr(dn, "operand_batching_dims", ()))
        indices_batching = tuple(getattr(dn, "scatter_indices_batching_dims", ()))
        clamp = _mode_name(params["mode"]).endswith("CLIP")
        fixed = inserted + operand_batching
        along = _along_axis(len(fixed), window_dims, inserted, start_map, operand_batching, indices_batching,
                            (1,) * len(fixed))

        def scatter(x, indices, updates):
            out = np.array(x, copy=True)
            updates = np.asarray(updates)
            if along is not None and out.ndim == len(fixed):
                indices = np.asarray(indices)
                found = _along_index(out.shape, indices, along, clamp)
                if found is not None and updates.shape == indices.shape[:-1]:
                    index, inside = found
                    if inside is not None:   # XLA skips what falls outside
                        index = tuple(np.broadcast_to(i, updates.shape)[inside] for i in index)
                        updates = updates[inside]
                    combine(out, index, updates)
                    return out
            windows = iter(updates.shape[d] for d in window_dims)
            sizes = [1 if d in fixed else next(windows) for d in range(out.ndim)]
            index, inside = _window_indices(out.shape, indices, updates.shape, window_dims, sizes, fixed,
                                            start_map, operand_batching, indices_batching, clamp)
            if not clamp:   # XLA skips a window that does not fit whole
                keep = np.broadcast_to(inside, updates.shape)
                index = tuple(i[keep] for i in index)
                updates = updates[keep]
            combine(out, index, updates)
            return out
        return scatter
    return make


def _assign(out, index, updates):
    out[index] = updates


RULES = {"gather": _gather, "scatter": _scatter(_assign)}
RULES["scatter-add"] = RULES["scatter_add"] = _scatter(np.add.at)
RULES["scatter-mul"] = RULES["scatter_mul"] = _scatter(np.multiply.at)
RULES["scatter-min"] = RULES["scatter_min"] = _scatter(np.minimum.at)
RULES["scatter-max"] = RULES["scatter_max"] = _scatter(np.maximum.at)
