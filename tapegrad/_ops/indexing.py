"""Indexing: __getitem__ / __setitem__ over a hashable index spec, and the gather/scatter family.

The spec encodes ints, slices, None and Ellipsis statically; integer/bool tensor
indices are positional array arguments (marked by "T" in the spec). Index bounds
are checked on the host by the callers (JAX would clamp silently).
"""
import jax
import jax.numpy as jnp

from ._cast import written_as
from ._crediting_scatter import crediting_set
from ._registry import defop, overload, KEEP
from ._stride_rules import index_strides


def build_index(spec, arrays):
    arrays = iter(arrays)
    out = []
    for s in spec:
        if s == "T":
            out.append(next(arrays))
        elif type(s) is tuple:
            out.append(slice(*s))
        else:
            out.append(s)
    return tuple(out)


def _getitem(a, *arrays, spec):
    return a[build_index(spec, arrays)]


# ---- basic indexing with the positions as values ------------------------------------------------
# x[t], x[i:i+n], narrow and select keep their shape while the position changes (a loop over time steps,
# batches sliced at a new offset): the position is an argument of the op, not part of its signature, so
# every position runs the same kernel and the same compiled program (lax.dynamic_slice). The spec marks
# such an index ("i",) and such a slice ("s", length, step); the positions follow the tensor as ints.
# They are always in range: the caller checks bounds and computes each slice's length on the host, with
# PyTorch's clamping, before recording.

def dynamic_spec(spec, shape):
    """(spec with positions marked, the positions) for a basic-indexing spec of a tensor of `shape`."""
    consumed = sum(1 for s in spec if s is not None and s is not Ellipsis)
    out, ints, d = [], [], 0
    for s in spec:
        if s is None:
            out.append(s)
        elif s is Ellipsis:
            out.append(s)
            d += len(shape) - consumed
        elif type(s) is int:
            out.append(("i",))
            ints.append(s % shape[d])
            d += 1
        elif s == (None, None, None):   # `:`, the whole dimension (of any size, a symbolic one included)
            out.append(s)
            d += 1
        elif jax.export.is_symbolic_dim(shape[d]) and s[1:] in ((None, None), (None, 1)) and (s[0] or 0) >= 0:
            out.append(("s", shape[d] - (s[0] or 0), 1))   # `k:` of a symbolic size (tapegrad.export)
            ints.append(s[0] or 0)
            d += 1
        else:
            r = range(*slice(*s).indices(shape[d]))
            if len(r) == 0 or (r.start == 0 and len(r) == shape[d] and r.step == 1):
                out.append(s)   # empty, or the whole dimension: nothing changes with a position
            else:
                out.append(("s", len(r), r.step))
                ints.append(r.start)
            d += 1
    return tuple(out), tuple(ints)


def _dynamic_getitem(a, *positions, spec):
    positions = iter(positions)
    consumed = sum(1 for s in spec if s is not None and s is not Ellipsis)
    starts, sizes, after = [], [], []
    d = 0
    for s in spec:
        if s is None:
            after.append(None)
            continue
        if s is Ellipsis:
            for _ in range(a.ndim - consumed):
                starts.append(0)
                sizes.append(a.shape[d])
                after.append(slice(None))
                d += 1
            continue
        if type(s) is tuple and s and type(s[0]) is str:
            starts.append(next(positions))
            if s[0] == "i":
                sizes.append(1)
                after.append(0)
            else:
                _, length, step = s
                sizes.append((length - 1) * step + 1)
                after.append(slice(None, None, step))
        else:
            starts.append(0)
            sizes.append(a.shape[d])
            after.append(slice(*s) if type(s) is tuple else s)
        d += 1
    starts += [0] * (a.ndim - d)
    sizes += list(a.shape[d:])
    return jax.lax.dynamic_slice(a, starts, sizes)[tuple(after)]


def positions_in(static):
    """How many position arguments a view op called with these statics takes."""
    for key, value in static:
        if key == "spec":
            return sum(1 for s in value if type(s) is tuple and s and type(s[0]) is str)
    return 0


def _setitem(a, v, *arrays, spec, accumulate=False, whole=False):
    v = written_as(v, a.dtype)
    if accumulate:
        return a.at[build_index(spec, arrays)].add(v)
    return a.at[build_index(spec, arrays)].set(v)


