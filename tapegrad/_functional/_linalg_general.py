"""torch.linalg's eig, eigvals, householder_product, vander, vecdot and diagonal, and the legacy geqrf, orgqr
and ormqr, with PyTorch's checks and messages."""
import builtins

from .._dispatch import apply
from .._ops import linalg_general as G
from . import _return_types as RT
from ._common import SCALAR_NAME
from ._linalg_functions import _check_lapack_kernel, _check_square_shape


def _check_eig(A, name):
    _check_square_shape(A, f"linalg.{name}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_NAME[A.dtype.name]}")
    _check_lapack_kernel(A, "linalg_eig_out_cpu")


def eig(A, *, out=None):
    """Complex eigenvalues and unit eigenvectors (LAPACK's geev, as PyTorch's CPU kernel)."""
    _check_eig(A, "eig")
    return RT.linalg_eig(*apply(G.eig, A))


def eigvals(A, *, out=None):
    _check_eig(A, "eigvals")
    return apply(G.eigvals, A)


def householder_product(A, tau, *, out=None):
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {A.ndim}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {SCALAR_NAME[tau.dtype.name]} does not match input dtype "
                           f"{SCALAR_NAME[A.dtype.name]}")
    _check_lapack_kernel(A, "orgqr_cpu")
    return apply(G.householder_product, A, tau)


def orgqr(input, tau, *, out=None):
    return householder_product(input, tau)


def geqrf(input, *, out=None):
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_kernel(input, "geqrf_cpu")
    return RT.geqrf(*apply(G.geqrf, input))


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    name = "torch.ormqr"
    for label, t in (("input", input), ("other", other)):
        if t.ndim < 2:
            raise RuntimeError(f"{name}: {label} must have at least 2 dimensions.")
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {input.ndim}")
    side = f"other.shape[{-2 if left else -1}]"
    rows = other.shape[-2 if left else -1]
    if rows != input.shape[-2]:
        raise RuntimeError(f"{name}: {side} must be equal to input.shape[-2]")
    if tau.shape[-1] != builtins.min(rows, input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min({side}, input.shape[-1])")
    for label, t in (("other", other), ("tau", tau)):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"{name}: Expected input and {label} to have the same dtype, but input has dtype"
                               f"{SCALAR_NAME[input.dtype.name]} and {label} has dtype {SCALAR_NAME[t.dtype.name]}")
    _check_lapack_kernel(input, "ormqr_cpu")
    return apply(G.ormqr, input, tau, other, left=builtins.bool(left), transpose=builtins.bool(transpose))


def vander(x, *, N=None):
    """PyTorch's composite: a column of ones, then the cumulative products of x repeated N - 1 times."""
    if x.dtype.name in ("float16", "bfloat16", "bool"):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{SCALAR_NAME[x.dtype.name]}")
    n = N if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from ._joins import cat
    shape = tuple(x.shape) + (n - 1,)
    powers = x.unsqueeze(-1).expand(shape).cumprod(-1)
    return cat([powers.new_ones(shape[:-1] + (1,)), powers], -1)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) over dim, as PyTorch composes it."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_NAME[x.dtype.name]}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{SCALAR_NAME[x.dtype.name]} and y of type {SCALAR_NAME[y.dtype.name]} instead")
    return ((x.conj() if x.dtype.is_complex else x) * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)
