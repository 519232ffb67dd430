"""The functions behind tapegrad.linalg (PyTorch's torch.linalg): inverses, determinants, solves, decompositions
and norms, with PyTorch's checks and LinAlgError; torch.norm, torch.dist and torch.svd over them."""
import builtins

import numpy as np

from .._arg_types import as_bool
from .._dispatch import apply
from .._flags import warn_once
from .._grad_mode import is_grad_enabled
from .._ops import linalg as L
from . import _return_types as RT
from .._broadcast_errors import broadcast_mismatch
from ._common import SCALAR_NAME, dims as _dims, result_dtype, wrap_dim
from .. import _value_checks
from .._autocast import policy
from ._linalg import matmul
from .._user_frames import warn_user


class _LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (PyTorch's torch.linalg.LinAlgError, whose class
    is torch._C._LinAlgError: tracebacks and type(e).__name__ print that name)."""


LinAlgError = _LinAlgError


def _check_square(a, name):
    _check_square_shape(a, f"linalg.{name}")
    _check_float(a, name)


def _check_square_shape(a, prefix):
    """PyTorch's squareCheckInputs: batches of square matrices; prefix: the function its messages name."""
    if a.ndim < 2:
        raise RuntimeError(f"{prefix}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{prefix}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


def _check_lapack_kernel(a, kernel):
    """PyTorch's CPU LAPACK kernels exist for float, double, cfloat and cdouble only: NotImplementedError for
    other dtypes (half too), as it raises."""
    if a.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[a.dtype.name]}'. Convert the "
                                  "input first, e.g. A.double().")


def _check_matrices(a, name):
    # PyTorch checks the rank before the dtype
    if a.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    _check_float(a, name)


def _check_float(a, name, prefix=None):
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"{prefix or 'linalg.' + name}: Expected a floating point or complex tensor as input. "
                           f"Got {SCALAR_NAME[a.dtype.name]}")


def _check_full_precision(a, prefix):
    """PyTorch's checkFloatingOrComplex without low-precision dtypes (inv, slogdet, logdet, matrix_norm's
    singular-value orders): half and bfloat16 are refused."""
    if a.dtype.name in ("float16", "bfloat16"):
        raise RuntimeError(f"{prefix}: Low precision dtypes not supported. Got {SCALAR_NAME[a.dtype.name]}. "
                           "Convert the input first, e.g. A.float().")


def _check_finite(result, name, message, prefix=None, exact=None, fix=""):
    """result, checked: XLA returns inf/NaN for a singular input where PyTorch raises (a host sync, as PyTorch's).
    exact() -> PyTorch's own text from the input's LAPACK info (which matrix of a batch, which pivot or minor),
    asked on failure; where it cannot tell (a traced program's input), '{prefix}: {message}'. `fix` follows."""
    def make_error(value, at):
        try:
            found = exact() if exact is not None else None
        except Exception:   # (the input is a traced value, or no longer what the program read)
            found = None
        return LinAlgError((found or f"{prefix or 'linalg.' + name}: {message}") + fix)
    for v in result if isinstance(result, tuple) else (result,):
        _value_checks.check_array(v._value, lambda x, xp: ~xp.isfinite(x), make_error, strict=True)
    return result


_SINGULAR = "The input matrix is singular, so the operation could not be completed."
_SINGULAR_FIX = " Check it with torch.linalg.matrix_rank or use torch.linalg.pinv instead."


def _lapack_message(info, name, describe):
    """PyTorch's LinAlgError text for the LAPACK info that info() computes (see _linalg_lu.info_message)."""
    from ._linalg_lu import info_message
    return lambda: info_message(info(), name, describe)


@policy("inv")
def inv(A, *, out=None):
    _check_square(A, "inv")
    _check_full_precision(A, "linalg.inv")
    from ._linalg_solvers import _lu_info, _singular
    return _check_finite(apply(L.inv, A), "inv", _SINGULAR, exact=_lapack_message(
        lambda: _lu_info(A), "linalg.inv", _singular), fix=_SINGULAR_FIX)


def det(A, *, out=None):
    _check_square(A, "det")
    if A.numel():   # (PyTorch's LU kernel is not called for an empty matrix)
        _check_lapack_kernel(A, "lu_cpu")
    return apply(L.det, A)