def _setitem_backward(a, v, *arrays, spec, accumulate=False, whole=False):
    """_setitem, differentiated as PyTorch's index_put backward (forward-mode AD differentiates _setitem, the
    write that lands)."""
    if accumulate:
        return _setitem(a, v, *arrays, spec=spec, accumulate=True)
    return crediting_set(("spec", spec), lambda arrays: build_index(spec, arrays))(a, written_as(v, a.dtype), arrays)


def _scatter_index(idx, dim):
    # Full index tuple addressing, for each element of idx, position idx along dim.
    grid = list(jnp.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return tuple(grid)


def _crop(x, shape):
    return x[tuple(slice(0, s) for s in shape)]


def _as_vectors(a, idx, src=None):
    """PyTorch's gather and scatter read a 0-d tensor as a vector of one element (JAX's take and scatter
    refuse the ranks apart): a, idx and a non-scalar src reshaped so, for a kernel along dim 0."""
    if src is not None and jnp.ndim(src):
        src = src.reshape(-1)
    return a.reshape(-1), idx.reshape(-1), src


def _gather(a, idx, dim):
    if idx.size == 0:   # (no shape check applies to an empty index: PyTorch returns its shape)
        return jnp.zeros(idx.shape, a.dtype)
    if a.ndim == 0 or idx.ndim == 0:
        return _gather(*_as_vectors(a, idx)[:2], 0).reshape(idx.shape)
    crop = tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(idx.shape))
    return jnp.take_along_axis(a[crop], idx, axis=dim)


def _scatter(a, idx, src, dim, reduce=None, refused=None):
    if idx.size == 0:
        return a
    if a.ndim == 0 or idx.ndim == 0:
        return _scatter(*_as_vectors(a, idx, src), 0, reduce).reshape(a.shape)
    at = a.at[_scatter_index(idx, dim)]
    src = jnp.broadcast_to(jnp.asarray(src, a.dtype), idx.shape) if jnp.ndim(src) == 0 else \
        _crop(src, idx.shape).astype(a.dtype)
    if reduce == "add":
        return at.add(src)
    if reduce == "multiply":
        return at.multiply(src)
    return at.set(src)


def _scatter_backward(a, idx, src, dim, reduce=None, refused=None):
    """_scatter, differentiated as PyTorch's: every copy written to a repeated position gets its gradient
    (src's is grad.gather(dim, index))."""
    if reduce is not None or jnp.ndim(src) == 0 or idx.size == 0:
        return _scatter(a, idx, src, dim, reduce)
    if a.ndim == 0 or idx.ndim == 0:
        return _scatter_backward(*_as_vectors(a, idx, src), 0).reshape(a.shape)
    written = crediting_set(("scatter", dim), lambda arrays: _scatter_index(arrays[0], dim))
    return written(a, _crop(src, idx.shape).astype(a.dtype), (idx,))


def _reduce_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if jnp.issubdtype(dtype, jnp.inexact):
        return -jnp.inf if reduce == "amax" else jnp.inf
    info = jnp.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_reduce(a, idx, src, dim, reduce, include_self, refused=None):
    if idx.size == 0:
        return a
    if a.ndim == 0 or idx.ndim == 0:
        return _scatter_reduce(*_as_vectors(a, idx, src), 0, reduce, include_self).reshape(a.shape)
    where = _scatter_index(idx, dim)
    src = _crop(src, idx.shape)
    base = a if include_self else a.at[where].set(jnp.asarray(_reduce_identity(reduce, a.dtype), a.dtype))
    if reduce in ("sum", "mean"):
        out = base.at[where].add(src)
        if reduce == "mean":
            count = jnp.zeros(a.shape, a.dtype).at[where].add(1) + (1 if include_self else 0)
            count = jnp.where(count == 0, 1, count)
            out = out / count if jnp.issubdtype(a.dtype, jnp.inexact) else out // count
        return out
    if reduce == "prod":
        return _scatter_prod(base, where, src)
    # amax/amin: JAX's derived gradient splits a slot's cotangent evenly among the values equal to its
    # result, as PyTorch does. With include_self=False the excluded self values were replaced by the
    # identity above and take no share; PyTorch (2.x, scatter_reduce_backward) still counts a self value
    # equal to the result, so its src gradients then add up to less than the cotangent. Ours is the
    # mathematically right one (tests/test_scatter_reduce.py checks both).
    return base.at[where].max(src) if reduce == "amax" else base.at[where].min(src)


