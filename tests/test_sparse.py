"""Sparse COO tensors against PyTorch: construction, printing, coalescing, conversions, sparse.mm / mm / @,
sparse.sum, and the sparse gradients (masked to the pattern) of sparse.mm, to_dense and sparse.sum."""
import numpy as np
import pytest
import torch

import tapegrad as tg

IDX = [[0, 1, 1], [2, 0, 2]]
DUP = [[1, 0, 1], [0, 0, 0]]


def _both(fn):
    return fn(torch), fn(tg)


def _repr_equal(t, m):
    assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"


def _coo(lib, idx=IDX, vals=(3.0, 4.0, 5.0), size=(2, 3), **kw):
    return lib.sparse_coo_tensor(idx, vals, size, check_invariants=True, **kw)


def _close(m, t, **kw):
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), **kw)


@pytest.mark.parametrize("make", [
    lambda lib: _coo(lib),
    lambda lib: _coo(lib, requires_grad=True),
    lambda lib: _coo(lib, vals=[1, 2, 3]),
    lambda lib: _coo(lib, dtype=lib.float64),
    lambda lib: _coo(lib, idx=[[0, 2]], vals=[[1.0, 2.0], [3.0, 4.0]], size=(3, 2)),
    lambda lib: lib.sparse_coo_tensor(IDX, [1.0, 2.0, 3.0], check_invariants=True),
    lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3), check_invariants=True),
    lambda lib: lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(),
    lambda lib: lib.tensor([[0, 2], [0, 0]]).to_sparse(),
    lambda lib: lib.ones(2, 3, dtype=lib.float64).to_sparse(1),
    lambda lib: _coo(lib, idx=DUP, size=(2, 2)).coalesce(),
])
def test_construction_and_repr(make):
    t, m = _both(make)
    _repr_equal(t, m)
    assert m.is_sparse and m.layout is tg.sparse_coo and repr(tg.sparse_coo) == "tapegrad.sparse_coo"
    assert (m.shape, m.dim(), m.sparse_dim(), m.dense_dim(), m._nnz(), m.is_coalesced(), m.dtype.name) == \
        (tuple(t.shape), t.dim(), t.sparse_dim(), t.dense_dim(), t._nnz(), t.is_coalesced(), str(t.dtype)[6:])
    assert (m.requires_grad, m.is_leaf) == (t.requires_grad, t.is_leaf)
    assert isinstance(m, tg.Tensor)
    np.testing.assert_array_equal(m._indices().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(m.to_dense().detach().numpy(), t.to_dense().detach().numpy())


def test_requires_grad_belongs_to_the_sparse_tensor():
    for lib in (torch, tg):
        v = lib.tensor([1.0, 2.0, 3.0])
        s = lib.sparse_coo_tensor(IDX, v, (2, 3), check_invariants=True).requires_grad_()
        assert s.requires_grad and s.is_leaf and not v.requires_grad


def test_dense_tensors_are_strided():
    x = tg.ones(2)
    assert x.layout is tg.strided and not x.is_sparse and x.to_dense() is x
    assert repr(tg.strided) == "tapegrad.strided"


def test_coalesce():
    t, m = _both(lambda lib: _coo(lib, idx=DUP, size=(2, 2)))
    assert not m.is_coalesced()
    for lib, s in ((torch, t), (tg, m)):
        with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
            s.indices()
        with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
            s.values()
    c, mc = t.coalesce(), m.coalesce()
    _repr_equal(c, mc)
    assert mc.is_coalesced() and mc.coalesce() is mc
    np.testing.assert_array_equal(mc.indices().numpy(), c.indices().numpy())
    np.testing.assert_array_equal(mc.values().numpy(), c.values().numpy())
    # nnz <= 1 is coalesced; is_coalesced=True is believed
    for nnz in (0, 1, 2):
        t1, m1 = _both(lambda lib: lib.sparse_coo_tensor(lib.zeros(1, nnz, dtype=lib.int64), lib.ones(nnz), (3,),
                                                                          check_invariants=True))
        assert m1.is_coalesced() == t1.is_coalesced()


def _grad_pair(make_sparse, op, dense_shape=(3, 2)):
    """op(S, D).sum() backward in both; returns the (torch, tapegrad) pairs for S.grad and D.grad."""
    d = torch.linspace(-1, 2, int(np.prod(dense_shape)), dtype=torch.float64).reshape(dense_shape)
    out = []
    for lib, dense in ((torch, d.clone()), (tg, tg.tensor(d.numpy()))):
        s = make_sparse(lib)
        dense.requires_grad_()
        y = op(lib, s, dense)
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        out.append((s, y, dense))
    (ts, ty, td), (ms, my, md) = out
    _close(my, ty, rtol=1e-12)
    _close(md.grad, td.grad, rtol=1e-12)
    return ts, ms


@pytest.mark.parametrize("idx,size", [(IDX, (2, 3)), (DUP, (2, 3))])
def test_sparse_mm_gradients(idx, size):
    make = lambda lib: _coo(lib, idx=idx, size=size, dtype=lib.float64, requires_grad=True)
    ts, ms = _grad_pair(make, lambda lib, s, d: lib.sparse.mm(s, d))
    _repr_equal(ts.grad, ms.grad)
    assert ms.grad.is_sparse and ms.grad.layout is tg.sparse_coo


def test_mm_matmul_spmm_with_a_sparse_left_operand():
    make = lambda lib: _coo(lib, dtype=lib.float64, requires_grad=True)
    for op, name in ((lambda lib, s, d: lib.mm(s, d), "MmBackward0"), (lambda lib, s, d: s @ d, "MmBackward0"),
                     (lambda lib, s, d: lib.matmul(s, d), "MmBackward0"), (lambda lib, s, d: s.mm(d), "MmBackward0"),
                     (lambda lib, s, d: lib.spmm(s, d), "MmBackward0"),
                     (lambda lib, s, d: lib.sparse.mm(s, d), "SparseAddmmBackward0")):
        ts, ms = _grad_pair(make, op)
        # torch.mm gives a sparse leaf the dense product grad @ dense^T, torch.sparse.mm the sparse masked one
        assert ms.grad.is_sparse == ts.grad.is_sparse
        _repr_equal(ts.grad, ms.grad)
        assert type(op(tg, ms, tg.ones(3, 2, dtype=tg.float64)).grad_fn).__name__ == name
    # both: the dense gradient plus the sparse one
    d = torch.arange(6.0, dtype=torch.float64).reshape(3, 2)
    t, m = _both(make)
    for lib, s, dense in ((torch, t, d), (tg, m, tg.tensor(d.numpy()))):
        lib.sparse.mm(s, dense).sum().backward()
        lib.mm(s, dense).sum().backward()
    _repr_equal(t.grad, m.grad)
    m.grad = None
    assert m.grad is None
    # a dense vector on the right
    for op in (lambda lib, s, v: s @ v, lambda lib, s, v: lib.mv(s, v), lambda lib, s, v: s.mv(v)):
        ts, ms = _grad_pair(make, op, dense_shape=(3,))
        assert not ms.grad.is_sparse and not ts.grad.is_sparse
        _close(ms.grad, ts.grad, rtol=1e-12)   # (PyTorch's outer product keeps a -0.0 that XLA's does not)
        assert type(op(tg, ms, tg.ones(3, dtype=tg.float64)).grad_fn).__name__ == "MvBackward0"


def test_sparse_values_that_require_grad():
    # sparse_coo_tensor of values with a history: the values get the masked gradient
    v = torch.tensor([3.0, 4.0, 5.0], dtype=torch.float64, requires_grad=True)
    mv = tg.tensor(v.detach().numpy(), requires_grad=True)
    ts = torch.sparse_coo_tensor(IDX, v * 2, (2, 3), check_invariants=True)
    ms = tg.sparse_coo_tensor(IDX, mv * 2, (2, 3))
    _repr_equal(ts, ms)
    assert not ms.is_leaf
    d = torch.arange(6.0, dtype=torch.float64).reshape(3, 2)
    torch.mm(ts, d).sum().backward(), tg.mm(ms, tg.tensor(d.numpy())).sum().backward()
    _close(mv.grad, v.grad, rtol=1e-12)


def test_to_sparse_gradients_reach_the_dense_tensor():
    x = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    mx = tg.tensor(x.detach().numpy(), requires_grad=True)
    ts, ms = x.to_sparse(), mx.to_sparse()
    _repr_equal(ts, ms)
    d = torch.arange(6.0, dtype=torch.float64).reshape(3, 2)
    torch.sparse.mm(ts, d).pow(2).sum().backward()
    tg.sparse.mm(ms, tg.tensor(d.numpy())).pow(2).sum().backward()
    _close(mx.grad, x.grad, rtol=1e-12)
    # torch.mm passes the dense gradient to x unmasked
    torch.mm(ts, d).pow(2).sum().backward()
    tg.mm(ms, tg.tensor(d.numpy())).pow(2).sum().backward()
    _close(mx.grad, x.grad, rtol=1e-12)


def test_to_dense_gradient_is_sparse():
    for idx in (IDX, DUP):
        w = torch.arange(6.0).reshape(2, 3)
        t, m = _both(lambda lib: _coo(lib, idx=idx, requires_grad=True))
        (t.to_dense() * w).sum().backward()
        (m.to_dense() * tg.tensor(w.numpy())).sum().backward()
        _repr_equal(t.grad, m.grad)
        t, m = t.to_dense(), m.to_dense()
        _repr_equal(t, m)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
def test_sparse_sum(dim):
    def run(lib):
        s = _coo(lib, idx=DUP, size=(2, 3), dtype=lib.float64, requires_grad=True)
        out = lib.sparse.sum(s) if dim is None else lib.sparse.sum(s, dim)
        dense = out.to_dense() if out.is_sparse else out
        (dense * (lib.arange(dense.numel(), dtype=dense.dtype).reshape(dense.shape) + 1)).sum().backward()
        return s, out
    (ts, tout), (ms, mout) = _both(run)
    if tout.is_sparse:
        _repr_equal(tout, mout)
    else:
        _close(mout, tout, rtol=1e-12)
    _repr_equal(ts.grad, ms.grad)


def test_sparse_sum_hybrid_and_tensor_sum():
    def run(lib):
        s = _coo(lib, idx=[[0, 1]], vals=[[1.0, 2.0], [3.0, 4.0]], size=(3, 2))
        return lib.sparse.sum(s), lib.sparse.sum(s, 0), lib.sparse.sum(s, 1), s.sum(), lib.sum(s)
    for t, m in zip(*_both(run)):
        if t.is_sparse:
            _repr_equal(t, m)
        else:
            _close(m, t)


def test_values_ops():
    for fn in (lambda s: -s, lambda s: s * 2, lambda s: 2 * s, lambda s: s / 4, lambda s: s.t(),
               lambda s: s.double(), lambda s: s.detach(), lambda s: s.clone()):
        t, m = _both(lambda lib: fn(_coo(lib)))
        _repr_equal(t, m)


@pytest.mark.parametrize("name", ["abs", "sin", "tanh", "sqrt", "relu", "sign", "expm1", "floor", "square", "neg",
                                  "isnan", "erf"])
def test_unary_ops_that_keep_zeros(name):
    # nonlinear ones coalesce first (duplicates summed before the op), as PyTorch's
    for call in (lambda lib, s: getattr(lib, name)(s), lambda lib, s: getattr(s, name)()):
        t, m = _both(lambda lib: call(lib, _coo(lib, idx=DUP, vals=(1.0, 0.25, 0.5), size=(2, 2))))
        _repr_equal(t, m)
        assert m.is_coalesced() == t.is_coalesced()
    # and gradients reach the values where PyTorch has a sparse backward (sin's needs cos, which it has not)
    def run(lib):
        s = _coo(lib, idx=IDX, vals=(0.5, 0.25, 0.75), dtype=lib.float64, requires_grad=True)
        out = getattr(lib, name)(s)
        if out.dtype.is_floating_point:
            out.to_dense().pow(2).sum().backward()
        return s.grad
    try:
        t = run(torch)
    except (NotImplementedError, RuntimeError):
        return
    if t is not None:   # values compared densely: PyTorch's zero gradients (floor's) have no entries
        _close(run(tg).to_dense(), t.to_dense(), rtol=1e-12)


def test_errors_point_at_to_dense():
    t, m = _both(_coo)
    for name, call in (("exp", lambda lib, s: lib.exp(s)), ("exp", lambda lib, s: s.exp()),
                       ("view", lambda lib, s: s.view(6)), ("sigmoid", lambda lib, s: s.sigmoid())):
        phrase = f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend"
        with pytest.raises(NotImplementedError, match=phrase):
            call(torch, t)
        with pytest.raises(NotImplementedError, match=phrase + ".*to_dense"):
            call(tg, m)
    for lib, s in ((torch, t), (tg, m)):
        with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy. Use Tensor.to_dense"):
            s.numpy()
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            s + lib.ones(2, 3)
        with pytest.raises(RuntimeError, match="addmm: Argument #3 \\(dense\\): Expected dim 0 size 3, got 2"):
            lib.sparse.mm(s, lib.ones(2, 2))
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            lib.mm(s, lib.ones(3, 2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
            lib.sparse_coo_tensor(IDX, [1.0, 2.0], (2, 3), check_invariants=True)
        with pytest.raises(RuntimeError, match="indices must be sparse_dim x nnz"):
            lib.sparse_coo_tensor([0, 1], [1.0, 2.0], (2, 3), check_invariants=True)
        with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 2 but found "
                                               "index 5"):
            lib.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (2,), check_invariants=True)
        with pytest.raises(RuntimeError, match="'len\\(size\\) == sparse_dim \\+ dense_dim' is not satisfied"):
            lib.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 3, 4), check_invariants=True)


def test_spmm_finite_differences():
    idx = tg.tensor(DUP)

    def f(values, dense):
        return tg.sparse.mm(tg.sparse_coo_tensor(idx, values, (2, 3)), dense)

    v = tg.tensor([0.3, -1.2, 0.7], dtype=tg.float64, requires_grad=True)
    d = tg.tensor(np.linspace(-1, 1, 6).reshape(3, 2), dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(f, (v, d))
    # coalesce and sparse.sum over a fixed pattern (to_sparse's pattern moves with the values, so it has none)
    assert tg.autograd.gradcheck(lambda values: tg.sparse.sum(tg.sparse_coo_tensor(idx, values, (2, 3)).coalesce(),
                                                              1).to_dense(), (v,))
