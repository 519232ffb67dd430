"""Sparse CSC matrices against PyTorch: construction, reprs, accessors, conversions between CSC, CSR, COO and
dense, transposes, products with dense and compressed tensors and their gradients, PyTorch's invariant errors
and refusals."""
import numpy as np
import pytest
import torch

import tapegrad as tg

X = [[0.0, 2.0, 0.0], [3.0, 0.0, 4.0], [0.0, 0.0, 0.0]]
CSC = ([0, 1, 2, 3], [1, 0, 1], [3.0, 2.0, 4.0])
D = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSC tensor support is in beta state",
                                        "ignore:Sparse invariant checks are implicitly disabled")


def _same(m, t):
    assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"


def _both(fn):
    return fn(torch), fn(tg)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(X).to_sparse_csc(),
    lambda lib: lib.tensor(X, dtype=lib.float64, requires_grad=True).to_sparse_csc(),
    lambda lib: lib.tensor(X, requires_grad=True).to_sparse().to_sparse_csc(),
    lambda lib: lib.tensor(X, requires_grad=True).to_sparse_csr().to_sparse_csc(),
    lambda lib: lib.tensor(X, requires_grad=True).to_sparse_csc().to_sparse_csr(),
    lambda lib: lib.tensor(X, requires_grad=True).to_sparse_csr().t(),
    lambda lib: lib.zeros(2, 3).to_sparse_csc(),
    lambda lib: lib.tensor([[1, 0], [0, 2]]).to_sparse_csc(),
    lambda lib: lib.tensor(X).to_sparse(layout=lib.sparse_csc),
    lambda lib: lib.tensor(X).to_sparse_csc().to_sparse(),
    lambda lib: lib.tensor(X).to_sparse_csc().to_sparse(layout=lib.sparse_csr),
    lambda lib: lib.tensor(X).to_sparse_csc().t(),
    lambda lib: lib.tensor(X).to_sparse_csc().t().t(),
    lambda lib: lib.sparse_coo_tensor([[1, 0, 1], [0, 0, 0]], [1.0, 2.0, 3.0], (2, 3)).to_sparse_csc(),
    lambda lib: lib.sparse_csc_tensor(*CSC, (3, 3), dtype=lib.float64, requires_grad=True),
    lambda lib: lib.sparse_csc_tensor(*CSC),
    lambda lib: lib.sparse_csc_tensor(*CSC, (3, 3), dtype=lib.float16),
])
def test_construction_and_repr(make):
    t, m = _both(make)
    _same(m, t)
    expected = {torch.sparse_csc: tg.sparse_csc, torch.sparse_csr: tg.sparse_csr, torch.sparse_coo: tg.sparse_coo}
    assert m.layout is expected[t.layout]
    assert (m.is_sparse, m.is_sparse_csr, m._nnz(), m.dim(), m.sparse_dim(), m.dense_dim(), tuple(m.shape)) == \
        (t.is_sparse, t.is_sparse_csr, t._nnz(), t.dim(), t.sparse_dim(), t.dense_dim(), tuple(t.shape))
    _same(m.to_dense(), t.to_dense())
    assert repr(tg.sparse_csc) == "tapegrad.sparse_csc"


def test_accessors_and_conversions():
    t, m = _both(lambda lib: lib.tensor(X).to_sparse_csc())
    for name in ("ccol_indices", "row_indices", "values", "to_dense", "sum"):
        _same(getattr(m, name)(), getattr(t, name)())
    _same(tg.sum(m), torch.sum(t))
    assert m.to_sparse_csc() is m and m.to_sparse(layout=tg.sparse_csc) is m
    assert m.to_sparse().is_coalesced() == t.to_sparse().is_coalesced()
    np.testing.assert_array_equal(m.to_sparse().to_dense().numpy(), np.asarray(X, np.float32))


