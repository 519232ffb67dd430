"""The results of tapegrad.linalg's LAPACK-backed functions have PyTorch's memory layout: batches of
column-major matrices, so strides, is_contiguous() and which .view() calls succeed are PyTorch's; values
and gradients are unchanged."""
import numpy as np
import pytest

import tapegrad
from conftest import raised

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])

CALLS = {
    "inv": lambda L, a, b: (L.inv(a),),
    "inv, a batch": lambda L, a, b: (L.inv(a.expand(2, 3, 3)),),
    "cholesky": lambda L, a, b: (L.cholesky(a),),
    "cholesky, upper": lambda L, a, b: (L.cholesky(a, upper=True),),
    "qr": lambda L, a, b: tuple(L.qr(a)),
    "qr of a tall matrix": lambda L, a, b: tuple(L.qr(a.repeat(2, 1))),
    "svd": lambda L, a, b: tuple(L.svd(a)),
    "svd, reduced": lambda L, a, b: tuple(L.svd(a[:, :2], full_matrices=False)),
    "eigh": lambda L, a, b: tuple(L.eigh(a)),
    "solve": lambda L, a, b: (L.solve(a, b),),
    "solve, a vector": lambda L, a, b: (L.solve(a, b[:, 0]),),
    "solve, XA = B": lambda L, a, b: (L.solve(a, b.mT, left=False),),
    "solve_triangular": lambda L, a, b: (L.solve_triangular(a.triu(), b, upper=True),),
    "solve_triangular, XA = B": lambda L, a, b: (L.solve_triangular(a.triu(), b.mT, upper=True, left=False),),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_linalg_results_have_pytorchs_layout(case, torch):
    seen = []
    for lib in (tapegrad, torch):
        a = lib.tensor(A, requires_grad=True)
        outs = CALLS[case](lib.linalg, a, lib.tensor(B))
        layout = [(tuple(t.shape), t.stride(), t.is_contiguous(), raised(lambda t=t: t.view(-1))) for t in outs]
        sum(t.abs().sum() for t in outs).backward()
        seen.append((layout, np.round(a.grad.numpy(), 10).tolist()))
    assert seen[0] == seen[1]


NOT_SYMMETRIC = np.array([[4.0, 1.3, 0.5], [0.7, 3.0, 0.2], [0.1, 0.6, 2.0]])
WEIGHTS = np.array([1.0, 2.0, 3.0])

# The factorizations read one triangle of their input (PyTorch's cholesky and eigh, as LAPACK): the value
# comes from that triangle's Hermitian matrix, the gradient is Hermitian
ONE_TRIANGLE = {
    "cholesky": lambda L, a, w: L.cholesky(a).sum(),
    "cholesky, upper": lambda L, a, w: L.cholesky(a, upper=True).sum(),
    "eigh's vectors": lambda L, a, w: L.eigh(a)[1].abs().sum(),
    "eigh's values": lambda L, a, w: (L.eigh(a)[0] * w).sum(),
    "eigh from the upper triangle": lambda L, a, w: L.eigh(a, UPLO="U")[1].abs().sum() + (L.eigh(a, UPLO="U")[0] * w).sum(),
    "eigvalsh": lambda L, a, w: (L.eigvalsh(a) * w).sum(),
    "eigvalsh from the upper triangle": lambda L, a, w: (L.eigvalsh(a, UPLO="U") * w).sum(),
}


@pytest.mark.parametrize("case", sorted(ONE_TRIANGLE))
def test_factorizations_read_one_triangle_and_give_hermitian_gradients_as_torch(case, torch):
    seen = []
    for lib in (tapegrad, torch):
        a = lib.tensor(NOT_SYMMETRIC, requires_grad=True)
        value = ONE_TRIANGLE[case](lib.linalg, a, lib.tensor(WEIGHTS))
        value.backward()
        seen.append((round(float(value), 8), np.round(a.grad.numpy(), 8).tolist()))
    assert seen[0] == seen[1]
