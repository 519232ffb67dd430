"""Batched and hybrid sparse compressed tensors (CSR, CSC, BSR, BSC) against PyTorch: conversions of N-D dense
tensors (dense_dim), constructors, reprs, accessors, gradients, save / load; add and sum(dim) of compressed layouts
with PyTorch's result layouts, values, gradients and refusals."""
import io

import pytest
import torch

import tapegrad as tg

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state",
                                        "ignore:Sparse CSC tensor support is in beta state",
                                        "ignore:Sparse BSR tensor support is in beta state",
                                        "ignore:Sparse BSC tensor support is in beta state",
                                        "ignore:Sparse invariant checks are implicitly disabled")

XB = [[[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], [[1.0, 0.0, 6.0], [0.0, 0.0, 5.0]]]   # every batch: 3 entries
YB = [[[1.0, 0.0, 0.0], [3.0, 0.0, 4.0]], [[1.0, 0.0, 0.0], [0.0, 3.0, 5.0]]]
H = [[[0.0, 1.0], [0.0, 0.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]]   # 2 x 3 entries of size 2
X = [[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]]
Y = [[1.0, 0.0, 0.0], [3.0, 0.0, -4.0]]
BLOCK = {"csr": (), "csc": (), "bsr": (1,), "bsc": (1,)}   # the blocksize argument of each conversion


def _same(m, t):
    assert repr(m) == repr(t).replace("torch.", "tapegrad."), f"\n{m!r}\n!=\n{t!r}"


def _run(fn):
    """fn's results in both libraries, compared one by one."""
    for m, t in zip(fn(tg), fn(torch)):
        _same(m, t)


def _error(fn, phrase=None):
    """fn raises in both libraries: the same type, and tapegrad's message starts with PyTorch's (up to where PyTorch
    names its source file) or, where the build's MKL words it differently, both hold `phrase`."""
    caught = []
    for lib in (torch, tg):
        with pytest.raises(Exception) as info:
            fn(lib)
        caught.append(info.value)
    t, m = caught
    assert type(m) is type(t), (m, t)
    if phrase is not None:
        assert phrase in str(t) and phrase in str(m), (m, t)
    else:
        key = str(t).split(' at "')[0].split("\n")[0].split(". This could be")[0]
        assert str(m).startswith(key), (str(m), key)


def _convert(lib, data, layout, dtype=None, **kwargs):
    x = lib.tensor(data, dtype=dtype or lib.float64)
    return getattr(x, f"to_sparse_{layout}")(*BLOCK[layout], **kwargs)


# ---- building ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
@pytest.mark.parametrize("data,dense_dim", [(XB, None), (H, 1)])
def test_conversions_of_nd_dense_tensors(layout, data, dense_dim):
    def run(lib):
        s = _convert(lib, data, layout, dense_dim=dense_dim)
        names = ("crow_indices", "col_indices") if layout in ("csr", "bsr") else ("ccol_indices", "row_indices")
        meta = (s.sparse_dim(), s.dense_dim(), s._nnz(), tuple(s.shape), s.dim(), s.layout.name if lib is tg else
                str(s.layout)[6:])
        return [s, s.to_dense(), s.to_sparse(), s.values(), repr(meta)] + [getattr(s, n)() for n in names]
    _run(run)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(XB).to_sparse_csc().to_sparse_csr(),
    lambda lib: lib.tensor(XB).to_sparse_csr().to_sparse_csc(),
    lambda lib: lib.tensor(H).to_sparse_csr(dense_dim=1).to_sparse_csc(),
    lambda lib: lib.tensor(H).to_sparse(2).to_sparse_csr(),
    lambda lib: lib.tensor(H).to_sparse(2).to_sparse_csc(),
    lambda lib: lib.tensor(H).to_sparse_csr(dense_dim=1).to_sparse_bsr(1),
    lambda lib: lib.tensor(H).to_sparse(layout=lib.sparse_csr, dense_dim=1),
    lambda lib: lib.tensor(H).to_sparse(layout=lib.sparse_bsc, blocksize=(1, 1), dense_dim=1),
    lambda lib: lib.tensor(H).to_sparse(layout=lib.sparse_coo, dense_dim=1),
    lambda lib: lib.tensor(XB).to_sparse_bsr((1, 3)),
    lambda lib: lib.tensor(XB).to_sparse_bsc(1).to_sparse(),
    lambda lib: lib.ones(2, 2, 0).to_sparse_csr(dense_dim=1),
    lambda lib: lib.ones(2, 2, 4, 3, dtype=lib.float16).to_sparse_bsr((1, 2), dense_dim=1),
    lambda lib: (lib.tensor([[0.0, 0, 1, 2], [0, 0, 3, 4], [5, 0, 0, 0], [0, 6, 0, 0]]) + 1).to_sparse_bsr(2).to_sparse(),
    lambda lib: (lib.tensor([[0.0, 0, 1, 2], [0, 0, 3, 4], [5, 0, 0, 0], [0, 6, 0, 0]]) + 1).to_sparse_bsc(2).to_sparse(),
    lambda lib: lib.tensor(X).to_sparse_csr().to_sparse(layout=lib.strided),
    lambda lib: lib.tensor(X).to_sparse().to_sparse(layout=lib.sparse_csc),
])
def test_conversions_between_layouts(make):
    _same(make(tg), make(torch))


