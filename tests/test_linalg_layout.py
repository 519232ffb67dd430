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
