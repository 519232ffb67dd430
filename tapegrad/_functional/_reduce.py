"""Reductions and scans (sorting and selection: _sort.py)."""
import builtins
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from .._arg_types import as_bool, as_int
from .._dispatch import apply
from .._ops import reduction as R, sorting as S
from .._tensor import Tensor
from . import _return_types as RT
from .._user_frames import warn_user
from ._common import SCALAR_NAME, dims as _dims, read_on_host, refuse_complex, wrap_dim
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
    keepdim = as_bool(keepdim, "keepdim")   # (the parser's type check comes before the dims are read)
    return apply(R.sum, input, dim=_rdims(dim, input), keepdim=keepdim,
                 dtype=_int_dtype(input, dtype))


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    keepdim = as_bool(keepdim, "keepdim")
    return apply(R.nansum, input, dim=_rdims(dim, input), keepdim=keepdim,
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
    keepdim = as_bool(keepdim, "keepdim")
    return apply(R.prod, input, dim=_rdims(dim, input), keepdim=keepdim,
                 dtype=_int_dtype(input, dtype))


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dtype = D.as_dtype(dtype)
    d = dtype or input.dtype
    if not (d.is_floating_point or d.is_complex):
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a floating point "
                           f"or complex dtype. Got: {SCALAR_NAME[d.name]}. Convert first, e.g. x.float().mean().")
    keepdim = as_bool(keepdim, "keepdim")
    return apply(R.mean, input, dim=_rdims(dim, input), keepdim=keepdim,
                 dtype=dtype.np if dtype is not None else None)