def _scatter_prod(base, where, src):
    """base.at[where].multiply(src), written so that JAX derives the gradient, zeros included.

    Per slot: the product of its non-zero factors times the product of its zero factors. The first
    has gradient product/factor (exact, no factor is zero); the second is 1 with no zero, the sum of
    the zero factors with exactly one (value 0, gradient 1 for that factor: the product of the others
    then flows to it) and 0 with more (no gradient, as every exclusive product is 0).
    """
    base_zero, src_zero = base == 0, src == 0
    nonzero = _nonzero_product(jnp.where(base_zero, jnp.ones_like(base), base), where,
                               jnp.where(src_zero, jnp.ones_like(src), src))
    zeros = base_zero.astype(jnp.int32).at[where].add(src_zero.astype(jnp.int32))
    zero_sum = jnp.where(base_zero, base, 0).at[where].add(jnp.where(src_zero, src, 0))
    zero_part = jnp.where(zeros == 0, jnp.ones_like(base), jnp.where(zeros == 1, zero_sum, jnp.zeros_like(base)))
    return nonzero * zero_part


@jax.custom_jvp
def _nonzero_product(base, where, src):
    # JAX differentiates a scatter-multiply only with unique indices; with every factor non-zero its
    # tangent is the product times the scattered sum of relative tangents.
    return base.at[where].multiply(src)


@_nonzero_product.defjvp
def _nonzero_product_jvp(primals, tangents):
    base, where, src = primals
    d_base, _, d_src = tangents
    out = _nonzero_product(base, where, src)
    return out, out * (d_base / base).at[where].add(d_src / src)


def _dim_index(dim, idx):
    return (slice(None),) * dim + (idx,)


def _along(a, dim, idx, update):
    """update(a.at[idx along dim]); a 0-d `a` read as a vector of one element, as PyTorch's index ops do."""
    if a.ndim == 0:
        return update(a.reshape(1).at[idx]).reshape(())
    return update(a.at[_dim_index(dim, idx)])


def _index_copy_backward(a, idx, src, dim):
    """index_copy differentiated as PyTorch's: every copy written to a repeated position gets its gradient."""
    if a.ndim == 0:
        return _index_copy_backward(a.reshape(1), idx, jnp.broadcast_to(src, idx.shape), 0).reshape(())
    return crediting_set(("dim", dim), lambda arrays: _dim_index(dim, arrays[0]))(a, src, (idx,))


def _masked_scatter(a, mask, src):
    mask = jnp.broadcast_to(mask, a.shape)
    positions = jnp.cumsum(mask.reshape(-1)) - 1
    taken = src.reshape(-1)[jnp.clip(positions, 0, src.size - 1)].reshape(a.shape)
    return jnp.where(mask, taken, a)


def _masked_select(a, mask, size):
    shape = jnp.broadcast_shapes(a.shape, mask.shape)
    return jnp.broadcast_to(a, shape)[jnp.nonzero(jnp.broadcast_to(mask, shape), size=size)]


def _take_along_dim(a, idx, dim):
    if dim is None:
        return jnp.take_along_axis(a.reshape(-1), idx.reshape(-1), axis=0)
    # (the caller broadcast `a` against idx apart from dim; idx is broadcast to a here)
    return jnp.take_along_axis(a, jnp.broadcast_to(idx, a.shape[:dim] + idx.shape[dim:dim + 1] + a.shape[dim + 1:]),
                               axis=dim)


# ---- __getitem__ / __setitem__ -------------------------------------------------------------
# Basic indexing is a view; PyTorch names the node after the last view op it applies.
select = defop("select", _dynamic_getitem, dtype_rule=KEEP, diff=(0,), view=True, stride_rule=index_strides,
               backward_name="SelectBackwardBackward0")
slice_ = defop("slice", _dynamic_getitem, dtype_rule=KEEP, diff=(0,), view=True, stride_rule=index_strides,
               backward_name="SliceBackwardBackward0")
index_unsqueeze = defop("index_unsqueeze", _getitem, dtype_rule=KEEP, diff=(0,), view=True, node="unsqueeze",
                        stride_rule=index_strides, backward_name="SqueezeBackward1")
index_alias = defop("index_alias", _getitem, dtype_rule=KEEP, diff=(0,), view=True, node="alias",
                    stride_rule=index_strides)
