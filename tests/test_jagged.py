"""Nested tensors of the jagged layout (tapegrad.jagged) against torch.nested's NJT: values, sizes, reprs,
gradients to the values and to the list's tensors, and errors."""
import re
import warnings

import numpy as np
import pytest
import torch

import tapegrad

warnings.filterwarnings("ignore", message=".*is_fx_tracing.*")


def _data(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _lists(data, requires_grad=True):
    ts = [torch.tensor(d, requires_grad=requires_grad) for d in data]
    tg = [tapegrad.tensor(d, requires_grad=requires_grad) for d in data]
    return ts, tg


def _norm(text, grad_fn=True):
    """A repr with the ragged symbols' numbers and object addresses dropped (both count per process); without
    the grad_fn's name where tapegrad records a view of the values as an ordinary view op."""
    text = re.sub(r"\bj\d+\b", "j", text)
    if not grad_fn:
        text = re.sub(r"grad_fn=<\w+", "grad_fn=<", text)
    text = re.sub(r" object at 0x[0-9a-f]+", "", text)
    return text.replace("torch.", "").replace("tapegrad.", "")


def _close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol, atol=tol)


def _same_nested(ng, nt, contiguity=True):
    assert _norm(repr(ng.shape)) == _norm(repr(nt.shape))
    assert ng.dim() == nt.dim() and len(ng) == len(nt) and ng.numel() == nt.numel()
    assert not contiguity or ng.is_contiguous() == nt.is_contiguous()
    _close(ng.values(), nt.values())
    np.testing.assert_array_equal(ng.offsets().numpy(), nt.offsets().numpy())
    assert (ng.lengths() is None) == (nt.lengths() is None)
    for a, b in zip(ng.unbind(), nt.unbind(), strict=True):
        _close(a, b)


# ---- construction, attributes, printing -----------------------------------------------------------------------

def test_nested_tensor_attributes_and_repr_match_torch():
    ts, tg = _lists(_data((2, 3), (4, 3)), requires_grad=False)
    nt = torch.nested.nested_tensor(ts, layout=torch.jagged)
    ng = tapegrad.nested.nested_tensor(tg, layout=tapegrad.jagged)
    _same_nested(ng, nt)
    assert repr(tapegrad.jagged) == "tapegrad.jagged" and ng.layout is tapegrad.jagged
    assert ng.is_nested and not tapegrad.ones(2).is_nested
    assert _norm(repr(ng)) == _norm(repr(nt))
    assert _norm(repr(ng)) == "NestedTensor(size=(2, j, 3), offsets=tensor([0, 2, 6]), contiguous=True)"
    assert ng.size(0) == 2 and ng.size(-1) == 3 and ng.size(1) == ng.shape[1] and ng.lengths() is None
    assert ng.dtype == tapegrad.float64 and ng.is_leaf and ng.grad_fn is None and not ng.requires_grad
    for bad in (3, -4):
        with pytest.raises(IndexError) as et:
            nt.size(bad)
        with pytest.raises(IndexError) as eg:
            ng.size(bad)
        assert str(eg.value) == str(et.value)


def test_ragged_symbol_is_one_per_offsets_tensor():
    values = tapegrad.arange(12.).reshape(6, 2)
    offsets = tapegrad.tensor([0, 2, 6])
    a = tapegrad.nested.nested_tensor_from_jagged(values, offsets)
    b = tapegrad.nested.nested_tensor_from_jagged(values * 2, offsets)
    c = tapegrad.nested.nested_tensor_from_jagged(values, tapegrad.tensor([0, 2, 6]))
    assert a.shape[1] == b.shape[1] and repr(a.shape[1]) == repr(b.shape[1])
    assert a.shape[1] != c.shape[1] and repr(a.shape[1]) != repr(c.shape[1])
    assert (a + b).shape[1] == a.shape[1] and re.fullmatch(r"j\d+", repr(a.shape[1]))
    # the same as PyTorch's: shared offsets add, distinct ones refuse
    tv, to = torch.arange(12.).reshape(6, 2), torch.tensor([0, 2, 6])
    tn = torch.nested.nested_tensor_from_jagged(tv, to)
    tm = torch.nested.nested_tensor_from_jagged(tv, torch.tensor([0, 2, 6]))
    _close((a + b).values(), (tn + torch.nested.nested_tensor_from_jagged(tv * 2, to)).values())
    with pytest.raises(RuntimeError, match="cannot call binary pointwise function add.Tensor"):
        tn + tm
    with pytest.raises(RuntimeError, match="cannot call binary pointwise function add.Tensor"):
        a + c


