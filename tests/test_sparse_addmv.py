"""torch.addmv with a sparse matrix against PyTorch: one AddmvBackward0 for a CSR or CSC matrix, values and the
gradients' values and layouts (the matrix's gradient is dense, as torch.mv's); PyTorch's refusals for COO and BSC."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised

warnings.filterwarnings("ignore", message=".*beta state.*")
M = np.array([[1., 0, 2, 0], [0, 0, 3, 4], [5, 0, 0, 0]])


def _run(lib, layout, case):
    d = lib.tensor(M, dtype=lib.float64, requires_grad=case == "from_dense")
    mat = {"csr": d.to_sparse_csr, "csc": d.to_sparse_csc, "coo": d.to_sparse}[layout]()
    if case not in ("from_dense", "constant_matrix"):
        mat = mat.detach().requires_grad_()
    vec = lib.tensor([1., 2, 3] if case != "broadcast" else [2.], dtype=lib.float64, requires_grad=True)
    if case == "beta_zero":
        vec = lib.full((3,), float("nan"), dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1., -1, 2, 0.5], dtype=lib.float64, requires_grad=True)
    kw = {"scaled": {"beta": 0.5, "alpha": 2.0}, "beta_zero": {"beta": 0.0}}.get(case, {})
    y = lib.addmv(vec, mat, v, **kw)
    y.pow(2).sum().backward()
    g = d.grad if case == "from_dense" else None if case == "constant_matrix" else mat.grad
    return y, g, vec.grad, v.grad


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("case", ["plain", "scaled", "beta_zero", "broadcast", "from_dense", "constant_matrix"])
def test_one_addmv_node_values_and_gradients(torch, layout, case):
    ours, theirs = _run(tapegrad, layout, case), _run(torch, layout, case)
    assert type(ours[0].grad_fn).__name__ == type(theirs[0].grad_fn).__name__ == "AddmvBackward0"
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        assert a.layout.name == str(b.layout).split(".")[1]
        assert_close(a, b)


@pytest.mark.parametrize("case", ["coo", "bsc", "dtypes"])
def test_refusals_as_torch(torch, case):
    def call(lib):
        d = lib.tensor(M[:, :2].copy() if case == "bsc" else M, dtype=lib.float64)
        mat = {"coo": lambda: d.to_sparse(), "bsc": lambda: d[:2].to_sparse_bsc((1, 1)),
               "dtypes": lambda: d.to_sparse_csr()}[case]()
        v = lib.ones(mat.shape[1], dtype=lib.float32 if case == "dtypes" else lib.float64)
        lib.addmv(lib.zeros(mat.shape[0], dtype=lib.float64), mat, v)
    ours, theirs = raised(lambda: call(tapegrad)), raised(lambda: call(torch))
    assert theirs is not None and ours[0] is theirs[0]
    key = theirs[1].split(". ")[0].split(" This could")[0]
    assert key in ours[1]


def _bsr(lib, vec_grad):
    d = lib.tensor(np.vstack([M, [[0, 1, 0, 0]]]), dtype=lib.float64)
    mat = d.to_sparse_bsr((2, 2)).requires_grad_()
    vec = lib.ones(4, dtype=lib.float64, requires_grad=True)
    v = lib.tensor([1., -1, 2, .5], dtype=lib.float64, requires_grad=vec_grad)
    y = lib.addmv(vec, mat, v, alpha=2.)
    name = y.grad_fn.name()
    y.pow(2).sum().backward()
    return name, y, vec.grad, mat.grad


def test_bsr_matrix_one_node_and_dense_gradient(torch):
    ours, theirs = _bsr(tapegrad, False), _bsr(torch, False)
    assert ours[0] == theirs[0] == "AddmvBackward0"
    for a, b in zip(ours[1:], theirs[1:]):
        assert a.layout.name == str(b.layout).split(".")[1]
        assert_close(a, b)


def test_bsr_matrix_refuses_the_vectors_gradient_as_torch(torch):
    ours, theirs = raised(lambda: _bsr(tapegrad, True)), raised(lambda: _bsr(torch, True))
    assert ours[0] is theirs[0] is RuntimeError
    assert theirs[1] in ours[1]