index_alias.hands_grad = (0,)


def _inserted_dims(spec, ndim):
    """The result's dims an indexing spec of full slices, `...` and None inserts (None for another spec)."""
    consumed = sum(1 for s in spec if s is not None and s is not Ellipsis)
    inserted, out = [], 0
    for s in spec:
        if s is None:
            inserted.append(out)
            out += 1
        elif s is Ellipsis:
            out += ndim - consumed
        elif s == (None, None, None):
            out += 1
        else:
            return None
    return inserted


def _unsqueeze_back(static, shape, out_shape):
    # x[None]: one unsqueeze per None, squeezed back last first
    inserted = _inserted_dims(static["spec"], len(shape))
    return None if inserted is None else [("squeeze", d) for d in reversed(inserted)]


index_unsqueeze.hands_grad = _unsqueeze_back
index = defop("index", _getitem, dtype_rule=KEEP, diff=(0,), backward_name="IndexPutImplBackward0")
# x[i] = v: PyTorch's index_put_ on x itself (IndexPutBackward0) when the index is only tensors, full slices
# and `...` (`whole`), else on the view its other items make (CopySlices); a Python value is a wrapped scalar.
index_put = defop("index_put", _setitem, dtype_rule=KEEP, diff=(0, 1), node_name="torch::autograd::CopySlices",
                  reverse_fn=_setitem_backward,
                  wraps_scalars=True, overloads=[overload("IndexPutBackward0", whole=True)])


def _copy_slices(base, new, *positions, steps, outside=None):
    from .._views import scatter_into
    return scatter_into(steps, base, new, positions)


def _replay(base, *positions, steps):
    from .._views import compose
    return compose(steps)(base, *positions)


# Writing through a view of a tensor in the graph: one node on the base (PyTorch's CopySlices),
# and the view's history rebased as a fresh view of the new base.
# outside: PyTorch's error, when the view holds storage its base does not (as_strided_ shrank the base
# since): its CopySlices' backward fails to lay the view out in a gradient of the base's geometry.
copy_slices = defop("copy_slices", _copy_slices, dtype_rule=KEEP, node_name="torch::autograd::CopySlices",
                    node_wraps=1,
                    no_derivative=lambda steps, outside=None: None if outside is None else (RuntimeError, outside))
view_replay = defop("view_replay", _replay, dtype_rule=KEEP, node="as_strided")

# ---- gather / scatter family -------------------------------------------------------------------
# PyTorch's gather (and take) backward saves the input itself (for its sizes), so an in-place change of
# it fails too
gather = defop("gather", _gather, dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1), backward_name="ScatterAddBackward0")
# scatter with reduce=: PyTorch records a node that cannot be differentiated (NotImplemented)
_SCATTER_REDUCE_GRAD = overload("torch::autograd::NotImplemented", reduce=str)


def _scatter_reduce_derivative(reduce=None, refused=None, **_):
    if reduce is not None:
        return (RuntimeError, "derivative for aten::scatter is not implemented. Use scatter_reduce, which is "
                              "differentiable, or detach the inputs.")
    return _refused(refused)


def _refused(refused=None, **_):
    # (positions, message) that the caller found from the shapes of an index smaller than src, whose gradient
    # PyTorch computes in the index's shape: its backward raises where one of those gradients is needed
    return None if refused is None else {i: (RuntimeError, refused[1]) for i in refused[0]}


scatter = defop("scatter", _scatter, dtype_rule=KEEP, diff=(0, 2), overloads=[_SCATTER_REDUCE_GRAD],
                no_derivative=_scatter_reduce_derivative, reverse_fn=_scatter_backward)
scatter_value = defop("scatter_value", _scatter, dtype_rule=KEEP, diff=(0,), node_name="ScatterBackward1",
                      overloads=[_SCATTER_REDUCE_GRAD], no_derivative=_scatter_reduce_derivative)
scatter_add = defop("scatter_add", lambda a, idx, src, dim, refused=None: _scatter(a, idx, src, dim, "add"),
                    dtype_rule=KEEP, diff=(0, 2), no_derivative=_refused)
scatter_reduce = defop("scatter_reduce", _scatter_reduce, dtype_rule=KEEP, diff=(0, 2), saves_inputs=(0, 1, 2),
                        saves_output=True, no_derivative=_refused)
