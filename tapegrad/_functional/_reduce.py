"""Reductions, scans, sorting and selection."""
import builtins

import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import reduction as R, sorting as S
from .._tensor import Tensor
from . import _return_types as RT
from ._common import SCALAR_NAME, dims as _dims, wrap_dim
from .._autocast import policy


def _rdims(dim, t):
    # Scalars accept dim 0 / -1 (any other raises PyTorch's IndexError) and reduce to themselves.
    if t.ndim == 0:
        if dim is not None:
            _dims(dim, 0)
        return None
    return _dims(dim, t.ndim)


def _int_dtype(input, dtype):
    dtype = D.as_dtype(dtype)
    if dtype is None and not (input.dtype.is_floating_point or input.dtype.is_complex):
        dtype = D.int64
    return dtype.np if dtype is not None else None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if input.is_sparse or getattr(input, "_sp_compressed", False):   # COO, CSR, CSC (not MaskedTensor)
        return input.sum(dim, keepdim, dtype=dtype)
    return apply(R.sum, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim),
                 dtype=_int_dtype(input, dtype))


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return apply(R.nansum, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim),
                 dtype=_int_dtype(input, dtype))


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    # As PyTorch's: nansum over the count of non-NaN elements (NansumBackward0 under DivBackward0)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{SCALAR_NAME[input.dtype.name]}")
    count = sum(input.isnan().logical_not(), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(count)


@policy("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is not None and (not isinstance(dim, (int, np.integer)) or isinstance(dim, bool)):
        raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, {type(dim).__name__}), "
                        "but expected one of:\n * (Tensor input, *, dtype = None)\n * (Tensor input, int dim, "
                        "bool keepdim = False, *, dtype = None)\nPass one int dim (prod reduces one dim, or all).")
    return apply(R.prod, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim),
                 dtype=_int_dtype(input, dtype))


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dtype = D.as_dtype(dtype)
    d = dtype or input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {SCALAR_NAME[d.name]}. Convert first, e.g. x.float().mean().")
    return apply(R.mean, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim),
                 dtype=dtype.np if dtype is not None else None)


def _var_args(input, dim, unbiased, keepdim, correction, name="std and var"):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes. Convert first, "
                           "e.g. x.float().std().")
    if isinstance(dim, builtins.bool):  # legacy std(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dict(dim=_rdims(dim, input), correction=correction, keepdim=builtins.bool(keepdim))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(R.var, input, **_var_args(input, dim, unbiased, keepdim, correction))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(R.std, input, **_var_args(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return tuple(apply(R.var_mean, input, **_var_args(input, dim, unbiased, keepdim, correction, "var_mean")))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return tuple(apply(R.std_mean, input, **_var_args(input, dim, unbiased, keepdim, correction, "std_mean")))


def _check_nonempty(input, name, dim=None):
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if dim is not None and input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _extreme(input, dim_or_other, keepdim, name):
    from ._arith import maximum, minimum
    if isinstance(dim_or_other, Tensor):
        return (maximum if name == "max" else minimum)(input, dim_or_other)
    if dim_or_other is None:
        _check_nonempty(input, name)
        return apply(R.max_all if name == "max" else R.min_all, input)
    dim = wrap_dim(dim_or_other, input.ndim)
    _check_nonempty(input, name, dim)
    if input.ndim == 0:
        return _scalar_pair(input, name)
    op = R.argmax if name == "max" else R.argmin
    idx = apply(op, input, dim=dim, keepdim=builtins.bool(keepdim))
    values = apply(S.max_values if name == "max" else S.min_values, input, idx, dim=dim, keepdim=keepdim)
    return getattr(RT, name)(values, idx)


def _zeros_index(t):
    return Tensor._wrap(jnp.zeros(t._value.shape, jnp.int64))


def max(input, dim=None, keepdim=False, *, out=None):
    return _extreme(input, dim, keepdim, "max")


def min(input, dim=None, keepdim=False, *, out=None):
    return _extreme(input, dim, keepdim, "min")


def _amax(op, name):
    def f(input, dim=(), keepdim=False, *, out=None):
        d = _rdims(dim, input)
        _check_nonempty(input, name, None if d is None else d[0])
        return apply(op, input, dim=d, keepdim=builtins.bool(keepdim))
    f.__name__ = name
    return f


amax = _amax(R.amax, "amax")
amin = _amax(R.amin, "amin")


def aminmax(input, *, dim=None, keepdim=False):
    return RT.aminmax(amin(input, () if dim is None else dim, keepdim), amax(input, () if dim is None else dim,
                                                                             keepdim))


def _arg(op, name):
    def f(input, dim=None, keepdim=False, *, out=None):
        if input.dtype is D.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            _check_nonempty(input, name)
            return apply(op, input, dim=None, keepdim=builtins.bool(keepdim))
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            return _zeros_index(input)
        _check_nonempty(input, name, d)
        return apply(op, input, dim=d, keepdim=builtins.bool(keepdim))
    f.__name__ = name
    return f


argmax = _arg(R.argmax, "argmax")
argmin = _arg(R.argmin, "argmin")


