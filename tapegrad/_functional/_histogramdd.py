"""torch.histogramdd: PyTorch's argument checks, in its order, over the histogramdd op table entries."""
import builtins
import math
import operator

import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import histogramdd as H
from .._tensor import Tensor
from . import _return_types as RT
from ._common import SCALAR_NAME

def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points input[..., :] in N = input.size(-1) dims. bins: a count for every dim,
    a count per dim, or per dim a 1-D tensor of edges; range: (lo, hi) per dim, flattened (counts only)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"histogramdd(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if isinstance(bins, (list, tuple)) and bins and builtins.all(isinstance(b, Tensor) for b in bins):
        return _from_edges(input, list(bins), weight, builtins.bool(density))
    if isinstance(bins, (list, tuple)):
        counts = [_count(b) for b in bins]
    elif input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    else:
        counts = [_count(bins)] * input.size(-1)
    return _from_counts(input, counts, range, weight, builtins.bool(density))


def _count(b):
    if isinstance(b, builtins.bool) or (isinstance(b, Tensor) and b.ndim):
        raise TypeError(f"histogramdd(): argument 'bins' must be int, tuple of ints or tuple of Tensors, not "
                        f"{type(b).__name__}")
    try:
        return operator.index(b)
    except TypeError:
        raise TypeError(f"histogramdd(): argument 'bins' must be int, tuple of ints or tuple of Tensors, not "
                        f"{type(b).__name__}") from None


def _from_counts(input, counts, range, weight, density):
    _check_dims(input)
    n = input.size(-1)
    lo, hi = _outer_edges(input, n, range)
    if input.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input to float32 or float64 first.")
    if len(counts) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    extra = _weight_args(input, weight)
    for d, b in enumerate(counts):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}")
    flat = tuple(v for pair in zip(lo, hi) for v in pair)
    hist = apply(H.histogramdd, input, *flat, *extra, bins=tuple(counts), weighted=bool(extra), density=density)
    edges = tuple(apply(H.histogramdd_bin_edges, input, lo[d], hi[d], *extra, bins=b) for d, b in enumerate(counts))
    return RT.histogramdd(hist, edges)


def _from_edges(input, bins, weight, density):
    _check_dims(input)
    n = input.size(-1)
    if len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional histogram "
                           f"but got {len(bins)}")
    for d, b in enumerate(bins):
        if b.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {D.cpp_name(input.dtype)} and bins for dimension {d} "
                               f"with dtype {D.cpp_name(b.dtype)}")
        if b.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if b.numel() == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               f"in the bins tensor for dimension {d}")
    extra = _weight_args(input, weight)
    for d, b in enumerate(bins):
        if b.numel() < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for dimension {d}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input and the edges to a floating dtype first.")
    hist = apply(H.histogramdd, input, *bins, *extra, bins=None, weighted=bool(extra), density=density)
    return RT.histogramdd(hist, tuple(bins))


def _check_dims(input):
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")


def _outer_edges(input, n, range):
    """Each dim's outermost edges: `range`, else the data's extremes ([0, 1] without data), widened by 0.5 on
    each side where they are equal. PyTorch's checks, dim by dim."""
    if range is not None:
        range = [builtins.float(v) for v in range]
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} "
                               f"elements, but got {len(range)}")
        lo, hi = range[0::2], range[1::2]
    elif input.numel():
        lo, hi = _extremes(input, n)
    else:
        lo, hi = [0.0] * n, [1.0] * n
    for d in builtins.range(n):
        if not (math.isfinite(lo[d]) and math.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_float(lo[d])}, {_float(hi[d])}] is "
                               "not finite")
        if lo[d] > hi[d]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_float(lo[d])} max "
                               f"{_float(hi[d])} for dimension {d}")
        if lo[d] == hi[d]:
            lo[d], hi[d] = lo[d] - 0.5, hi[d] + 0.5
    return lo, hi


def _extremes(input, n):
    """Each dim's least and greatest value (a host read, as PyTorch's); a dim holding a NaN has its first NaN
    for both, whose sign PyTorch's message prints."""
    points = np.asarray(input.detach().reshape(math.prod(input.shape[:-1]), n).numpy()).astype(np.float64)
    lo, hi = [], []
    for column in points.T:
        nan = np.isnan(column)
        first = column[nan][0] if nan.any() else None
        lo.append(builtins.float(column.min() if first is None else first))
        hi.append(builtins.float(column.max() if first is None else first))
    return lo, hi


def _float(v):
    # C++'s printing of a double (%g), a NaN with its sign
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return "%g" % v


def _weight_args(input, weight):
    """(weight,) after PyTorch's checks of its dtype, then its shape (input's without its last dim); () for none."""
    if weight is None:
        return ()
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({D.cpp_name(input.dtype)}), and "
                           f"weight({D.cpp_name(weight.dtype)})")
    if list(weight.shape or [1]) != list(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    return (weight,)
