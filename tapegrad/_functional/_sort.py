"""Sorting and selection: sort, topk, kthvalue, median, mode, unique and searchsorted."""
import builtins

import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._arg_types import as_bool, as_int
from .._dispatch import apply
from .._ops import sorting as S
from .._tensor import Tensor
from . import _return_types as RT
from ._common import refuse_complex, sized_by, wrap_dim, wrap_dim_of_dims
from ._reduce import _check_nonempty, _scalar_pair


_UNSET = object()


def _sort_args(name, input, args, dim, descending, stable):
    """PyTorch's two overloads: (dim=-1, descending=False) positional or keyword, or (*, stable, dim=-1,
    descending=False) all keyword; stable with a positional dim or descending matches neither."""
    if args and (stable is not _UNSET or len(args) > 2 or isinstance(args[0], builtins.bool)):
        got = ", ".join(["Tensor", *(type(a).__name__ for a in args)]
                        + ([] if stable is _UNSET else [f"stable={type(stable).__name__}"]))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                        f"of:\n * (Tensor input, *, bool stable, int dim = -1, bool descending = False)\n"
                        f" * (Tensor input, int dim = -1, bool descending = False)\n"
                        f"Pass dim and descending by keyword with stable, e.g. {name}(x, dim=1, stable=True).")
    if args:
        if len(args) == 2 and descending is not _UNSET or dim is not _UNSET:
            raise TypeError(f"{name}() got multiple values for argument "
                            f"'{'dim' if dim is not _UNSET else 'descending'}'")
        dim, descending = (*args, descending)[:2]
    return (-1 if dim is _UNSET else dim), (False if descending is _UNSET else descending)


def sort(input, *args, dim=_UNSET, descending=_UNSET, stable=_UNSET, out=None):
    # (stable: the sort is always stable, jnp.argsort's)
    dim, descending = _sort_args("sort", input, args, dim, descending, stable)
    refuse_complex(input, message=" Sort does not support complex dtypes on CPU", error=RuntimeError)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "sort")
    idx = apply(S.argsort, input, dim=d, descending=as_bool(descending, "descending"))
    return RT.sort(apply(S.sort_values, input, idx, dim=d), idx)


def argsort(input, *args, dim=_UNSET, descending=_UNSET, stable=_UNSET):
    dim, descending = _sort_args("argsort", input, args, dim, descending, stable)
    return sort(input, dim=dim, descending=descending).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    k = as_int(k, "k")
    refuse_complex(input, message=" topk does not support complex dtypes on CPU", error=RuntimeError)
    if input.dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU. Convert first, e.g. x.int().")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return _scalar_pair(input, "topk")
    idx = apply(S.topk_indices, input, dim=d, k=k, largest=as_bool(largest, "largest"))
    return RT.topk(apply(S.topk_values, input, idx, dim=d), idx)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    k, keepdim = as_int(k, "k"), as_bool(keepdim, "keepdim")
    refuse_complex(input, "kthvalue_cpu")
    if input.dtype is D.bool_:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'. Convert first, e.g. x.int().")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if input.ndim:
        _check_nonempty(input, "kthvalue", d)
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        return _scalar_pair(input, "kthvalue")
    idx = apply(S.kthvalue_indices, input, dim=d, k=k - 1, keepdim=keepdim)
    return RT.kthvalue(apply(S.kthvalue_values, input, idx, dim=d, keepdim=keepdim), idx)


def median(input, dim=None, keepdim=False, *, out=None):
    if input.dtype is D.bool_:
        raise NotImplementedError(f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for 'Bool'. "
                                  "Convert the input first, e.g. x.int().")
    refuse_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        if not input.dtype.is_floating_point:   # (an empty float input's median is NaN)
            _check_nonempty(input, "median")
        return apply(S.median_all, input)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "median")
    _check_nonempty(input, "median", d)
    keepdim = as_bool(keepdim, "keepdim")
    idx = apply(S.median_indices, input, dim=d, keepdim=keepdim)
    return RT.median(apply(S.median_values, input, idx, dim=d, keepdim=keepdim), idx)


