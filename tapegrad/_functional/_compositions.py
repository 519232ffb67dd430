"""Functions PyTorch composes from other ops, composed here the same way so that their grad_fn names are
PyTorch's: inner, diagflat, vander, matrix_power, cov, corrcoef, hsplit / vsplit / dsplit."""
import builtins

from .. import _dtypes as D
from .._tensor import Tensor
from ._common import check_tensors
from .._user_frames import warn_user


def inner(input, other, *, out=None):
    check_tensors("inner", (input, "input"), (other, "other"))
    from ._linalg import tensordot
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:   # (tensordot's check)
        raise RuntimeError("both inputs should have same dtype")
    return tensordot(input, other, ([-1], [-1]))


def diagflat(input, offset=0):
    from ._rearrange import diag_embed
    return diag_embed(input.contiguous().view(-1), offset)


def vander(x, N=None, increasing=False):
    from .._creation import ones
    from ._reduce import cumprod
    from ._rearrange import flip
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    result = ones((x.numel(), n), dtype=D.promote_types(x.dtype, D.int64), device=x.device)
    if n > 1:
        # PyTorch's steps: the powers as a cumulative product of copies of x
        result[:, 1:].copy_(x.unsqueeze(1))
        result[:, 1:].copy_(cumprod(result[:, 1:], 1))
    return result if increasing else flip(result, (1,))


def matrix_power(input, n, *, out=None):
    from ._linalg import matmul
    from ._linalg_functions import _check_square_shape, inv
    from .._creation import eye
    _check_square_shape(input, "linalg.matrix_power")
    if n == 0:
        identity = eye(input.shape[-1], dtype=input.dtype, device=input.device).expand_as(input)
        return input.clone(memory_format=_contiguous()).copy_(identity)
    if n < 0:
        input, n = inv(input), -n
        if n == 1:
            return input
    if n == 1:
        return input.clone(memory_format=_contiguous())
    if n == 3:
        return matmul(matmul(input, input), input)
    # PyTorch's binary decomposition: the squares of input, multiplied in where n has a 1 bit
    z = result = None
    while n > 0:
        z = input if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


def _contiguous():
    from .._memory_format import contiguous_format
    return contiguous_format


# ---- covariance --------------------------------------------------------------------------------------


def cov(input, *, correction=1, fweights=None, aweights=None):
    from ._reduce import sum
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", observations, integral=False)
        w = aweights if w is None else w * aweights
    if w is None:
        from .._creation import scalar_tensor
        w_sum = scalar_tensor(observations, dtype=D.int64, device=x.device)
    else:
        w_sum = w.sum()
        if not builtins.bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = sum(x if w is None else x * w, 1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if builtins.bool(norm_factor <= 0):
        warn_user("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                  "observations.", UserWarning)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return c.true_divide(norm_factor).squeeze()


def _check_weights(w, name, observations, integral):
    from ._arith import _scalar_name
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           "dimensions")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    if integral:
        if w.dtype.is_floating_point or w.dtype.is_complex or w.dtype is D.bool_:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{_scalar_name(w.dtype)} dtype")
        if not builtins.bool((w >= 0).all()):
            raise RuntimeError("cov(): fweights cannot be negative")
    else:
        if not w.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{_scalar_name(w.dtype)} dtype")
        if not builtins.bool((w >= 0).all()):
            raise RuntimeError("cov(): aweights cannot be negative")


def corrcoef(input):
    from ._unary import sqrt
    from ._complex import complex, real, imag
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = sqrt(real(d) if d.is_complex() else d)
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return complex(real(c).clip(-1, 1), imag(c).clip(-1, 1))
    return c.clip(-1, 1)


# ---- splits along the first, second and third dims ----------------------------------------------------


def _split_along(name, dim, least):
    def f(input, indices_or_sections):
        from ._splits import tensor_split
        if input.ndim < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, builtins.int):
            n = indices_or_sections
            if n == 0 or input.shape[d] % n != 0:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {input.shape[d]} is not divisible by the split_size {n}!")
        return tensor_split(input, indices_or_sections, d)
    f.__name__ = name
    return f


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)