def test_values_gradient():
    def run(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        v = x.to_sparse_csc().values()
        (v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return v, x.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("op", [lambda lib, c, d: c @ d, lambda lib, c, d: lib.mm(c, d),
                                lambda lib, c, d: lib.matmul(c, d), lambda lib, c, d: c.mm(d),
                                lambda lib, c, d: d.t() @ c, lambda lib, c, d: lib.mm(d.t(), c)])
def test_products_with_dense_and_gradients(op):
    def run(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        d = lib.tensor(D, dtype=lib.float64, requires_grad=True)
        y = op(lib, x.to_sparse_csc(), d)
        (y * lib.arange(6.0, dtype=lib.float64).reshape(y.shape)).sum().backward()
        leaf = lib.sparse_csc_tensor(*CSC, (3, 3), dtype=lib.float64, requires_grad=True)
        z = op(lib, leaf, d)
        z.sum().backward()
        return y, x.grad, d.grad, z, leaf.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


def test_sparse_mm_gradients():
    # torch.sparse.mm: dense @ CSC runs as (CSR @ dense^T)^T with a masked gradient; a CSC first operand's backward
    # is refused
    def run(lib):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        d = lib.tensor(D, dtype=lib.float64, requires_grad=True)
        y = lib.sparse.mm(d.t(), x.to_sparse_csc())
        (y * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return y, x.grad, d.grad, lib.sparse.mm(x.detach().to_sparse_csc(), d.detach())
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)
    for lib in (torch, tg):
        for make in (lambda: lib.tensor(X, dtype=lib.float64, requires_grad=True).to_sparse_csc(),
                     lambda: lib.sparse_csc_tensor(*CSC, (3, 3), dtype=lib.float64, requires_grad=True)):
            y = lib.sparse.mm(make(), lib.tensor(D, dtype=lib.float64))
            # dense @ CSR: PyTorch's first operand is the CSR's transpose, a CSC matrix
            z = lib.sparse.mm(lib.tensor(D, dtype=lib.float64).t(), make().detach().to_sparse_csr().requires_grad_())
            for out in (y, z):
                with pytest.raises(RuntimeError, match="sparse_addmm_sparse_backward: unsupported combination of "
                                                       "layouts, grad: Strided, mat1: SparseCsc, mat2: Strided"):
                    out.sum().backward()


def test_vector_product():
    t, m = _both(lambda lib: lib.sparse_csc_tensor(*CSC, (3, 3), dtype=lib.float64) @ lib.ones(3, dtype=lib.float64))
    _same(m, t)


@pytest.mark.parametrize("other", [lambda lib: lib.tensor(X).to_sparse_csc(),
                                   lambda lib: lib.tensor(X).to_sparse_csr()])
def test_compressed_times_compressed_is_csr(other):
    def run(lib):
        a = lib.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 0.0, 0.0]]).to_sparse_csc()
        b = other(lib)
        return a @ b, b @ a
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("args,phrase", [
    (([0, 1, 2], [1, 0, 1], [3.0, 2.0, 4.0]), r"ccol_indices.shape\[-1\] must be equal to the number of columns \+ 1"),
    (([0, 1, 2, 3], [1, 0, 5], [3.0, 2.0, 4.0]), "`0 <= row_indices < nrows` is not satisfied"),
    (([0, 2, 2, 3], [1, 0, 1], [3.0, 2.0, 4.0]), r"for all i = 1, \.\.\., ncols are sorted and distinct"),
    (([0, 1, 2, 3], [1, 0], [3.0, 2.0, 4.0]), r"row_indices.shape\[-1\] must be equal to nnz \(=3\)"),
    (([1, 1, 2, 3], [1, 0, 1], [3.0, 2.0, 4.0]), r"`ccol_indices\[..., 0\] == 0` is not satisfied"),
    (([0, 1, 2, 2], [1, 0, 1], [3.0, 2.0, 4.0]), r"`ccol_indices\[..., -1\] == nnz` is not satisfied"),
])
def test_invariants(args, phrase):
    # PyTorch checks them when asked; tapegrad always does
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match=phrase):
            lib.sparse_csc_tensor(*args, (3, 3), check_invariants=True)