def test_nested_tensor_leaf_requires_grad_and_grad_is_nested():
    ts, tg = _lists(_data((2, 3), (1, 3), (3, 3)), requires_grad=False)
    nt = torch.nested.nested_tensor(ts, layout=torch.jagged, requires_grad=True)
    ng = tapegrad.nested.nested_tensor(tg, layout=tapegrad.jagged, requires_grad=True)
    assert _norm(repr(ng)) == _norm(repr(nt))
    assert ng.is_leaf and nt.is_leaf
    (nt * nt).values().sum().backward()
    (ng * ng).values().sum().backward()
    assert ng.grad.is_nested and ng.grad.layout is tapegrad.jagged
    _same_nested(ng.grad, nt.grad)


def test_lists_of_numbers_and_dtype():
    nt = torch.nested.nested_tensor([[1., 2], [3., 4, 5]], layout=torch.jagged, dtype=torch.float64)
    ng = tapegrad.nested.nested_tensor([[1., 2], [3., 4, 5]], layout=tapegrad.jagged, dtype=tapegrad.float64)
    _same_nested(ng, nt)
    assert _norm(repr(ng)) == _norm(repr(nt)) and ng.dtype == tapegrad.float64


def test_as_nested_tensor_gradients_reach_the_list():
    data = _data((2, 3), (4, 3))
    ts, tg = _lists(data)
    nt = torch.nested.as_nested_tensor(ts, layout=torch.jagged)
    ng = tapegrad.nested.as_nested_tensor(tg, layout=tapegrad.jagged)
    assert ng.grad_fn is not None and not ng.is_leaf and ng.requires_grad
    yt, yg = (nt * 2).sin() * nt, (ng * 2).sin() * ng
    _same_nested(yg, yt)
    torch.nested.to_padded_tensor(yt, 0.5).pow(2).sum().backward()
    tapegrad.nested.to_padded_tensor(yg, 0.5).pow(2).sum().backward()
    for a, b in zip(tg, ts):
        _close(a.grad, b.grad)


def test_as_nested_tensor_of_a_padded_batch():
    x = np.arange(24.).reshape(2, 4, 3)
    nt = torch.nested.as_nested_tensor(torch.tensor(x), layout=torch.jagged)
    ng = tapegrad.nested.as_nested_tensor(tapegrad.tensor(x), layout=tapegrad.jagged)
    _same_nested(ng, nt)
    with pytest.raises(RuntimeError, match="Expected tensor argument to have dim"):
        tapegrad.nested.as_nested_tensor(tapegrad.ones(3), layout=tapegrad.jagged)


def test_construction_errors_match_torch():
    cases = [[], [np.zeros((2, 3)), np.zeros((3, 4))], [np.zeros((2,)), np.zeros((2, 2))], [np.float64(1.0)] * 2]
    for case in cases:
        with pytest.raises(RuntimeError) as et:
            torch.nested.nested_tensor([torch.tensor(c) for c in case], layout=torch.jagged)
        with pytest.raises(RuntimeError) as eg:
            tapegrad.nested.nested_tensor([tapegrad.tensor(c) for c in case], layout=tapegrad.jagged)
        assert str(et.value) in str(eg.value)
    with pytest.raises(RuntimeError, match="all tensors in list must have the same dtype"):
        tapegrad.nested.nested_tensor([tapegrad.ones(2), tapegrad.ones(3, dtype=tapegrad.int64)],
                                      layout=tapegrad.jagged)
    with pytest.raises(RuntimeError, match="Specified layout is unsupported for nested tensors"):
        tapegrad.nested.nested_tensor([tapegrad.ones(2)], layout=tapegrad.sparse_coo)


