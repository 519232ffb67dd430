"""torch.linalg's solvers that report instead of raising (solve_ex, inv_ex, cholesky_ex), least squares
(lstsq), matrix_rank, cond, tensorinv and tensorsolve, composed as PyTorch composes them."""
import builtins

import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._grad_mode import no_grad
from .._ops import linalg as L
from .._ops import linalg_general as G
from .._ops import linalg_lu as K
from . import _return_types as RT
from ._common import SCALAR_NAME, numel_of
from ._linalg_functions import (
    LinAlgError, _check_full_precision, _check_lapack_kernel, _check_square, _check_square_shape,
    _NOT_POSITIVE_DEFINITE, eigvalsh, inv, matrix_norm, solve, _solve_unchecked, svdvals)
from ._linalg_lu import check_batches, raise_for_info
from ._arith import maximum


def _lu_info(A):
    """getrf's info for A: the first zero pivot of its LU (1-based), 0 for an invertible matrix."""
    if A.numel() == 0:
        from .._creation import zeros
        return zeros(A.shape[:-2], dtype=D.int32)
    return apply(K.lu_factor, A.detach())[2]


def _singular(i):
    return f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is " \
        "singular."


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    result = _solve_unchecked(A, B, left)
    info = _lu_info(A)
    if check_errors:
        raise_for_info(info, LinAlgError, "torch.linalg.solve_ex",
                       lambda i: "The solver failed because the input matrix is singular.")
    return RT.linalg_solve_ex(result, info)


def inv_ex(A, *, check_errors=False, out=None):
    _check_square(A, "inv")
    _check_full_precision(A, "linalg.inv")
    info = _lu_info(A)
    if check_errors:
        raise_for_info(info, LinAlgError, "linalg.inv_ex", _singular)
    return RT.linalg_inv_ex(apply(L.inv, A), info)


