"""Results whose memory layout PyTorch's kernels leave non-contiguous, as PyTorch's: rot90 by an odd
number of turns (a transposed buffer), nonzero (column-major, so its as_tuple columns are contiguous
views), unique along a dim (that dim outermost) and conj (its input's strides). Strides, is_contiguous() and which .view() calls succeed are
compared; values and gradients stay as they were."""
import numpy as np
import pytest

import tapegrad
from conftest import raised

CALLS = {
    "rot90 once": lambda lib: lib.rot90(lib.arange(24.0).reshape(2, 3, 4), 1, (0, 1)),
    "rot90 three times over the last dims": lambda lib: lib.rot90(lib.arange(24.0).reshape(2, 3, 4), 3, (1, 2)),
    "rot90 back over dims (2, 0)": lambda lib: lib.rot90(lib.arange(24.0).reshape(2, 3, 4), -1, (2, 0)),
    "rot90 twice": lambda lib: lib.rot90(lib.arange(24.0).reshape(2, 3, 4), 2, (0, 1)),
    "nonzero": lambda lib: lib.tensor([[1, 0], [0, 1], [1, 1]]).nonzero(),
    "nonzero as a tuple": lambda lib: lib.tensor([[1, 0, 2], [0, 1, 1]]).nonzero(as_tuple=True)[1],
    "unique along dim 1": lambda lib: lib.unique(lib.tensor([[[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]],
                                                             [[0.0, 1.0], [0.0, 1.0], [5.0, 6.0]]]), dim=1),
    "unique along the last dim": lambda lib: lib.unique(lib.tensor([[1.0, 1.0, 3.0], [2.0, 2.0, 0.5]]), dim=-1),
    "unique_consecutive along dim 1": lambda lib: lib.unique_consecutive(lib.tensor([[1.0, 1.0, 3.0], [2.0, 2.0, 0.5]]),
                                                                         dim=1),
    "conj of a transposed complex matrix": lambda lib: lib.conj(lib.tensor([[1 + 2j, 3j], [2, 1 - 1j]]).mT),
    "exp of a conjugate transpose": lambda lib: lib.tensor([[1 + 2j, 3j, 0.5], [2, 1 - 1j, 1j]]).mH.exp(),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_result_layout_is_pytorchs(case, torch):
    seen = []
    for lib in (tapegrad, torch):
        t = CALLS[case](lib)
        seen.append((tuple(t.shape), t.stride(), t.is_contiguous(), raised(lambda: t.view(-1)),
                     np.round(np.array(t.tolist()), 5).tolist()))
    assert seen[0] == seen[1]


def test_rot90_gradient_is_pytorchs(torch):
    grads = []
    for lib in (tapegrad, torch):
        x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        out = lib.rot90(x, 1, (2, 0))
        (out * lib.arange(24.0).reshape(out.shape)).sum().backward()
        grads.append((out.grad_fn.name(), x.grad.tolist()))
    assert grads[0] == grads[1]
