"""Max pooling that returns where each maximum came from, and its inverse, max unpooling.

PyTorch's indices are flat positions within each (N, C) plane. Its CPU kernel walks a window in
row-major order and keeps an element when `value > best or isnan(value)`: the first of equal maxima
wins, and the last NaN. The indices kernel below replays that walk, one kernel offset at a time, over
every window at once. The values are then a gather at those indices, so the gradient is PyTorch's
scatter to the index (`max_pool2d_with_indices_backward`).

A window is described per spatial dim by a static tuple: ("window", size, out, kernel, stride, pad,
dilation) for max_pool, ("adaptive", size, out) for adaptive_max_pool. Fractional max pooling's windows
start at positions drawn per plane, so they are computed in the kernel from its samples.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import defop, overload, KEEP


def _axis_table(spec):
    """(positions (out, K) clipped into the input, valid mask (out, K), first valid offset (out,))."""
    kind, size, out = spec[:3]
    o = np.arange(out)[:, None]
    if kind == "window":
        k, s, p, d = spec[3:]
        pos = o * s - p + np.arange(k)[None, :] * d
        valid = (pos >= 0) & (pos < size)
    else:
        start, end = (o * size) // out, -((-(o + 1) * size) // out)
        pos = start + np.arange(int(np.max(end - start)))[None, :]
        valid = pos < end
    return np.clip(pos, 0, size - 1), valid, np.argmax(valid, axis=1)


def _gather(x, lead, positions):
    for i, pos in enumerate(positions):
        x = jnp.take(x, pos, axis=lead + i)
    return x


def _max_pool_indices(x, windows):
    nd = len(windows)
    lead = x.ndim - nd
    spatial = x.shape[lead:]
    flat_stride = [int(np.prod(spatial[i + 1:])) for i in range(nd)]
    tables = [_axis_table(w) for w in windows]

    def flat_index(positions):
        grids = np.ix_(*positions)
        return sum(g * s for g, s in zip(grids, flat_stride))

    # Start from each window's first element inside the input (PyTorch's initial index).
    first = [pos[np.arange(pos.shape[0]), f] for pos, _, f in tables]
    best, index = _gather(x, lead, first), jnp.asarray(flat_index(first), jnp.int64)
    floating = jnp.issubdtype(x.dtype, jnp.inexact)
    for offsets in np.ndindex(*(pos.shape[1] for pos, _, _ in tables)):
        positions = [pos[:, o] for (pos, _, _), o in zip(tables, offsets)]
        valid = np.ones((), bool)
        for i, ((_, v, _), o) in enumerate(zip(tables, offsets)):
            valid = valid & v[:, o].reshape((-1,) + (1,) * (nd - 1 - i))
        if not valid.any():
            continue
        value = _gather(x, lead, positions)
        take = (value > best) | jnp.isnan(value) if floating else value > best
        if not valid.all():
            take = take & valid
        best = jnp.where(take, value, best)
        index = jnp.where(take, jnp.asarray(flat_index(positions), jnp.int64), index)
    return jnp.broadcast_to(index, x.shape[:lead] + index.shape[-nd:])


def _fractional_starts(sample, n, k, out, dtype):
    """PyTorch's generate_intervals: window starts from one sample in [0, 1), in the input's dtype."""
    if out == 1:
        return jnp.full(sample.shape + (1,), n - k, jnp.int64)
    alpha = jnp.asarray(n - k, dtype) / jnp.asarray(out - 1, dtype)
    i = jnp.arange(out - 1, dtype=dtype)
    s = sample[..., None].astype(dtype)
    starts = ((i + s) * alpha).astype(jnp.int32) - (s * alpha).astype(jnp.int32)
    last = jnp.full(sample.shape + (1,), n - k, jnp.int64)
    return jnp.concatenate([starts.astype(jnp.int64), last], axis=-1)


def _fractional_max_pool_indices(x, samples, kernel, out):
    """samples (*lead, nd): PyTorch's per-plane draws, ordered W, H for 2-d and T, H, W for 3-d."""
    nd = len(kernel)
    lead = x.ndim - nd
    spatial = x.shape[lead:]
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_fractional_starts(samples[..., order[d]], spatial[d], kernel[d], out[d], x.dtype) for d in range(nd)]
    flat = x.reshape(x.shape[:lead] + (-1,))

    def at(offsets):
        index = 0
        for d, o in enumerate(offsets):
            shape = x.shape[:lead] + (1,) * d + (out[d],) + (1,) * (nd - 1 - d)
            index = index + (starts[d] + o).reshape(shape) * int(np.prod(spatial[d + 1:]))
        index = jnp.broadcast_to(index, x.shape[:lead] + tuple(out))
        value = jnp.take_along_axis(flat, index.reshape(x.shape[:lead] + (-1,)), axis=-1).reshape(index.shape)
        return value, index

    best, index = at((0,) * nd)
    floating = jnp.issubdtype(x.dtype, jnp.inexact)
    for offsets in np.ndindex(*kernel):
        value, where = at(offsets)
        take = (value > best) | jnp.isnan(value) if floating else value > best
        best, index = jnp.where(take, value, best), jnp.where(take, where, index)
    return index


