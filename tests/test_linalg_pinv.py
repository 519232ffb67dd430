"""linalg.pinv as PyTorch's: hermitian=True reads the lower triangle (eigh) and keeps the general
gradient formula, and atol / rtol (numbers or tensors, batched) set the cut-off of small singular values."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close

A = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.1, 0.7, 4.0]])
CALLS = {
    "hermitian from the lower triangle": lambda lib, a: lib.linalg.pinv(a, hermitian=True),
    "hermitian batched": lambda lib, a: lib.linalg.pinv(lib.stack([a, a.mT]), hermitian=True),
    "hermitian complex": lambda lib, a: lib.linalg.pinv(a * (1 + 0.5j) + 0.2j * a.mT, hermitian=True),
    "rtol": lambda lib, a: lib.linalg.pinv(a, rtol=0.8),
    "rtol hermitian": lambda lib, a: lib.linalg.pinv(a, rtol=0.8, hermitian=True),
    "atol tensor": lambda lib, a: lib.linalg.pinv(a, atol=lib.tensor(2.5), hermitian=True),
    "atol per matrix": lambda lib, a: lib.linalg.pinv(lib.stack([a, a.mT]), atol=lib.tensor([2.5, 0.1])),
    "pinverse rcond": lambda lib, a: a.pinverse(rcond=0.8),
    "wide": lambda lib, a: lib.linalg.pinv(a[:2]),
    "tall": lambda lib, a: lib.linalg.pinv(a[:, :2]),
    "empty": lambda lib, a: lib.linalg.pinv(a[:0]),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_pinv_values_and_gradients_are_pytorchs(case, torch):
    theirs_a = torch.tensor(A).requires_grad_()
    ours_a = tapegrad.tensor(A).requires_grad_()
    theirs, ours = CALLS[case](torch, theirs_a), CALLS[case](tapegrad, ours_a)
    assert_close(ours, theirs.detach())
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    weights = np.arange(theirs.numel(), dtype=np.float64).reshape(tuple(theirs.shape))
    (theirs.real * torch.tensor(weights)).sum().backward()
    (ours.real * tapegrad.tensor(weights)).sum().backward()
    assert_close(ours_a.grad, theirs_a.grad)