# ---- nested_tensor_from_jagged, narrow ---------------------------------------------------------------------------

def test_from_jagged_is_a_view_with_gradients_to_values():
    v = np.random.default_rng(1).standard_normal((6, 2))
    vt, vg = torch.tensor(v, requires_grad=True), tapegrad.tensor(v, requires_grad=True)
    nt = torch.nested.nested_tensor_from_jagged(vt, torch.tensor([0, 2, 6]))
    ng = tapegrad.nested.nested_tensor_from_jagged(vg, tapegrad.tensor([0, 2, 6]))
    _same_nested(ng, nt)
    assert ng.grad_fn is not None and ng.requires_grad
    torch.nested.to_padded_tensor(nt.exp(), -1.0).sum().backward()
    tapegrad.nested.to_padded_tensor(ng.exp(), -1.0).sum().backward()
    _close(vg.grad, vt.grad)


def test_from_jagged_lengths_holes_and_lengths_only():
    v = np.arange(12.).reshape(6, 2)
    nt = torch.nested.nested_tensor_from_jagged(torch.tensor(v), torch.tensor([0, 2, 6]), torch.tensor([1, 3]))
    ng = tapegrad.nested.nested_tensor_from_jagged(tapegrad.tensor(v), tapegrad.tensor([0, 2, 6]),
                                                   tapegrad.tensor([1, 3]))
    _same_nested(ng, nt)
    np.testing.assert_array_equal(ng.lengths().numpy(), nt.lengths().numpy())
    assert _norm(repr(ng), grad_fn=False) == _norm(repr(nt), grad_fn=False)
    _close((ng + 1).sin().values(), (nt + 1).sin().values())
    for pad in (torch.nested.to_padded_tensor, tapegrad.nested.to_padded_tensor):
        with pytest.raises(RuntimeError, match="not supported for nested tensors with holes"):
            pad(ng if pad is tapegrad.nested.to_padded_tensor else nt, 0.0)
    nt = torch.nested.nested_tensor_from_jagged(torch.tensor(v), lengths=torch.tensor([2, 4]))
    ng = tapegrad.nested.nested_tensor_from_jagged(tapegrad.tensor(v), lengths=tapegrad.tensor([2, 4]))
    _same_nested(ng, nt)
    with pytest.raises(RuntimeError, match="At least one of offsets or lengths is required"):
        tapegrad.nested.nested_tensor_from_jagged(tapegrad.tensor(v))
    with pytest.raises(ValueError, match="Expected jagged_dim >=1, but got 0"):
        tapegrad.nested.nested_tensor_from_jagged(tapegrad.tensor(v), tapegrad.tensor([0, 6]), jagged_dim=0)


def test_from_jagged_with_a_later_jagged_dim():
    v = np.arange(24.).reshape(2, 6, 2)
    nt = torch.nested.nested_tensor_from_jagged(torch.tensor(v), torch.tensor([0, 2, 6]), jagged_dim=2)
    ng = tapegrad.nested.nested_tensor_from_jagged(tapegrad.tensor(v), tapegrad.tensor([0, 2, 6]), jagged_dim=2)
    _same_nested(ng, nt)
    assert _norm(repr(ng), grad_fn=False) == _norm(repr(nt), grad_fn=False)
    # PyTorch pads to the values' first size when max_seqlen is unknown (here cutting the second component)
    _close(tapegrad.nested.to_padded_tensor(ng, 0.0), torch.nested.to_padded_tensor(nt, 0.0))
    _close((ng * 3).cos().values(), (nt * 3).cos().values())


@pytest.mark.parametrize("start,length", [([0, 1, 2, 0], [2, 3, 1, 4]), (1, 2), ([0, 0, 0, 0], [5, 5, 5, 5]),
                                          ([3, 0, 0, 0], [2, 5, 5, 1])])
