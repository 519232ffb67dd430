"""Sparse COO arithmetic against PyTorch: sparse +/- sparse (merged entry lists, the coalesced flag), dense +/-
sparse, sparse @ sparse, dense @ sparse, Tensor.sum(keepdim=True); values, layouts, dtypes, reprs, grad_fn
names, errors, and gradients -- including those PyTorch gives a leaf or a to_sparse() origin on patterns
other than its own."""
import numpy as np
import pytest
import torch

import tapegrad as tg

A = ([[1, 0, 1], [0, 0, 2]], [3.0, 4.0, 5.0])      # (1, 0), (0, 0), (1, 2): uncoalesced order
DUP = ([[1, 0, 1], [0, 0, 0]], [3.0, 4.0, 5.0])    # (1, 0) twice
B = ([[1, 1], [0, 2]], [1.0, 2.0])
RIGHT = ([[0, 2, 2, 1], [1, 0, 1, 1]], [1.0, 2.0, 3.0, 4.0])   # a 3 x 2 operand


def _coo(lib, entries, size=(2, 3), coalesce=False, requires_grad=True, dtype=None):
    s = lib.sparse_coo_tensor(*entries, size, dtype=dtype or lib.float64, check_invariants=True)
    return (s.coalesce() if coalesce else s).requires_grad_(requires_grad)


def _weights(lib, shape):
    return lib.arange(1.0, 1.0 + int(np.prod(shape)), dtype=lib.float64).reshape(shape)


def _same(m, t):
    """Same repr (values, pattern, layout, dtype, grad_fn), and for sparse tensors the same coalesced flag."""
    if t is None:
        assert m is None
        return
    assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"
    if t.layout == torch.sparse_coo:
        assert m.is_coalesced() == t.is_coalesced()


def _same_grad(m, t):
    """A gradient: same repr (pattern, values, layout; tapegrad's coalesced flag may differ, see README)."""
    assert (m is None) == (t is None)
    if t is not None:
        assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"


def _both(fn):
    return fn(torch), fn(tg)


CONSUMERS = {
    "to_dense": lambda lib, c: (c.to_dense() * _weights(lib, c.shape)).sum(),
    "sparse.mm": lambda lib, c: lib.sparse.mm(c, _weights(lib, (3, 2))).sum(),
    "mm": lambda lib, c: lib.mm(c, _weights(lib, (3, 2))).pow(2).sum(),
}


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
@pytest.mark.parametrize("coalesced", [(False, False), (True, True), (True, False)])
@pytest.mark.parametrize("op", ["add", "sub", "add_alpha", "sub_alpha", "operator"])
def test_sparse_plus_sparse(op, coalesced, consumer):
    def run(lib):
        a, b = _coo(lib, DUP, coalesce=coalesced[0]), _coo(lib, B, coalesce=coalesced[1])
        c = {"add": lambda: lib.add(a, b), "sub": lambda: a.sub(b), "add_alpha": lambda: a.add(b, alpha=2),
             "sub_alpha": lambda: lib.sub(a, b, alpha=3), "operator": lambda: a - b + b}[op]()
        CONSUMERS[consumer](lib, c).backward()
        return c, a.grad, b.grad
    (tc, ta, tb), (mc, ma, mb) = _both(run)
    _same(mc, tc)
    _same_grad(ma, ta)
    _same_grad(mb, tb)


@pytest.mark.parametrize("make", [
    lambda lib: _coo(lib, A, requires_grad=False, dtype=lib.float32) + _coo(lib, B, requires_grad=False,
                                                                            dtype=lib.int64),
    lambda lib: _coo(lib, A, requires_grad=False, dtype=lib.int64) - _coo(lib, B, requires_grad=False,
                                                                          dtype=lib.int64),
    lambda lib: lib.add(_coo(lib, A, requires_grad=False), _coo(lib, ([[1, 0], [2, 0]], [7.0, 8.0])), alpha=0.5),
    lambda lib: _coo(lib, (lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0))) + _coo(lib, B),
    lambda lib: lib.sub(_coo(lib, (lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0))), _coo(lib, A, coalesce=True),
                        alpha=3),
    lambda lib: _coo(lib, A) - _coo(lib, (lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0))),
    lambda lib: _coo(lib, ([[1, 0]], [[1.0, 2.0], [3.0, 4.0]]), (2, 2))
    + _coo(lib, ([[1, 1]], [[1.0, 2.0], [3.0, 4.0]]), (2, 2)),
    lambda lib: _coo(lib, ([[0]], [1.0]), (1, ), coalesce=True) + _coo(lib, ([[0]], [-1.0]), (1,), coalesce=True),
])
def test_sparse_plus_sparse_dtypes_hybrids_and_empty_operands(make):
    _same(*reversed(_both(make)))