def mode(input, dim=-1, keepdim=False, *, out=None):
    refuse_complex(input, "mode_cpu")
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "mode")
    _check_nonempty(input, "mode", d)
    keepdim = as_bool(keepdim, "keepdim")
    idx = apply(S.mode_indices, input, dim=d, keepdim=keepdim)
    return RT.mode(apply(S.mode_values, input, idx, dim=d, keepdim=keepdim), idx)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    for name, flag in (("sorted", sorted), ("return_inverse", return_inverse), ("return_counts", return_counts)):
        as_bool(flag, name, "_unique2" if dim is None else "unique_dim")
    refuse_complex(input, "unique" if dim is None else "unique_dim")
    if dim is not None:
        return _unique_dim(input, wrap_dim_of_dims(dim, input.ndim), return_inverse, return_counts)
    # The number of distinct values decides the output shape: count on the host, as PyTorch syncs.
    xp, value = sized_by(input._value, "_unique2")
    size = builtins.int(xp.unique(value).size)
    values, inverse, counts = apply(S.unique, input, size=size)
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out[0] if len(out) == 1 else out


def _unique_dim(input, d, return_inverse, return_counts):
    """The distinct slices along d, sorted lexicographically (PyTorch sorts whatever `sorted` says). Found on
    the host, as PyTorch syncs for the output's size; not differentiable, as in PyTorch."""
    shape = tuple(input.shape)
    if builtins.any(n == 0 for i, n in enumerate(shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied. "
                           "Select a dimension of non-zero size elsewhere, or drop the empty dimensions.")
    width = builtins.int(np.prod([n for i, n in enumerate(shape) if i != d], dtype=np.int64))
    rows = np.moveaxis(np.asarray(sized_by(input._value, "unique_dim")[1]), d, 0).reshape(shape[d], width)
    _, first, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    from .._creation import tensor
    out = (apply(S.unique_take, input, tensor(first.astype(np.int64), device=input.device), dim=d,
                 kind="unique_dim"),)
    if return_inverse:
        out += (tensor(inverse.reshape(-1).astype(np.int64), device=input.device),)
    if return_counts:
        out += (tensor(counts.astype(np.int64), device=input.device),)
    return out[0] if len(out) == 1 else out


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal elements (or equal slices along dim) collapsed to one. Found on the host, as PyTorch
    syncs for the output's size. As PyTorch, its node (UniqueConsecutiveBackward0) raises in backward."""
    refuse_complex(input, "unique")
    shape = tuple(input.shape)
    d = None if dim is None else wrap_dim(dim, input.ndim)
    data = np.asarray(sized_by(input._value, "unique_consecutive")[1])
    rows = data.reshape(-1, 1) if d is None else np.moveaxis(data, d, 0).reshape(shape[d] if shape else 1, -1)
    changed = np.any(rows[1:] != rows[:-1], axis=1)
    starts = np.concatenate([[0], np.flatnonzero(changed) + 1]) if len(rows) else np.zeros(0, np.int64)
    from .._creation import tensor
    index = tensor(starts.astype(np.int64), device=input.device)
    out = (apply(S.unique_take, input, index, dim=d, kind="unique_consecutive"),)
    if return_inverse:
        inverse = np.cumsum(np.concatenate([[0], changed])) if len(rows) else np.zeros(0, np.int64)
        out += (tensor(inverse.astype(np.int64).reshape(shape if d is None else (-1,)), device=input.device),)
    if return_counts:
        out += (tensor(np.diff(np.append(starts, len(rows))).astype(np.int64), device=input.device),)
    return out[0] if len(out) == 1 else out


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                           "while right was True")
    side = side or ("right" if right else "left")
    if (not isinstance(input, Tensor) or input.ndim == 0) and sorted_sequence.ndim != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({sorted_sequence.ndim}) and "
                           "input value's dim(0) numel(1)")
    if not isinstance(input, Tensor):
        from .._creation import tensor
        input = tensor(input)
    if sorted_sequence.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sorted_sequence.ndim != 1 and tuple(sorted_sequence.shape[:-1]) != tuple(input.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
                           f"{list(input.shape)}")
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    common = D.promote_types(sorted_sequence.dtype, input.dtype)
    return apply(S.searchsorted, sorted_sequence.to(common), input.to(common), side=side,
                 dtype=jnp.int32 if out_int32 else jnp.int64)
