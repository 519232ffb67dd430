"""NumPy rules for lax's cholesky, triangular_solve, lu and lu_pivots_to_permutation: the multivariate
normal's factor and solves, `cholesky_solve`, `linalg.solve`, `inv`, `det` and `slogdet` on the NumPy tier.

cholesky is LAPACK's potrf as in XLA (NumPy calls the same routine); a matrix it fails on (not positive
definite, or nan) comes out all nan, as XLA's lowering makes it. triangular_solve is substitution row by
row over the batch and right-hand sides, reading only the triangle it is told to, as trsm does (a zero on
the diagonal gives inf or nan, not an error). lu is getf2's partial pivoting with its reciprocal scaling,
so an exactly singular matrix rounds as LAPACK's does (and linalg's singular-matrix errors come the same).
"""
import numpy as np

RULES = {}


def _cholesky(params):
    def run(x):
        x = np.asarray(x)
        if x.dtype.kind not in "fc":
            raise ValueError(f"cholesky of {x.dtype}")
        try:
            return np.linalg.cholesky(x)
        except np.linalg.LinAlgError:   # one matrix of the batch failed: factor them one by one
            out = np.empty_like(x)
            for index in np.ndindex(*x.shape[:-2]):
                try:
                    out[index] = np.linalg.cholesky(x[index])
                except np.linalg.LinAlgError:
                    out[index] = np.nan
            return out
    return run


def _triangular_solve(params):
    left, lower = params["left_side"], params["lower"]
    transpose, conjugate, unit = params["transpose_a"], params["conjugate_a"], params["unit_diagonal"]

    def run(a, b):
        a, b = np.asarray(a), np.asarray(b)
        n = a.shape[-1]
        keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
        m = np.where(keep, a, np.zeros((), a.dtype))   # the other triangle is never read
        if not unit and m.dtype.kind == "c" and not np.all(np.diagonal(m, 0, -2, -1)):
            raise ValueError("a complex zero pivot")   # (NumPy's complex x / 0 is not XLA's: left to it)
        if conjugate:
            m = np.conj(m)
        below = lower
        if transpose:
            m, below = np.swapaxes(m, -1, -2), not below
        if not left:   # x·m = b is mᵀ·xᵀ = bᵀ
            m, below, b = np.swapaxes(m, -1, -2), not below, np.swapaxes(b, -1, -2)
        x = np.zeros(np.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:], np.result_type(m, b))
        for i in (range(n) if below else reversed(range(n))):
            done = slice(0, i) if below else slice(i + 1, n)
            row = b[..., i, :] - np.einsum("...j,...jk->...k", m[..., i, done], x[..., done, :])
            x[..., i, :] = row if unit else row / m[..., i, i, None]
        return x if left else np.swapaxes(x, -1, -2)
    return run


def _lu(params):
    def run(x):
        # getf2's partial pivoting, column by column over the batch: the pivot is the first element of
        # largest magnitude at or below the diagonal; a zero pivot column is left unscaled (LAPACK's info)
        x = np.asarray(x)
        if x.dtype.kind != "f" or not np.all(np.isfinite(x)):
            # (how a nan pivots is BLAS's choice; a complex reciprocal rounds otherwise than zgetf2's, and
            # an exactly singular matrix would come out another way)
            raise ValueError("lu of a non-finite, complex or integer matrix")
        a = x.copy()
        m, n = a.shape[-2:]
        k = min(m, n)
        batch = np.indices(a.shape[:-2]) if a.ndim > 2 else ()
        pivots = np.zeros(a.shape[:-2] + (k,), np.int32)
        for j in range(k):
            p = np.argmax(np.abs(a[..., j:, j]), axis=-1) + j
            pivots[..., j] = p
            row_j, row_p = a[..., j, :].copy(), a[(*batch, p)].copy()
            a[..., j, :] = row_p
            a[(*batch, p)] = row_j
            # scaled by the pivot's reciprocal as getf2 does (unless it is below the smallest normal number,
            # then divided): an exactly singular matrix then shows LAPACK's rounding, not an exact zero
            pivot = a[..., j, j]
            tiny = np.abs(pivot) < np.finfo(a.dtype).tiny
            safe = np.where(pivot == 0, np.ones((), a.dtype), pivot)[..., None]
            column = a[..., j + 1:, j]
            scaled = np.where(tiny[..., None], column / safe, column * (1 / safe))
            a[..., j + 1:, j] = np.where((pivot == 0)[..., None], column, scaled)
            a[..., j + 1:, j + 1:] -= a[..., j + 1:, j:j + 1] * a[..., j:j + 1, j + 1:]
        return a, pivots, _permutation(pivots, m)
    return run


def _permutation(pivots, size):
    perm = np.broadcast_to(np.arange(size, dtype=pivots.dtype), pivots.shape[:-1] + (size,)).copy()
    for i in range(pivots.shape[-1]):   # row i swapped with row pivots[i], in order, as getrf did
        j = pivots[..., i:i + 1]
        here, there = perm[..., i:i + 1].copy(), np.take_along_axis(perm, j, -1)
        perm[..., i:i + 1] = there
        np.put_along_axis(perm, j, here, -1)
    return perm


def _lu_pivots_to_permutation(params):
    size = params["permutation_size"]

    def run(pivots):
        pivots = np.asarray(pivots)
        if pivots.size and (pivots.min() < 0 or pivots.max() >= size):
            raise ValueError("a pivot out of range")   # (left to XLA's kernel)
        return _permutation(pivots, size)
    return run


RULES["cholesky"] = _cholesky
RULES["lu"] = _lu
RULES["triangular_solve"] = _triangular_solve
RULES["lu_pivots_to_permutation"] = _lu_pivots_to_permutation
RULES["empty2"] = lambda params: lambda: np.zeros((), params["dtype"])   # (any value: XLA's is zeros)