def slogdet(A, *, out=None):
    _check_square(A, "slogdet")
    _check_full_precision(A, "linalg.slogdet")
    return RT.slogdet(*apply(L.slogdet, A))


def linalg_slogdet(A, *, out=None):
    """torch.linalg.slogdet: slogdet's pair, named as PyTorch's (torch.return_types.linalg_slogdet)."""
    return RT.linalg_slogdet(*slogdet(A))


def logdet(A):
    # As PyTorch: its own checks (messages naming logdet), then NaN where the determinant is negative (where
    # over slogdet's outputs); log(sign) + logabsdet for complex A.
    _check_square_shape(A, "logdet")
    _check_float(A, "logdet", prefix="logdet")
    _check_full_precision(A, "logdet")
    sign, logabs = slogdet(A)
    if A.dtype.is_complex:
        return sign.log() + logabs
    from ._arith import where
    return where(sign == -1.0, float("nan"), logabs)


def solve(A, B, *, left=True, out=None):
    from ._linalg_solvers import _lu_info
    return _check_finite(_solve_unchecked(A, B, left), "solve", _SINGULAR, exact=_lapack_message(
        lambda: _lu_info(A), "torch.linalg.solve", lambda i: "The solver failed because the input matrix is "
        "singular."), fix=_SINGULAR_FIX)


