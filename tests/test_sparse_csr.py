"""Sparse CSR matrices against PyTorch: construction, reprs, accessors, conversions to and from COO and dense,
products with dense tensors and their gradients, PyTorch's invariant errors and refusals."""
import numpy as np
import pytest
import torch

import tapegrad as tg

X = [[0.0, 2.0, 0.0], [3.0, 0.0, 4.0], [0.0, 0.0, 0.0]]
CSR = ([0, 1, 3, 3], [1, 0, 2], [2.0, 3.0, 4.0])
D = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def _same(m, t):
    assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"


def _both(fn):
    return fn(torch), fn(tg)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(X).to_sparse_csr(),
    lambda lib: lib.tensor(X, dtype=lib.float64, requires_grad=True).to_sparse_csr(),
    lambda lib: lib.zeros(2, 3).to_sparse_csr(),
    lambda lib: lib.tensor([[1, 0], [0, 2]]).to_sparse_csr(),
    lambda lib: lib.tensor(X).to_sparse(layout=lib.sparse_csr),
    lambda lib: lib.tensor(X).to_sparse_csr().to_sparse(),
    lambda lib: lib.sparse_coo_tensor([[1, 0, 1], [0, 0, 0]], [1.0, 2.0, 3.0], (2, 3)).to_sparse_csr(),
    lambda lib: lib.sparse_csr_tensor(*CSR, (3, 3), dtype=lib.float64, requires_grad=True),
    lambda lib: lib.sparse_csr_tensor(*CSR),
    lambda lib: lib.sparse_csr_tensor(*CSR, (3, 3), dtype=lib.float16),
    lambda lib: lib.sparse_csr_tensor(CSR[0], CSR[1], lib.tensor(CSR[2], requires_grad=True) * 2, (3, 3)),
])
def test_construction_and_repr(make):
    t, m = _both(make)
    _same(m, t)
    assert m.layout is (tg.sparse_csr if t.layout == torch.sparse_csr else tg.sparse_coo)
    assert (m.is_sparse, m.is_sparse_csr, m._nnz(), m.dim(), m.sparse_dim(), m.dense_dim(), tuple(m.shape)) == \
        (t.is_sparse, t.is_sparse_csr, t._nnz(), t.dim(), t.sparse_dim(), t.dense_dim(), tuple(t.shape))
    _same(m.to_dense(), t.to_dense())
    assert repr(tg.sparse_csr) == "tapegrad.sparse_csr"


def test_accessors():
    t, m = _both(lambda lib: lib.tensor(X).to_sparse_csr())
    for name in ("crow_indices", "col_indices", "values", "to_dense", "sum"):
        _same(getattr(m, name)(), getattr(t, name)())
    _same(tg.sum(m), torch.sum(t))
    assert m.to_sparse_csr() is m and m.to_sparse(layout=tg.sparse_csr) is m
    assert not tg.ones(2).is_sparse_csr


@pytest.mark.parametrize("op", [lambda lib, c, d: c @ d, lambda lib, c, d: lib.mm(c, d),
                                lambda lib, c, d: lib.matmul(c, d), lambda lib, c, d: c.mm(d)])
def test_products_with_dense_and_gradients(op):
    def run(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        d = lib.tensor(D, dtype=lib.float64, requires_grad=True)
        y = op(lib, x.to_sparse_csr(), d)
        (y * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum().backward()
        leaf = lib.sparse_csr_tensor(*CSR, (3, 3), dtype=lib.float64, requires_grad=True)
        z = op(lib, leaf, d)
        z.sum().backward()
        return y, x.grad, d.grad, z, leaf.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


def test_vector_product_and_masked_gradient_of_to_dense():
    def run(lib):
        leaf = lib.sparse_csr_tensor(*CSR, (3, 3), dtype=lib.float64, requires_grad=True)
        (leaf.to_dense() * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return leaf.grad, leaf @ lib.ones(3, dtype=lib.float64)
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("args,phrase", [
    (([0, 1, 3], [1, 0, 2], [2.0, 3.0, 4.0]), r"crow_indices.shape\[-1\] must be equal to the number of rows \+ 1"),
    (([0, 1, 3, 3], [1, 0, 5], [2.0, 3.0, 4.0]), "`0 <= col_indices < ncols` is not satisfied"),
    (([0, 1, 3, 3], [1, 2, 0], [2.0, 3.0, 4.0]), "are sorted and distinct along the last dimension values"),
    (([0, 1, 3, 3], [1, 0], [2.0, 3.0, 4.0]), r"col_indices.shape\[-1\] must be equal to nnz \(=3\)"),
    (([1, 1, 3, 3], [1, 0, 2], [2.0, 3.0, 4.0]), r"`crow_indices\[..., 0\] == 0` is not satisfied"),
])
def test_invariants(args, phrase):
    # PyTorch checks them when asked; tapegrad always does
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match=phrase):
            lib.sparse_csr_tensor(*args, (3, 3), check_invariants=True)


def test_refusals():
    t, m = _both(lambda lib: lib.tensor(X).to_sparse_csr())
    for lib, c in ((torch, t), (tg, m)):
        layout_error = "expected sparse coordinate tensor layout but got SparseCsr"
        for call, error, phrase in [
                (lambda: c.indices(), RuntimeError, "indices " + layout_error),
                (lambda: c.coalesce(), RuntimeError, "coalesce " + layout_error),
                (lambda: c @ lib.ones(2, 2), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(3x3"),
                (lambda: c.numpy(), TypeError, "can't convert SparseCsr layout tensor to numpy. Use Tensor.to_dense"),
                (lambda: lib.ones(3).to_sparse_csr(), IndexError, r"select\(\): index 1 out of range")]:
            with pytest.raises(error, match=phrase):
                call()
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments from the 'SparseCsrCPU' "
                                                  "backend.*to_sparse"):
        m.exp()
    np.testing.assert_array_equal(m.to_sparse().to_dense().numpy(), np.asarray(X, np.float32))


def test_csr_times_csr_is_csr():
    def run(lib):
        a = lib.sparse_csr_tensor(*CSR, (3, 3), requires_grad=True)
        b = lib.sparse_csr_tensor(*CSR, (3, 3), requires_grad=True)
        y = a @ b
        (y.to_dense() * lib.arange(9.0).reshape(3, 3)).sum().backward()
        return y, a.grad, b.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)
    for lib in (torch, tg):
        c, s = lib.tensor(X).to_sparse_csr(), lib.tensor(X).to_sparse()
        with pytest.raises(RuntimeError, match=r"addmm: computation on CPU is not implemented for SparseCsr \+ "
                                               "SparseCsr @ Sparse"):
            lib.mm(c, s)
        with pytest.raises(RuntimeError, match=r"addmm: computation on CPU is not implemented for Sparse \+ Sparse "
                                               "@ SparseCsr"):
            lib.mm(s, c)
