"""svd_lowrank and pca_lowrank: randomized low-rank SVD and PCA (Halko, Martinsson and Tropp, 2009, algorithms 4.4
and 5.1), composed of randn, matmul, linalg.qr and linalg.svd as PyTorch's torch/_lowrank.py composes them, so
gradients flow through every step. The Gaussian test matrix is drawn from the generator as torch.randn draws it."""
from . import _dtypes as D

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    # the dtype of the random test matrix: A's where A is a floating or complex tensor, else float32
    return A.dtype if A.dtype in (D.float16, D.float32, D.float64) or A.dtype.is_complex else D.float32


def _matmul(A, B):
    if A is None:
        return B
    if A.is_sparse:
        from .sparse import mm
        return mm(A, B)
    return A.matmul(B)


def get_approximate_basis(A, q, niter=2, M=None):
    """A (..., m, q) matrix with orthonormal columns whose range approximates that of A - M (M: None or a
    (..., m, n) tensor), by `niter` subspace iterations (power iterations that re-orthonormalize)."""
    from . import linalg, randn
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    X = _matmul(A, R)
    if M is not None:
        X = X - _matmul(M, R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = _matmul(A.mH, Q)
        if M is not None:
            X = X - _matmul(M.mH, Q)
        Q = linalg.qr(X).Q
        X = _matmul(A, Q)
        if M is not None:
            X = X - _matmul(M, Q)
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with U S V^H approximating A - M (M broadcast to A's shape), of rank q: U (..., m, q),
    S (..., q), V (..., n, q). Choose q a little above the rank sought; niter subspace iterations sharpen it."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def _svd_lowrank(A, q=6, niter=2, M=None):
    from . import linalg
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:   # the basis of the smaller side: work on A^H
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = _matmul(Q.mH, A)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the principal components of A's rows, by svd_lowrank of A less its column means (center).
    q: how many (default min(6, m, n)), at most min(m, n)."""
    from . import ones, sparse, sparse_coo_tensor, zeros
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    dtype = _floating_dtype(A)
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if A.is_sparse:   # the column means as a sparse rank-one M, so that A stays sparse
        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        c = sparse.sum(A, dim=(-2,)) / m
        column_indices = c.indices()[0]
        indices = zeros(2, len(column_indices), dtype=column_indices.dtype, device=column_indices.device)
        indices[0] = column_indices
        C_t = sparse_coo_tensor(indices, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones_m1_t = ones(A.shape[:-2] + (1, m), dtype=dtype, device=A.device)
        M = sparse.mm(C_t, ones_m1_t).mT
        return _svd_lowrank(A, q, niter=niter, M=M)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