def test_add_errors():
    for lib in (torch, tg):
        a = _coo(lib, A)
        for call, error, phrase in [
                (lambda: a + _coo(lib, B, (3, 3)), RuntimeError,
                 r"add: expected sizes of 'self' and 'other' to match, but \[2, 3\] != \[3, 3\]"),
                (lambda: a + _coo(lib, ([[0]], [[1.0, 2.0, 3.0]])), RuntimeError,
                 "add: expected 'self' and 'other' to have same density, but 'self' has 2 sparse dimensions while "
                 "'other' has 1 sparse dimensions"),
                (lambda: a + lib.ones(2, 3), RuntimeError, r"add\(sparse, dense\) is not supported"),
                (lambda: a - 1, RuntimeError, r"add\(sparse, dense\) is not supported"),
                (lambda: lib.ones(3, 2) + a, RuntimeError,
                 r"add: expected 'self' and 'other' to have same size, but self has size \[3, 2\] while other has "
                 r"size \[2, 3\] \(FYI: dense-sparse addition does not currently support broadcasting\)"),
                (lambda: lib.add(_coo(lib, A, requires_grad=False, dtype=lib.int64),
                                 _coo(lib, A, requires_grad=False, dtype=lib.int64), alpha=0.5), RuntimeError,
                 "For integral input tensors, argument alpha must not be a floating point number"),
        ]:
            with pytest.raises(error, match=phrase):
                call()


def test_add_gradients_reach_values_and_to_sparse_origins():
    def run(lib):
        v = lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]], dtype=lib.float64, requires_grad=True)
        a, b, d = lib.sparse_coo_tensor(DUP[0], v * 1, (2, 3)), _coo(lib, B), _coo(lib, ([[0], [1]], [7.0]))
        c = lib.add(x.to_sparse() + b, d, alpha=-2) + a
        (c.to_dense() * _weights(lib, (2, 3))).sum().backward()
        return c, v.grad, x.grad, b.grad, d.grad
    theirs, ours = _both(run)
    _same(ours[0], theirs[0])
    for m, t in zip(ours[1:], theirs[1:]):
        _same_grad(m, t)


@pytest.mark.parametrize("op", ["add", "sub", "add_alpha"])
def test_dense_plus_sparse(op):
    def run(lib):
        x, s = _weights(lib, (2, 3)).requires_grad_(), _coo(lib, A)
        y = {"add": lambda: x + s, "sub": lambda: x - s, "add_alpha": lambda: lib.add(x, s, alpha=2)}[op]()
        (y * y).sum().backward()
        return y, x.grad, s.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("fn", ["sparse.mm", "mm", "matmul", "@"])
@pytest.mark.parametrize("coalesced", [(False, False), (True, True), (False, True)])
def test_sparse_times_sparse(fn, coalesced):
    def run(lib):
        a, b = _coo(lib, A, coalesce=coalesced[0]), _coo(lib, RIGHT, (3, 2), coalesce=coalesced[1])
        c = {"sparse.mm": lib.sparse.mm, "mm": lib.mm, "matmul": lib.matmul, "@": lambda x, y: x @ y}[fn](a, b)
        (c.to_dense() * _weights(lib, (2, 2))).sum().backward()
        return c, a.grad, b.grad
    (tc, ta, tb), (mc, ma, mb) = _both(run)
    _same(mc, tc)
    _same_grad(ma, ta)
    _same_grad(mb, tb)


@pytest.mark.parametrize("fn", ["sparse.mm", "mm"])
def test_sparse_times_sparse_operands_with_history(fn):
    def run(lib):
        v = lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.0, 2.0], [3.0, 0.0], [0.0, 1.0]], dtype=lib.float64, requires_grad=True)
        mm = lib.sparse.mm if fn == "sparse.mm" else lib.mm
        c = mm(lib.sparse_coo_tensor(A[0], v * 1, (2, 3)), x.to_sparse())
        (c.to_dense() * _weights(lib, (2, 2))).sum().backward()
        return c, v.grad, x.grad
    (tc, tv, tx), (mc, mv, mx) = _both(run)
    _same(mc, tc)
    _same_grad(mv, tv)
    _same_grad(mx, tx)


