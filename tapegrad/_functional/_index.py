"""Gather/scatter family, masked ops, take, nonzero. Index bounds are checked on the host:
JAX clamps out-of-range indices silently, PyTorch raises."""
import builtins
import math

import jax
import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import indexing as I
from .._scalar_range import check_fits
from .._tensor import Tensor
from ._common import SCALAR_NAME, check_index_bounds, read_on_host, scalar_or_tensor, sized_by, wrap_dim


def _check_index(index, fn, what="index"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument '{what}' must be Tensor, not {type(index).__name__}")
    if index.dtype is not D.int64 and index.dtype is not D.int32:
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for {what}")


def _check_same_dtype(input, src, fn):
    if isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")


def _size_or_one(t, k):   # PyTorch's ensure_nonempty_size: a 0-d tensor reads as size 1 at any dim
    return t.shape[k] if t.ndim else 1


def _check_gather_shapes(input, dim, index):
    ndim = builtins.max(input.ndim, 1)
    if ndim != builtins.max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(ndim):
        if k != dim and _size_or_one(index, k) > _size_or_one(input, k):
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {dim}")


def _check_scatter_shapes(input, dim, index, src):
    """PyTorch's scatter shape check: index no larger than self apart from `dim`, nor than a tensor src."""
    if not index.numel():
        return
    ndim = builtins.max(input.ndim, 1)
    if ndim != builtins.max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    src = src if isinstance(src, Tensor) else None
    if src is not None and builtins.max(src.ndim, 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    wrong = builtins.any(k != dim and _size_or_one(index, k) > _size_or_one(input, k) for k in range(ndim)) or (
        src is not None and builtins.any(_size_or_one(index, k) > _size_or_one(src, k) for k in range(ndim)))
    if wrong:
        than_src = f" and to be no larger size than src {list(src.shape)}" if src is not None else ""
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} apart "
                           f"from dimension {dim}{than_src}")


def gather(input, dim, index, *, sparse_grad=False, out=None):
    _check_index(index, "gather")
    d = wrap_dim(dim, input.ndim)
    if index.numel():
        _check_gather_shapes(input, d, index)
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, RuntimeError)
    return apply(I.gather, input, index, dim=d)


def _scatter_common(input, dim, index, src, fn):
    _check_index(index, fn)
    d = wrap_dim(dim, input.ndim)
    _check_same_dtype(input, src, fn)
    _check_scatter_shapes(input, d, index, src)
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, RuntimeError)
    return d


def _short_index(index, src, node, reduce=None):
    """{"refused": (positions, message)} where PyTorch's backward fails for an index smaller than src: src's
    gradient, gathered in the index's shape, is not one of src's (the engine's check), and amax, amin and prod
    compare src with the result gathered in that shape (a size mismatch, for both gradients); else {}."""
    if reduce in ("amax", "amin", "prod"):
        clash = [d for d, (s, i) in enumerate(zip(src.shape, index.shape)) if s != i and s != 1 and i != 1]
        if clash:
            d = clash[-1]
            return {"refused": ((0, 2), f"The size of tensor a ({src.shape[d]}) must match the size of tensor b "
                                        f"({index.shape[d]}) at non-singleton dimension {d}")}
        return {}
    if any(s != i and s != 1 for s, i in zip(src.shape, index.shape)):
        return {"refused": ((2,), f"Function {node} returned an invalid gradient at index 1 - got "
                                  f"{list(index.shape)} but expected shape compatible with {list(src.shape)}")}
    return {}


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    src = value if src is None else src
    d = _scatter_common(input, dim, index, src, "scatter")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if isinstance(src, Tensor):
        refused = {} if reduce is not None else _short_index(index, src, "ScatterBackward0")
        return apply(I.scatter, input, index, src, dim=d, reduce=reduce, **refused)
    return apply(I.scatter_value, input, index, scalar_or_tensor(src), dim=d, reduce=reduce)


def scatter_add(input, dim, index, src):
    d = _scatter_common(input, dim, index, src, "scatter_add")
    return apply(I.scatter_add, input, index, src, dim=d, **_short_index(index, src, "ScatterAddBackward0"))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _scatter_common(input, dim, index, src, "scatter_reduce")
    return apply(I.scatter_reduce, input, index, src, dim=d, reduce=reduce, include_self=builtins.bool(include_self),
                 **_short_index(index, src, "ScatterReduceBackward0", reduce))


