"""segment_reduce: data reduced over consecutive segments along an axis, the segments given by their lengths or
their offsets (a row of them per index of the dims before the axis).

PyTorch's backward is not the derivative of the reduction: ties of max and min share a positive gradient only
(a negative one goes whole to each tie), and a segment whose extreme is its initial value passes none back. The
entry's reverse form (Op.reverse_fn) is a custom VJP computing PyTorch's formulas.
"""
import functools
import math

import jax
import jax.numpy as jnp

from ._registry import defop, KEEP


def _layout(data, bounds, axis, offsets):
    """(x, ids, counts, rows, segments): data as (rows, n, inner); each position's segment (a flat index
    row * segments + segment, or rows * segments where it is in none); each segment's length, (rows, segments)."""
    lead, n = data.shape[:axis], data.shape[axis]
    rows, inner = math.prod(lead), math.prod(data.shape[axis + 1:])
    x = data.reshape(rows, n, inner)
    bounds = jnp.broadcast_to(bounds, lead + bounds.shape[-1:]).reshape(rows, bounds.shape[-1]).astype(jnp.int64)
    if offsets:
        starts, ends = bounds[:, :-1], bounds[:, 1:]
    else:
        ends = jnp.cumsum(bounds, axis=1)
        starts = ends - bounds
    segments = ends.shape[1]
    pos = jnp.arange(n)
    seg = jax.vmap(lambda e: jnp.searchsorted(e, pos, side="right"))(ends)   # the first segment ending past pos
    start = jnp.take_along_axis(starts, jnp.minimum(seg, segments - 1), axis=1) if segments else seg
    inside = (seg < segments) & (pos >= start)
    ids = jnp.where(inside, jnp.arange(rows)[:, None] * segments + seg, rows * segments)
    return x, ids.reshape(-1), ends - starts, rows, segments


def _per_segment(values, ids, rows, segments, how):
    """values (rows * n, inner) reduced per segment by `how` (jax.ops.segment_*), as (rows, segments, inner)."""
    out = how(values, ids, num_segments=rows * segments + 1)[:-1]
    return out.reshape(rows, segments, values.shape[-1])


def _segment_reduce(data, bounds, *, reduce, axis, initial, offsets):
    x, ids, counts, rows, segments = _layout(data, bounds, axis, offsets)
    flat = x.reshape(-1, x.shape[-1])
    init = None if initial is None else jnp.asarray(initial, data.dtype)
    if reduce in ("sum", "mean"):
        out = _per_segment(flat, ids, rows, segments, jax.ops.segment_sum)
        out = out if init is None else init + out
        if reduce == "mean":
            n = counts[:, :, None]
            empty = jnp.asarray(jnp.nan if init is None else init, data.dtype)
            out = jnp.where(n > 0, out / jnp.maximum(n, 1).astype(data.dtype), empty)
    elif reduce == "prod":
        out = _per_segment(flat, ids, rows, segments, jax.ops.segment_prod)
        out = out if init is None else init * out
    else:   # max, min: a NaN wins (PyTorch's reduction propagates it), the initial value takes part
        how = jax.ops.segment_max if reduce == "max" else jax.ops.segment_min
        out = _per_segment(flat, ids, rows, segments, how)
        nan = _per_segment(jnp.isnan(flat), ids, rows, segments, jax.ops.segment_max)
        out = jnp.where(nan, jnp.asarray(jnp.nan, data.dtype), out)
        if init is not None:
            out = (jnp.maximum if reduce == "max" else jnp.minimum)(init, out)
    lead = data.shape[:axis]
    return out.reshape(lead + (segments,) + data.shape[axis + 1:]).astype(data.dtype)


