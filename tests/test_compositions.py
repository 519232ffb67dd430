"""Functions PyTorch composes from other ops (inner, diagflat, vander, matrix_power, cov, corrcoef, hsplit /
vsplit / dsplit; _functional/_compositions.py) and the predicates isreal, is_nonzero, is_signed, against
PyTorch: values, dtypes, gradients, the grad_fn and its next functions' names (the composition's), and
PyTorch's errors (type and the start of the message), those of the elementwise functions of
_functional/_special.py, the *_scatter functions and renorm too."""
import warnings

import numpy as np
import pytest

import tapegrad

from conftest import require, raised

torch = require("torch")

M = np.random.default_rng(0).standard_normal((3, 3))
V = np.random.default_rng(1).standard_normal(4)

CASES = {
    "inner matrices": lambda lib, a, b: lib.inner(a, a[:2]),
    "inner vectors": lambda lib, a, b: b.inner(b),
    "inner number": lambda lib, a, b: lib.inner(a, lib.tensor(2.0, dtype=lib.float64)),
    "diagflat": lambda lib, a, b: lib.diagflat(a),
    "diagflat offset": lambda lib, a, b: b.diagflat(1),
    "diagflat non-contiguous": lambda lib, a, b: lib.diagflat(a.t()[:, :2], -2),
    "vander": lambda lib, a, b: lib.vander(b),
    "vander increasing": lambda lib, a, b: lib.vander(b, N=3, increasing=True),
    "vander one column": lambda lib, a, b: lib.vander(b, 1),
    **{f"matrix_power {n}": (lambda n: lambda lib, a, b: lib.matrix_power(a, n))(n) for n in (0, 1, 2, 3, 6, -1, -3)},
    "linalg.matrix_power batched": lambda lib, a, b: lib.linalg.matrix_power(lib.stack([a, a * 2]), 5),
    "matrix_power method": lambda lib, a, b: a.matrix_power(4),
    "cov": lambda lib, a, b: lib.cov(a),
    "cov vector": lambda lib, a, b: lib.cov(b),
    "cov correction": lambda lib, a, b: a.cov(correction=0),
    "cov weights": lambda lib, a, b: lib.cov(a, fweights=lib.tensor([1, 2, 3]),
                                             aweights=lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)),
    "cov aweights": lambda lib, a, b: lib.cov(a, aweights=b[:3].abs()),
    "corrcoef": lambda lib, a, b: lib.corrcoef(a),
    "corrcoef vector": lambda lib, a, b: b.corrcoef(),
    "hsplit": lambda lib, a, b: lib.hsplit(a, 3)[1],
    "hsplit vector": lambda lib, a, b: b.hsplit([1, 3])[1],
    "vsplit": lambda lib, a, b: lib.vsplit(a, [1])[1],
    "dsplit": lambda lib, a, b: lib.dsplit(a.reshape(1, 3, 3), 3)[2],
    "isreal": lambda lib, a, b: lib.isreal(lib.complex(a, a * (a > 0))),
    "isreal real": lambda lib, a, b: b.isreal(),
}


def _names(fn):
    return None if fn is None else (fn.name(), [g.name() if g is not None else None for g, _ in fn.next_functions])


# PyTorch's vander writes its powers in place into the slice it read them from (a cumprod): its backward
# raises, and so does the composition's
BACKWARD_RAISES = {"vander", "vander increasing"}


