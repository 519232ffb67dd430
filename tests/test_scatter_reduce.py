"""scatter_reduce: values and gradients of every reduction against PyTorch, zeros and ties included."""
import numpy as np
import pytest
from conftest import require

import tapegrad
from conftest import assert_close, raised

torch = require("torch")

REDUCES = ["sum", "prod", "mean", "amax", "amin"]

# (self, index, src, dim): zeros in self and src (one and several per slot), ties between src values
# and with self, slots nobody writes.
INPUTS = {
    "plain": ([[1.0, 2], [3, 4], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[0.5, 1.5], [2.5, -1], [3, 2]], 0),
    "one_zero_in_src": ([[1.0, 2], [3, 4], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[0.0, 1.5], [2.5, 0.5], [3, 2]], 0),
    "zeros_in_src": ([[1.0, 2], [3, 4], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[0.0, 1.5], [0, 0], [3, 0]], 0),
    "zero_in_self": ([[0.0, 2], [3, 0], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[0.7, 1.5], [2.5, 0.5], [3, 2]], 0),
    "zeros_in_both": ([[0.0, 2], [3, 0], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[0.0, 1.5], [2.5, 0.0], [0, 2]], 0),
    "ties_among_src": ([[1.0, 2], [3, 4], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[3.0, 2], [3, 2], [1, 6]], 0),
    "ties_with_self": ([[3.0, 2], [3, 4], [5, 6]], [[0, 1], [0, 1], [2, 1]], [[3.0, 2], [3, 2], [1, 6]], 0),
    "dim1": ([[1.0, -2, 0.5, 3], [0, 4, -1, 2]], [[3, 0, 3], [1, 1, 0]], [[0.5, -1.5, 2.0], [0.0, 4.0, 0.0]], 1),
}


def _run(lib, inputs, reduce, include_self, dtype="float64"):
    a, idx, src, dim = inputs
    a = lib.tensor(np.asarray(a, dtype), requires_grad=True)
    src = lib.tensor(np.asarray(src, dtype), requires_grad=True)
    out = a.scatter_reduce(dim, lib.tensor(idx), src, reduce, include_self=include_self)
    ct = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).astype(dtype).reshape(tuple(out.shape)))
    (out * ct).sum().backward()
    return out.detach(), a.grad, src.grad


def _pytorch_ties_wrong(inputs, reduce, include_self):
    # PyTorch's amax/amin backward with include_self=False counts a self value equal to the result among
    # the ties although self took no part; there the oracle is _right_ties_without_self.
    if include_self or reduce not in ("amax", "amin"):
        return False
    out = _run(torch, inputs, reduce, True)[0]
    a, idx, src, dim = inputs
    written = torch.zeros(out.shape, dtype=torch.bool).scatter(dim, torch.tensor(idx), True)
    return bool(((torch.tensor(a, dtype=out.dtype) == _run(torch, inputs, reduce, False)[0]) & written).any())


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_values_and_gradients_match_pytorch(name, reduce, include_self):
    for dtype in ("float64", "float32"):
        ours = _run(tapegrad, INPUTS[name], reduce, include_self, dtype)
        if _pytorch_ties_wrong(INPUTS[name], reduce, include_self):
            theirs = _right_ties_without_self(torch, INPUTS[name], reduce, dtype)[:3]
        else:
            theirs = _run(torch, INPUTS[name], reduce, include_self, dtype)
        for o, t in zip(ours, theirs):
            assert_close(o, t)


def _right_ties_without_self(lib, inputs, reduce, dtype="float64"):
    """include_self=False, computed the way whose gradient is unambiguous: the written slots of self
    replaced by the reduction's identity (scatter gives them no gradient), then include_self=True.
    Tied src values share their slot's cotangent evenly and self takes none."""
    a, idx, src, dim = inputs
    a = lib.tensor(np.asarray(a, dtype), requires_grad=True)
    src = lib.tensor(np.asarray(src, dtype), requires_grad=True)
    idx = lib.tensor(idx)
    identity = -np.inf if reduce == "amax" else np.inf
    out = a.scatter(dim, idx, identity).scatter_reduce(dim, idx, src, reduce, include_self=True)
    ct = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).astype(dtype).reshape(tuple(out.shape)))
    (out * ct).sum().backward()
    return out.detach(), a.grad, src.grad, ct


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("name", ["ties_with_self", "ties_among_src", "zero_in_self", "zeros_in_both", "plain"])
def test_amax_amin_ties_without_self(name, reduce):
    ours = _run(tapegrad, INPUTS[name], reduce, False)
    right = _right_ties_without_self(torch, INPUTS[name], reduce)
    for o, t in zip(ours, right):
        assert_close(o, t)
    # Every written slot passes on its whole cotangent to its src values.
    a, idx, src, dim = INPUTS[name]
    ct = right[3]
    passed_on = torch.zeros_like(ct).scatter_add(dim, torch.tensor(idx), torch.tensor(ours[2].numpy()))
    written = torch.zeros(ct.shape, dtype=torch.bool).scatter(dim, torch.tensor(idx), True)
    assert torch.allclose(passed_on[written], ct[written])