def test_sparse_times_sparse_keeps_cancelled_entries_and_refuses_what_pytorch_refuses():
    _same(*reversed(_both(lambda lib: _coo(lib, ([[0, 0], [0, 1]], [1.0, 1.0]), (1, 2)) @
                                      _coo(lib, ([[0, 1], [0, 0]], [1.0, -1.0]), (2, 1)))))
    _same(*reversed(_both(lambda lib: lib.sparse.mm(_coo(lib, (lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0)),
                                                         (4, 2)), _coo(lib, A)))))
    for lib in (torch, tg):
        a = _coo(lib, A)
        for call, phrase in [
                (lambda: a @ a, r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"),
                (lambda: lib.mm(a, _coo(lib, RIGHT, (3, 2), dtype=lib.float32)),
                 "mat1 dtype Double does not match mat2 dtype Float"),
                (lambda: lib.mm(_coo(lib, ([[0, 1]], [[1.0, 2.0], [3.0, 4.0]]), (2, 2)), _coo(lib, RIGHT, (3, 2))),
                 "sparse_sparse_matmul_cpu: scalar values expected, got 1D values")]:
            with pytest.raises(RuntimeError, match=phrase):
                call()


@pytest.mark.parametrize("fn", ["mm", "matmul", "@", "sparse.mm"])
@pytest.mark.parametrize("operand", ["leaf", "values", "to_sparse", "sum"])
def test_dense_times_sparse(fn, operand):
    def run(lib):
        d = _weights(lib, (2, 2)).requires_grad_()
        v = lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 1.0]], dtype=lib.float64, requires_grad=True)
        s, wants = {"leaf": lambda: (_coo(lib, A),) * 2,
                    "values": lambda: (lib.sparse_coo_tensor(A[0], v * 1, (2, 3)), v),
                    "to_sparse": lambda: (x.to_sparse(), x),
                    "sum": lambda: (_coo(lib, A) + _coo(lib, B), None)}[operand]()
        y = {"mm": lib.mm, "matmul": lib.matmul, "@": lambda p, q: p @ q, "sparse.mm": lib.sparse.mm}[fn](d, s)
        (y * _weights(lib, (2, 3))).sum().backward()
        return y, d.grad, None if wants is None else wants.grad
    (ty, td, tw), (my, md, mw) = _both(run)
    _same(my, ty)
    _same(md, td)
    if fn == "sparse.mm" and operand == "leaf":
        # PyTorch transposes twice and lists the same entries in the transposed order
        _same(mw.to_dense(), tw.to_dense())
    else:
        _same_grad(mw, tw)


@pytest.mark.parametrize("make", [
    lambda lib: _weights(lib, (2,)) @ _coo(lib, A, requires_grad=False),
    lambda lib: _weights(lib, (3, 2, 2)) @ _coo(lib, A, requires_grad=False),
    lambda lib: lib.mm(_weights(lib, (3, 2)).float(), _coo(lib, A, requires_grad=False, dtype=lib.float32)),
])
def test_dense_times_sparse_shapes(make):
    _same(*reversed(_both(make)))


def test_dense_times_sparse_errors():
    for lib in (torch, tg):
        s = _coo(lib, A, requires_grad=False)
        for call, phrase in [
                (lambda: _weights(lib, (3,)) @ s, "addmm: Argument #3 \\(dense\\): Expected dim 0 size 2, got 3"),
                (lambda: _weights(lib, (2, 2)).float() @ s, "expected scalar type Double but found Float"),
                (lambda: lib.mm(_weights(lib, (2, 2)), _coo(lib, ([[0, 1]], [[1.0, 2.0], [3.0, 4.0]]), (2, 2))),
                 "sparse transpose: transposed dimensions must be sparse Got sparse_dim: 1, d0: 0, d1: 1")]:
            with pytest.raises(RuntimeError, match=phrase):
                call()


SUM_INPUTS = {
    "2-d": (A, (2, 3)),
    "duplicates": (DUP, (2, 3)),
    "3-d": (([[0, 1, 1, 0], [2, 0, 2, 2], [0, 0, 1, 1]], [3.0, 4.0, 5.0, 1.0]), (2, 3, 2)),
    "hybrid": (([[0, 1, 0]], [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]], [[9.0, 10.0], [11.0, 12.0]]]),
               (3, 2, 2)),
}


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1), (0, 2), (1, 2), None])
@pytest.mark.parametrize("name", sorted(SUM_INPUTS))
def test_sum_keepdim(name, dim):
    entries, size = SUM_INPUTS[name]
    if dim in ((0, 2), (1, 2)) and len(size) == 2:
        return

    def run(lib):
        s = _coo(lib, entries, size)
        out = s.sum(dim, keepdim=True) if dim is not None else lib.sum(s, tuple(range(len(size))), keepdim=True)
        dense = out.to_dense() if out.is_sparse else out
        try:
            (dense * _weights(lib, tuple(dense.shape))).sum().backward()
        except RuntimeError as e:
            return out, str(e)
        return out, s.grad
    (tout, tgrad), (mout, mgrad) = _both(run)
    _same(mout, tout)
    if isinstance(tgrad, str):   # PyTorch's backward cannot expand a sparse gradient
        assert isinstance(mgrad, str) and mgrad.startswith(tgrad), mgrad
    else:
        _same(mgrad, tgrad)