def _take_flat(x, index, nd):
    """x's values at flat per-plane positions: x (*lead, *spatial), index (*lead, *out), nd spatial dims."""
    lead = x.ndim - nd
    flat = x.reshape(x.shape[:lead] + (-1,))
    out = jnp.take_along_axis(flat, index.reshape(index.shape[:lead] + (-1,)), axis=-1)
    return out.reshape(index.shape)


def _scatter(x, index, size, add):
    lead = x.shape[:x.ndim - len(size)]
    rows = int(np.prod(lead))
    flat_x, flat_i = x.reshape(rows, -1), index.reshape(rows, -1)
    at = jnp.zeros((rows, int(np.prod(size))), x.dtype).at[jnp.arange(rows)[:, None], flat_i]
    return (at.add(flat_x) if add else at.set(flat_x)).reshape(lead + tuple(size))


@partial(jax.custom_jvp, nondiff_argnums=(2,))
def _max_unpool(x, index, size):
    """Each x written at its flat position of a zero plane of shape `size` (the last write wins)."""
    return _scatter(x, index, size, add=False)


@_max_unpool.defjvp
def _max_unpool_jvp(size, primals, tangents):
    # PyTorch's backward gathers the gradient at every index, repeated ones included (a scatter's own
    # derivative would send it to the last write only): the tangent is scattered with add.
    x, index = primals
    return _max_unpool(x, index, size), _scatter(tangents[0], index, size, add=True)


max_pool_indices = defop("max_pool_indices", _max_pool_indices, dtype_rule=KEEP, diff=())
# The values at the indices: the gradient scatters to them, as PyTorch's backward kernels do.
# 1-d pooling runs as PyTorch's does: unsqueezed to 2-d (the callers), so nodes are named by 2-d or 3-d.
# PyTorch's backward kernels take the input: a gradient recorded through them depends on it (Op.fused_backward).
max_pool_with_indices = defop("max_pool_with_indices", _take_flat, dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1),
                              node="max_pool2d_with_indices", fused_backward=True, backward_name=True,
                              overloads=[overload("MaxPool3DWithIndicesBackward0", nd=3)])
adaptive_max_pool_with_indices = defop("adaptive_max_pool_with_indices", _take_flat, dtype_rule=KEEP, diff=(0,),
                                       saves_inputs=(0, 1), fused_backward=True, backward_name=True,
                                       node="adaptive_max_pool2d",
                                       overloads=[overload("AdaptiveMaxPool3DBackward0", nd=3)])
fractional_max_pool_indices = defop("fractional_max_pool_indices", _fractional_max_pool_indices, dtype_rule=KEEP,
                                    diff=())
fractional_max_pool_with_indices = defop("fractional_max_pool_with_indices", _take_flat, dtype_rule=KEEP, diff=(0,),
                                         saves_inputs=(0, 1), fused_backward=True, backward_name=True,
                                         node="fractional_max_pool2d",
                                         overloads=[overload("FractionalMaxPool3DBackward0", nd=3)])
max_unpool = defop("max_unpool", lambda x, index, size, nd: _max_unpool(x, index, size), dtype_rule=KEEP,
                   diff=(0,), node="max_unpool2d", overloads=[overload("MaxUnpool3DBackward0", nd=3)])