@pytest.mark.parametrize("make", [
    lambda lib: lib.sparse_csr_tensor([[0, 1, 3], [0, 2, 3]], [[1, 0, 2], [0, 2, 2]], [[2.0, 3, 4], [1, 6, 5]]),
    lambda lib: lib.sparse_csr_tensor([[0, 1, 3], [0, 2, 3]], [[1, 0, 2], [0, 2, 2]], [[2.0, 3, 4], [1, 6, 5]],
                                      (2, 2, 4), dtype=lib.float64, requires_grad=True),
    lambda lib: lib.sparse_csc_tensor([0, 2, 3], [0, 1, 1], [[1.0, 2], [3, 4], [5, 6]]),
    lambda lib: lib.sparse_bsr_tensor([[0, 1]], [[0]], lib.ones(1, 1, 2, 2, 3)),
    lambda lib: lib.sparse_bsc_tensor([[[0, 1, 1]]], [[[0]]], lib.ones(1, 1, 1, 2, 1), (1, 1, 2, 2)),
    lambda lib: lib.sparse_compressed_tensor([[0, 1]], [[0]], lib.ones(1, 1, 2, 2, 3), layout=lib.sparse_bsc),
    lambda lib: lib.sparse_compressed_tensor([0, 1, 1], [2], [7.0], layout=lib.sparse_csr),
])
def test_constructors(make):
    m, t = make(tg), make(torch)
    _same(m, t)
    _same(m.to_dense(), t.to_dense())
    assert (m._nnz(), m.dense_dim(), tuple(m.shape)) == (t._nnz(), t.dense_dim(), tuple(t.shape))