def test_pytorch_tie_handling_without_self_is_what_the_comment_says():
    # If this starts failing, PyTorch fixed it: compare those cases with PyTorch directly again.
    assert _pytorch_ties_wrong(INPUTS["ties_with_self"], "amax", False)
    theirs = _run(torch, INPUTS["ties_with_self"], "amax", False)[2]
    right = _right_ties_without_self(torch, INPUTS["ties_with_self"], "amax")[2]
    assert not torch.allclose(theirs, right)


@pytest.mark.parametrize("include_self", [True, False])
def test_prod_gradient_is_the_product_of_the_other_factors(include_self):
    # One slot, every zero count from none to three: d out / d src_k = product of the other factors.
    for zeros in range(4):
        factors = np.array([1.5, -2.0, 0.5, 3.0])
        factors[:zeros] = 0
        src = tapegrad.tensor(factors[1:], requires_grad=True)
        a = tapegrad.tensor(factors[:1], requires_grad=True)
        a.scatter_reduce(0, tapegrad.tensor([0, 0, 0]), src, "prod", include_self=include_self).sum().backward()
        used = factors if include_self else factors[1:]
        expected = [np.prod(np.delete(used, k)) for k in range(len(used))]
        got = np.concatenate([a.grad.numpy(), src.grad.numpy()]) if include_self else src.grad.numpy()
        np.testing.assert_allclose(got, expected)
        if not include_self:
            assert a.grad.tolist() == [0.0]


def test_integer_prod_forward_matches_pytorch():
    def run(lib):
        a = lib.tensor([[3, 0], [2, 5], [7, -1]])
        return a.scatter_reduce(0, lib.tensor([[0, 1], [0, 1], [2, 1]]), lib.tensor([[4, 2], [0, 3], [-6, 8]]),
                                "prod", include_self=True)

    assert run(tapegrad).tolist() == run(torch).tolist()


def test_prod_gradient_through_autograd_grad_and_jit_cache():
    # The general path (autograd.grad) and the compiled repeat agree with PyTorch too.
    inputs = INPUTS["zeros_in_both"]
    for _ in range(2):
        a, idx, src, dim = inputs

        def grads(lib):
            x = lib.tensor(np.asarray(a), requires_grad=True)
            s = lib.tensor(np.asarray(src), requires_grad=True)
            out = x.scatter_reduce(dim, lib.tensor(idx), s, "prod")
            return lib.autograd.grad((out * out).sum(), (x, s))

        for o, t in zip(grads(tapegrad), grads(torch)):
            assert_close(o, t)


@pytest.mark.parametrize("requires", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("reduce", REDUCES + ["scatter_add", "scatter"])
@pytest.mark.parametrize("index", [[[3, 0, 3], [1, 1, 0]], [[3], [1]], [[3, 0, 3, 2]], [[1, 2, 0, 3], [0, 0, 1, 2]]])
def test_src_larger_than_index(reduce, index, requires):
    """PyTorch's forward reads only the part of src the index covers; its backward computes src's gradient in
    the index's shape, which the engine refuses ("returned an invalid gradient at index 1"), and amax, amin
    and prod compare src with the result gathered in that shape (a size mismatch, for both inputs). The
    values, and the errors or gradients, match PyTorch's."""
    a, _, src, dim = INPUTS["dim1"]
    wider = np.concatenate([np.asarray(src), np.full((2, 1), 7.0)], axis=1)

    def run(lib):
        x = lib.tensor(np.asarray(a), requires_grad=requires[0])
        s = lib.tensor(wider, requires_grad=requires[1])
        idx = lib.tensor(index)
        if reduce in REDUCES:
            out = x.scatter_reduce(dim, idx, s, reduce)
        else:
            out = getattr(x, reduce)(dim, idx, s)
        grads = []
        error = raised(lambda: grads.extend(lib.autograd.grad(out.sum(), [t for t, r in zip((x, s), requires) if r])))
        return out.detach(), error, grads
    ours, theirs = run(tapegrad), run(torch)
    assert_close(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    if theirs[1] is None and not (reduce in ("prod", "amax", "amin") and index in ([[3], [1]], [[3, 0, 3, 2]])):
        # (with an index of one row or column PyTorch's prod, amax and amin formulas broadcast src against the
        # gathered result: src values the index never reads get a gradient; tapegrad's is zero there)
        for o, t in zip(ours[2], theirs[2]):
            assert_close(o, t)
