"""torch.segment_reduce: PyTorch's argument checks, in its order, over the segment_reduce op table entry."""
import builtins

import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import segment_reduce as S
from .._tensor import Tensor
from ._common import SCALAR_NAME, wrap_dim

_REDUCTIONS = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "amax": "max", "min": "min",
               "amin": "min"}
_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)
_CHECK_TAIL = "  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """data reduced ('sum', 'mean', 'prod', 'max', 'min') over consecutive segments along `axis`, given by their
    `lengths` or their `offsets` (one more than segments). An empty segment gives `initial` where given, else
    the reduction's identity (NaN for a mean)."""
    if not isinstance(data, Tensor):
        raise TypeError(f"segment_reduce(): argument 'data' (position 1) must be Tensor, not {type(data).__name__}")
    if not isinstance(reduce, str):
        raise TypeError(f"segment_reduce(): argument 'reduce' (position 2) must be str, not {type(reduce).__name__}")
    if isinstance(axis, builtins.bool) or not isinstance(axis, builtins.int):
        raise TypeError(f"segment_reduce(): argument 'axis' must be int, not {type(axis).__name__}")
    axis = wrap_dim(axis, data.ndim)
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    use_offsets = offsets is not None
    bounds, name = (offsets, "offsets") if use_offsets else (lengths, "lengths")
    if data.ndim < bounds.ndim:
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.{_CHECK_TAIL}")
    if axis != bounds.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} but got {axis}.")
    if tuple(bounds.shape[:-1]) != tuple(data.shape[:axis]):   # (PyTorch reads past such lengths)
        raise RuntimeError(f"segment_reduce(): expected {name} of shape {list(data.shape[:axis])} + [segments] for "
                           f"data of shape {list(data.shape)} reduced along axis {axis}, but got {list(bounds.shape)}")
    if not use_offsets and not unsafe:
        _check_lengths(bounds, data.shape[axis])
    if bounds.dtype not in (D.int32, D.int64):
        raise NotImplementedError(f"\"_segment_reduce_{name}_cpu_kernel1\" not implemented for "
                                  f"'{SCALAR_NAME[bounds.dtype.name]}'. Give the {name} as int64 (or int32).")
    if data.dtype not in _FLOATS:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{SCALAR_NAME[data.dtype.name]}'. "
                                  "Convert the data to a floating dtype first.")
    _check_segments(bounds, use_offsets)
    if isinstance(initial, Tensor):
        initial = initial.item()
    return apply(S.segment_reduce, data, bounds.detach(), reduce=_REDUCTIONS[reduce], axis=axis,
                 initial=None if initial is None else builtins.float(initial), offsets=use_offsets)


def _lengths(bounds):
    return np.asarray(bounds.detach().numpy())   # (a host read, as PyTorch's checks)


def _check_lengths(lengths, size):
    values = _lengths(lengths)
    if values.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    if values.min() < 0:
        raise RuntimeError("lengths contains negative value!")
    if not np.all(values.sum(-1) == size):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")


def _check_segments(bounds, offsets):
    # the kernel's check of each segment's length (unsafe lengths, offsets that go back)
    values = _lengths(bounds)
    if values.size and np.any(np.diff(values, axis=-1) < 0 if offsets else values < 0):
        raise RuntimeError(f"Expected segment_length >= 0 to be true, but got false.{_CHECK_TAIL}")
