"""LU factorizations and the solvers that take a factor: torch.linalg.lu_factor(_ex), lu, lu_solve, and the
legacy torch.lu, lu_unpack, lu_solve, triangular_solve, cholesky_solve, cholesky_inverse, with PyTorch's
checks, messages and LinAlgError; info (LAPACK's) as PyTorch's _ex functions return it."""
import builtins

import numpy as np

from .._dispatch import apply
from .._flags import warn_once
from .._ops import linalg_lu as K
from . import _return_types as RT
from .._broadcast_errors import broadcast_mismatch
from ._common import SCALAR_NAME, check_tensors
from ._linalg_functions import LinAlgError, _check_lapack_kernel, _check_square_shape
from .._user_frames import warn_user


def raise_for_info(info, error, name, describe):
    """PyTorch's error for a nonzero LAPACK info (a tensor or an array), with info_message's text."""
    message = info_message(info, name, describe)
    if message is not None:
        raise error(message)


def info_message(info, name, describe):
    """'{name}: {describe(info)}' for the first nonzero LAPACK info (a tensor or an array), with '(Batch element
    k): ' after the name for a batch; None where every info is 0."""
    info = np.asarray(info._value if hasattr(info, "_value") else info)
    values = info.reshape(-1)
    failed = np.flatnonzero(values)
    if not failed.size:
        return None
    k = int(failed[0])
    where = f"(Batch element {k}): " if info.ndim else ""
    return f"{name}: {where}{describe(int(values[k]))}"


def check_batches(first, second):
    """The batch dims (all but the last two) of two operands broadcast, or PyTorch's error naming the first
    as tensor a."""
    error = broadcast_mismatch([tuple(first.shape[:-2]), tuple(second.shape[:-2])])
    if error is not None:
        raise error


def _check_matrix_rank(a, prefix):
    if a.ndim < 2:
        raise RuntimeError(f"{prefix}: Expected tensor with 2 or more dimensions. Got size: {list(a.shape)} instead")


def _lu_factor_ex(A, pivot, check_errors, name):
    _check_matrix_rank(A, "torch.lu_factor")
    _check_lapack_kernel(A, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, pivots, info = apply(K.lu_factor, A)
    if check_errors:
        raise_for_info(info, RuntimeError, name, lambda i: (
            f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still "
            "want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            "pivot)"))
    return lu, pivots, info


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return RT.linalg_lu_factor_ex(*_lu_factor_ex(A, pivot, check_errors, "torch.linalg.lu_factor_ex"))


def lu_factor(A, *, pivot=True, out=None):
    return RT.linalg_lu_factor(*_lu_factor_ex(A, pivot, True, "torch.linalg.lu_factor")[:2])


def _permutation(pivots, m, dtype):
    return apply(K.lu_permutation, pivots, m=m, dtype=dtype.np)


def lu(A, *, pivot=True, out=None):
    _check_matrix_rank(A, "linalg.lu")
    _check_lapack_kernel(A, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    pivots, lower, upper = apply(K.lu, A)
    return RT.linalg_lu(_permutation(pivots, A.shape[-2], A.dtype), lower, upper)


_warned = set()


def _deprecated(name, message):
    """PyTorch's warning for a deprecated function, once per process."""
    if warn_once(_warned, name):
        warn_user(message, UserWarning)


def lu_legacy(A, pivot=True, get_infos=False, out=None):
    """torch.lu: lu_factor_ex's (LU, pivots[, info]), raising on a singular matrix unless get_infos."""
    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                "torch.linalg.lu_factor_ex(A, compute_pivots)")
    result = _lu_factor_ex(A, pivot, not get_infos, "torch.linalg.lu_factor_ex")
    if out is not None:
        from ._out import write_out
        return write_out(out, result if get_infos else result[:2], "_lu_with_info()")
    return RT.lu_with_info(*result) if get_infos else tuple(result[:2])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    check_tensors("lu_unpack", (LU_data, "LU_data"), (LU_pivots, "LU_pivots"))
    _check_matrix_rank(LU_data, "torch.lu_unpack")
    if LU_pivots.dtype.name != "int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    from .._creation import empty
    m = LU_data.shape[-2]
    if unpack_pivots and LU_pivots.numel():   # (a host read, as PyTorch's check)
        given = np.asarray(LU_pivots._value)
        if given.min() < 1 or given.max() > m:
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?")
    pivots, lower, upper = apply(K.lu_unpack, LU_data, LU_pivots)
    if not unpack_data:
        lower = upper = empty(0, dtype=LU_data.dtype)
    permutation = _permutation(LU_pivots, m, LU_data.dtype) if unpack_pivots else empty(0, dtype=LU_data.dtype)
    return RT.lu_unpack(permutation, lower, upper)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    _check_square_shape(LU, "torch.linalg.lu_solve")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{SCALAR_NAME[LU.dtype.name]} and B of type {SCALAR_NAME[B.dtype.name]} instead")
    if pivots.dtype.name != "int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    check_batches(B, LU)
    _check_lapack_kernel(LU, "lu_cpu")
    return apply(K.lu_solve, LU, pivots, B, left=builtins.bool(left), adjoint=builtins.bool(adjoint))


def lu_solve_legacy(input, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(B, LU, pivots): linalg.lu_solve with the arguments reversed."""
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
                "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, input)


def _check_factor_and_rhs(b, A, name, b_message):
    """The checks triangular_solve and cholesky_solve share (PyTorch's linearSolveCheckInputs)."""
    if b.ndim < 2:
        raise RuntimeError(b_message)
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_NAME[b.dtype.name]} and A of type {SCALAR_NAME[A.dtype.name]} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve: (the solution of op(A) X = input, a copy of A), batch dims broadcast."""
    check_tensors("triangular_solve", (input, "input"), (A, "A"))
    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
                "torch.linalg.solve_triangular has its arguments reversed and does not return a copy of one of the "
                "inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
                "torch.linalg.solve_triangular(A, B).")
    if input.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{input.ndim} dimensions instead")
    if A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.ndim} dimensions instead")
    _check_factor_and_rhs(input, A, "triangular_solve", "")
    check_batches(input, A)
    _check_lapack_kernel(A, "triangular_solve_cpu")
    return RT.triangular_solve(*apply(K.triangular_solve, input, A, upper=builtins.bool(upper),
                                      transpose=builtins.bool(transpose),
                                      unitriangular=builtins.bool(unitriangular)))


def cholesky_solve(input, input2, upper=False, *, out=None):
    check_tensors("cholesky_solve", (input, "input"), (input2, "input2"))
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead")
    _check_factor_and_rhs(input, input2, "cholesky_solve",
                          f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead")
    check_batches(input, input2)
    _check_lapack_kernel(input2, "cholesky_solve_cpu")
    return apply(K.cholesky_solve, input, input2, upper=builtins.bool(upper))


def cholesky_inverse(input, upper=False, *, out=None):
    _check_square_shape(input, "cholesky_inverse")
    _check_lapack_kernel(input, "cholesky_inverse_out_cpu")
    result = apply(K.cholesky_inverse, input, upper=builtins.bool(upper))
    raise_for_info(_first_zero_on_diagonal(input), LinAlgError, "cholesky_inverse", lambda i: (
        f"The diagonal element {i} is zero, the inversion could not be completed because the "
        "input matrix is singular."))
    return result


def _first_zero_on_diagonal(a):
    """LAPACK's info of a triangular inversion: the first zero on a's diagonal (1-based), 0 where none."""
    zero = np.diagonal(np.asarray(a._value), axis1=-2, axis2=-1) == 0
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