def test_narrow_matches_torch(start, length):
    x = np.arange(40.).reshape(4, 5, 2)
    xt, xg = torch.tensor(x, requires_grad=True), tapegrad.tensor(x, requires_grad=True)
    conv_t = (lambda v: torch.tensor(v)) if isinstance(start, list) else (lambda v: v)
    conv_g = (lambda v: tapegrad.tensor(v)) if isinstance(start, list) else (lambda v: v)
    nt = torch.nested.narrow(xt, 1, conv_t(start), conv_t(length), layout=torch.jagged)
    ng = tapegrad.nested.narrow(xg, 1, conv_g(start), conv_g(length), layout=tapegrad.jagged)
    _same_nested(ng, nt)
    assert _norm(repr(ng), grad_fn=False) == _norm(repr(nt), grad_fn=False)
    if ng.lengths() is None:
        _close(tapegrad.nested.to_padded_tensor(ng, -1.0), torch.nested.to_padded_tensor(nt, -1.0))
    sum(t.pow(2).sum() for t in nt.unbind()).backward()
    sum(t.pow(2).sum() for t in ng.unbind()).backward()
    _close(xg.grad, xt.grad)
    with pytest.raises(RuntimeError, match="jagged layout only supports dim=1"):
        tapegrad.nested.narrow(xg, 0, 1, 2, layout=tapegrad.jagged)


# ---- ops ---------------------------------------------------------------------------------------------------------

def _pair(*shapes):
    data = _data(*shapes, seed=2)
    ts, tg = _lists(data)
    return (ts, tg), torch.nested.as_nested_tensor(ts, layout=torch.jagged), \
        tapegrad.nested.as_nested_tensor(tg, layout=tapegrad.jagged)


_UNARY = {
    "sin": lambda m, x: x.sin(), "exp": lambda m, x: m.exp(x), "relu": lambda m, x: m.nn.functional.relu(x),
    "neg_abs": lambda m, x: -x.abs(), "sigmoid": lambda m, x: m.sigmoid(x), "pow": lambda m, x: x ** 2,
    "gelu": lambda m, x: m.nn.functional.gelu(x), "rsub": lambda m, x: 1.5 - x, "div": lambda m, x: x / 3,
    "clone": lambda m, x: x.clone(), "tanh": lambda m, x: m.tanh(x), "to": lambda m, x: x.to(m.float32),
}


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_elementwise_values_and_gradients(name):
    (ts, tg), nt, ng = _pair((2, 3), (4, 3), (1, 3))
    f = _UNARY[name]
    yt, yg = f(torch, nt), f(tapegrad, ng)
    assert yg.layout is tapegrad.jagged and yg.dtype.name == str(yt.dtype).split(".")[1]
    _same_nested(yg, yt) if yg.dtype == tapegrad.float64 else _close(yg.values().double(), yt.values().double(),
                                                                     1e-6)
    (yt.values() * torch.arange(yt.values().numel()).reshape(yt.values().shape)).sum().backward()
    (yg.values() * tapegrad.arange(yg.values().numel()).reshape(yg.values().shape)).sum().backward()
    for a, b in zip(tg, ts):
        _close(a.grad, b.grad, 1e-6)


_BINARY = {
    "add_nested": lambda m, x, d: x + x * 2, "mul_dense_row": lambda m, x, d: x * d[0],
    "sub_dense_1d": lambda m, x, d: x - d[0, 0], "per_component": lambda m, x, d: x * d,
    "where": lambda m, x, d: m.where(x > 0, x, d[0]), "clamp": lambda m, x, d: m.clamp(x, -0.5, 0.5),
    "scalar_tensor": lambda m, x, d: x * m.tensor(2.5, dtype=m.float64),
}


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_elementwise_with_nested_dense_and_scalars(name):
    (ts, tg), nt, ng = _pair((2, 3), (4, 3), (1, 3))
    d = np.random.default_rng(3).standard_normal((3, 1, 3))
    dt, dg = torch.tensor(d, requires_grad=True), tapegrad.tensor(d, requires_grad=True)
    f = _BINARY[name]
    yt, yg = f(torch, nt, dt), f(tapegrad, ng, dg)
    _same_nested(yg, yt)
    torch.nested.to_padded_tensor(yt, 0.0).pow(2).sum().backward()
    tapegrad.nested.to_padded_tensor(yg, 0.0).pow(2).sum().backward()
    for a, b in zip(tg, ts):
        _close(a.grad, b.grad)
    assert (dg.grad is None) == (dt.grad is None)
    if dt.grad is not None:
        _close(dg.grad, dt.grad)


