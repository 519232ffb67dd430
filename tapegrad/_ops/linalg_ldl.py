"""linalg.ldl_factor_ex and linalg.ldl_solve: LAPACK's Bunch-Kaufman factorization (sytrf, hetrf for a Hermitian
complex matrix) and its solver (sytrs, hetrs), the routines PyTorch's CPU kernels call. XLA has no such
primitive, so they run on the host through jax.pure_callback (SciPy's LAPACK, PyTorch's workspace); the NumPy
tier calls the same function without a compile. PyTorch implements no derivative for either."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import KEEP, defop

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}


def _routine(kind, dtype, hermitian):
    from scipy.linalg import lapack   # (imported on first use: SciPy's LAPACK costs ~0.1 s to load)
    prefix = _PREFIX[np.dtype(dtype)]
    name = prefix + ("he" if hermitian and prefix in "cz" else "sy") + kind
    return getattr(lapack, name), getattr(lapack, name + "_lwork", None)


def _factor_host(a, hermitian):
    """(LD, pivots, info) per matrix of a's batch: LAPACK's lower factor (D on the diagonal, its 2x2 blocks'
    off-diagonal below it; the strict upper triangle zero, as PyTorch returns it), 1-based pivots, info."""
    a = np.asarray(a)
    n = a.shape[-1]
    ld = np.zeros(a.shape, a.dtype)
    pivots = np.zeros(a.shape[:-1], np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    if n == 0:
        return ld, pivots, info
    factor, query = _routine("trf", a.dtype, hermitian)
    lwork = max(1, int(np.real(query(n, lower=1)[0])))   # (PyTorch queries the optimal workspace too)
    for index in np.ndindex(*a.shape[:-2]):
        packed, ipiv, code = factor(a[index], lower=1, lwork=lwork)
        ld[index], pivots[index], info[index] = np.tril(packed), ipiv, code
    return ld, pivots, info


def _solve_host(ld, pivots, b, hermitian):
    ld, pivots, b = np.asarray(ld), np.asarray(pivots), np.asarray(b)
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    out = np.zeros(batch + b.shape[-2:], b.dtype)
    if b.shape[-2] == 0 or b.shape[-1] == 0:
        return out
    solve, _ = _routine("trs", ld.dtype, hermitian)
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    pivots = np.broadcast_to(pivots, batch + pivots.shape[-1:]).astype(np.int32)
    b = np.broadcast_to(b, out.shape)
    for index in np.ndindex(*batch):
        out[index] = solve(ld[index], pivots[index], b[index], lower=1)[0]
    return out


def _ldl_factor(a, hermitian):
    shapes = (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct(a.shape[:-1], jnp.int32),
              jax.ShapeDtypeStruct(a.shape[:-2], jnp.int32))
    return tuple(jax.pure_callback(functools.partial(_factor_host, hermitian=hermitian), shapes, a,
                                   vmap_method="broadcast_all"))


def _ldl_solve(ld, pivots, b, hermitian):
    batch = jnp.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    shape = jax.ShapeDtypeStruct(tuple(batch) + b.shape[-2:], b.dtype)
    return jax.pure_callback(functools.partial(_solve_host, hermitian=hermitian), shape, ld, pivots, b,
                             vmap_method="broadcast_all")


def _not_implemented(name):
    return lambda **_: (RuntimeError, f"derivative for aten::{name} is not implemented")


ldl_factor = defop("ldl_factor", _ldl_factor, dtype_rule=KEEP, nout=3, node_name="torch::autograd::NotImplemented",
                   no_derivative=_not_implemented("linalg_ldl_factor_ex"))
ldl_solve = defop("ldl_solve", _ldl_solve, dtype_rule=KEEP, node_name="torch::autograd::NotImplemented",
                  no_derivative=_not_implemented("linalg_ldl_solve"))
