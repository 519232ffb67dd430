"""linalg.ldl_factor_ex, ldl_factor and ldl_solve: the Bunch-Kaufman factorization of a symmetric (or
Hermitian) matrix, PyTorch's LD and LAPACK's 1-based pivots, with PyTorch's checks and messages."""
from .. import _dtypes as D, _value_checks
from .._dispatch import apply
from .._ops import linalg_ldl as K
from . import _return_types as RT
from ._common import SCALAR_NAME
from ._linalg_functions import _check_float, _check_lapack_kernel, _check_square_shape
from ._linalg_lu import check_batches


def _factor(A, hermitian, check_errors, name):
    checked = "torch.linalg.ldl_factor_ex"   # (ldl_factor calls it: its checks name it)
    _check_square_shape(A, checked)
    _check_float(A, None, checked)
    _check_lapack_kernel(A, "ldl_factor_kernel_cpu")
    ld, pivots, info = apply(K.ldl_factor, A, hermitian=bool(hermitian))
    if check_errors:   # (on the host, or inside a compiled program: see _value_checks)
        _value_checks.check(info, lambda v, xp: v != 0, lambda i, at: RuntimeError(_singular(name, int(i))))
    return ld, pivots, info


def _singular(name, i):
    # PyTorch's check knows no positive info of this routine: its message is an internal assert's, whose phrase
    # is kept, with what it means
    return (f"{name}: Unknown error code: {i}. D[{i - 1}, {i - 1}] of the factorization is exactly zero: the matrix "
            "is singular, and solving with it would divide by zero. Use torch.linalg.ldl_factor_ex to get the "
            "factors and info without raising.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    return RT.linalg_ldl_factor_ex(*_factor(A, hermitian, check_errors, "torch.linalg.ldl_factor_ex"))


def ldl_factor(A, *, hermitian=False, out=None):
    return RT.linalg_ldl_factor(*_factor(A, hermitian, True, "torch.linalg.ldl_factor")[:2])


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    name = "torch.linalg.ldl_solve"
    _check_square_shape(LD, name)
    _check_float(LD, None, name)
    if B.ndim < 2:   # (PyTorch reads B's rows by dimension -2)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(B.ndim, 1)}, "
                         f"{max(B.ndim, 1) - 1}], but got -2)")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {LD.shape[-2]} by "
                           f"{LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.shape)} instead")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype is D.bool_:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {SCALAR_NAME[pivots.dtype.name]}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_NAME[B.dtype.name]} and A of type {SCALAR_NAME[LD.dtype.name]} instead.")
    check_batches(B, LD)
    _check_lapack_kernel(LD, "ldl_solve_kernel_cpu")
    return apply(K.ldl_solve, LD, pivots, B, hermitian=bool(hermitian))