# (a 0-d input takes index [0]: itself, as PyTorch's)
index_select = defop("index_select", lambda a, idx, dim: jnp.take(a, idx, axis=dim) if a.ndim else a, dtype_rule=KEEP,
                     diff=(0,), backward_name="IndexAddBackward0")
# (source's gradient reads index and source, self's nothing)
index_add = defop("index_add", lambda a, idx, src, alpha, dim: _along(a, dim, idx, lambda at: at.add(alpha * src)),
                  dtype_rule=KEEP, diff=(0, 2), saves_inputs={1: 2, 2: 2})
# (the index is read by both gradients, the source by its own alone: PyTorch reshapes the gradient to it)
index_copy = defop("index_copy", lambda a, idx, src, dim: _along(a, dim, idx, lambda at: at.set(src)), dtype_rule=KEEP,
                   diff=(0, 2), reverse_fn=_index_copy_backward, saves_inputs={1: None, 2: 2})
index_fill = defop("index_fill", lambda a, idx, v, dim: _along(a, dim, idx,
                                                              lambda at: at.set(jnp.asarray(v, a.dtype))),
                   dtype_rule=KEEP, diff=(0, 2), overloads=[overload("IndexFillBackward1", "..t")])
masked_fill = defop("masked_fill", lambda a, mask, v: jnp.where(mask, jnp.asarray(v, a.dtype), a),
                    dtype_rule=KEEP, diff=(0, 2), overloads=[overload("MaskedFillBackward1", "..t")])
masked_scatter = defop("masked_scatter", _masked_scatter, dtype_rule=KEEP, diff=(0, 2))


def _put_backward(a, idx, src, accumulate):
    """put, differentiated as PyTorch's: without accumulate every copy of a repeated index gets its gradient."""
    if accumulate:
        return a.reshape(-1).at[idx.reshape(-1)].add(src.reshape(-1)).reshape(a.shape)
    flat = crediting_set(("flat",), lambda arrays: arrays[0])
    return flat(a.reshape(-1), src.reshape(-1), (idx.reshape(-1),)).reshape(a.shape)


# put: the flat input with source written (or added) at flat indices
put = defop("put", lambda a, idx, src, accumulate: getattr(a.reshape(-1).at[idx.reshape(-1)], "add" if accumulate
                                                            else "set")(src.reshape(-1)).reshape(a.shape),
            dtype_rule=KEEP, diff=(0, 2), reverse_fn=_put_backward, saves_inputs={1: None, 2: 2})
# index_reduce: scatter_reduce along dim with the index vector spread over the source's shape
index_reduce = defop("index_reduce", lambda a, idx, src, dim, reduce, include_self: _scatter_reduce(
    a, jnp.broadcast_to(jnp.expand_dims(idx, tuple(d for d in range(src.ndim) if d != dim)), src.shape), src, dim,
    reduce, include_self), dtype_rule=KEEP, diff=(0, 2), saves_inputs=(0, 1, 2), saves_output=True)
take = defop("take", lambda a, idx: a.reshape(-1)[idx], dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1),
             backward_name="PutBackward0")
take_along_dim = defop("take_along_dim", _take_along_dim, dtype_rule=KEEP, diff=(0,), node="gather",
                       saves_inputs=(0, 1))
index.elements_from = gather.elements_from = index_select.elements_from = take_along_dim.elements_from = (0,)

# Data-dependent sizes: the caller counts on the host (as PyTorch syncs) and passes `size`.
nonzero = defop("nonzero", lambda a, size: jnp.argwhere(a, size=size).astype(jnp.int64), dtype_rule=KEEP)
# PyTorch's result is column-major (strides (1, rows)), so its columns (as_tuple) are contiguous views
nonzero.result_order = lambda static, shapes: ((1, 0) if len(shapes[0]) == 2 else None,)
# nonzero with a fixed number of rows: cut, or padded with fill_value (row-major, as PyTorch's)
nonzero_static = defop("nonzero_static", lambda a, size, fill_value: (
    jnp.argwhere(a, size=size, fill_value=fill_value) if a.ndim else jnp.zeros((size, 0))).astype(jnp.int64),
    dtype_rule=KEEP, diff=())
masked_select = defop("masked_select", _masked_select, dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1),
                      backward_name="MaskedScatterBackward0")