def test_dense_operand_must_have_size_one_in_the_ragged_dim():
    _, nt, ng = _pair((2, 3), (4, 3))
    for shape in ((4, 3), (1, 4, 3)):
        for m, x in ((torch, nt), (tapegrad, ng)):
            with pytest.raises(RuntimeError, match="cannot call binary pointwise function add.Tensor"):
                x + m.ones(*shape, dtype=m.float64)


# name: (the op on a nested tensor, the same op on the list of components, as a tensor or a list of them).
# The gradients are checked against the per-component computation: PyTorch 2.13's nested backward of sum and
# mean over dimensions and of log_softmax is not implemented, and its softmax over the ragged dimension gives
# a gradient other than the derivative.
_REDUCE = {
    "sum_all": (lambda m, x: x.sum(), lambda ts: sum(t.sum() for t in ts)),
    "mean_all": (lambda m, x: x.mean(), lambda ts: torch.cat(ts).mean()),
    "sum_ragged": (lambda m, x: x.sum(1), lambda ts: torch.stack([t.sum(0) for t in ts])),
    "mean_ragged": (lambda m, x: x.mean(1), lambda ts: torch.stack([t.mean(0) for t in ts])),
    "mean_ragged_keep": (lambda m, x: x.mean(1, keepdim=True), lambda ts: torch.stack([t.mean(0) for t in ts])),
    "sum_batch_ragged": (lambda m, x: x.sum((0, 1)), lambda ts: torch.cat(ts).sum(0)),
    "sum_last": (lambda m, x: x.sum(-1), lambda ts: [t.sum(-1) for t in ts]),
    "sum_last_keep": (lambda m, x: x.sum(2, keepdim=True), lambda ts: [t.sum(-1) for t in ts]),
    "softmax_last": (lambda m, x: m.softmax(x, -1), lambda ts: [t.softmax(-1) for t in ts]),
    "log_softmax_last": (lambda m, x: m.log_softmax(x, 2), lambda ts: [t.log_softmax(-1) for t in ts]),
    "softmax_ragged": (lambda m, x: m.softmax(x, 1), lambda ts: [t.softmax(0) for t in ts]),
    "transpose": (lambda m, x: x.transpose(1, 2).sin(), lambda ts: [t.T.sin() for t in ts]),
    "transpose_back": (lambda m, x: x.transpose(1, 2).transpose(-1, 1) * 2, lambda ts: [t * 2 for t in ts]),
}


@pytest.mark.parametrize("name", sorted(_REDUCE))
def test_reductions_softmax_transpose_match_torch(name):
    (ts, tg), nt, ng = _pair((2, 3), (4, 3), (1, 3))
    nested_op, per_component = _REDUCE[name]
    with torch.no_grad():
        yt = nested_op(torch, nt)
    yg = nested_op(tapegrad, ng)
    assert yg.is_nested == yt.is_nested
    if yt.is_nested:
        # an elementwise op on a transposed tensor gives a contiguous one in tapegrad (PyTorch keeps the strides)
        contiguity = name != "transpose"
        _same_nested(yg, yt, contiguity)
        if contiguity:
            assert re.sub(", grad_fn=<[^>]*>", "", _norm(repr(yg))) == _norm(repr(yt))
        (yg.values() ** 2).sum().backward()
    else:
        assert tuple(yg.shape) == tuple(yt.shape)
        _close(yg, yt)
        (yg ** 2).sum().backward()
    expected = per_component(ts)
    sum((e ** 2).sum() for e in (expected if isinstance(expected, list) else [expected])).backward()
    for a, b in zip(tg, ts):
        _close(a.grad, b.grad)


