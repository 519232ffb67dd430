"""grad_fn.register_hook / register_prehook and Tensor.view(dtype), against PyTorch."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _np(t):
    return t.detach().numpy()


def _both(fn):
    """Run fn(lib, x, w) with each library on the same values; returns (torch log, tapegrad log, grads)."""
    torch.manual_seed(0)
    x, w = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    out = []
    for lib, wrap in ((torch, lambda t, r=False: t.clone().requires_grad_(r)), (tg, _tg)):
        log = []
        xx = wrap(x, True)
        fn(lib, xx, wrap(w), log)
        out.append(([tuple(None if g is None else _np(g).tolist() for g in entry) for entry in log],
                    _np(xx.grad)))
    return out


def test_hooks_see_grad_outputs_and_grad_inputs():
    def fn(lib, x, w, log):
        y = x * w
        y.grad_fn.register_prehook(lambda go: log.append(go))
        y.grad_fn.register_hook(lambda gi, go: log.append(gi) or log.append(go))
        (y * 2).sum().backward()
    (t_log, t_grad), (m_log, m_grad) = _both(fn)
    assert m_log == t_log   # grad_inputs: (grad of x, None for w which needs none)
    np.testing.assert_allclose(m_grad, t_grad)


def test_hooks_replace_gradients_in_order():
    def fn(lib, x, w, log):
        y = (x * w).exp()
        node = y.grad_fn
        node.register_prehook(lambda go: (go[0] * 3,))
        node.register_prehook(lambda go: log.append(go) or None)
        node.register_hook(lambda gi, go: (gi[0] + 1,))
        node.register_hook(lambda gi, go: log.append(gi) or log.append(go))
        y.retain_grad()
        y.register_hook(lambda g: g * 10)   # tensor hooks run before the node's pre-hooks
        y.sum().backward()
        log.append((y.grad,))
    (t_log, t_grad), (m_log, m_grad) = _both(fn)
    assert len(m_log) == len(t_log) == 4
    for a, b in zip(m_log, t_log):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float))
    np.testing.assert_allclose(m_grad, t_grad)


def test_multi_output_node_sees_none_for_outputs_without_gradient():
    results = []
    for lib, wrap in ((torch, lambda t: t.clone().requires_grad_()), (tg, lambda t: _tg(t, True))):
        a = wrap(torch.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=torch.float64))
        sign, logabsdet = lib.linalg.slogdet(a)
        log = []
        logabsdet.grad_fn.register_prehook(lambda go: log.append(go) or (None, go[1] * 3))
        logabsdet.grad_fn.register_hook(lambda gi, go: log.append(gi) or log.append(go))
        logabsdet.backward()
        results.append(([tuple(None if g is None else _np(g).tolist() for g in e) for e in log], _np(a.grad)))
    assert [[None if g is None else np.round(g, 12).tolist() for g in e] for e in results[1][0]] == \
        [[None if g is None else np.round(g, 12).tolist() for g in e] for e in results[0][0]]
    np.testing.assert_allclose(results[1][1], results[0][1])


def test_prehook_may_drop_a_gradient():
    def fn(lib, x, w, log):
        y = (x * 3).exp()
        y.grad_fn.register_prehook(lambda go: (None,))   # the node then sees zeros
        (y + x * w).sum().backward()
    (_, t_grad), (_, m_grad) = _both(fn)
    np.testing.assert_allclose(m_grad, t_grad)


def test_removed_hooks_and_scalar_inputs():
    def fn(lib, x, w, log):
        y = x + 2
        handle = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, None))
        handle.remove()
        y.grad_fn.register_hook(lambda gi, go: log.append(gi))   # the wrapped scalar lists as None
        y.sum().backward()
    (t_log, t_grad), (m_log, m_grad) = _both(fn)
    assert m_log == t_log
    np.testing.assert_allclose(m_grad, t_grad)


def test_hooks_with_autograd_grad_and_create_graph():
    for lib, wrap in ((torch, lambda t: t.clone().requires_grad_()), (tg, lambda t: _tg(t, True))):
        x = wrap(torch.tensor([1.0, 2.0], dtype=torch.float64))
        y = x.pow(3)
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2,))
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        if lib is torch:
            expect = (_np(g), _np(gg))
        else:
            np.testing.assert_allclose(_np(g), expect[0])
            np.testing.assert_allclose(_np(gg), expect[1])


@pytest.mark.parametrize("kind, ret", [("pre", "pair"), ("post", "tensor"), ("post", "not_none"),
                                       ("pre", "shape"), ("pre", "list"), ("pre", "dtype")])
def test_hook_errors(kind, ret):
    errors = []
    for lib, wrap in ((torch, lambda t, r=False: t.clone().requires_grad_(r)), (tg, _tg)):
        x, w = wrap(torch.ones(3), True), wrap(torch.ones(3))
        value = {"pair": lambda: (lib.ones(3), lib.ones(3)), "tensor": lambda: lib.ones(3),
                 "not_none": lambda: (lib.ones(3), lib.ones(3)), "shape": lambda: (lib.ones(2),),
                 "list": lambda: [lib.ones(3)], "dtype": lambda: (lib.ones(3, dtype=lib.float64),)}[ret]()
        y = x * w
        if kind == "pre":
            y.grad_fn.register_prehook(lambda go: value)
        else:
            y.grad_fn.register_hook(lambda gi, go: value)
        with pytest.raises((RuntimeError, TypeError)) as err:
            y.sum().backward()
        errors.append((err.type, str(err.value)))
    assert errors[1][0] is errors[0][0]
    assert errors[0][1] in errors[1][1]


# ---- Tensor.view(dtype) ------------------------------------------------------------------------

CASES = [
    ("float32", "int32", (2, 3)), ("float32", "int16", (2, 3)), ("float32", "uint8", (4,)),
    ("int16", "float32", (3, 4)), ("float64", "complex64", (2, 2)), ("complex64", "float32", (3,)),
    ("bool", "uint8", (4,)), ("bool", "int8", (2, 2)), ("int8", "bool", (5,)), ("float64", "int64", (3,)),
    ("float32", "bfloat16", (2, 2)), ("int64", "float16", (2,)),
]


@pytest.mark.parametrize("src, dst, shape", CASES)
def test_view_dtype_values_and_shapes(src, dst, shape):
    torch.manual_seed(0)
    t = (torch.randn(shape, dtype=torch.float64) * 100).to(getattr(torch, src)) if src != "bool" else \
        torch.rand(shape) > 0.5
    if src == "int8":
        t = torch.tensor([0, 1, 1, 0, 1], dtype=torch.int8)
    mine = tg.tensor(t.numpy()) if src != "bfloat16" else None
    got, expect = mine.view(getattr(tg, dst)), t.view(getattr(torch, dst))
    assert tuple(got.shape) == tuple(expect.shape)
    assert got.dtype == getattr(tg, dst)
    assert got.stride() == expect.stride()
    got_np = got.view(getattr(tg, "int16") if dst in ("bfloat16", "float16") else getattr(tg, dst))
    expect_np = expect.view(torch.int16) if dst in ("bfloat16", "float16") else expect
    np.testing.assert_array_equal(_np(got_np), expect_np.numpy())


@pytest.mark.parametrize("make, dst", [
    (lambda lib: lib.ones(2, 3), "float64"),
    (lambda lib: lib.ones(3, 2).t(), "int16"),
    (lambda lib: lib.ones(3, 4)[:, 1:3], "float64"),
    (lambda lib: lib.ones(()), "int16"),
    (lambda lib: lib.ones(3, dtype=lib.int8), "int16"),
])
def test_view_dtype_errors(make, dst):
    with pytest.raises(RuntimeError) as t_err:
        make(torch).view(getattr(torch, dst))
    with pytest.raises(RuntimeError) as m_err:
        make(tg).view(getattr(tg, dst))
    assert str(t_err.value) in str(m_err.value)


def test_view_dtype_is_a_view_without_grad():
    for lib in (torch, tg):
        x = lib.arange(4.0)
        v = x.view(lib.int32)
        v[0] = 1
        w = x[1:].view(lib.int16)
        w[1] = 0
        y = lib.ones(2, 4, requires_grad=True, dtype=lib.float64)
        z = y.view(lib.float32)
        k = lib.ones(2).view(dtype=lib.int32)   # the keyword form
        result = (x.numpy().copy(), v.numpy().copy(), z.requires_grad, z.grad_fn, tuple(z.shape), z._base is y,
                  k.numpy().tolist(), tuple(lib.ones(2).view(size=(2, 1)).shape))
        if lib is torch:
            expect = result
    np.testing.assert_array_equal(result[0], expect[0])
    np.testing.assert_array_equal(result[1], expect[1])
    assert result[2:] == expect[2:]