def _check_index_vector(index, fn):
    _check_index(index, fn)
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")


def index_select(input, dim, index, *, out=None):
    if not isinstance(index, Tensor) or index.dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    _check_index_vector(index, "index_select")
    d = wrap_dim(dim, input.ndim)
    _check_select_indices(input, d, index)
    return apply(I.index_select, input, index.reshape(-1), dim=d)


def _check_select_indices(input, d, index):
    """PyTorch's CPU index_select refuses negative indices too; its errors depend on the path it takes: its
    kernel for dim 1 of a tensor of several dims names the first bad index."""
    size = input.shape[d] if input.ndim else 1
    if input.ndim > 1 and size == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if isinstance(index._value, jax.core.Tracer):   # mapped by a transform: the batching rule's error, as PyTorch's
        error, message = RuntimeError, None
    elif input.ndim > 1 and d == 1:
        error, message = RuntimeError, "INDICES element is out of DATA bounds, id={i} axis_dim={size}"
    else:
        error, message = IndexError, "index out of range in self"
    check_index_bounds(index, size, d, error, message, negative=False)


def _check_source(input, d, index, source, fn):
    expected = list(input.shape)
    if expected:
        expected[d] = index.numel()
    if source.ndim and list(source.shape) != expected:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    _check_same_dtype(input, source, fn)


def _check_add_source(input, d, index, source):
    """PyTorch's index_add checks, in its order: dtypes, the number of indices, the slices' shapes."""
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({SCALAR_NAME[input.dtype.name]}) and source "
                           f"({SCALAR_NAME[source.dtype.name]}) must have the same scalar type")
    if not source.ndim and index.numel() != 1:   # (PyTorch's message reads source.size(dim) of a 0-d source)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if source.ndim and index.numel() != source.shape[d]:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({source.shape[d]}), for dim: {d}")
    ours, theirs = list(input.shape), list(source.shape)
    if ours and theirs:
        del ours[d], theirs[d]
    if ours != theirs:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")


def index_add(input, dim, index, source, *, alpha=1):
    _check_index_vector(index, "index_add")
    d = wrap_dim(dim, input.ndim)
    _check_add_source(input, d, index, source)
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, RuntimeError)
    return apply(I.index_add, input, index.reshape(-1), source, alpha, dim=d)


def _check_copy_source(input, d, index, source):
    """PyTorch's index_copy checks, in its order and words."""
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if not source.ndim and index.numel() != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {index.numel()})")
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    if index.dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {SCALAR_NAME[index.dtype.name]}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{SCALAR_NAME[input.dtype.name]} and (source) {SCALAR_NAME[source.dtype.name]}")
    ours, theirs = list(input.shape), list(source.shape)
    for sizes in (ours, theirs):
        if sizes:
            del sizes[d]
    if ours != theirs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, ours))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, theirs))} at dimension 0.")
    if source.ndim and index.numel() != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")


def index_copy(input, dim, index, source):
    if not isinstance(index, Tensor):
        raise TypeError(f"index_copy(): argument 'index' must be Tensor, not {type(index).__name__}")
    d = wrap_dim(dim, input.ndim)
    _check_copy_source(input, d, index, source)
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, IndexError,
                       "index_copy_(): index {i} is out of bounds for dimension {dim} with size {size}")
    return apply(I.index_copy, input, index.reshape(-1), source, dim=d)


def index_fill(input, dim, index, value):
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if not isinstance(index, Tensor):
        raise TypeError(f"index_fill(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, IndexError)
    return apply(I.index_fill, input, index.reshape(-1), scalar_or_tensor(value), dim=d)


def _check_mask(mask, fn):
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        got = SCALAR_NAME[mask.dtype.name].lower() if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"{fn} only supports boolean masks, but got mask with dtype {got}")


def _check_broadcast(a, b):
    """The broadcast shape of shapes a and b, or PyTorch's error naming the first dim (from the right) that
    does not broadcast."""
    from ._shape import broadcast_shapes
    for k in range(1, builtins.min(len(a), len(b)) + 1):
        x, y = a[-k], b[-k]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {builtins.max(len(a), len(b)) - k}")
    return tuple(broadcast_shapes(a, b))


