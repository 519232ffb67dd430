"""The transforms of tapegrad.fft, composed as PyTorch's SpectralOps composes them: promotion (ToCopy),
the signal sized to n by slicing or zero-padding, one kernel (_ops.spectral), and the conjugations
PyTorch adds for the inverse real transforms, so values, dtypes, errors and grad_fn nodes are PyTorch's."""
import builtins

from .. import _dtypes as D
from .._autocast import policy
from .._dispatch import apply
from .._functional._common import SCALAR_NAME, wrap_dim
from .._functional._complex import conj, conj_physical
from .._functional._out import write_out
from .._functional._splits import _slice
from .._ops import spectral as K
from ..nn._functional.padding import pad

_FORWARD_MODES = {None: K.NONE, "backward": K.NONE, "forward": K.BY_N, "ortho": K.BY_ROOT_N}
_INVERSE_MODES = {None: K.BY_N, "backward": K.BY_N, "forward": K.NONE, "ortho": K.BY_ROOT_N}


def _norm(norm, forward):
    modes = _FORWARD_MODES if forward else _INVERSE_MODES
    if norm not in modes:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return modes[norm]


def _wrap(dim, ndim):
    """maybe_wrap_dim without wrapping scalars: a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {builtins.int(dim)} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _promote(x, require_complex):
    """promote_tensor_fft: integers to the default float dtype, optionally complex; only float and double
    (and their complex types) have CPU kernels."""
    dtype = x.dtype
    if dtype.is_complex:
        return x
    if not dtype.is_floating_point:
        dtype = D.get_default_dtype()
    if dtype not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {SCALAR_NAME[dtype.name]}")
    if require_complex:
        dtype = D.complex64 if dtype is D.float32 else D.complex128
    return x if dtype is x.dtype else x.to(dtype)


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """resize_fft_input: each dim cut to its size (slices, in order), then one zero pad for those short."""
    padding = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if x.shape[d] < n:
            padding[2 * (x.ndim - 1 - d) + 1] = n - x.shape[d]
        elif x.shape[d] > n:
            x = _slice(x, d, 0, n)
    return pad(x, padding) if any(padding) else x


def _check_out(out, fname, is_complex):
    if out is None:
        return
    if is_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a complex output tensor, but got {SCALAR_NAME[out.dtype.name]}")
    if not is_complex and not out.dtype.is_floating_point:
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got {SCALAR_NAME[out.dtype.name]}")


def _kernel(op, x, out, **static):
    result = apply(op, x, **static)
    return result if out is None else write_out(out, result, f"_{op.name}()")


# ---- one-dimensional transforms ----------------------------------------------------------------------


def _c2c(fname, out, x, n, dim, norm, forward):
    _check_out(out, fname, True)
    d = _wrap(dim, x.ndim)
    n = x.shape[d] if n is None else builtins.int(n)
    _check_points(n)
    x = _resize(x, (d,), (n,))
    return _kernel(K.fft_c2c, x, out, dim=(d,), normalization=_norm(norm, forward), forward=forward)


def _r2c(fname, out, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got {SCALAR_NAME[x.dtype.name]}")
    _check_out(out, fname, True)
    x = _promote(x, False)
    d = _wrap(dim, x.ndim)
    n = x.shape[d] if n is None else builtins.int(n)
    _check_points(n)
    x = _resize(x, (d,), (n,))
    mode = _norm(norm, forward)
    if forward:
        return _kernel(K.fft_r2c, x, out, dim=(d,), normalization=mode, onesided=onesided)
    # the inverse is the conjugate of the forward transform (a conjugate view; conj_physical into out)
    result = apply(K.fft_r2c, x, dim=(d,), normalization=mode, onesided=onesided)
    return conj(result) if out is None else write_out(out, conj_physical(result), "conj_physical()")


def _c2r(fname, out, x, n, dim, norm, forward):
    _check_out(out, fname, False)
    x = _promote(x, True)
    d = _wrap(dim, x.ndim)
    n = 2 * (x.shape[d] - 1) if n is None else builtins.int(n)
    _check_points(n)
    x = _resize(x, (d,), (n // 2 + 1,))
    mode = _norm(norm, forward)
    if forward:   # hfft: the inverse real transform of the conjugate
        x = conj(x)
    return _kernel(K.fft_c2r, x, out, dim=(d,), normalization=mode, last_dim_size=n)


@policy("fft_fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    if input.dtype.is_complex:
        return _c2c("fft", out, input, n, dim, norm, True)
    return _r2c("fft", out, input, n, dim, norm, True, False)


@policy("fft_ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    if input.dtype.is_complex:
        return _c2c("ifft", out, input, n, dim, norm, False)
    return _r2c("ifft", out, input, n, dim, norm, False, False)


@policy("fft_rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _r2c("rfft", out, input, n, dim, norm, True, True)


@policy("fft_irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2r("irfft", out, input, n, dim, norm, False)


@policy("fft_hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _c2r("hfft", out, input, n, dim, norm, True)


@policy("fft_ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _r2c("ihfft", out, input, n, dim, norm, False, True)


# ---- n-dimensional transforms ------------------------------------------------------------------------


def _shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args: (sizes, dims), dims wrapped and unique, s's -1 the input's size."""
    ndim = x.ndim
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in ((dim,) if isinstance(dim, builtins.int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [builtins.int(n) for n in s]
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    else:
        dims = list(range(ndim)) if dims is None else dims
        sizes = [x.shape[d] for d in dims]
    for n in sizes:
        _check_points(n)
    return sizes, dims


def _c2r_shape_and_dims(fname, x, s, dim):
    """The sizes and dims of a c2r transform, and the output's size along the last dim (last_dim_size)."""
    sizes, dims = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else sizes[-1]
    _check_points(last)
    return sizes[:-1] + [last // 2 + 1], dims, last


def _c2cn(fname, forward, input, s, dim, norm, out):
    sizes, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, True)
    _check_out(out, fname, True)
    x = _resize(x, dims, sizes)
    return _kernel(K.fft_c2c, x, out, dim=tuple(dims), normalization=_norm(norm, forward), forward=forward)


@policy("fft_fftn")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2cn("fftn", True, input, s, dim, norm, out)


@policy("fft_ifftn")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2cn("ifftn", False, input, s, dim, norm, out)


@policy("fft_rfftn")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {SCALAR_NAME[input.dtype.name]}")
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, sizes)
    _check_out(out, "rfftn", True)
    return _kernel(K.fft_r2c, x, out, dim=tuple(dims), normalization=_norm(norm, True), onesided=True)


@policy("fft_irfftn")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    sizes, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, sizes)
    _check_out(out, "irfftn", False)
    return _kernel(K.fft_c2r, x, out, dim=tuple(dims), normalization=_norm(norm, False), last_dim_size=last)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    sizes, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, sizes)
    mode = _norm(norm, True)
    if len(dims) > 1:   # the forward transform over all but the last dim, then hfft along it
        x = apply(K.fft_c2c, x, dim=tuple(dims[:-1]), normalization=mode, forward=True)
    _check_out(out, "hfftn", False)
    return _kernel(K.fft_c2r, conj(x), out, dim=(dims[-1],), normalization=mode, last_dim_size=last)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, sizes)
    if x.dtype.is_complex:   # (the r2c kernel's own check)
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {SCALAR_NAME[x.dtype.name]}")
    mode = _norm(norm, False)
    half = apply(K.fft_r2c, x, dim=(dims[-1],), normalization=mode, onesided=True)
    if len(dims) == 1:
        return conj(half) if out is None else write_out(out, conj_physical(half), "conj_physical()")
    _check_out(out, "ihfftn", True)
    return _kernel(K.fft_c2c, conj_physical(half), out, dim=tuple(dims[:-1]), normalization=mode, forward=False)


def _two_dims(fn, name):
    """fn2: fnn over the last two dims by default."""
    def f(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        return fn(input, s, dim, norm, out=out)
    f.__name__ = f.__qualname__ = name
    return f


fft2, ifft2, rfft2, irfft2, hfft2, ihfft2 = (_two_dims(f, f.__name__[:-1] + "2")
                                             for f in (fftn, ifftn, rfftn, irfftn, hfftn, ihfftn))
# autocast runs these in float32, as PyTorch's CPU list does (its hermitian n-dimensional ones are not on it)
fft2, ifft2, rfft2, irfft2 = (policy(f"fft_{f.__name__}")(f) for f in (fft2, ifft2, rfft2, irfft2))
