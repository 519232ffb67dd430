"""Ops on 2-D CSR, CSC, BSR, BSC (and COO) tensors beyond add, sum and products, against PyTorch: elementwise mul,
transpose, select and indexing, addmm, the in-place forms; and a sweep of tests/sparse_compressed_probe.py's list
asserting tapegrad raises no NotImplementedError where PyTorch succeeds."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad
from sparse_compressed_probe import CASES, LAYOUTS, _DENSE, _OTHER, dense, make, run

warnings.filterwarnings("ignore", message=".*beta state.*")
COMPRESSED = ("csr", "csc", "bsr", "bsc")


def _same(g, t):
    """Values, layout, dtype and shape of a tapegrad result and a torch one."""
    if isinstance(t, tuple):
        assert len(g) == len(t)
        return [_same(a, b) for a, b in zip(g, t)]
    assert g.layout.name == str(t.layout).split(".")[1]
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(g.shape) == tuple(t.shape)
    gd = g.to_dense() if g.layout.name != "strided" else g
    td = t.to_dense() if t.layout != torch.strided else t
    np.testing.assert_allclose(gd.detach().numpy(), td.detach().numpy(), rtol=1e-6, atol=1e-12)
    if t.layout != torch.strided:
        assert g._nnz() == t._nnz()


def test_sweep_no_not_implemented_where_torch_runs():
    """The requirement: no NotImplementedError from tapegrad for a case PyTorch runs (the probe's whole list)."""
    failures = []
    for case in CASES:
        for layout in LAYOUTS:
            if run(torch, case, layout)[0] == "ok":
                kind, message = run(tapegrad, case, layout)
                if kind == "NotImplementedError":
                    failures.append((case, layout, message))
    assert not failures, failures


_MUL = ["mul(s,s)", "mul(s,d)", "mul(d,s)", "s*0-d", "mul(s,2)", "s*s", "s*d", "d*s", "mul(s, s int)",
        "mul(s,s float32)", "transpose(0,1)", "transpose(1,0)", "transpose(0,0)", "L.t", "mT", "adjoint", "T",
        "select(0,1)", "select(1,2)", "select(0,-1)", "s[1]", "s[1,2]", "s[:,1]", "unbind", "addmm(d,s,d)",
        "addmm(d,d,s)", "addmm(d,s,d,b,a)", "sparse.addmm(d,s,d)", "addmm(s,s,s)", "F.linear(d,s,b)", "addmm_(d,s,d)",
        "copy_(s)", "copy_(s same)", "zero_", "fill_(2)", "mul_(s,s)", "mul_(s,2)", "mul_(s,d)", "abs_", "neg_",
        "sqrt_", "relu_", "floor_", "tanh_", "angle", "L.clone", "L.abs", "permute(1,0)", "t_", "div_(s,2)",
        "mul(s,d row)", "mul(s,d col)", "d.sparse_mask(s)", "s.sparse_mask(s)", "sampled_addmm(s,d,d)", "index_select(0)",
        "index_select(1)", "cat([s,s])", "cat([s,s],1)", "stack", "unsqueeze(0)", "norm", "floor_divide(s,2)",
        "d.mul_(s)", "addmm(d,s,s)", "round_", "square_", "erfinv_", "sgn_", "nan_to_num_"]


@pytest.mark.parametrize("case", _MUL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_values_layouts_and_errors_as_torch(case, layout):
    tk, tv = run(torch, case, layout)
    gk, gv = run(tapegrad, case, layout)
    if tk != "ok":
        assert gk == tk, (gk, gv, tv)
        return
    assert gk == "ok", gv
    _same(gv, tv)


def _leaf(lib):
    return lib.tensor(_DENSE, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("layout", COMPRESSED + ("coo",))
@pytest.mark.parametrize("op", [lambda L, s, d: (s * L.tensor(3., dtype=L.float64)).to_dense(),
                                lambda L, s, d: L.addmm(d, s, d, beta=.5, alpha=2.),
                                lambda L, s, d: s.transpose(0, 1).to_dense(),
                                lambda L, s, d: s[1, 2] * d,
                                lambda L, s, d: (s * s).to_dense(),
                                lambda L, s, d: (s * d).to_dense(),
                                lambda L, s, d: s.clone().neg_().to_dense(),
                                lambda L, s, d: d.sparse_mask(s).to_dense(),
                                lambda L, s, d: L.sparse.sampled_addmm(s, d, d, beta=.5, alpha=2.).to_dense(),
                                lambda L, s, d: L.zeros(4, 4, dtype=L.float64).to_sparse(
                                    layout=s.layout, **({"blocksize": 2} if s.layout in (L.sparse_bsr, L.sparse_bsc)
                                                        else {})).copy_(s).to_dense()])
def test_gradients_as_torch(op, layout):
    results = []
    for L in (torch, tapegrad):
        x, d = _leaf(L), dense(L)
        try:
            out = op(L, make_from(L, x, layout), d)
            (out * out).sum().backward()
            results.append(("ok", out.detach().numpy(), x.grad.numpy()))
        except Exception as e:   # noqa: BLE001
            results.append((type(e).__name__,))
    (tk, *tr), (gk, *gr) = results
    assert gk == tk, results
    for a, b in zip(gr, tr):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


def make_from(L, x, layout):
    return {"csr": x.to_sparse_csr, "csc": x.to_sparse_csc, "bsr": lambda: x.to_sparse_bsr((2, 2)),
            "bsc": lambda: x.to_sparse_bsc((2, 2)), "coo": x.to_sparse}[layout]()


@pytest.mark.parametrize("lib_op", ["select", "mul_dense"])
def test_backwards_pytorch_refuses(lib_op):
    """PyTorch's backward of a compressed select, and of CSR * dense into a dense tensor requiring grad, raise."""
    outcomes = []
    for L in (torch, tapegrad):
        x, d = _leaf(L), dense(L).requires_grad_()
        out = x.to_sparse_csr().select(0, 1) if lib_op == "select" else x.to_sparse_csr() * d
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            out.to_dense().sum().backward()
        outcomes.append((info.type, str(info.value).split(":")[0][:40]))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
def test_gradcheck_float64(kind):
    """Finite differences through the values of a fixed pattern (mul, addmm, transpose, indexing, copy_)."""
    other = make(tapegrad, kind, _OTHER)

    mask = tapegrad.tensor(_DENSE != 0, dtype=tapegrad.float64)

    def fn(w, d):   # w * mask keeps the pattern fixed under finite differences
        x = w * mask
        s = {"csr": x.to_sparse_csr, "csc": x.to_sparse_csc, "coo": x.to_sparse}[kind]()
        t = s * other if kind != "csc" else s * tapegrad.tensor(1.5, dtype=tapegrad.float64)
        dense_factor = tapegrad.addmm(d, s, d, beta=.5, alpha=2.) if kind != "coo" else tapegrad.sparse.addmm(d, s, d)
        copied = other.clone().copy_(s) if kind != "coo" else s.clone()
        return (dense_factor + t.to_dense() + s.transpose(0, 1).to_dense() + s[1, 2] * d + copied.to_dense()).sum(0)
    v = tapegrad.tensor(_DENSE, dtype=tapegrad.float64, requires_grad=True)
    d = tapegrad.tensor(_OTHER, dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradcheck(fn, (v, d))


@pytest.mark.parametrize("call", [
    lambda L, s: s.clone().requires_grad_().zero_(),
    lambda L, s: s.long().sqrt_(),
    lambda L, s: s.long().mul_(2.5),
    lambda L, s: s.clone().copy_(L.eye(4, dtype=L.float64).to_sparse_csr()),
    lambda L, s: s.clone().copy_(s.to_sparse_csc()),
    lambda L, s: s.transpose(0, 2),
    lambda L, s: s.select(0, 9),
    lambda L, s: s[9],
    lambda L, s: L.addmm(dense(L).float(), s, dense(L)),
    lambda L, s: L.addmm(dense(L)[:3], s, dense(L)),
    lambda L, s: L.addmm(s, s, dense(L)),
    lambda L, s: s * dense(L)[:3],
    lambda L, s: s.to_sparse_csc() * s,
    lambda L, s: s.to_sparse_bsr(2).select(0, 1),
    lambda L, s: s.clone().fill_(L.tensor(3.)),
    lambda L, s: dense(L)[:3].sparse_mask(s),
    lambda L, s: s.sparse_mask(s.to_sparse()),
    lambda L, s: L.sparse.sampled_addmm(s.to_sparse_csc(), dense(L), dense(L)),
    lambda L, s: L.sparse.sampled_addmm(s, dense(L).float(), dense(L)),
    lambda L, s: L.sparse.sampled_addmm(s, dense(L)[:3], dense(L)),
    lambda L, s: s.to_sparse().sparse_resize_((3, 4), 2, 0),
    lambda L, s: s.to_sparse().sparse_resize_((4, 4, 2), 2, 1),
    lambda L, s: s.to_sparse().sparse_resize_((4, 4), 1, 0),
    lambda L, s: s.to_sparse().requires_grad_().sparse_resize_((5, 6), 2, 0)])
def test_errors_as_torch(call):
    errors = []
    for L in (torch, tapegrad):
        with pytest.raises(Exception) as info:
            call(L, make(L, "csr"))
        errors.append((info.type, str(info.value)[:30]))
    assert errors[0] == errors[1]


def test_repr_of_transpose_and_select():
    for layout in ("csr", "coo"):
        t, g = make(torch, layout), make(tapegrad, layout)
        assert repr(g.t()).replace("tapegrad", "torch") == repr(t.t())
        assert repr(g.select(0, 1)).replace("tapegrad", "torch") == repr(t.select(0, 1))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("data,sparse_dim,dim", [(_DENSE, 2, 0), (_DENSE, 2, 1), (_DENSE, 2, -1),
                                                 (np.arange(12.).reshape(3, 2, 2) / 7 - .5, 1, 0),
                                                 (np.arange(12.).reshape(3, 2, 2) / 7 - .5, 1, 2)])
def test_sparse_softmax_as_torch(fn, data, sparse_dim, dim):
    results = []
    for L in (torch, tapegrad):
        x = L.tensor(data, dtype=L.float64, requires_grad=True)
        out = getattr(L.sparse, fn)(x.to_sparse(sparse_dim), dim)
        assert out.layout is L.sparse_coo and out.is_coalesced()
        (out.to_dense() * L.arange(float(x.numel())).reshape(x.shape)).sum().backward()
        results.append((out.to_dense().detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10)
    if dim >= 0:   # (PyTorch 2.13's backward takes a negative dim as another dimension; tapegrad's is the derivative)
        np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-14)


def test_sparse_softmax_duplicates_dtype_and_errors():
    for L in (torch, tapegrad):
        u = L.sparse_coo_tensor([[1, 0, 1], [2, 0, 2]], [1., 2., 3.], (4, 4))
        assert L.sparse.softmax(u, 1)._nnz() == 2
        assert L.sparse.softmax(u, 1, dtype=L.float64).dtype is L.float64
    for call in (lambda L: L.sparse.softmax(make(L, "coo"), 2), lambda L: L.sparse.softmax(make(L, "csr"), 1),
                 lambda L: L.sparse.softmax(dense(L), 1), lambda L: L.sparse.log_softmax(make(L, "coo").long(), 1)):
        errors = []
        for L in (torch, tapegrad):
            with pytest.raises(Exception) as info:
                call(L)
            errors.append((info.type, str(info.value)[:25]))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("call", [lambda s: s.sparse_resize_((5, 6), 2, 0),
                                  lambda s: s.sparse_resize_and_clear_((2, 3, 5), 2, 1),
                                  lambda s: s.sparse_resize_and_clear_((2, 3), 2, 0).sparse_resize_((3, 4, 2), 3, 0)])
def test_sparse_resize_as_torch(call):
    t, g = call(make(torch, "coo")), call(make(tapegrad, "coo"))
    assert (tuple(g.shape), g._nnz(), g.sparse_dim(), g.dense_dim()) == (tuple(t.shape), t._nnz(), t.sparse_dim(),
                                                                         t.dense_dim())
    np.testing.assert_array_equal(g.to_dense().numpy(), t.to_dense().numpy())


@pytest.mark.parametrize("layout", ["csr", "csc", "coo"])
@pytest.mark.parametrize("call", [lambda s: s.transpose(0, 1), lambda s: s.transpose(1, 1), lambda s: s.clone().abs_(),
                                  lambda s: s * s.detach(), lambda s: s.clone().mul_(2)])
def test_grad_fn_names_and_reprs(layout, call):
    outs = []
    for L in (torch, tapegrad):
        s = L.tensor(_DENSE, dtype=L.float64, requires_grad=True)
        try:
            outs.append(call({"csr": s.to_sparse_csr, "csc": s.to_sparse_csc, "coo": s.to_sparse}[layout]()))
        except RuntimeError as e:   # (PyTorch's refusal, and tapegrad's)
            outs.append(str(e)[:30])
    if isinstance(outs[0], str):
        assert outs[1] == outs[0]
        return
    assert type(outs[1].grad_fn).__name__ == type(outs[0].grad_fn).__name__
    if layout != "coo" or outs[0].is_coalesced() == outs[1].is_coalesced():
        assert repr(outs[1]).replace("tapegrad", "torch") == repr(outs[0]).replace("torch::autograd::", "")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("size,sparse_other", [((4, 4), True), ((6, 6), True), ((6, 4), False), ((4, 6), False),
                                               ((4, 3), False), ((3, 4), False)])
def test_resize_as_as_torch(layout, size, sparse_other):
    """Where PyTorch's result is well formed, tapegrad's is the same; PyTorch's refusals are tapegrad's; where
    PyTorch leaves a malformed tensor (rows shrunk, a CSC tensor's columns or a block tensor resized), tapegrad
    grows it correctly or refuses."""
    outcomes = []
    for L in (torch, tapegrad):
        other = L.zeros(size, dtype=L.float64)
        other = make(L, layout, np.zeros(size)) if sparse_other and layout in ("csr", "csc", "coo") else other
        try:
            r = make(L, layout).resize_as_(other)
            outcomes.append(("ok", tuple(r.shape), r._nnz(), r.to_dense().numpy()))
        except (RuntimeError, NotImplementedError, IndexError) as e:
            outcomes.append((type(e), str(e)[:40]))
    (torch_kind, *_), (kind, *rest) = outcomes
    malformed = (layout in ("bsr", "bsc") or size[0] < 4 or layout == "csc" and size[1] > 4) and size[1] >= 4 \
        and layout != "coo"
    if malformed:   # (PyTorch's result, when it gives one, fails to_dense or holds entries out of range)
        if kind == "ok":
            expected = np.zeros(size)
            expected[:4, :4] = _DENSE
            np.testing.assert_array_equal(rest[2], expected)
        else:
            assert kind is RuntimeError
        return
    if kind == "ok":
        np.testing.assert_array_equal(rest[2], outcomes[0][3])
        outcomes = [o[:3] for o in outcomes]
    assert outcomes[1] == outcomes[0]


def _unary_ops():
    from tapegrad.sparse._coo import _COALESCED_UNARY, _LINEAR_UNARY
    # (deg2rad, rad2deg, signbit, positive: not yet tapegrad.Tensor methods, dense or sparse)
    return sorted(op for op in _LINEAR_UNARY | _COALESCED_UNARY | {"angle"} if hasattr(tapegrad.Tensor, op))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_unary_forward_and_backward_as_torch(layout):
    """Each unary op that keeps zeros: values and gradients as PyTorch's, and its refusals (forward or backward)."""
    mismatches = []
    for op in _unary_ops():
        outcomes = []
        for L in (torch, tapegrad):
            x = L.tensor(_DENSE, dtype=L.float64, requires_grad=True)
            try:
                s = make_from(L, x / 5, layout)
                out = getattr(s, op)()
            except (RuntimeError, NotImplementedError) as e:
                outcomes.append(("forward", type(e), str(e)[:30]))
                continue
            value = out.to_dense().detach().numpy()
            if not out.requires_grad:
                outcomes.append(("ok", value, None))
                continue
            try:
                (out.to_dense() * L.arange(16.).reshape(4, 4)).sum().backward()
                outcomes.append(("ok", value, x.grad.numpy()))
            except (RuntimeError, NotImplementedError) as e:
                outcomes.append(("backward", type(e), str(e)[:30]))
        (tk, *tr), (gk, *gr) = outcomes
        if tk != gk or tk != "ok" and tr != gr:
            mismatches.append((op, outcomes))
        elif tk == "ok" and not all(np.allclose(a, b, equal_nan=True) for a, b in zip(gr, tr) if b is not None):
            mismatches.append((op, "values or gradients differ"))
    assert not mismatches, mismatches


def test_bool_values_to_dense_as_torch():
    """Boolean results (isnan, signbit...) densify; duplicates of an uncoalesced tensor combine as PyTorch's."""
    outs = []
    for L in (torch, tapegrad):
        u = L.sparse_coo_tensor([[1, 0, 1], [2, 0, 2]], [True, False, True], (3, 3))
        outs.append((u.to_dense().numpy(), make(L, "csr").isnan().to_dense().numpy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


_BATCHED = np.array([[[1., 0., 2., 0.], [0., 3., 0., 0.]], [[0., 4., 0., 0.], [5., 0., 6., 0.]]])
_HYBRID = np.zeros((2, 3, 2))
_HYBRID[0, 0], _HYBRID[1, 2] = [1, 2], [3, 0]


@pytest.mark.parametrize("call", [
    lambda L, x: x.to_sparse_csr().transpose(1, 2), lambda L, x: x.to_sparse_csr().mT,
    lambda L, x: x.to_sparse_csc().transpose(-1, -2), lambda L, x: x.to_sparse_bsr(2).transpose(1, 2),
    lambda L, x: x.to_sparse_bsc(2).transpose(1, 2), lambda L, x: x.to_sparse_csr().transpose(0, 1),
    lambda L, x: x.to_sparse_csr().select(0, 1), lambda L, x: x.to_sparse_csc()[1],
    lambda L, x: x.to_sparse_bsr(2).select(0, 1), lambda L, x: x.to_sparse_csr().select(1, 1),
    lambda L, x: x.to_sparse_csr() * x.to_sparse_csr(), lambda L, x: x.to_sparse_csr() * x,
    lambda L, x: x.to_sparse_csc() * L.tensor(2., dtype=L.float64),
    lambda L, x: L.tensor(_HYBRID).to_sparse_csr(dense_dim=1).transpose(0, 1),
    lambda L, x: L.tensor(_HYBRID).to_sparse_csr(dense_dim=1).select(0, 1), lambda L, x: x.to_sparse_bsr(2) * 2,
    lambda L, x: L.tensor(_HYBRID).to_sparse_csr(dense_dim=1).select(1, 0),
    lambda L, x: L.tensor(_HYBRID).to_sparse_csr(dense_dim=1) * L.tensor(_HYBRID).to_sparse_csr(dense_dim=1)])
def test_batched_and_hybrid_as_torch(call):
    """Batched transpose and select (PyTorch's refusals of their backward too), hybrid ones, and mul."""
    results = []
    for L in (torch, tapegrad):
        x = L.tensor(_BATCHED, requires_grad=True)
        try:
            r = call(L, x)
            out = ("ok", r.layout.__repr__().split(".")[-1], tuple(r.shape), r._nnz(),
                   r.to_dense().detach().numpy().tolist())
            try:
                r.to_dense().pow(2).sum().backward()
                out += ("grad", None if x.grad is None else x.grad.numpy().tolist())
            except RuntimeError as e:
                out += ("backward", str(e)[:40])
        except RuntimeError as e:
            out = ("forward", str(e)[:50])
        results.append(out)
    assert results[1] == results[0]
