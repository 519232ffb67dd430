"""PyTorch's torch.masked reductions and normalizations over (input, mask): masked-out elements are replaced by
the operation's identity (0 for sum, -inf for amax...) before the ordinary op runs, as PyTorch computes them."""
import builtins
import math

from .. import _dtypes as D

__all__ = ["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "norm", "var", "std", "softmax",
           "log_softmax", "softmin", "normalize", "logsumexp"]

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _tg():
    import tapegrad
    return tapegrad


def _canonical_dim(dim, ndim):
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
                             f"{d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _identity(op_name, input, ord=2):
    """The value that leaves the reduction unchanged (None where there is none: mean, var, std)."""
    tg, dtype = _tg(), input.dtype
    floating = dtype.is_floating_point
    if op_name in ("sum", "cumsum", "norm"):
        if op_name == "norm" and ord == -math.inf:
            return tg.tensor(math.inf, dtype=dtype)
        return tg.tensor(0, dtype=dtype)
    if op_name in ("prod", "cumprod"):
        return tg.tensor(1, dtype=dtype)
    if op_name in ("amax", "argmax", "logsumexp"):
        return tg.tensor(-math.inf if floating else tg.iinfo(dtype).min, dtype=dtype)
    if op_name in ("amin", "argmin"):
        return tg.tensor(math.inf if floating else tg.iinfo(dtype).max, dtype=dtype)
    return None


def _input_mask(input, mask):
    tg = _tg()
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = tg.broadcast_to(mask, input.shape)
    return mask.to(D.bool_)


def _split(input, mask):
    """(data, mask) of a MaskedTensor input, else (input, mask) as given."""
    from ._tensor import MaskedTensor
    if isinstance(input, MaskedTensor):
        return input.get_data(), input.get_mask()
    return input, mask


def _combine(op_name, input, mask, ord=2):
    if mask is None:
        return input
    return _tg().where(_input_mask(input, mask), input, _identity(op_name, input, ord))


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input, mask = _split(input, mask)
    if dtype is None:
        dtype = D.int64 if input.dtype.name in _SMALL_INTS else input.dtype
    return _tg().sum(_combine("sum", input, mask), _canonical_dim(dim, input.ndim), builtins.bool(keepdim),
                     dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input, mask = _split(input, mask)
    if dtype is None:
        dtype = D.int64 if input.dtype.name in _SMALL_INTS else input.dtype
    result = _combine("prod", input, mask).to(dtype)
    for d in reversed(_canonical_dim(dim, input.ndim)):
        result = result.prod(d, keepdim=builtins.bool(keepdim))
    return result


def _extreme(name):
    def reduce(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        input, mask = _split(input, mask)
        dtype = dtype or input.dtype
        combined = _combine(name, input, mask)
        return getattr(_tg(), name)(combined, _canonical_dim(dim, combined.ndim), builtins.bool(keepdim)).to(dtype)
    reduce.__name__ = name
    return reduce


amax, amin = _extreme("amax"), _extreme("amin")


def _arg(name):
    def reduce(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        input, mask = _split(input, mask)
        dtype = dtype or input.dtype   # PyTorch's masked argmax/argmin return the input's dtype
        return getattr(_tg(), name)(_combine(name, input, mask), dim, builtins.bool(keepdim)).to(dtype)
    reduce.__name__ = name
    return reduce


argmax, argmin = _arg("argmax"), _arg("argmin")


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input, mask = _split(input, mask)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    if mask is None:
        count = _tg().ones(input.shape, dtype=D.int64).sum(_canonical_dim(dim, input.ndim), keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(_canonical_dim(dim, input.ndim), keepdim=builtins.bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    input, mask = _split(input, mask)
    dtype = dtype or input.dtype
    combined = _combine("norm", input, mask, ord)
    return _tg().linalg.vector_norm(combined, ord, _canonical_dim(dim, input.ndim), builtins.bool(keepdim),
                                    dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    tg = _tg()
    input, mask = _split(input, mask)
    if unbiased is not None and correction is not None:
        raise ValueError("Only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None or unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else D.float32
    dims = _canonical_dim(dim, input.ndim)
    if mask is None:
        count = tg.ones(input.shape, dtype=D.int64).sum(dims, keepdim=True)
        total = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dims, keepdim=True)
        total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = input - total / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        count = tg.maximum(count.to(dtype) - corr, tg.zeros((), dtype=dtype))
    out = (total / count).to(dtype)
    return out.sqrt() if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    input, mask = _split(input, mask)
    combined = _combine("logsumexp", input, mask).to(dtype or input.dtype)
    return _tg().logsumexp(combined, _canonical_dim(dim, input.ndim), builtins.bool(keepdim))


def _normalization(name, identity_of):
    def fn(input, dim, *, dtype=None, mask=None):
        from ..nn import functional as F
        input, mask = _split(input, mask)
        d = _canonical_dim(dim, input.ndim)[0]
        return getattr(F, name)(_combine(identity_of, input, mask), d, dtype=dtype or input.dtype)
    fn.__name__ = name
    return fn


softmax = _normalization("softmax", "amax")
log_softmax = _normalization("log_softmax", "amax")
softmin = _normalization("softmin", "amin")


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    input, mask = _split(input, mask)
    dtype = dtype or input.dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _combine("sum", input, mask) / _tg().maximum(nrm, nrm.new_full([], eps))