def _var_args(input, dim, unbiased, keepdim, correction, name="std and var", function="std"):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes. Convert first, "
                           "e.g. x.float().std().")
    if isinstance(dim, builtins.bool):  # legacy std(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None:
        as_bool(unbiased, "unbiased")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    keepdim = as_bool(keepdim, "keepdim")
    dims = _rdims(dim, input)
    reduced = math.prod(input.shape[d] for d in (range(input.ndim) if dims is None else dims))
    if reduced - correction <= 0:   # (PyTorch's warning, every call; the result is inf or nan)
        warn_user(f"{function}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                  "factor (input numel divided by output numel).")
    return dict(dim=dims, correction=correction, keepdim=keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(R.var, input, **_var_args(input, dim, unbiased, keepdim, correction, function="var"))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return apply(R.std, input, **_var_args(input, dim, unbiased, keepdim, correction, function="std"))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return tuple(apply(R.var_mean, input, **_var_args(input, dim, unbiased, keepdim, correction, "var_mean",
                                                      "var_mean")))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return tuple(apply(R.std_mean, input, **_var_args(input, dim, unbiased, keepdim, correction, "std_mean",
                                                      "std_mean")))


def _check_nonempty(input, name, dim=None):
    if input.numel() == 0 and dim is None:
        error = IndexError if name in ("argmax", "argmin") else RuntimeError   # (PyTorch's types differ)
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument.")
    if dim is not None and input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _extreme(input, dim_or_other, keepdim, name):
    from ._arith import maximum, minimum
    if isinstance(dim_or_other, Tensor):
        return (maximum if name == "max" else minimum)(input, dim_or_other)
    if dim_or_other is None:
        refuse_complex(input, f"{name}_all")
        _check_nonempty(input, name)
        return apply(R.max_all if name == "max" else R.min_all, input)
    dim = wrap_dim(dim_or_other, input.ndim)
    refuse_complex(input, message=f"{name}(): does not support complex input", error=RuntimeError)
    _check_nonempty(input, name, dim)
    if input.ndim == 0:
        return _scalar_pair(input, name)
    op = R.argmax if name == "max" else R.argmin
    idx = apply(op, input, dim=dim, keepdim=as_bool(keepdim, "keepdim"))
    values = apply(S.max_values if name == "max" else S.min_values, input, idx, dim=dim, keepdim=keepdim)
    return getattr(RT, name)(values, idx)


def _zeros_index(t):
    return Tensor._wrap(jnp.zeros(t._value.shape, jnp.int64))


def _scalar_pair(input, kind):
    # 0-d inputs: the value itself at index 0.
    return getattr(RT, kind)(input.clone(), _zeros_index(input))


def max(input, dim=None, keepdim=False, *, out=None):
    return _extreme(input, dim, keepdim, "max")


def min(input, dim=None, keepdim=False, *, out=None):
    return _extreme(input, dim, keepdim, "min")


def _amax(op, name):
    def f(input, dim=(), keepdim=False, *, out=None):
        refuse_complex(input, f"{name[1:]}_values_cpu")
        d = _rdims(dim, input)
        _check_nonempty(input, name, None if d is None else d[0])
        return apply(op, input, dim=d, keepdim=as_bool(keepdim, "keepdim"))
    f.__name__ = name
    return f


amax = _amax(R.amax, "amax")
amin = _amax(R.amin, "amin")


def aminmax(input, *, dim=None, keepdim=False):
    refuse_complex(input, "aminmax_cpu")
    if input.numel() == 0:
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if input.ndim and input.shape[wrap_dim(dim, input.ndim)] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {wrap_dim(dim, input.ndim)} to have non-zero size.")
    return RT.aminmax(*apply(R.aminmax, input, dim=_rdims(dim, input), keepdim=as_bool(keepdim, "keepdim")))


def _arg(op, name):
    def f(input, dim=None, keepdim=False, *, out=None):
        if input.dtype is D.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        refuse_complex(input, message=f"{name}(): does not support complex input", error=RuntimeError)
        if dim is None:
            _check_nonempty(input, name)
            return apply(op, input, dim=None, keepdim=as_bool(keepdim, "keepdim"))
        d = wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            return _zeros_index(input)
        _check_nonempty(input, name, d)
        return apply(op, input, dim=d, keepdim=as_bool(keepdim, "keepdim"))
    f.__name__ = name
    return f


argmax = _arg(R.argmax, "argmax")
argmin = _arg(R.argmin, "argmin")


def logsumexp(input, dim, keepdim=False, *, out=None):
    return apply(R.logsumexp, input, dim=_rdims(dim, input), keepdim=as_bool(keepdim, "keepdim"))


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
        refuse_complex(input, f"{name}_cpu")
        if input.numel() == 0 and not -input.ndim <= as_int(dim) < input.ndim:
            d = 0   # (PyTorch returns an empty input's empty results before it reads the dim)
        else:
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
    if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is D.bool_:   # (before its shape)
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input to integers first, e.g. x.long().")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # The output length depends on the values: read them on the host, as PyTorch syncs.
    xp, values = read_on_host(input._value)
    if values.size and builtins.int(xp.min(values)) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    length = builtins.max(builtins.int(xp.max(values)) + 1 if values.size else 0, builtins.int(minlength))
    if weights is None:
        return apply(R.bincount, input, length=length)
    # PyTorch counts float32 weights in float32 and any other weights in float64.
    weights = weights if weights.dtype is D.float32 else weights.to(D.float64)
    return apply(R.bincount, input, weights, length=length)


def _logical(op):
    def f(input, dim=None, keepdim=False, *, out=None):
        return apply(op, input, dim=_rdims(dim, input), keepdim=as_bool(keepdim, "keepdim"))
    f.__name__ = op.name
    return f


all = _logical(R.all)
any = _logical(R.any)


def count_nonzero(input, dim=None):
    return apply(R.count_nonzero, input, dim=_rdims(dim, input))


def renorm(input, p, dim, maxnorm, *, out=None):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {builtins.float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        from ._linalg_functions import _check_float
        _check_float(input, "vector_norm")
    return apply(R.renorm, input, p=builtins.float(p), dim=wrap_dim(dim, input.ndim), maxnorm=builtins.float(maxnorm))
