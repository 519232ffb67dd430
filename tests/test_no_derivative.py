"""Ops PyTorch records in the graph but cannot differentiate (unique, unique_consecutive, scatter with
reduce=, floor_divide, remainder of a number, heaviside, pow to a bool tensor's power (its input's gradient),
histogram, detach_copy, the LDL factorization and its
solver), against PyTorch: the output
requires grad, grad_fn has PyTorch's name and edges, and reaching the node in backward raises PyTorch's exception
type with its message (through backward, autograd.grad and create_graph, on first sight and once the structure is compiled)."""
import numpy as np
import pytest

import tapegrad

from conftest import require, raised

torch = require("torch")

X = np.array([[1.0, 2.0, 1.0], [0.5, 2.0, 0.5]])
INDEX = [[0, 1, 1], [0, 1, 0]]

CASES = {
    "unique": lambda lib, x: lib.unique(x),
    "unique unsorted, inverse, counts": lambda lib, x: x.unique(sorted=False, return_inverse=True,
                                                                return_counts=True)[0],
    "unique dim": lambda lib, x: lib.unique(x, dim=1),
    "unique_consecutive": lambda lib, x: lib.unique_consecutive(x),
    "unique_consecutive dim": lambda lib, x: lib.unique_consecutive(x, dim=0),
    "scatter reduce": lambda lib, x: lib.scatter(x, 0, lib.tensor(INDEX), x * 2, reduce="add"),
    "scatter value reduce": lambda lib, x: x.scatter(0, lib.tensor(INDEX), 2.0, reduce="multiply"),
    "floor_divide": lambda lib, x: lib.floor_divide(x, 0.75),
    "floor_divide_": lambda lib, x: (x * 1).floor_divide_(0.75),
    "//=": lambda lib, x: x.clone().__ifloordiv__(0.75),
    "remainder of a number": lambda lib, x: 3 % x,
    "heaviside": lambda lib, x: lib.heaviside(x, lib.tensor([0.5], dtype=x.dtype)),
    "pow to a bool tensor's power": lambda lib, x: x ** lib.tensor([True, False, True]),
    "histogram": lambda lib, x: lib.histogram(x, 3).hist,
    "histogram edges": lambda lib, x: x.histogram(lib.tensor([0.0, 1.5, 3.0], dtype=x.dtype), weight=x).bin_edges,
    "detach_copy": lambda lib, x: lib.detach_copy(x),
    "native_channel_shuffle": lambda lib, x: lib.native_channel_shuffle(x.view(1, 2, 3), 2),
    "geqrf": lambda lib, x: lib.geqrf(x)[0],
    "ldl_factor": lambda lib, x: lib.linalg.ldl_factor(x[:, :2] + x[:, :2].mT).LD,
    "ldl_solve": lambda lib, x: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(x[:, 1:].detach() + x[:, 1:].detach().mT),
                                                     x[:, :2]),
}


def _names(fn):
    return fn.name(), [(g.name() if g is not None else None, i) for g, i in fn.next_functions]




@pytest.mark.parametrize("name", sorted(CASES))
def test_node_recorded_and_backward_raises_as_pytorch(name):
    build = CASES[name]
    theirs_x = torch.tensor(X, requires_grad=True)
    theirs = build(torch, theirs_x)
    their_error = raised(lambda: theirs.sum().backward())
    assert their_error is not None
    for attempt in range(3):   # first sight, then a structure seen before (compiled)
        x = tapegrad.tensor(X, requires_grad=True)
        ours = build(tapegrad, x)
        assert ours.requires_grad == theirs.requires_grad
        assert _names(ours.grad_fn) == _names(theirs.grad_fn)
        # (atol: geqrf's LAPACK is SciPy's OpenBLAS on the NumPy tier, PyTorch's own in torch; an entry that is
        # zero in one is 1e-17 in the other)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
        for call in (lambda: ours.sum().backward(retain_graph=True),
                     lambda: tapegrad.autograd.grad(ours.sum(), x),
                     lambda: tapegrad.autograd.grad(ours.sum(), x, create_graph=True)):
            error = raised(call)
            assert error is not None and error[0] is their_error[0], (attempt, error, their_error)
            assert error[1].startswith(their_error[1]), (error[1], their_error[1])


def test_other_branches_still_get_their_gradient():
    # a graph that reaches the node only through a detached value differentiates as usual
    x = tapegrad.tensor(X, requires_grad=True)
    y = (x * 3).sum() + tapegrad.unique(x).detach().sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(X.shape, 3.0))
