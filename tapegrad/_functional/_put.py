"""Writing into a tensor at indices, out of place: index_put, put, index_reduce; and unravel_index."""
import builtins
import itertools
import operator

from .. import _dtypes as D
from .._dispatch import apply
from .._flags import warn_once
from .._ops import elementwise as E, indexing as I
from .._tensor import Tensor
from ._common import SCALAR_NAME, check_index_bounds, check_tensors, scalar_or_tensor, wrap_dim
from ._index import _check_source
from .._user_frames import warn_user

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_put(input, indices, values, accumulate=False):
    # one IndexPutBackward0 on input and values (as PyTorch), not a clone written in place
    spec, arrays = _parse_indices(input, indices)
    _check_put_values(input, values)
    out = apply(I.index_put, input, scalar_or_tensor(values), *(Tensor._wrap(a) for a in arrays), spec=spec,
                accumulate=builtins.bool(accumulate), whole=True)
    if out.dtype is not input.dtype:
        out = apply(E.to_dtype, out, dtype=input.dtype.np)
    return out


def _check_put_values(input, values):
    """index_put's values have input's dtype (t[i] = v converts them, index_put does not)."""
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{SCALAR_NAME[input.dtype.name]} for the destination and {SCALAR_NAME[values.dtype.name]} "
                           "for the source. Convert the values first, e.g. values.to(input.dtype).")


def _parse_indices(input, indices, argument=1):
    """(spec, arrays) of index_put's indices, after PyTorch's checks: each one a tensor, no more of them than
    dims, then a boolean mask counted as one index per dim it spans (it is expanded first, reading the sizes
    of the dims it covers)."""
    from .._indexing import BoolScalarIndex, parse
    indices = tuple(indices)
    for k, x in enumerate(indices):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument {argument}, but got {type(x).__name__}")
    ndim = input.ndim
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    if builtins.sum(x.ndim if x.dtype is D.bool_ else 1 for x in indices) > ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {ndim})")
    try:
        spec, arrays, _ = parse(input, indices)
    except BoolScalarIndex:
        raise IndexError("index_put with a 0-dim boolean index is not supported by tapegrad: write "
                         "t[mask] = value (which PyTorch reads as an index on a new dim of size 1)") from None
    return spec, arrays


def put(input, index, source, accumulate=False):
    """input with source written (or added) at the flat indices (PutBackward0)."""
    check_tensors("put", (input, "input"), (index, "index"), (source, "source"))
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{SCALAR_NAME[input.dtype.name]} and source.dtype = {SCALAR_NAME[source.dtype.name]}")
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {SCALAR_NAME[index.dtype.name]}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    if n == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    check_index_bounds(index, n, 0, IndexError, "out of range: tried to access index {i} on a tensor of {size} "
                                                "elements.")
    return apply(I.put, input, index, source, accumulate=builtins.bool(accumulate))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with each slice source[i] along dim reduced into input's slice index[i] (IndexReduceBackward0)."""
    _warn_beta()
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{SCALAR_NAME[index.dtype.name]} and size: {list(index.shape)}")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{SCALAR_NAME[index.dtype.name]}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({SCALAR_NAME[input.dtype.name]}) and source "
                           f"({SCALAR_NAME[source.dtype.name]}) must have the same scalar type")
    if index.numel() != (source.shape[d] if source.ndim else 1):
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim) ({source.shape[d] if source.ndim else 1})")
    _check_source(input, d, index, source, "index_reduce_")
    check_index_bounds(index, input.shape[d] if input.ndim else 1, d, IndexError, "index out of range in self")
    if input.ndim == 0:
        input, source = input.reshape(1), source.reshape(1)
        return apply(I.index_reduce, input, index.reshape(-1), source, dim=0, reduce=reduce,
                     include_self=builtins.bool(include_self)).reshape(())
    return apply(I.index_reduce, input, index.reshape(-1), source, dim=d, reduce=reduce,
                 include_self=builtins.bool(include_self))


_warned = set()


def _warn_beta():
    # once per process, as PyTorch's TORCH_WARN_ONCE
    if warn_once(_warned, "index_reduce"):
        warn_user("index_reduce() is in beta and the API may change at any time.", UserWarning)


def unravel_index(indices, shape):
    """The coordinates of flat indices in `shape`, as PyTorch's composition: each index floor-divided by the
    strides of a contiguous tensor of that shape, modulo the sizes."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype.name}")
    if isinstance(shape, builtins.int):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for size in shape:
        if not isinstance(size, builtins.int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
    shape = tuple(shape)
    if builtins.any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    from .._creation import tensor
    strides = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), operator.mul))))
    coordinates = indices.unsqueeze(-1).floor_divide(tensor(strides, dtype=D.int64, device=indices.device))
    return (coordinates % tensor(shape, dtype=D.int64, device=indices.device)).unbind(-1)
