"""Order statistics and counting: quantile, nanquantile, nanmedian, histc, histogram, bucketize, isin."""
import builtins
import math

from .. import _dtypes as D
from .._arg_types import as_bool
from .._dispatch import apply
from .._grad_mode import no_grad
from .._ops import histograms as H, sorting as S
from .._tensor import Tensor
from . import _return_types as RT
from ._common import SCALAR_NAME, as_tensor, refuse_complex, result_dtype, wrap_dim
from ._reduce import _check_nonempty, _scalar_pair

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, True)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's composition (sort, gather, lerp, then an in-place squeeze), so the gradient reaches the
    sorted neighbours of each rank and the result's node is theirs (SqueezeBackward4). Its errors name
    quantile() for nanquantile too."""
    name = "quantile"
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        from .._creation import scalar_tensor
        q = scalar_tensor(q, dtype=input.dtype, device=input.device)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if not builtins.bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    shape = list(input.shape)
    if dim is not None and input.ndim:
        d = wrap_dim(dim, input.ndim)
        out_shape = shape[:d] + [1] * builtins.bool(keepdim) + shape[d + 1:]
        if d == input.ndim - 1:
            ordered = input.sort().values
        else:
            ordered = input.unsqueeze(-1).transpose(d, -1).sort().values
    else:
        out_shape = [1] * input.ndim if keepdim else []
        ordered = input.flatten().sort().values
    ordered = ordered.view(out_shape + [ordered.shape[-1]] if out_shape else [ordered.shape[-1]])
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        from ._shape import broadcast_tensors
        ranks, has_nan = broadcast_tensors(q * last, ordered.isnan().any(-1, True))
        ranks = ranks.masked_fill(has_nan, last)
    ranks = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}.get(interpolation, lambda: ranks)()
    below = ranks.long()
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = (ranks - below) if interpolation == "linear" else ranks.new_full(tuple(ranks.shape), 0.5)
        values = values.lerp(ordered.gather(-1, ranks.ceil().long()), weights)
    if q.ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    if input.dtype is D.bool_:
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'. Convert the input first, e.g. x.int().")
    refuse_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        return apply(S.nanmedian_all, input)
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return RT.nanmedian(*_scalar_pair(input, "median"))
    _check_nonempty(input, "median", d)
    keepdim = as_bool(keepdim, "keepdim")
    idx = apply(S.nanmedian_indices, input, dim=d, keepdim=keepdim)
    return RT.nanmedian(apply(S.nanmedian_values, input, idx, dim=d, keepdim=keepdim), idx)


def _check_histogram_input(input, name, half=False):
    """PyTorch's histogram kernels take float32 and float64 (histc half precision too, `half`)."""
    if not (input.dtype.is_floating_point and (half or input.dtype.itemsize >= 4)):
        raise NotImplementedError(f"\"{name}\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input to float32 or float64 first.")


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Counts in `bins` equal bins between min and max (those of the data when both are equal). Not
    differentiable: PyTorch's result requires no grad."""
    if input.dtype is D.bool_ or input.dtype.is_complex and builtins.float(min) == builtins.float(max):
        # (PyTorch makes the edges before it looks at the data: linspace, after the data's range when none
        # is given: aminmax; both refuse these dtypes first)
        kernel = "linspace_cpu" if input.dtype is D.bool_ else "aminmax_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[input.dtype.name]}'. "
                                  "Convert the input to float32 or float64 first.")
    _check_histogram_input(input, "histogram_cpu", half=True)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and input.numel():
        lo, hi = (builtins.float(v) for v in input.detach().aminmax())   # (a host read, as PyTorch's)
    elif lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_float(lo)}, {_float(hi)}] is not finite")
    return apply(H.histc, input.detach(), lo, hi, bins=builtins.int(bins))


def _float(v):
    # C++'s printing of a double: nan as -nan (PyTorch's message), integers without a point
    return "-nan" if math.isnan(v) else repr(v) if v != builtins.int(v) else str(builtins.int(v))


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges); bins: their number (evenly between range, or the data's extremes) or the edges."""
    _check_histogram_input(input, "histogramdd")
    if isinstance(bins, Tensor):
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {_cpp(input)} and bins for dimension 0 with dtype {_cpp(bins)}")
        if bins.ndim != 1 or bins.numel() < 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension and at least 1 element, "
                               f"but got {bins.ndim} dimensions and {bins.numel()} elements")
        args, static = (bins,), {"bins": None}
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        # (an empty input without a range spans [0, 1], as PyTorch's select_outer_bin_edges)
        lo, hi = (builtins.float(v) for v in range) if range is not None else (0.0, 1.0)
        if range is None and input.numel():
            lo, hi = (builtins.float(v) for v in input.detach().aminmax())   # (a host read, as PyTorch's)
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_float(lo)} max "
                               f"{_float(hi)} for dimension 0")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_float(lo)}, {_float(hi)}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        args, static = (lo, hi), {"bins": builtins.int(bins)}
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
                               f"the input tensor excluding its innermost dimension, but got input with shape "
                               f"{[input.numel(), 1]} and weight with shape {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_cpp(input)}), and "
                               f"weight({_cpp(weight)})")
        args += (weight,)
    hist, edges = apply(H.histogram, input, *args, weighted=weight is not None, density=builtins.bool(density),
                        **static)
    return RT.histogram(hist, edges)


def _cpp(t):
    return SCALAR_NAME[t.dtype.name].lower()


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    from ._sort import searchsorted
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is among test_elements (compared in their promoted dtype); a bool result."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: elements or test_elements must be "
                        "a Tensor")
    dtype = result_dtype(elements, test_elements)
    if dtype is D.bool_ or dtype.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {SCALAR_NAME[dtype.name]}")
    device = (elements if isinstance(elements, Tensor) else test_elements).device
    elements, test_elements = (as_tensor(x).to(device) for x in (elements, test_elements))
    with no_grad():
        found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
        return found.logical_not() if invert else found