def test_refusals():
    t, m = _both(lambda lib: lib.tensor(X).to_sparse_csc())
    for lib, c in ((torch, t), (tg, m)):
        layout_error = "expected sparse coordinate tensor layout but got SparseCsc"
        for call, error, phrase in [
                (lambda: c.indices(), RuntimeError, "indices " + layout_error),
                (lambda: c.crow_indices(), RuntimeError, "crow_indices expected sparse row compressed tensor layout "
                                                         "but got SparseCsc"),
                (lambda: c.col_indices(), RuntimeError, "col_indices expected sparse row compressed tensor layout"),
                (lambda: c.to_sparse_csr().ccol_indices(), RuntimeError,
                 "ccol_indices expected sparse column compressed tensor layout but got SparseCsr"),
                (lambda: c.to_sparse_csr().row_indices(), RuntimeError,
                 "row_indices expected sparse column compressed tensor layout but got SparseCsr"),
                (lambda: c @ lib.ones(2, 2), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(3x3"),
                (lambda: c @ c.to_sparse(), RuntimeError, r"addmm: computation on CPU is not implemented for "
                                                          r"SparseCsc \+ SparseCsc @ Sparse"),
                (lambda: c.numpy(), TypeError, "can't convert SparseCsc layout tensor to numpy. Use Tensor.to_dense"),
                (lambda: lib.ones(3).to_sparse_csc(), IndexError, r"Dimension out of range \(expected to be in range "
                                                                  r"of \[-1, 0\], but got 1\)")]:
            with pytest.raises(error, match=phrase):
                call()
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments from the 'SparseCscCPU' "
                                                  "backend.*to_sparse"):
        m.exp()


# ---- block layouts: BSR and BSC ---------------------------------------------------------------------------------

A = [[0.0, 0.0, 1.0, 2.0], [0.0, 0.0, 3.0, 4.0], [5.0, 0.0, 0.0, 0.0], [0.0, 6.0, 0.0, 0.0]]


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(A).to_sparse_bsr((2, 2)),
    lambda lib: lib.tensor(A).to_sparse_bsr(2),
    lambda lib: lib.tensor(A).to_sparse_bsr((1, 2)),
    lambda lib: lib.tensor(A).to_sparse_bsc((2, 1)),
    lambda lib: lib.tensor(A).to_sparse_bsc((2, 2)),
    lambda lib: lib.tensor(A, dtype=lib.float64, requires_grad=True).to_sparse_bsr((2, 2)),
    lambda lib: lib.tensor(A, dtype=lib.float64, requires_grad=True).to_sparse_bsc((2, 2)),
    lambda lib: lib.tensor(A).to_sparse(layout=lib.sparse_bsr, blocksize=(2, 2)),
    lambda lib: lib.tensor(A).to_sparse(layout=lib.sparse_bsc, blocksize=(4, 2)),
    lambda lib: lib.tensor(A).to_sparse().to_sparse_bsr((2, 2)),
    lambda lib: lib.tensor(A).to_sparse_csr().to_sparse_bsr((2, 2)),
    lambda lib: lib.tensor(A).to_sparse_bsr((2, 2)).to_sparse_bsc((2, 2)),
    lambda lib: lib.tensor(A).to_sparse_bsr((2, 2)).t(),
    lambda lib: lib.tensor(A).to_sparse_bsc((1, 2)).t(),
    lambda lib: lib.tensor(A).to_sparse_bsr((2, 2)).to_sparse(),
    lambda lib: lib.zeros(2, 4).to_sparse_bsr((2, 2)),
])
def test_block_construction_and_repr(make):
    t, m = _both(make)
    _same(m, t)
    expected = {torch.sparse_bsr: tg.sparse_bsr, torch.sparse_bsc: tg.sparse_bsc, torch.sparse_coo: tg.sparse_coo}
    assert m.layout is expected[t.layout]
    assert (m.is_sparse, m.is_sparse_csr, m._nnz(), m.dim(), m.sparse_dim(), m.dense_dim(), tuple(m.shape)) == \
        (t.is_sparse, t.is_sparse_csr, t._nnz(), t.dim(), t.sparse_dim(), t.dense_dim(), tuple(t.shape))
    _same(m.to_dense(), t.to_dense())
    if t.layout != torch.sparse_coo:
        names = ("crow_indices", "col_indices") if t.layout == torch.sparse_bsr else ("ccol_indices", "row_indices")
        for name in names + ("values", "sum"):
            _same(getattr(m, name)(), getattr(t, name)())
    assert repr(tg.sparse_bsr) == "tapegrad.sparse_bsr" and repr(tg.sparse_bsc) == "tapegrad.sparse_bsc"


@pytest.mark.parametrize("layout", ["bsr", "bsc"])
def test_block_gradients_through_to_dense_and_values(layout):
    def run(lib):
        x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        b = getattr(x, f"to_sparse_{layout}")((2, 2))
        (b.to_dense() * lib.arange(16.0, dtype=lib.float64).reshape(4, 4)).sum().backward()
        y = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        v = getattr(y, f"to_sparse_{layout}")((2, 2)).values()
        (v * lib.arange(8.0, dtype=lib.float64).reshape(2, 2, 2)).sum().backward()
        return x.grad, v, y.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