def test_log_softmax_over_the_ragged_dim_refused_as_in_torch():
    _, nt, ng = _pair((2, 3), (4, 3))
    with pytest.raises(RuntimeError) as et:
        torch.log_softmax(nt, 1)
    with pytest.raises(RuntimeError) as eg:
        tapegrad.log_softmax(ng, 1)
    assert str(et.value) in str(eg.value)


def test_reduction_errors_match_torch():
    _, nt, ng = _pair((2, 3), (4, 3))
    for dims in (0, (1, 2)):
        with pytest.raises(RuntimeError) as et:
            nt.sum(dims)
        with pytest.raises(RuntimeError) as eg:
            ng.sum(dims)
        assert str(et.value) in str(eg.value)


def test_linear_and_layer_norm_on_values():
    (ts, tg), nt, ng = _pair((2, 3), (4, 3))
    w, b = _data((5, 3), (5,), seed=4)
    wt, wg = torch.tensor(w, requires_grad=True), tapegrad.tensor(w, requires_grad=True)
    yt = torch.nn.functional.layer_norm(torch.nn.functional.linear(nt, wt, torch.tensor(b)), (5,))
    yg = tapegrad.nn.functional.layer_norm(tapegrad.nn.functional.linear(ng, wg, tapegrad.tensor(b)), (5,))
    _same_nested(yg, yt)
    torch.nested.to_padded_tensor(yt, 0.0).pow(3).sum().backward()
    tapegrad.nested.to_padded_tensor(yg, 0.0).pow(3).sum().backward()
    _close(wg.grad, wt.grad, 1e-10)
    for a, c in zip(tg, ts):
        _close(a.grad, c.grad, 1e-10)


def test_nn_linear_module_on_a_nested_batch():
    torch.manual_seed(0)
    lt = torch.nn.Linear(3, 2).double()
    lg = tapegrad.nn.Linear(3, 2).double()
    lg.load_state_dict({k: tapegrad.tensor(v.detach().numpy()) for k, v in lt.state_dict().items()})
    _, nt, ng = _pair((2, 3), (4, 3))
    _same_nested(lg(ng), lt(nt))


def test_to_padded_tensor_output_size_and_errors():
    (_, _), nt, ng = _pair((2, 3), (4, 3))
    for size in ((2, 5, 4), (2, 3, 3)):   # PyTorch reads only the ragged entry, and cuts longer components
        _close(tapegrad.nested.to_padded_tensor(ng, 7.0, size), torch.nested.to_padded_tensor(nt, 7.0, size))
    _close(ng.to_padded_tensor(-2.0), nt.to_padded_tensor(-2.0))
    _close(tapegrad.nested.to_padded_tensor(ng.transpose(1, 2), 1.0),
           torch.nested.to_padded_tensor(nt.transpose(1, 2), 1.0))


def test_unbind_and_conversions_errors_match_torch():
    _, nt, ng = _pair((2, 3), (4, 3))
    for call in (lambda x: x.unbind(1), lambda x: x.tolist(), lambda x: x.numpy()):
        with pytest.raises(RuntimeError) as et:
            call(nt)
        with pytest.raises(RuntimeError) as eg:
            call(ng)
        assert str(et.value).split(",")[0] in str(eg.value)
    assert len(ng.unbind()) == 2 and ng.detach().grad_fn is None and not ng.detach().requires_grad
    for i in (0, 1, -1):
        _close(ng[i], nt[i])
    with pytest.raises(IndexError):
        ng[2]


def test_gradcheck_through_nested_ops():
    v = tapegrad.tensor(np.random.default_rng(5).standard_normal((5, 3)), requires_grad=True)
    offsets = tapegrad.tensor([0, 1, 5])

    def f(values):
        nt = tapegrad.nested.nested_tensor_from_jagged(values, offsets)
        return tapegrad.nested.to_padded_tensor(tapegrad.softmax(nt.sin() * nt, 1).sum(-1), 0.0)

    assert tapegrad.autograd.gradcheck(f, (v,))