def _exclusive_products(x, ids):
    """Per position of x (rows, n, inner), the product of the other values of its segment (ids: (rows, n))."""
    def scan(values, flags):
        def combine(a, b):
            return jnp.where(b[1], b[0], a[0] * b[0]), a[1] | b[1]
        return jax.lax.associative_scan(combine, (values, jnp.broadcast_to(flags[:, :, None], values.shape)),
                                        axis=1)[0]
    one = jnp.ones_like(x[:, :1])
    starts = jnp.concatenate([jnp.ones_like(ids[:, :1], bool), ids[:, 1:] != ids[:, :-1]], axis=1)
    ends = jnp.concatenate([ids[:, 1:] != ids[:, :-1], jnp.ones_like(ids[:, :1], bool)], axis=1)
    # x shifted by one, a segment's first (last) position given 1, then multiplied up within each segment
    before = jnp.where(starts[:, :, None], one, jnp.concatenate([one, x[:, :-1]], axis=1))
    after = jnp.where(ends[:, :, None], one, jnp.concatenate([x[:, 1:], one], axis=1))
    return scan(before, starts) * scan(after[:, ::-1], ends[:, ::-1])[:, ::-1]


def _backward(reduce, axis, initial, offsets, saved, g):
    """PyTorch's _segment_reduce_backward: the gradient of data from that of the result."""
    data, bounds, out = saved
    x, ids, counts, rows, segments = _layout(data, bounds, axis, offsets)
    inner = x.shape[-1]
    g = g.reshape(rows * segments, inner)
    inside = (ids < rows * segments)[:, None]
    picked = jnp.clip(ids, 0, max(rows * segments - 1, 0))
    flat = x.reshape(-1, inner)
    zero = jnp.zeros((), data.dtype)
    g_at = jnp.where(inside, g[picked], zero) if segments else jnp.zeros_like(flat)
    if reduce == "sum":
        grad = g_at
    elif reduce == "mean":
        grad = g_at / jnp.maximum(counts.reshape(-1), 1)[picked][:, None].astype(data.dtype)
    elif reduce in ("max", "min"):
        out_at = out.reshape(rows * segments, inner)[picked] if segments else flat
        hit = inside & (jnp.isnan(flat) | (flat == out_at))
        grad = jnp.where(hit, g_at, zero)
        ties = _per_segment(hit.astype(jnp.int64), ids, rows, segments, jax.ops.segment_sum).reshape(-1, inner)
        ties_at = ties[picked] if segments else jnp.zeros_like(flat, jnp.int64)
        grad = jnp.where((ties_at >= 2) & (grad > 0), grad / ties_at.astype(data.dtype), grad)
    else:   # prod: g * out / x, or where x is 0 or NaN the product of the others (and the initial value)
        out_at = out.reshape(rows * segments, inner)[picked] if segments else flat
        others = _exclusive_products(x, ids.reshape(rows, x.shape[1])).reshape(-1, inner)
        if initial is not None:
            others = others * jnp.asarray(initial, data.dtype)
        special = jnp.isnan(flat) | (flat == 0)
        grad = jnp.where(special, g_at * others, g_at * out_at / jnp.where(special, 1, flat))
        grad = jnp.where(inside, grad, zero)
    return grad.reshape(data.shape).astype(data.dtype), None


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4, 5))
def _with_pytorch_vjp(data, bounds, reduce, axis, initial, offsets):
    return _segment_reduce(data, bounds, reduce=reduce, axis=axis, initial=initial, offsets=offsets)


def _forward(data, bounds, reduce, axis, initial, offsets):
    out = _segment_reduce(data, bounds, reduce=reduce, axis=axis, initial=initial, offsets=offsets)
    return out, (data, bounds, out)


_with_pytorch_vjp.defvjp(_forward, _backward)


def _reverse(data, bounds, *, reduce, axis, initial, offsets):
    return _with_pytorch_vjp(data, bounds, reduce, axis, initial, offsets)


# (PyTorch's node saves the data and the result: an in-place change of either fails the backward; its backward
# kernel takes the data and has no derivative)
segment_reduce = defop("segment_reduce", _segment_reduce, dtype_rule=KEEP, diff=(0,), reverse_fn=_reverse,
                       saves_output=True, saves_inputs=(0,), backward_name="torch::autograd::NotImplemented",
                       no_double_backward=(RuntimeError,
                                           "derivative for aten::_segment_reduce_backward is not implemented"))