@pytest.mark.parametrize("call", [
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [[0]], [[1.0]], (2, 1, 1), check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [[0]], [[1.0]], (1, 1, 1, 1), check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [[0], [0]], [[1.0]], check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [[0]], [[1.0]], (1, 1), check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 1], [1, 1]], [[0], [0]], [[1.0], [2]], check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 1], [0, 2]], [[0], [0]], [[1.0], [2]], check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([[0, 2], [0, 2]], [[0, 1], [1, 0]], lib.ones(2, 2), check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([0, 1, 3], [1, 0, 1], [1.0, 2, 3], (2, 1), check_invariants=True),
    lambda lib: lib.sparse_csr_tensor([0, 1.0, 3], [1, 0, 1], [1.0, 2, 3], check_invariants=True),
    lambda lib: lib.sparse_csr_tensor(lib.tensor(0), lib.tensor(0), lib.ones(1)),
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [0], [1.0]),
    lambda lib: lib.sparse_csr_tensor([[0, 1]], [[0]], lib.tensor(1.0)),
    lambda lib: lib.sparse_bsr_tensor([[0, 1]], [[0]], lib.ones(1, 1, 2, 2), (1, 3, 2), check_invariants=True),
    lambda lib: lib.sparse_compressed_tensor([[0, 1]], [[0]], lib.ones(1, 1, 2, 2, 3)),
])
def test_constructor_errors(call):
    _error(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor(H).to_sparse_csr(dense_dim=2),
    lambda lib: lib.tensor(H).to_sparse_csc(dense_dim=-1),
    lambda lib: lib.ones(3).to_sparse_csr(dense_dim=1),
    lambda lib: lib.tensor(H).to_sparse_bsr(1, dense_dim=2),
    lambda lib: lib.zeros(0, 2, 3).to_sparse_csr(),
    lambda lib: lib.zeros(0, 2, 3).to_sparse_bsr(1),
    lambda lib: lib.tensor([[[0.0, 2, 0], [3, 0, 4]], [[1, 0, 0], [0, 0, 5]]]).to_sparse_csr(),
    lambda lib: lib.tensor(XB).to_sparse_bsr((4, 4)),
    lambda lib: lib.tensor(XB).to_sparse().to_sparse_csr(),
    lambda lib: lib.tensor(XB).to_sparse().to_sparse_bsr(1),
    lambda lib: lib.tensor(XB).to_sparse_csr().to_sparse_bsr(1),
    lambda lib: lib.tensor(XB).to_sparse_csr().t(),
    lambda lib: lib.tensor(H).to_sparse_bsr(1, dense_dim=1).t(),
    lambda lib: lib.tensor(X).to_sparse(layout=lib.strided, blocksize=(1, 1)),
    lambda lib: lib.tensor(X).to_sparse().to_sparse(layout=lib.sparse_csr, blocksize=(1, 1)),
    lambda lib: lib.tensor(X).to_sparse_csr().to_sparse(layout=lib.sparse_csr, blocksize=(1, 1)),
    lambda lib: lib.tensor(X).to_sparse_bsr(1).to_sparse(layout=lib.sparse_csr),
])
def test_conversion_errors(call):
    _error(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor(XB).to_sparse_csr() @ lib.ones(3, 2),
    lambda lib: lib.tensor(XB).to_sparse_csc() @ lib.ones(3),
    lambda lib: lib.tensor(H).to_sparse_bsr(1, dense_dim=1) @ lib.ones(3, 2),
    lambda lib: lib.tensor(XB).to_sparse_csr() @ lib.ones(2, 3, 2),
    lambda lib: lib.tensor(X).to_sparse_bsr(1) @ lib.ones(2, 3, 2),
    lambda lib: lib.ones(2, 2) @ lib.tensor(XB).to_sparse_csr(),
    lambda lib: lib.ones(2) @ lib.tensor(XB).to_sparse_csr(),
    lambda lib: lib.ones(3, 2) @ lib.tensor(H).to_sparse_csc(dense_dim=1),
    lambda lib: lib.mm(lib.tensor(XB).to_sparse_csr(), lib.ones(3, 2)),
    lambda lib: lib.mm(lib.ones(3, 2), lib.tensor(H).to_sparse_csr(dense_dim=1)),
    lambda lib: lib.mv(lib.tensor(H).to_sparse_csr(dense_dim=1), lib.ones(3)),
    lambda lib: lib.bmm(lib.tensor(XB).to_sparse_csr(), lib.ones(2, 3, 2)),
    lambda lib: lib.sparse.mm(lib.tensor(XB).to_sparse_csr(), lib.ones(3, 2)),
    lambda lib: lib.sparse.mm(lib.ones(3, 2), lib.tensor(H).to_sparse_csr(dense_dim=1)),
])
def test_products_refuse_batched_and_hybrid_operands(call):
    _error(call)