def _run(lib, build, name):
    a, b = lib.tensor(M, requires_grad=True), lib.tensor(V, requires_grad=True)
    out = build(lib, a, b)
    if name in BACKWARD_RAISES:
        error = raised(lambda: out.sum().backward())
        assert error[0] is RuntimeError and "modified by an inplace operation" in error[1], error
    elif out.requires_grad:
        out.abs().sum().backward()
    grads = [None if x.grad is None else x.grad.numpy() for x in (a, b)]
    return out, grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_composition_as_pytorch(name):
    theirs, their_grads = _run(torch, CASES[name], name)
    ours, our_grads = _run(tapegrad, CASES[name], name)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert _names(ours.grad_fn) == _names(theirs.grad_fn)
    for o, t in zip(our_grads, their_grads):
        assert (o is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


A23 = np.random.default_rng(2).standard_normal((2, 3))
ERRORS = {
    "inner shapes": lambda lib: lib.inner(lib.tensor(A23), lib.ones(2, dtype=lib.float64)),
    "inner dtypes": lambda lib: lib.inner(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),
    "vander 2-d": lambda lib: lib.vander(lib.tensor(A23)),
    "vander N": lambda lib: lib.vander(lib.ones(3), N=-1),
    "matrix_power rectangular": lambda lib: lib.matrix_power(lib.tensor(A23), 2),
    "matrix_power vector": lambda lib: lib.linalg.matrix_power(lib.ones(3), 2),
    "matrix_power integer inverse": lambda lib: lib.matrix_power(lib.tensor([[1, 2], [3, 4]]), -1),
    "cov 3-d": lambda lib: lib.cov(lib.ones(2, 2, 2)),
    "cov bool": lambda lib: lib.cov(lib.tensor([True])),
    "cov float fweights": lambda lib: lib.cov(lib.tensor(A23), fweights=lib.tensor([1.0, 2, 3])),
    "cov fweights numel": lambda lib: lib.cov(lib.tensor(A23), fweights=lib.tensor([1, 2])),
    "cov negative fweights": lambda lib: lib.cov(lib.tensor(A23), fweights=lib.tensor([1, -2, 3])),
    "cov integer aweights": lambda lib: lib.cov(lib.tensor(A23), aweights=lib.tensor([1, 2, 3])),
    "cov zero weights": lambda lib: lib.cov(lib.tensor(A23), fweights=lib.tensor([0, 0, 0])),
    "corrcoef 3-d": lambda lib: lib.corrcoef(lib.ones(1, 1, 1)),
    "hsplit indivisible": lambda lib: lib.hsplit(lib.tensor(A23), 2),
    "hsplit 0-d": lambda lib: lib.hsplit(lib.tensor(1.0), 1),
    "hsplit zero": lambda lib: lib.hsplit(lib.tensor(A23), 0),
    "vsplit 1-d": lambda lib: lib.vsplit(lib.ones(3), 1),
    "dsplit 2-d": lambda lib: lib.dsplit(lib.tensor(A23), 1),
    "is_nonzero empty": lambda lib: lib.is_nonzero(lib.tensor([])),
    "is_nonzero several": lambda lib: lib.is_nonzero(lib.tensor([1, 2])),
    "logaddexp integers": lambda lib: lib.logaddexp(lib.tensor([1]), lib.tensor([2])),
    "logaddexp number": lambda lib: lib.logaddexp(lib.ones(2), 2.0),
    "gcd floats": lambda lib: lib.gcd(lib.ones(2), lib.ones(2)),
    "gcd bools": lambda lib: lib.gcd(lib.tensor([True]), lib.tensor([True])),
    "lcm number": lambda lib: lib.lcm(lib.tensor([4]), 2),
    "heaviside dtypes": lambda lib: lib.heaviside(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "heaviside complex": lambda lib: lib.heaviside(lib.tensor([1j]), lib.tensor([1j])),
    "heaviside number": lambda lib: lib.heaviside(lib.ones(2), 0.5),
    "nextafter integers": lambda lib: lib.nextafter(lib.tensor([1]), lib.tensor([2])),
    "ldexp number": lambda lib: lib.ldexp(lib.ones(2), 2),
    "frexp integers": lambda lib: lib.frexp(lib.tensor([1, 2])),
    "polygamma negative n": lambda lib: lib.polygamma(-1, lib.ones(2)),
    "mvlgamma p": lambda lib: lib.mvlgamma(lib.ones(2) * 3, 0),
    "select_scatter index": lambda lib: lib.select_scatter(lib.tensor(A23), lib.ones(3, dtype=lib.float64), 0, 5),
    "select_scatter shape": lambda lib: lib.select_scatter(lib.tensor(A23), lib.ones(2, dtype=lib.float64), 0, 0),
    "slice_scatter step": lambda lib: lib.slice_scatter(lib.tensor(A23), lib.tensor(A23), 0, 0, 1, 0),
    "slice_scatter shape": lambda lib: lib.slice_scatter(lib.tensor(A23), lib.ones(3, dtype=lib.float64), 0, 0, 2),
    "diagonal_scatter shape": lambda lib: lib.diagonal_scatter(lib.tensor(A23), lib.ones(3, dtype=lib.float64)),
    "diagonal_scatter dims": lambda lib: lib.diagonal_scatter(lib.tensor(A23), lib.ones(2), 0, 0, 0),
    "renorm p": lambda lib: lib.renorm(lib.tensor(A23), -1, 0, 1.0),
    "renorm maxnorm": lambda lib: lib.renorm(lib.tensor(A23), 2, 0, -1.0),
    "renorm 1-d": lambda lib: lib.renorm(lib.ones(3), 2, 0, 1.0),
    "renorm integers": lambda lib: lib.renorm(lib.tensor([[1, 2]]), 2, 0, 1.0),
    "renorm dim": lambda lib: lib.renorm(lib.tensor(A23), 2, 2, 1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_as_pytorch(name):
    theirs = raised(lambda: ERRORS[name](torch))
    ours = raised(lambda: ERRORS[name](tapegrad))
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] is theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)


def test_results_and_warnings_as_pytorch():
    for lib_a, lib_b in ((torch, tapegrad),):   # (float32 results: rounded as the matmul's sums are)
        for build in (lambda lib: lib.vander(lib.tensor([True, False])),
                      lambda lib: lib.vander(lib.tensor([1, 2], dtype=lib.int8), 3),
                      lambda lib: lib.matrix_power(lib.tensor([[1, 2], [3, 4]]), 3),
                      lambda lib: lib.cov(lib.tensor([[1, 2, 4], [3, 5, 9]])),
                      lambda lib: lib.corrcoef(lib.tensor([[1, 2, 4], [3, 5, 9]])),
                      lambda lib: lib.isreal(lib.tensor([1, 0])),
                      lambda lib: lib.gcd(lib.tensor([0, -4, 6, 12]), lib.tensor([0, 6, -9, 0]))):
            theirs, ours = build(lib_a), build(lib_b)
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = tapegrad.cov(tapegrad.ones(2, 1))
    assert torch.cov(torch.ones(2, 1)).isnan().all() and ours.isnan().all()
    assert any("degrees of freedom is <= 0" in str(w.message) for w in caught)
    for lib in (torch, tapegrad):
        assert lib.is_nonzero(lib.tensor([[1.5]])) is True and lib.is_nonzero(lib.tensor(False)) is False
        assert [lib.ones(1, dtype=d).is_signed() for d in (lib.float32, lib.int8, lib.uint8, lib.bool)] == \
            [True, True, False, False]


def test_out_as_pytorch():
    # inner copies its composed result into out (CopyBackwards); matrix_power writes through matmul's out=,
    # which refuses a result that requires grad
    for build in (lambda lib, a, o: lib.inner(a, a, out=o), lambda lib, a, o: lib.matrix_power(a, 2, out=o),
                  lambda lib, a, o: lib.linalg.matrix_power(a, 3, out=o), lambda lib, a, o: lib.ldexp(a, a, out=o)):
        results = []
        for lib in (torch, tapegrad):
            a, o = lib.tensor(M, requires_grad=True), lib.empty(3, 3, dtype=lib.float64)
            error = raised(lambda: build(lib, a, o))
            results.append(error if error is not None else (o.grad_fn.name(), o.detach().numpy().round(9).tolist()))
        assert results[0] == results[1]