def _cholesky_info(a):
    """potrf's info for each matrix of a (NumPy): the order of the first leading minor that is not positive-
    definite, read from a's lower triangle, 0 where there is none."""
    a = np.asarray(a)
    info = np.zeros(a.shape[:-2], np.int32)
    for index in np.ndindex(*a.shape[:-2]):
        m = a[index]
        low = np.zeros_like(m)
        for j in range(m.shape[-1]):
            d = m[j, j].real - np.sum(np.abs(low[j, :j]) ** 2)
            if not d > 0:
                info[index] = j + 1
                break
            low[j, j] = np.sqrt(d)
            low[j + 1:, j] = (m[j + 1:, j] - low[j + 1:, :j] @ np.conj(low[j, :j])) / low[j, j]
    return info


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    _check_square(A, "cholesky")
    _check_lapack_kernel(A, "cholesky_cpu")
    factor = apply(L.cholesky, A, upper=builtins.bool(upper))
    if bool(factor.isfinite().all()):
        info = np.zeros(A.shape[:-2], np.int32)
    else:   # (only then the host computes where the factorization stops)
        info = _cholesky_info(A.detach().numpy() if not upper else A.detach().mH.numpy())
    if check_errors:
        raise_for_info(info, LinAlgError, "linalg.cholesky_ex", lambda i: (
            f"{_NOT_POSITIVE_DEFINITE[:-1]} (the leading minor of order {i} is not "
            "positive-definite)."))
    from .._creation import tensor
    return RT.linalg_cholesky_ex(factor, tensor(info, dtype=D.int32))


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None, out=None):
    """The least-squares solution of A X = B, with what LAPACK's driver reports on the CPU: residuals where
    m > n and every A has full rank (not with gelsy), the rank (not with gels), the singular values (gelsd,
    gelss); empty tensors otherwise. Batch dims broadcast. The rank is the number of singular values above
    rcond times the largest, for every driver: gelsy's LAPACK kernel estimates it from a pivoted QR instead,
    which agrees unless rcond falls near a ratio of singular values."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if rcond is None and A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {SCALAR_NAME[A.dtype.name]} and other's dtype {SCALAR_NAME[B.dtype.name]}")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    check_batches(A, B.unsqueeze(-1) if vector else B)
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    _check_lapack_kernel(A, "linalg_lstsq_cpu")
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(A.dtype.to_real().np).eps) * builtins.max(m, n)
    from .._creation import empty
    real = A.dtype.to_real()
    with no_grad():
        values = svdvals(A)
        rank = (values > rcond * values[..., :1]).sum(-1) if builtins.min(m, n) else values.sum(-1).long()
    full_rank = builtins.min(m, n) == 0 or bool((rank == builtins.min(m, n)).all())
    residuals = m > n and driver != "gelsy" and full_rank
    x, squared = apply(G.lstsq, A, B.unsqueeze(-1) if vector else B, rcond, residuals=residuals)
    if vector:
        x = x.squeeze(-1)
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1 if vector else -2])))
    rank = empty(0, dtype=D.int64) if driver == "gels" else rank.expand(batch).clone()
    values = values.expand(batch + (builtins.min(m, n),)).clone() if driver in ("gelsd", "gelss") \
        else empty(0, dtype=real)
    return RT.linalg_lstsq(x, squared, rank, values)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (|eigenvalues| where hermitian) above max(atol, rtol * the largest);
    the legacy tol is atol with rtol 0."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments - got tol with atol "
                            "or rtol")
        atol, rtol = tol, 0.0
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype.name not in ("float32", "float64", "complex64", "complex128") and rtol is None:
        raise RuntimeError("This function doesn't handle types other than float and double")
    from .._tensor import Tensor
    m, n = A.shape[-2:]
    with no_grad():
        values = eigvalsh(A).abs() if hermitian else svdvals(A)
        largest = values.amax(-1, keepdim=True) if values.numel() else values.sum(-1, keepdim=True)
        if rtol is None:   # PyTorch's get_atol_rtol: eps * max(m, n), 0 where a positive atol is given
            default = float(np.finfo(A.dtype.to_real().np).eps) * builtins.max(m, n)
            rtol = default if atol is None else (atol <= 0) * default if isinstance(atol, Tensor) \
                else (0.0 if atol > 0 else default)
        cut = largest * (rtol.unsqueeze(-1) if isinstance(rtol, Tensor) else rtol)
        if isinstance(atol, Tensor):
            cut = maximum(cut, atol.unsqueeze(-1).to(cut.dtype))
        elif atol is not None:
            cut = cut.clamp_min(atol)
        return (values > cut).sum(-1)


_COND_ORDERS = (None, 2, -2, "fro", "nuc", float("inf"), float("-inf"), 1, -1)


def cond(A, p=None, *, out=None):
    """PyTorch's linalg_cond: sigma_max / sigma_min from svdvals for p in (None, 2, -2), sum(s) * sum(1 / s)
    for 'nuc'; else the norm of A times that of its inverse (infinite where A is singular), NaN products made
    infinite."""
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p not in _COND_ORDERS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        values = svdvals(A)
        largest, smallest = values.narrow(-1, 0, 1), values.narrow(-1, -1, 1)
        return (smallest / largest if p == -2 else largest / smallest).squeeze(-1)
    _check_square_shape(A, f"linalg.cond(ord={p if isinstance(p, str) else _order_name(p)})")
    if A.numel() == 0:
        return A.new_zeros(A.shape[:-2], dtype=A.dtype.to_real())
    if p == "nuc":   # from the singular values, as PyTorch's (no inverse)
        values = svdvals(A)
        return values.sum(-1) * values.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    inverse.masked_fill_(info.unsqueeze(-1).unsqueeze(-1) > 0, float("inf"))
    inf = float("inf")
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num_(inf, inf, -inf)


def _order_name(p):
    # as C++ prints a double
    if p in (float("inf"), float("-inf")):
        return "inf" if p > 0 else "-inf"
    return str(int(p)) if p == int(p) else str(p)


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    start, end = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if numel_of(end) != numel_of(start):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {numel_of(end)} != {numel_of(start)}")
    return inv(A.reshape(numel_of(end), numel_of(end))).reshape(end + start)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        A = A.movedim(dims, tuple(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim:])
    if numel_of(result_shape) != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {numel_of(result_shape)} != {B.numel()}")
    return solve(A.reshape(B.numel(), numel_of(result_shape)), B.flatten()).reshape(result_shape)

