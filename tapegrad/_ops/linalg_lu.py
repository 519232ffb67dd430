"""LU factorizations and the solvers that take a factor (LU, Cholesky, triangular), PyTorch's packed
formats: LU with 1-based int32 pivots. Gradients are jax.vjp's, which follow PyTorch's formulas, except where
PyTorch differentiates a factor as a full matrix (cholesky_solve, cholesky_inverse: custom JVPs below)."""
import jax
import jax.numpy as jnp
from jax import lax

from ._registry import column_major, defop, KEEP
from .linalg import _mH


def _first_zero(diagonal):
    """LAPACK's info: the 1-based position of the first zero on the diagonal, 0 where there is none."""
    zero = diagonal == 0
    return jnp.where(jnp.any(zero, axis=-1), jnp.argmax(zero, axis=-1) + 1, 0).astype(jnp.int32)


def _lu_factor(a):
    lu, pivots, _ = lax.linalg.lu(a)
    k = min(a.shape[-2:])
    return lu, pivots + 1, _first_zero(jnp.diagonal(lu, axis1=-2, axis2=-1)[..., :k])


def _unpacked(lu):
    """L (unit lower, m x k) and U (upper, k x n) of a packed LU."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    lower = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    return lower, jnp.triu(lu[..., :k, :])


def _lu(a):
    # (pivots, L, U): PyTorch's P is output 0 and carries no gradient; the pivots stand there, made into P
    # by lu_permutation
    lu, pivots, _ = _lu_factor(a)
    return (pivots,) + _unpacked(lu)


def _permutation(pivots, m):
    """The row order a's rows take in L U (pivots applied as LAPACK's successive swaps)."""
    return lax.linalg.lu_pivots_to_permutation(pivots - 1, m)


def _lu_permutation(pivots, m, dtype):
    # P with A = P L U: P[perm[i], i] = 1
    order = _permutation(pivots, m)
    return jnp.swapaxes(jax.nn.one_hot(order, m, dtype=dtype), -1, -2)


def _lu_solve(lu, pivots, b, left, adjoint):
    """A X = B (left) or X A = B, A = P L U given packed, adjoint: with A^H."""
    if not left:   # X A = B is A^H X^H = B^H
        return _mH(_lu_solve(lu, pivots, _mH(b), True, not adjoint))
    batch = jnp.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    n = lu.shape[-1]
    lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    order = jnp.broadcast_to(_permutation(pivots, n), batch + (n,))
    solve = lax.linalg.triangular_solve
    if not adjoint:   # U^-1 L^-1 P^T B
        rows = jnp.take_along_axis(b, order[..., None], axis=-2)
        y = solve(lu, rows, left_side=True, lower=True, unit_diagonal=True)
        return solve(lu, y, left_side=True, lower=False)
    # A^H = U^H L^H P^T: X = P L^-H U^-H B
    y = solve(lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    y = solve(lu, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True)
    inverse = jnp.argsort(order, axis=-1)
    return jnp.take_along_axis(y, inverse[..., None], axis=-2)


def _triangular_solve(b, a, upper, transpose, unitriangular):
    """torch.triangular_solve: (the solution of op(A) X = B, a copy of A), batch dims broadcast."""
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:])
    x = lax.linalg.triangular_solve(a, b, left_side=True, lower=not upper, transpose_a=transpose,
                                    unit_diagonal=unitriangular)
    return x, a * 1


def _lower(factor, upper):
    return _mH(factor) if upper else factor


@jax.custom_jvp
def _cho_solve(b, low):
    # the value reads the lower triangle only, as LAPACK's potrs
    y = lax.linalg.triangular_solve(low, b, left_side=True, lower=True)
    return lax.linalg.triangular_solve(low, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)


@_cho_solve.defjvp
def _cho_solve_jvp(primals, tangents):
    # PyTorch's derivative treats the factor as a full matrix, every element of it (not the triangle the value
    # reads): X = (L L^H)^-1 B, dM = dL L^H + L dL^H
    b, low = primals
    db, dlow = tangents
    x = _cho_solve(b, low)
    dm = dlow @ _mH(low) + low @ _mH(dlow)
    return x, _cho_solve(db - dm @ x, low)


def _cholesky_solve(b, factor, upper):
    batch = jnp.broadcast_shapes(factor.shape[:-2], b.shape[:-2])
    low = jnp.broadcast_to(_lower(factor, upper), batch + factor.shape[-2:])
    return _cho_solve(jnp.broadcast_to(b, batch + b.shape[-2:]), low)


def _cholesky_inverse(factor, upper):
    low = _lower(factor, upper)
    eye = jnp.broadcast_to(jnp.eye(low.shape[-1], dtype=low.dtype), low.shape)
    return _cho_solve(eye, low)


lu_factor = defop("lu_factor", _lu_factor, dtype_rule=KEEP, diff=(0,), nout=3, node="linalg_lu_factor_ex",
                  saves_output=(0, 1), saves_inputs=())
lu = defop("lu", _lu, dtype_rule=KEEP, nout=3, node="linalg_lu", saves_output=(1, 2), saves_inputs=())
lu_unpack = defop("lu_unpack", lambda lu, pivots: (pivots,) + _unpacked(lu), dtype_rule=KEEP, diff=(0,), nout=3)
lu_permutation = defop("lu_permutation", _lu_permutation, dtype_rule=KEEP, diff=())
lu_solve = defop("lu_solve", _lu_solve, dtype_rule=KEEP, diff=(0, 2), node="linalg_lu_solve", saves_output=True,
                 saves_inputs=(0, 1))
# (one formula for both inputs: PyTorch saves both whichever requires grad)
triangular_solve = defop("triangular_solve", _triangular_solve, dtype_rule=KEEP, nout=2, saves_output=(0,),
                         saves_inputs=(0, 1))
cholesky_solve = defop("cholesky_solve", _cholesky_solve, dtype_rule=KEEP, saves_output=True, saves_inputs=(0, 1))
cholesky_inverse = defop("cholesky_inverse", _cholesky_inverse, dtype_rule=KEEP, saves_output=True)


# LAPACK writes matrices column by column, and PyTorch hands those results on as they are (XA = B is a
# transposed solve's result, row-major)
lu_factor.result_order = lambda static, shapes: (column_major(shapes[0]), None, None)
lu_solve.result_order = lambda static, shapes: (column_major(shapes[0]) if static["left"] else None,)
triangular_solve.result_order = lambda static, shapes: tuple(column_major(s) for s in shapes)
cholesky_solve.result_order = cholesky_inverse.result_order = lambda static, shapes: (column_major(shapes[0]),)