def test_elementwise_ops_on_batched_and_hybrid_values():
    _run(lambda lib: [_convert(lib, XB, "csr").abs(), _convert(lib, H, "bsc", dense_dim=1) * 2,
                      lib.sin(_convert(lib, H, "csr", dense_dim=1)), _convert(lib, XB, "csc").to(lib.float32),
                      _convert(lib, XB, "csr").long(), _convert(lib, XB, "bsr").detach().clone()])


# ---- gradients --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
def test_values_gradient_reaches_the_dense_source(layout):
    def run(lib):
        out = []
        for data, dense_dim in ((XB, None), (H, 1)):
            x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
            v = getattr(x, f"to_sparse_{layout}")(*BLOCK[layout], dense_dim=dense_dim).values()
            (v * lib.arange(float(v.numel()), dtype=lib.float64).reshape(v.shape)).sum().backward()
            out += [v, x.grad]
        return out
    _run(run)


def test_gradients_of_compressed_leaves():
    def run(lib):
        out = []
        batched = lib.tensor(XB, dtype=lib.float64).to_sparse_csr().requires_grad_()
        (batched.values() * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        hybrid = lib.tensor(H, dtype=lib.float64).to_sparse_csr(dense_dim=1).requires_grad_()
        (hybrid.to_dense() * lib.arange(12.0, dtype=lib.float64).reshape(2, 3, 2)).sum().backward()
        x = lib.tensor(H, dtype=lib.float64, requires_grad=True)
        (x.to_sparse_csr(dense_dim=1).to_dense() * lib.arange(12.0, dtype=lib.float64).reshape(2, 3, 2)).sum() \
            .backward()
        out += [batched.grad, hybrid.grad, x.grad]
        for make in (lambda: lib.tensor(XB, dtype=lib.float64).to_sparse_csc(),
                     lambda: lib.tensor(XB, dtype=lib.float64).to_sparse_bsr(1),
                     lambda: lib.tensor(H, dtype=lib.float64).to_sparse_csr(dense_dim=1)):
            leaf = make().requires_grad_()
            total = leaf.sum()
            total.backward()
            out += [total, leaf.grad]
        c = lib.sparse_csr_tensor([[0, 1, 3], [0, 2, 3]], [[1, 0, 2], [0, 2, 2]],
                                  lib.tensor([[2.0, 3, 4], [1, 6, 5]], dtype=lib.float64), requires_grad=True)
        v = c.values()
        (v * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        return out + [v, c.grad]
    _run(run)


def test_constructor_history_gets_no_gradient():
    for lib in (torch, tg):
        v = lib.tensor([[2.0, 3, 4], [1, 6, 5]], requires_grad=True)
        c = lib.sparse_csr_tensor([[0, 1, 3], [0, 2, 3]], [[1, 0, 2], [0, 2, 2]], v * 2)
        with pytest.raises(RuntimeError, match="derivative for aten::sparse_compressed_tensor is not implemented"):
            c.values().sum().backward()


# ---- add --------------------------------------------------------------------------------------------------------

def test_csr_plus_csr_values_and_gradients():
    w = [[0.0, 1, 2], [3, 4, 5]]

    def run(lib):
        a = lib.tensor(X, dtype=lib.float64).to_sparse_csr().requires_grad_()
        b = lib.tensor(Y, dtype=lib.float64).to_sparse_csr().requires_grad_()
        c = lib.add(a, b, alpha=2)
        (c.to_dense() * lib.tensor(w, dtype=lib.float64)).sum().backward()
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
        d = x.to_sparse_csr() + y.to_sparse_csr()
        (d.to_dense() * lib.tensor(w, dtype=lib.float64)).sum().backward()
        return [c, a.grad, b.grad, d, x.grad, y.grad, lib.zeros(2, 3).to_sparse_csr() + lib.tensor(X).to_sparse_csr(),
                lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse_bsr(1)]
    _run(run)


@pytest.mark.parametrize("layout", ["csr", "csc"])
@pytest.mark.parametrize("sparse_first", [True, False])
def test_compressed_plus_dense_is_dense(layout, sparse_first):
    w = [[0.0, 1, 2], [3, 4, 5]]

    def run(lib):
        out = []
        for leaf in (True, False):
            x = lib.tensor(X, dtype=lib.float64, requires_grad=not leaf)
            s = _convert(lib, X, layout) if leaf else getattr(x, f"to_sparse_{layout}")()
            s = s.requires_grad_() if leaf else s
            d = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
            c = s + d if sparse_first else lib.add(d, s, alpha=3)
            (c * lib.tensor(w, dtype=lib.float64)).sum().backward()
            out += [c, s.grad if leaf else x.grad, d.grad]
        pair = (_convert(lib, XB, layout), lib.tensor(YB, dtype=lib.float64))   # batched
        out.append(pair[0] + pair[1] if sparse_first else pair[1] + pair[0])
        return out
    _run(run)


def test_alpha_scales_the_second_operand():
    # PyTorch's CPU kernel scales the compressed operand of torch.add(compressed, dense, alpha) (its gradients scale
    # the dense one): tapegrad computes compressed + alpha * dense, and its gradients are PyTorch's
    w = [[0.0, 1, 2], [3, 4, 5]]

    def run(lib):
        a = lib.tensor(X, dtype=lib.float64).to_sparse_csr().requires_grad_()
        d = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
        c = lib.add(a, d, alpha=3)
        (c * lib.tensor(w, dtype=lib.float64)).sum().backward()
        return c, a.grad, d.grad
    m, t = run(tg), run(torch)
    _same(m[0].detach(), torch.tensor(X, dtype=torch.float64) + 3 * torch.tensor(Y, dtype=torch.float64))
    _same(m[1], t[1])
    _same(m[2], t[2])


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
def test_finite_difference_gradients(layout):
    # every entry nonzero, so a small step keeps the pattern
    x = tg.arange(1.0, 25.0, dtype=tg.float64).reshape(2, 2, 3, 2).requires_grad_()

    def f(x):
        s = getattr(x, f"to_sparse_{layout}")(*BLOCK[layout], dense_dim=1)
        return s.values() * 2, s.to_dense()
    assert tg.autograd.gradcheck(f, (x,))
    if layout == "csr":
        assert tg.autograd.gradcheck(lambda x, y: tg.add(x.to_sparse_csr(), y.to_sparse_csr(), alpha=3).values(),
                                     (x[0, 0], (x[1, 1] * 2).detach().requires_grad_()))


def test_block_add_takes_one_by_one_blocks():
    # PyTorch's result holds scalar values under a BSR layout (its to_dense() fails); tapegrad's holds 1x1 blocks of
    # the same values
    for build, dense in ((lambda lib: lib.add(lib.tensor(X).to_sparse_bsr(1), lib.tensor(Y).to_sparse_bsr(1), alpha=2),
                          torch.tensor(X) + 2 * torch.tensor(Y)),
                         (lambda lib: lib.tensor(X).to_sparse_bsr(1) + lib.tensor(X).to_sparse_csr(),
                          2 * torch.tensor(X))):
        m, t = build(tg), build(torch)
        assert m.layout is tg.sparse_bsr and t.layout == torch.sparse_bsr
        for name in ("crow_indices", "col_indices"):
            _same(getattr(m, name)(), getattr(t, name)())
        _same(m.values().reshape(-1), t.values().reshape(-1))
        _same(m.to_dense(), dense)
    _error(lambda lib: (lib.tensor(X, requires_grad=True).to_sparse_bsr(1) +
                        lib.tensor(Y).to_sparse_bsr(1)).to_dense().sum().backward())


def test_batched_and_hybrid_compressed_sums_are_exact():
    # PyTorch's CPU kernel returns malformed tensors here; tapegrad's result is the sum of the dense tensors
    for data, other, kwargs in ((XB, YB, {}), (H, [[[1.0, 0], [2, 3], [0, 0]], [[6, 7], [0, 0], [1, 1]]],
                                                 {"dense_dim": 1})):
        m = tg.tensor(data).to_sparse_csr(**kwargs) + tg.tensor(other).to_sparse_csr(**kwargs)
        assert m.layout is tg.sparse_csr and m.dense_dim() == kwargs.get("dense_dim", 0)
        _same(m.to_dense(), torch.tensor(data) + torch.tensor(other))
    with pytest.raises(RuntimeError, match="Expect the same number of specified elements per batch"):
        tg.tensor(XB).to_sparse_csr() + tg.tensor([[[1.0, 1, 1], [0, 0, 1]], [[1, 0, 6], [0, 0, 5]]]).to_sparse_csr()


def test_add_in_place():
    def run(lib):
        a, b = lib.tensor(X).to_sparse_csr(), lib.tensor(Y).to_sparse_csr()
        a.add_(b, alpha=2)
        d = lib.tensor(Y)
        d.add_(lib.tensor(X).to_sparse_csc(), alpha=2)
        return [a, d]
    _run(run)
    c = tg.tensor(XB).to_sparse_csr()   # (PyTorch's batched result is malformed, see above)
    c += tg.tensor(YB).to_sparse_csr()
    _same(c.to_dense(), torch.tensor(XB) + torch.tensor(YB))
    for call in (lambda lib: lib.tensor(X).to_sparse_csr().add_(lib.tensor(Y)),
                 lambda lib: lib.tensor(X).to_sparse_csr().sub_(lib.tensor(Y).to_sparse_csr()),
                 lambda lib: lib.tensor(X).to_sparse_csr().add_(lib.tensor(Y).double().to_sparse_csr()),
                 lambda lib: lib.tensor(X).to_sparse_csc().add_(lib.tensor(Y).to_sparse_csc()),
                 lambda lib: lib.tensor(X).to_sparse_csr().requires_grad_().add_(lib.tensor(Y).to_sparse_csr())):
        _error(call)


@pytest.mark.parametrize("call,phrase", [
    (lambda lib: lib.tensor(X).to_sparse_csr() - lib.tensor(Y).to_sparse_csr(), None),
    (lambda lib: lib.sub(lib.tensor(X).to_sparse_csr(), lib.tensor(Y), alpha=2), None),
    (lambda lib: lib.tensor(Y) - lib.tensor(X).to_sparse_csc(), None),
    (lambda lib: lib.tensor(X).to_sparse_bsr(1) - lib.tensor(X).to_sparse_bsr(1), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse(), None),
    (lambda lib: lib.tensor(X).to_sparse() + lib.tensor(X).to_sparse_csr(), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + 1, None),
    (lambda lib: lib.ones(3) + lib.tensor(X).to_sparse_csr(), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse_csr().t(), None),
    (lambda lib: lib.tensor(X).to_sparse_csc() + lib.tensor(X).to_sparse_csc(), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse_csc(), None),
    (lambda lib: lib.tensor(X).to_sparse_bsc(1) + lib.tensor(X).to_sparse_bsc(1).double(), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse_csr().double(), None),
    (lambda lib: lib.tensor(X).long().to_sparse_csr() + lib.tensor(X).to_sparse_csr(), None),
    (lambda lib: lib.add(lib.tensor(X).long().to_sparse_csr(), lib.tensor(X).long().to_sparse_csr(), alpha=1.5),
     None),
    (lambda lib: lib.tensor(X).to_sparse_bsr(1) + lib.tensor(X), None),
    (lambda lib: lib.tensor(X) + lib.tensor(X).to_sparse_bsc(1), None),
    (lambda lib: lib.tensor(X).to_sparse_csr() + lib.tensor(X).to_sparse_bsr((1, 3)), None),
    (lambda lib: lib.ones(2, 4).to_sparse_bsr(2) + lib.ones(2, 4).to_sparse_bsr(2), "MKL error: SPARSE_STATUS_"),
])
def test_add_refusals(call, phrase):
    _error(call, phrase)


# ---- sum --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1), (1, 0), []])
def test_csr_sum_over_dimensions(dim):
    def run(lib):
        c = lib.tensor(X, dtype=lib.float64).to_sparse_csr()
        return [c.sum(dim, keepdim=True), lib.sum(c, dim, True, dtype=lib.float32),
                c.to(lib.int32).sum(dim, keepdim=True), c.sum(dim, keepdim=True, dtype=lib.int64),
                lib.zeros(2, 3).to_sparse_csr().sum(0, keepdim=True)]
    _run(run)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor(X).to_sparse_csr().sum(0),
    lambda lib: lib.tensor(X).to_sparse_csr().sum(2, keepdim=True),
    lambda lib: lib.tensor(X).to_sparse_csr().sum((0, 0), keepdim=True),
    lambda lib: lib.tensor(X).to_sparse_csr().sum(None, keepdim=True),
    lambda lib: lib.tensor(X).to_sparse_csr().bool().sum(1),
    lambda lib: lib.tensor(X).to_sparse_csr().sum(0, keepdim=True, dtype=lib.bool),
    lambda lib: lib.tensor(X).to_sparse_csc().sum(0, keepdim=True),
    lambda lib: lib.tensor(X).to_sparse_bsr(1).sum(1, keepdim=True),
    lambda lib: lib.tensor(XB).to_sparse_csr().sum(0, keepdim=True),
    lambda lib: lib.tensor(H).to_sparse_csr(dense_dim=1).sum(1, keepdim=True),
    lambda lib: lib.sparse.sum(lib.tensor(X).to_sparse_csr()),
    lambda lib: lib.sparse.sum(lib.tensor(X).to_sparse_csc(), dtype=lib.float64),
    lambda lib: lib.sparse.sum(lib.tensor(X).to_sparse_csr(), 0),
    lambda lib: lib.tensor(X, requires_grad=True).to_sparse_csr().sum(1, keepdim=True).to_dense().sum().backward(),
])
def test_sum_refusals(call):
    _error(call)