def logsumexp(input, dim, keepdim=False, *, out=None):
    return apply(R.logsumexp, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim))


def _scan(op):
    def f(input, dim, *, dtype=None, out=None):
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            return input.to(D.as_dtype(dtype) or input.dtype) * 1
        return apply(op, input, dim=d, dtype=_int_dtype(input, dtype))
    f.__name__ = op.name
    return f


cumsum = _scan(R.cumsum)
cumprod = _scan(R.cumprod)


def logcumsumexp(input, dim, *, out=None):
    d = wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input first, e.g. x.float().")
    if input.ndim == 0:
        return input * 1
    return apply(R.logcumsumexp, input, dim=d)


def _cumulative_extreme(indices_op, values_op, name):
    def f(input, dim, *, out=None):
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            return _scalar_pair(input, name)
        idx = apply(indices_op, input, dim=d)
        return getattr(RT, name)(apply(values_op, input, idx, dim=d), idx)
    f.__name__ = name
    return f


cummax = _cumulative_extreme(R.cummax_indices, R.cummax_values, "cummax")
cummin = _cumulative_extreme(R.cummin_indices, R.cummin_values, "cummin")


def bincount(input, weights=None, minlength=0):
    if input.ndim != 1 or input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is D.bool_:
        if input.dtype.is_floating_point or input.dtype.is_complex:
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                      "Convert the input to integers first, e.g. x.long().")
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # The output length depends on the values: read them on the host, as PyTorch syncs.
    values = input._value
    if values.size and builtins.int(jnp.min(values)) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    length = builtins.max(builtins.int(jnp.max(values)) + 1 if values.size else 0, builtins.int(minlength))
    if weights is None:
        return apply(R.bincount, input, length=length)
    # PyTorch counts float32 weights in float32 and any other weights in float64.
    weights = weights if weights.dtype is D.float32 else weights.to(D.float64)
    return apply(R.bincount, input, weights, length=length)


def _logical(op):
    def f(input, dim=None, keepdim=False, *, out=None):
        return apply(op, input, dim=_rdims(dim, input), keepdim=builtins.bool(keepdim))
    f.__name__ = op.name
    return f


all = _logical(R.all)
any = _logical(R.any)


def count_nonzero(input, dim=None):
    return apply(R.count_nonzero, input, dim=_rdims(dim, input))


# ---- sorting and selection --------------------------------------------------------------

def _scalar_pair(input, kind):
    # 0-d inputs: the value itself at index 0.
    return getattr(RT, kind)(input.clone(), _zeros_index(input))


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "sort")
    idx = apply(S.argsort, input, dim=d, descending=builtins.bool(descending))
    return RT.sort(apply(S.sort_values, input, idx, dim=d), idx)


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return _scalar_pair(input, "topk")
    idx = apply(S.topk_indices, input, dim=d, k=builtins.int(k), largest=builtins.bool(largest))
    return RT.topk(apply(S.topk_values, input, idx, dim=d), idx)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        return _scalar_pair(input, "kthvalue")
    idx = apply(S.kthvalue_indices, input, dim=d, k=builtins.int(k) - 1, keepdim=builtins.bool(keepdim))
    return RT.kthvalue(apply(S.kthvalue_values, input, idx, dim=d, keepdim=builtins.bool(keepdim)), idx)


def median(input, dim=None, keepdim=False, *, out=None):
    if input.dtype is D.bool_:
        raise NotImplementedError(f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for 'Bool'. "
                                  "Convert the input first, e.g. x.int().")
    if dim is None:
        _check_nonempty(input, "median")
        return apply(S.median_all, input)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "median")
    _check_nonempty(input, "median", d)
    idx = apply(S.median_indices, input, dim=d, keepdim=builtins.bool(keepdim))
    return RT.median(apply(S.median_values, input, idx, dim=d, keepdim=builtins.bool(keepdim)), idx)


def mode(input, dim=-1, keepdim=False, *, out=None):
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_pair(input, "mode")
    idx = apply(S.mode_indices, input, dim=d, keepdim=builtins.bool(keepdim))
    return RT.mode(apply(S.mode_values, input, idx, dim=d, keepdim=builtins.bool(keepdim)), idx)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        return _unique_dim(input, wrap_dim(dim, input.ndim), return_inverse, return_counts)
    # The number of distinct values decides the output shape: count on the host, as PyTorch syncs.
    size = builtins.int(jnp.unique(input._value).size)
    values, inverse, counts = apply(S.unique, input, size=size)
    out = (values,)
    if return_inverse:
        out += (inverse.reshape(input.shape),)
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
    rows = np.moveaxis(np.asarray(input._value), d, 0).reshape(shape[d], width)
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
    shape = tuple(input.shape)
    d = None if dim is None else wrap_dim(dim, input.ndim)
    data = np.asarray(input._value)
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
    if not isinstance(input, Tensor):
        if sorted_sequence.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                               f"dimension is 1, but we got boundaries tensor dim({sorted_sequence.ndim}) and "
                               "input value's dim(0) numel(1)")
        from .._creation import tensor
        input = tensor(input)
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