def test_sum_without_keepdim_coalesces_and_gives_a_dense_gradient():
    entries, size = SUM_INPUTS["hybrid"]
    for dim in (1, (1, 2), 0):
        _same(*reversed(_both(lambda lib: _coo(lib, entries, size, requires_grad=False).sum(dim))))

    def run(lib):
        s = _coo(lib, A)
        s.sum().backward()
        return s.grad
    _same(*reversed(_both(run)))


def test_gradients_outside_the_pattern_accumulate_over_backwards():
    def run(lib):
        a, b = _coo(lib, DUP), _coo(lib, B)
        seen = []
        for step in range(4):
            loss = (lib.add(a, b, alpha=2).to_dense() * _weights(lib, (2, 3))).sum()
            loss.backward(retain_graph=True)
            if step == 1:
                loss.backward()
            seen.append((a.grad.to_dense(), b.grad.to_dense()))
            if step == 2:
                a.grad = b.grad = None
        return seen
    for (ma, mb), (ta, tb) in zip(*reversed(_both(run))):
        np.testing.assert_array_equal(ma.numpy(), ta.numpy())
        np.testing.assert_array_equal(mb.numpy(), tb.numpy())


def test_finite_differences():
    v = tg.tensor([0.3, -1.2, 0.7], dtype=tg.float64, requires_grad=True)
    w = tg.tensor([0.5, 2.0], dtype=tg.float64, requires_grad=True)
    r = tg.tensor([0.1, -0.4, 0.9, 1.3], dtype=tg.float64, requires_grad=True)

    def add(v, w):
        return tg.sub(tg.sparse_coo_tensor(DUP[0], v, (2, 3)), tg.sparse_coo_tensor(B[0], w, (2, 3)),
                      alpha=1.5).to_dense()

    def product(v, r):
        return (tg.sparse_coo_tensor(A[0], v, (2, 3)) @ tg.sparse_coo_tensor(RIGHT[0], r, (3, 2))).to_dense()

    def dense_product(v, r):
        return r.reshape(2, 2) @ tg.sparse_coo_tensor(A[0], v, (2, 3))
    assert tg.autograd.gradcheck(add, (v, w))
    assert tg.autograd.gradcheck(product, (v, r))
    assert tg.autograd.gradcheck(dense_product, (v, r))


def test_in_place_add_and_sub():
    def run(lib):
        a = _coo(lib, DUP, requires_grad=False)
        a += _coo(lib, B, requires_grad=False)
        a.sub_(_coo(lib, A, coalesce=True, requires_grad=False), alpha=2)
        d = _weights(lib, (2, 3))
        d += a
        return a, d
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)
    for lib in (torch, tg):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            _coo(lib, A).add_(_coo(lib, B, requires_grad=False))
        with pytest.raises(RuntimeError, match="Can't convert result type Double to output Long in add operation"):
            _coo(lib, A, requires_grad=False, dtype=lib.int64).add_(_coo(lib, B, requires_grad=False))


def test_sparse_mm_of_dense_tensors():
    def run(lib):
        x = _weights(lib, (2, 3)).requires_grad_()
        y = lib.sparse.mm(x, _weights(lib, (3, 2)))
        y.sum().backward()
        return y, x.grad
    for m, t in zip(*reversed(_both(run))):
        _same(m, t)


@pytest.mark.parametrize("expr", [
    lambda lib, a, b: 2 * a - b,
    lambda lib, a, b: -a + b,
    lambda lib, a, b: a / 4 + b,
    lambda lib, a, b: a.coalesce() + b,
    lambda lib, a, b: a.clone() - b * 3,
    lambda lib, a, b: (a + b).coalesce() + b,
    lambda lib, a, b: lib.mm(-a + 2 * b, _weights(lib, (3, 2))),
])
def test_scaled_and_coalesced_operands_pass_gradients_on(expr):
    # PyTorch hands k * a's gradient (on any pattern) on to a: the same for leaves through these ops
    def run(lib):
        a, b = _coo(lib, DUP), _coo(lib, B)
        c = expr(lib, a, b)
        dense = c.to_dense() if c.is_sparse else c
        (dense * _weights(lib, tuple(dense.shape))).sum().backward()
        return c, a.grad, b.grad
    (tc, ta, tb), (mc, ma, mb) = _both(run)
    _same(mc, tc)
    _same_grad(ma, ta)
    _same_grad(mb, tb)