def _solve_unchecked(A, B, left):
    """linalg.solve's checks and result, a singular A's non-finite values left as they are (solve_ex).
    PyTorch's order: A's dtype class, its shape, B's dtype, the shapes, then the LU kernel's dtypes."""
    _check_float(A, "solve")
    _check_square_shape(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{SCALAR_NAME[A.dtype.name]} and B of type {SCALAR_NAME[B.dtype.name]} instead.")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    n = A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2 if left else -1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({'x'.join(map(str, A.shape[-2:]))} and "
                           f"{'x'.join(map(str, (tuple(B.shape) + (1,) if vector else B.shape)[-2:]))})")
    # the batch dims broadcast (PyTorch's error names B first)
    error = broadcast_mismatch([tuple(B.shape[:-1] if vector else B.shape[:-2]), tuple(A.shape[:-2])])
    if error is not None:
        raise error
    if A.numel():
        _check_lapack_kernel(A, "lu_cpu")
    return apply(L.solve, A, B, left=builtins.bool(left), vector=vector)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """As PyTorch's: no dtype check before triangular_solve_cpu's (integers and half are refused there, after
    the shapes), and B is cast to A's dtype."""
    _check_square_shape(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({'x'.join(map(str, A.shape[-2:]))} and "
                           f"{'x'.join(map(str, B.shape[-2:]))})")
    _check_lapack_kernel(A, "triangular_solve_cpu")
    if B.dtype is not A.dtype:
        B = B.to(A.dtype)
    return apply(L.solve_triangular, A, B, upper=builtins.bool(upper), left=builtins.bool(left),
                 unitriangular=builtins.bool(unitriangular))


_NOT_POSITIVE_DEFINITE = "The factorization could not be completed because the input is not positive-definite."


@policy("cholesky")
def linalg_cholesky(A, *, upper=False, out=None):
    _check_square(A, "cholesky")
    _check_lapack_kernel(A, "cholesky_cpu")
    return _check_finite(apply(L.cholesky, A, upper=builtins.bool(upper)), "cholesky", _NOT_POSITIVE_DEFINITE,
                         exact=_minor_message(A, upper, "linalg.cholesky"))


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
_warned = {"cholesky": False}


@policy("cholesky")
def cholesky(input, upper=False, *, out=None):
    """PyTorch's deprecated torch.cholesky: its warning once per process, its messages naming cholesky, no
    floating-point check before the kernel's (an integer input is refused by cholesky_cpu), CholeskyBackward0."""
    if not isinstance(upper, builtins.bool):
        raise TypeError(f"cholesky(): argument 'upper' (position 2) must be bool, not {type(upper).__name__}")
    if warn_once(_warned, "cholesky"):
        warn_user(_CHOLESKY_DEPRECATED, UserWarning)
    _check_square_shape(input, "cholesky")
    _check_lapack_kernel(input, "cholesky_cpu")
    return _check_finite(apply(L.cholesky, input, upper=upper, legacy=True), "cholesky", _NOT_POSITIVE_DEFINITE,
                         prefix="cholesky", exact=_minor_message(input, upper, "cholesky"))


def _minor_message(A, upper, name):
    """PyTorch's text for a matrix that is not positive-definite: which leading minor (of the triangle its kernel
    reads) fails first."""
    from ._linalg_solvers import _cholesky_info
    return _lapack_message(lambda: _cholesky_info((A.detach().mH if upper else A.detach()).numpy()), name, lambda i: (
        f"{_NOT_POSITIVE_DEFINITE[:-1]} (the leading minor of order {i} is not positive-definite)."))


def qr(A, mode="reduced", *, out=None):
    _check_matrices(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    _check_lapack_kernel(A, "geqrf_cpu")
    q, r = apply(L.qr, A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        from .._creation import empty
        return RT.linalg_qr(empty(0, dtype=A.dtype), r)
    return RT.linalg_qr(q, r)


def qr_legacy(input, some=True, *, out=None):
    """PyTorch's deprecated torch.qr: linalg.qr's reduced (`some`) or complete factors, its warning once per
    process."""
    as_bool(some, "some", "qr")
    from ._linalg_lu import _deprecated
    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
                "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
                "'complete')")
    return RT.qr(*qr(input, "reduced" if some else "complete"))


def _check_svd(A):
    _check_matrices(A, "svd")
    if A.numel():   # (PyTorch's kernel is not called for an empty matrix)
        _check_lapack_kernel(A, "linalg_svd_cpu")


def svd(A, full_matrices=True, *, driver=None, out=None):
    as_bool(full_matrices, "full_matrices", "linalg_svd")
    _check_svd(A)
    return RT.linalg_svd(*apply(L.svd, A, full_matrices=builtins.bool(full_matrices)))


def svd_legacy(input, some=True, compute_uv=True, *, out=None):
    """PyTorch's torch.svd: V (not V^H); `some=False` gives full U and V; without compute_uv, U and V are zeros."""
    as_bool(some, "some", "svd")
    as_bool(compute_uv, "compute_uv", "svd")
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           "instead")
    _check_float(input, "svd")
    if input.numel():
        _check_lapack_kernel(input, "linalg_svd_cpu")
    u, s, vh = apply(L.svd, input, full_matrices=not some)
    v = vh.mH
    if not compute_uv:
        from .._creation import zeros_like
        return RT.svd(zeros_like(u).detach(), s, zeros_like(v).detach())
    return RT.svd(u, s, v)


def matrix_exp(A):
    _check_square(A, "matrix_exp")
    return apply(L.matrix_exp, A)


def svdvals(A, *, driver=None, out=None):
    _check_svd(A)   # (PyTorch's messages name linalg.svd)
    if A.requires_grad and is_grad_enabled():
        return apply(L.svdvals_uv, A)[1]
    return apply(L.svdvals, A)


def _check_eigh(A, UPLO, name):
    # PyTorch's order: UPLO, then the shape (its messages name linalg.eigh for eigvalsh too), then the kernel
    if not isinstance(UPLO, str):
        raise TypeError(f"linalg_{name}(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_square_shape(A, "linalg.eigh")
    _check_lapack_kernel(A, "linalg_eigh_cpu")


def eigh(A, UPLO="L", *, out=None):
    _check_eigh(A, UPLO, "eigh")
    return RT.linalg_eigh(*apply(L.eigh, A, UPLO=UPLO.upper()))


def eigvalsh(A, UPLO="L", *, out=None):
    _check_eigh(A, UPLO, "eigvalsh")
    return apply(L.eigvalsh, A, UPLO=UPLO.upper())


@policy("pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if isinstance(atol, (builtins.int, builtins.float)) and rtol is None:
        # PyTorch's float overload works out the default rtol (eps * max(m, n)) before its checks
        _matrix_size(A, -2)
        if A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
            raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2 or A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError(f"linalg.pinv({SCALAR_NAME[A.dtype.name]}{{{list(A.shape)}}}): expected a tensor with 2 "
                           "or more dimensions of float, double, cfloat or cdouble types")
    return apply(L.pinv, A, atol, rtol, hermitian=builtins.bool(hermitian))


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with atol 0 and rtol rcond, as PyTorch's."""
    return pinv(input, atol=0.0, rtol=rcond)


def _matrix_size(A, dim):
    """A.size(dim), with PyTorch's IndexError for a tensor with too few dims."""
    if A.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return A.shape[wrap_dim(dim, A.ndim)]


def _check_norm_dtype(x, dtype):
    """PyTorch's checks on vector_norm's dtype: a floating or complex type of x's kind that x widens to."""
    from .. import _dtypes as D
    name = SCALAR_NAME[dtype.name]
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {name}")
    if x.dtype.is_complex != dtype.is_complex:
        kind = "complex" if x.dtype.is_complex else "real"
        raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {name}")
    if D.promote_types(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({SCALAR_NAME[x.dtype.name]}) should be "
                           f"convertible without narrowing to the specified dtype ({name}). Pass a wider dtype "
                           "or convert the input first.")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_float(x, "vector_norm")
    if dtype is not None:
        from .. import _dtypes as D
        dtype = D.as_dtype(dtype)
        _check_norm_dtype(x, dtype)
    d = _dims(dim, x.ndim)   # (checked for a 0-d tensor too: its dim is -1 or 0)
    d = None if x.ndim == 0 else d
    if ord in (float("inf"), float("-inf")) and x.numel() == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
                           "operation does not have an identity")
    ord = builtins.float(ord) if isinstance(ord, builtins.float) else ord
    # the cast to dtype happens inside the op, so the graph holds its one node, as PyTorch's
    return apply(L.vector_norm, x, ord=ord, dim=d, keepdim=as_bool(keepdim, "keepdim"),
                 dtype=None if dtype is None or dtype is x.dtype else dtype.np)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    # PyTorch's order: the order, A's rank, its dtype (not half nor bfloat16 for the singular-value orders)
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_float(A, "matrix_norm")
    if ord in ("nuc", 2, -2):
        _check_full_precision(A, "linalg.matrix_norm")
    d = [wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)]
    if ord == "fro":
        return vector_norm(A, 2, tuple(d), keepdim, dtype=dtype)
    return _matrix_norm_as_pytorch(A, ord, d, as_bool(keepdim, "keepdim"), dtype)


def _matrix_norm_as_pytorch(A, ord, d, keepdim, dtype):
    """PyTorch's composite, op for op: nuc and +-2 reduce the singular values of A with the two dims moved
    last (a permute, even when they are last already); +-1 and +-inf the 1-norms of its columns (rows)."""
    from ._reduce import amax, amin
    from ._shape import permute, unsqueeze
    if ord in ("nuc", 2, -2):
        order = [i for i in range(A.ndim) if i not in d] + d
        values = svdvals(permute(A if dtype is None else A.to(dtype), *order))
        result = values.sum(-1, keepdim) if ord == "nuc" else (amax if ord > 0 else amin)(values, -1, keepdim)
        return permute(unsqueeze(result, -1), *np.argsort(order).tolist()) if keepdim else result
    if ord in (float("inf"), float("-inf")):
        d.reverse()
    if not keepdim and d[0] < d[1]:
        d[1] -= 1
    return (amax if ord > 0 else amin)(vector_norm(A, 1.0, d[0], keepdim, dtype=dtype), d[1], keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(ord, str) or (ord is not None and dim is None and A.ndim == 2) or \
            (dim is not None and not isinstance(dim, builtins.int) and len(dim) == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector 2-norm (p='fro' over all elements) unless p is 'nuc' or a matrix dim pair."""
    if p == "nuc" or (p == "fro" and dim is not None and not isinstance(dim, builtins.int) and len(dim) == 2):
        return matrix_norm(input, p, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    return vector_norm(input, 2 if p == "fro" or p is None else p, dim, keepdim, dtype=dtype)


def dist(input, other, p=2):
    dtype = result_dtype(input, other)
    if not (dtype.is_floating_point or dtype.is_complex):   # (at::norm's check, on the difference)
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{SCALAR_NAME[dtype.name]} instead.")
    return apply(L.dist, input, other, p=builtins.float(p) if isinstance(p, builtins.float) else p)


def multi_dot(tensors, *, out=None):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, (a, b) in enumerate(zip(tensors, tensors[1:])):
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {k} and {k + 1} with shapes {list(a.shape)} and "
                               f"{list(b.shape)} cannot be multiplied")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result.view(tuple(result.shape))   # PyTorch's last step views the product in the result's shape