def test_bsr_times_dense():
    # torch.mm's gradient of the BSR operand is dense; the dense operand's gradient PyTorch cannot compute
    def run(lib):
        d = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], dtype=lib.float64)
        x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        y = x.to_sparse_bsr((2, 2)) @ d
        (y * lib.arange(8.0, dtype=lib.float64).reshape(4, 2)).sum().backward()
        leaf = lib.tensor(A, dtype=lib.float64).to_sparse_bsr((2, 2)).requires_grad_()
        z = lib.mm(leaf, d)
        z.sum().backward()
        return y, x.grad, z, leaf.grad, leaf.detach() @ lib.ones(4, dtype=lib.float64)
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)
    for lib in (torch, tg):
        y = lib.tensor(A).to_sparse_bsr((2, 2)) @ lib.ones(4, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"addmm: computation on CPU is not implemented for Strided \+ "
                                               "SparseBsc @ Strided"):
            y.sum().backward()


def test_block_refusals():
    for lib in (torch, tg):
        a = lib.tensor(A)
        b, c = a.to_sparse_bsr((2, 2)), a.to_sparse_bsc((2, 2))
        for call, error, phrase in [
                (lambda: a.to_sparse_bsr((3, 3)), RuntimeError, r"dense_to_sparse_bsr: tensor sparse size \(4,4\) must "
                                                                r"be divisible by given blocksize \(3,3\)"),
                (lambda: a.to_sparse(layout=lib.sparse_bsr), RuntimeError, "dense_to_sparse: conversion from Strided "
                                                                           "to SparseBsr without blocksize argument"),
                (lambda: lib.ones(4).to_sparse_bsr((2, 2)), IndexError, r"Dimension out of range \(expected to be in "
                                                                        r"range of \[-1, 0\], but got -2\)"),
                (lambda: b.to_sparse_csr(), RuntimeError, "sparse_compressed_to_sparse_csr: expected SparseCsr or "
                                                          "SparseCsc layout but got SparseBsr"),
                (lambda: b.ccol_indices(), RuntimeError, "ccol_indices expected sparse column compressed tensor "
                                                         "layout but got SparseBsr"),
                (lambda: c.crow_indices(), RuntimeError, "crow_indices expected sparse row compressed tensor layout "
                                                         "but got SparseBsc"),
                (lambda: lib.ones(2, 4) @ b, RuntimeError, r"addmm: computation on CPU is not implemented for Strided "
                                                           r"\+ Strided @ SparseBsr"),
                (lambda: c @ lib.ones(4, 2), RuntimeError, r"addmm: computation on CPU is not implemented for Strided "
                                                           r"\+ SparseBsc @ Strided"),
                (lambda: b.numpy(), TypeError, "can't convert SparseBsr layout tensor to numpy")]:
            with pytest.raises(error, match=phrase):
                call()


V = [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]


@pytest.mark.parametrize("layout", ["bsr", "bsc"])
def test_block_constructors(layout):
    def run(lib):
        make = getattr(lib, f"sparse_{layout}_tensor")
        leaf = make([0, 1, 2], [1, 0], lib.tensor(V, dtype=lib.float64), (4, 4), requires_grad=True)
        wide = make([0, 1, 2], [1, 0], V, (4, 6) if layout == "bsr" else (6, 4))
        return leaf, make([0, 1, 2], [1, 0], V), wide.to_dense(), leaf.values()
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("args,phrase", [
    (([0, 1], [1, 0], V, (4, 4)), r"_indices.shape\[-1\] must be equal to the number of (row|column) blocks \+ 1 "
                                  r"\(=3\), but got 2"),
    (([0, 1, 2], [1, 2], V, (4, 4)), r"`0 <= (col|row)_indices < n(cols|rows)` is not satisfied"),
    (([0, 1, 2], [1, 0], V, (4, 5)), r"tensor shape\[1\] \(=5\) must be divisible with blocksize\[1\] \(=2\)"),
    (([0, 2, 2], [1, 0], V, (4, 4)), "are sorted and distinct along the last dimension values"),
    (([0, 1, 2], [1], V, (4, 4)), r"_indices.shape\[-1\] must be equal to nnz \(=2\)"),
])
@pytest.mark.parametrize("layout", ["bsr", "bsc"])
def test_block_invariants(args, phrase, layout):
    errors = []
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match=phrase) as error:
            getattr(lib, f"sparse_{layout}_tensor")(*args, check_invariants=True)
        errors.append(str(error.value))
    assert errors[1].startswith(errors[0])


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
def test_elementwise_ops_on_values(layout):
    def run(lib):
        x = lib.tensor([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, -4.0, 0.0]], requires_grad=True)
        s = getattr(x, f"to_sparse_{layout}")(*([(1, 2)] if layout[0] == "b" else []))
        return [-s, s.abs(), lib.sin(s), s * 2, 3 * s, s.relu(), s.abs().sqrt()]   # (their backward fails in PyTorch)
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)