def test_full_sums_of_batched_and_hybrid_tensors():
    def run(lib):
        return [_convert(lib, XB, layout).sum() for layout in BLOCK] + \
               [_convert(lib, H, "csr", dense_dim=1).sum(dtype=lib.float32)]
    _run(run)


# ---- save / load ------------------------------------------------------------------------------------------------

def _objects(lib):
    return {"csr": lib.tensor(XB).to_sparse_csr(), "csc": lib.tensor(XB, dtype=lib.float64).to_sparse_csc(),
            "hybrid": lib.tensor(H).to_sparse_csr(dense_dim=1), "bsc": lib.tensor(H).to_sparse_bsc(1, dense_dim=1),
            "bsr": lib.tensor(XB).to_sparse_bsr((1, 3)), "both": lib.ones(2, 2, 2, 3).to_sparse_csr(dense_dim=1),
            "layouts": [lib.sparse_csr, lib.strided]}


@pytest.mark.parametrize("weights_only", [True, False])
def test_save_and_load(weights_only):
    files = {}
    for lib in (torch, tg):
        files[lib] = io.BytesIO()
        lib.save(_objects(lib), files[lib])
    expected = torch.load(io.BytesIO(files[torch].getvalue()), weights_only=weights_only)
    for loaded in (tg.load(io.BytesIO(files[torch].getvalue()), weights_only=weights_only),
                   torch.load(io.BytesIO(files[tg].getvalue()), weights_only=weights_only),
                   tg.load(io.BytesIO(files[tg].getvalue()), weights_only=weights_only)):
        for key, t in expected.items():
            assert repr(loaded[key]).replace("tapegrad.", "torch.") == repr(t), key
    other = io.BytesIO()
    torch.save([torch.jagged, torch._mkldnn], other)   # PyTorch's layouts without tapegrad tensors still load
    assert repr(tg.load(io.BytesIO(other.getvalue()))) == "[tapegrad.jagged, tapegrad._mkldnn]"