def masked_fill(input, mask, value):
    _check_mask(mask, "masked_fill_")
    shape = _check_broadcast(input.shape, mask.shape)
    value = scalar_or_tensor(value)
    check_fits(value, input.dtype)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if shape != tuple(input.shape):
        input = input.expand(shape)
    return apply(I.masked_fill, input, mask, value)


def masked_select(input, mask, *, out=None):
    _check_mask(mask, "masked_select:")
    _check_broadcast(input.shape, mask.shape)
    # The output size is the number of True entries: counted on the host, as PyTorch syncs.
    xp, value = sized_by(mask._value, "masked_select")
    size = builtins.int(xp.count_nonzero(xp.broadcast_to(value, xp.broadcast_shapes(input.shape, mask.shape))))
    return apply(I.masked_select, input, mask, size=size)


def masked_scatter(input, mask, source):
    _check_mask(mask, "masked_scatter_")
    _check_broadcast(input.shape, mask.shape)
    xp, value = read_on_host(mask._value)
    if builtins.int(xp.count_nonzero(value)) * (input.numel() // builtins.max(mask.numel(), 1)) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if source.dtype is not input.dtype:   # (PyTorch's text, its missing space too)
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{SCALAR_NAME[input.dtype.name]} and {SCALAR_NAME[source.dtype.name]}. Convert the "
                           "source first, e.g. source.to(input.dtype).")
    return apply(I.masked_scatter, input, mask, source)


def take(input, index):
    if isinstance(index, Tensor) and index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {SCALAR_NAME[index.dtype.name]}. "
                           "Convert it first, e.g. index.long().")
    _check_index(index, "take")
    n = input.numel()
    if n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    value = np.asarray(index._value)
    bad = (value >= n) | (value < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {builtins.int(value[bad][0])} on a tensor of {n} "
                         "elements.")
    return apply(I.take, input, index)


def take_along_dim(input, indices, dim=None, *, out=None):
    _check_index(indices, "take_along_dim", "indices")
    if dim is None:
        check_index_bounds(indices, input.numel(), 0, RuntimeError)
        # As PyTorch: the flattened input (a view in its graph), gathered along dim 0.
        return apply(I.take_along_dim, input.reshape(-1), indices.reshape(-1), dim=0)
    d = wrap_dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    # As PyTorch: each side broadcast against the other apart from dim (the input's expansion is an
    # ExpandBackward0 in its graph, whatever the shapes), then gathered.
    index_shape = _check_broadcast(_with_size(input.shape, d, indices.shape[d]), indices.shape)
    shape = _check_broadcast(_with_size(indices.shape, d, input.shape[d]), input.shape)
    if shape[d] == 0 and math.prod(index_shape):
        # (PyTorch's kernel divides by the empty dim's size: its whole message is 'ZeroDivisionError')
        raise RuntimeError(f"ZeroDivisionError: take_along_dim() has nothing to take along dimension {d} of "
                           f"size 0 for indices of shape {list(indices.shape)}")
    check_index_bounds(indices, input.shape[d], d, RuntimeError)
    return apply(I.take_along_dim, input.expand(shape), indices, dim=d)


def _with_size(shape, dim, size):
    return tuple(shape[:dim]) + (size,) + tuple(shape[dim + 1:])


def nonzero(input, *, out=None, as_tuple=False):
    # The number of hits decides the output shape: counted on the host, as PyTorch syncs.
    xp, value = sized_by(input._value, "nonzero_numpy" if as_tuple else "nonzero")
    size = builtins.int(xp.count_nonzero(value))
    if input.ndim == 0 and as_tuple:
        return (apply(I.nonzero, input.reshape(1), size=size).reshape(-1),)
    found = apply(I.nonzero, input, size=size)
    if as_tuple:
        return tuple(found[:, k] for k in range(input.ndim))
    return found


def argwhere(input):
    return nonzero(input)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """nonzero with exactly `size` rows: the first hits, then rows of fill_value (no host sync)."""
    if not isinstance(size, builtins.int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return apply(I.nonzero_static, input, size=size, fill_value=builtins.int(fill_value))
