"""Sorting and selection: sort, topk, kthvalue, median, mode, max/min along a dim, unique.

Indices come from a non-differentiable op; values are gathered at those indices by a
differentiable op, so the gradient goes to the selected elements (PyTorch's convention
for sort, topk, max(dim)...) and no op has an integer output to differentiate.
"""
import jax
import jax.numpy as jnp

from ._registry import defop, missing_kernel, overload, KEEP


def _argsort(a, dim, descending):
    # Always stable: ties keep their order, NaN sorts as the largest value (both as PyTorch).
    return jnp.argsort(a, axis=dim, stable=True, descending=descending)


def _pick(a, dim, k, largest):
    # Indices of the k smallest/largest along dim, in sorted order.
    idx = _argsort(a, dim, largest)
    return jnp.take(idx, jnp.arange(k), axis=dim)


def _kth(a, dim, k, keepdim):
    idx = jnp.take(_argsort(a, dim, False), jnp.asarray([k]), axis=dim)
    return idx if keepdim else jnp.squeeze(idx, dim)


def _median_index(a, dim, keepdim):
    idx = _kth(a, dim, (a.shape[dim] - 1) // 2, True)
    # A NaN anywhere makes the median NaN (PyTorch): point at the first NaN.
    if jnp.issubdtype(a.dtype, jnp.floating):
        nan = jnp.isnan(a)
        idx = jnp.where(jnp.any(nan, axis=dim, keepdims=True), jnp.argmax(nan, axis=dim, keepdims=True), idx)
    return idx if keepdim else jnp.squeeze(idx, dim)


def _median_all(a):
    # The lower median; ties share the gradient evenly, as PyTorch's median() without dim.
    flat = a.reshape(-1)
    if flat.size == 0 and jnp.issubdtype(a.dtype, jnp.floating):   # (PyTorch: NaN)
        return jnp.full((), jnp.nan, a.dtype)
    m = jnp.sort(flat)[(flat.size - 1) // 2]
    hit = flat == m
    out = jnp.sum(jnp.where(hit, flat, 0)) / jnp.sum(hit)
    return jnp.where(jnp.any(jnp.isnan(flat)), jnp.nan, out).astype(a.dtype) \
        if jnp.issubdtype(a.dtype, jnp.floating) else m


def _nanmedian_index(a, dim, keepdim):
    # The lower median of the values that are not NaN (sorted last); a row of NaN only points at one of them.
    order = _argsort(a, dim, False)
    if jnp.issubdtype(a.dtype, jnp.floating):
        kept = jnp.sum(~jnp.isnan(a), axis=dim, keepdims=True)
    else:
        kept = jnp.full((1,) * a.ndim, a.shape[dim])
    idx = jnp.take_along_axis(order, jnp.maximum((kept - 1) // 2, 0), axis=dim)
    return idx if keepdim else jnp.squeeze(idx, dim)


def _nanmedian_all(a):
    # As median() without dim, over the values that are not NaN; all NaN: NaN, its gradient spread over all.
    flat = a.reshape(-1)
    if not jnp.issubdtype(a.dtype, jnp.floating):
        return jnp.sort(flat)[(flat.size - 1) // 2]
    if flat.size == 0:
        return jnp.full((), jnp.nan, a.dtype)
    nan = jnp.isnan(flat)
    m = jnp.sort(flat)[jnp.maximum((jnp.sum(~nan) - 1) // 2, 0)]
    hit = jnp.where(jnp.all(nan), nan, flat == m)
    return (jnp.sum(jnp.where(hit, flat, 0)) / jnp.maximum(jnp.sum(hit), 1)).astype(a.dtype)


def _mode_index(a, dim, keepdim):
    # The smallest most frequent value; its last position (PyTorch's CPU choice).
    x = jnp.moveaxis(a, dim, -1)
    counts = jnp.sum(x[..., :, None] == x[..., None, :], axis=-1)
    best = jnp.max(counts, axis=-1, keepdims=True)
    value = jnp.min(jnp.where(counts == best, x, jnp.max(x, axis=-1, keepdims=True)), axis=-1, keepdims=True)
    n = x.shape[-1]
    last = n - 1 - jnp.argmax(jnp.flip(x == value, -1), axis=-1, keepdims=True)
    idx = jnp.moveaxis(last, -1, dim)
    return idx if keepdim else jnp.squeeze(idx, dim)


def _take(a, idx, dim, keepdim=True):
    if not keepdim:
        idx = jnp.expand_dims(idx, dim)
    out = jnp.take_along_axis(a, idx, axis=dim)
    return out if keepdim else jnp.squeeze(out, dim)


def _values_op(name, node_name=None):
    return defop(name, lambda a, idx, dim, keepdim=True: _take(a, idx, dim, keepdim), dtype_rule=KEEP,
                 diff=(0,), node_name=node_name)


argsort = defop("argsort", _argsort, dtype_rule=KEEP)
topk_indices = defop("topk_indices", lambda a, dim, k, largest: _pick(a, dim, k, largest), dtype_rule=KEEP)
kthvalue_indices = defop("kthvalue_indices", lambda a, dim, k, keepdim: _kth(a, dim, k, keepdim),
                         dtype_rule=KEEP)
median_indices = defop("median_indices", _median_index, dtype_rule=KEEP)
nanmedian_indices = defop("nanmedian_indices", _nanmedian_index, dtype_rule=KEEP)
mode_indices = defop("mode_indices", _mode_index, dtype_rule=KEEP)

sort_values = _values_op("sort_values", "SortBackward0")
topk_values = _values_op("topk_values", "TopkBackward0")
kthvalue_values = _values_op("kthvalue_values", "KthvalueBackward0")
median_values = _values_op("median_values", "MedianBackward1")
nanmedian_values = _values_op("nanmedian_values", "NanmedianBackward1")
mode_values = _values_op("mode_values", "ModeBackward0")
max_values = _values_op("max_values", "MaxBackward0")
min_values = _values_op("min_values", "MinBackward0")
median_all = defop("median_all", _median_all, dtype_rule=KEEP, node_name="MedianBackward0", saves_output=True)
nanmedian_all = defop("nanmedian_all", _nanmedian_all, dtype_rule=KEEP, node_name="NanmedianBackward0",
                      saves_output=True)

# Data-dependent sizes: the caller counts on the host (as PyTorch syncs) and passes `size`.
# PyTorch records unique's nodes but cannot differentiate them: the output requires grad, backward raises.
def _unique_derivative(kind="_unique2", **_):
    return (NotImplementedError, f"the derivative for '{kind}' is not implemented. unique has no gradient: "
                                 "detach its input, or compute the gradient through another op.")


def _unique(a, size):
    values, inverse, counts = jnp.unique(a.reshape(-1), size=size, return_inverse=True, return_counts=True)
    # PyTorch's kernel writes the inverse in the input's shape: a new tensor, not a view of a flat one
    return values, inverse.reshape(a.shape), counts


unique = defop("unique", _unique, dtype_rule=KEEP, diff=(0,), nout=3, node="_unique2", no_derivative=_unique_derivative)
# unique(dim=) and unique_consecutive: the kept elements (slices) taken at indices found on the host
unique_take = defop("unique_take", lambda a, index, dim, kind: jnp.take(a if dim is not None else a.reshape(-1),
                                                                        index, axis=dim or 0),
                    dtype_rule=KEEP, diff=(0,), node_name="UniqueConsecutiveBackward0",
                    overloads=[overload("UniqueDimBackward0", kind="unique_dim")], no_derivative=_unique_derivative)
# PyTorch uniques along a dim with that dim moved first and moves it back: that dim is outermost in memory
unique_take.result_order = lambda static, shapes: (
    (static["dim"],) + tuple(k for k in range(len(shapes[0])) if k != static["dim"]) if static["dim"] else None,)


def _searchsorted(sequence, values, side, dtype):
    # A 1-d sequence serves every value; otherwise each row of values searches its own row of the sequence.
    if sequence.ndim == 1:
        return jnp.searchsorted(sequence, values, side=side).astype(dtype)
    rows = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))
    flat = rows(sequence.reshape(-1, sequence.shape[-1]), values.reshape(-1, values.shape[-1]))
    return flat.reshape(values.shape).astype(dtype)


searchsorted = defop("searchsorted", _searchsorted, dtype_rule=KEEP, diff=(),
                     no_kernel_for={"complex": missing_kernel("searchsorted_out_cpu"),
                                    "bool": missing_kernel("searchsorted_out_cpu")})
