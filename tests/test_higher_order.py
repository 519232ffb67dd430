"""Higher-order gradients (create_graph=True) against PyTorch, in float64."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, fold_repr, from_torch, to_torch


def _leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _node_names(grads):
    return [None if g is None or g.grad_fn is None else g.grad_fn.name() for g in grads]


# ---- values and gradients ------------------------------------------------------------------

def test_third_order_derivative_of_scalar_function(torch):
    def build(lib):
        x = _leaf(lib, [0.3, -1.2, 2.0])
        y = (x.sin() * x ** 3).sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    assert ours[2].grad_fn is None and not ours[2].requires_grad


def test_hessian_vector_product_matches_functional_hvp(torch):
    rng = np.random.default_rng(0)
    a, x0, v0 = rng.normal(size=(4, 4)), rng.normal(size=4), rng.normal(size=4)

    def f(lib, A):
        return lambda x: (x @ A @ x).tanh() + (x ** 2).exp().sum()
    theirs = torch.autograd.functional.hvp(f(torch, torch.tensor(a)), torch.tensor(x0), torch.tensor(v0))[1]
    x = _leaf(tapegrad, x0)
    v = tapegrad.tensor(v0)
    g, = tapegrad.autograd.grad(f(tapegrad, tapegrad.tensor(a))(x), x, create_graph=True)
    hv, = tapegrad.autograd.grad(g, x, grad_outputs=v)
    assert_close(hv, theirs)


def _mlp_params(lib, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(5, 3), (5,), (1, 5), (1,)]
    return [lib.tensor(rng.normal(size=s) * 0.5, dtype=lib.float64, requires_grad=True) for s in shapes]


def _mlp(lib, params, x):
    w1, b1, w2, b2 = params
    return lib.nn.functional.linear(lib.tanh(lib.nn.functional.linear(x, w1, b1)), w2, b2)


def test_gradient_penalty_on_small_mlp(torch):
    xs = np.random.default_rng(1).normal(size=(6, 3))

    def build(lib):
        params = _mlp_params(lib)
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        out = _mlp(lib, params, x)
        g, = lib.autograd.grad(out.sum(), x, create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = out.mean() + 10 * penalty
        loss.backward()
        return [loss, g] + [p.grad for p in params]
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_maml_inner_step(torch):
    rng = np.random.default_rng(2)
    xs, ys, xq, yq = rng.normal(size=(8, 3)), rng.normal(size=(8, 1)), rng.normal(size=(8, 3)), rng.normal(size=(8, 1))

    def build(lib):
        params = _mlp_params(lib, seed=3)
        inner = ((_mlp(lib, params, lib.tensor(xs)) - lib.tensor(ys)) ** 2).mean()
        grads = lib.autograd.grad(inner, params, create_graph=True)
        fast = [p - 0.1 * g for p, g in zip(params, grads)]
        outer = ((_mlp(lib, fast, lib.tensor(xq)) - lib.tensor(yq)) ** 2).mean()
        outer.backward()
        return [outer] + list(grads) + [p.grad for p in params]
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_grad_inside_grad_with_a_seed_that_requires_grad(torch):
    # The double-vjp trick: d/dv of (J^T v) gives J v, so the seed is differentiated too.
    def build(lib):
        x = _leaf(lib, [0.5, 1.5])
        v = _leaf(lib, [1.0, -2.0])
        y = x.exp() * x.flip(0)
        vjp, = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
        jvp, = lib.autograd.grad(vjp, v, grad_outputs=lib.ones_like(x))
        return vjp, jvp
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_grad_of_grad_allow_unused_and_materialize(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        z = _leaf(lib, [3.0])
        w = _leaf(lib, [0.5, 0.25])
        g, = lib.autograd.grad((x * x * w).sum() + z.sum(), x, create_graph=True)
        gx, gz = lib.autograd.grad(g.sum(), [x, z], allow_unused=True, retain_graph=True)
        mx, mz = lib.autograd.grad(g.sum(), [x, z], materialize_grads=True)
        return gx, gz, mx, mz
    ours, theirs = both(build)
    assert ours[1] is None and theirs[1] is None
    for a, b in zip(ours[:1] + ours[2:], theirs[:1] + theirs[2:]):
        assert_close(a, b)
    x = _leaf(tapegrad, [1.0, 2.0])
    z = _leaf(tapegrad, [3.0])
    g, = tapegrad.autograd.grad((x ** 3).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tapegrad.autograd.grad(g.sum(), [x, z])


def test_backward_create_graph_leaves_grad_with_history(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        names = [fold_repr(repr(x.grad.grad_fn)), x.grad.is_leaf, x.grad.requires_grad]
        (x ** 3).sum().backward(create_graph=True)
        names += [fold_repr(repr(x.grad.grad_fn))]
        gg, = lib.autograd.grad(x.grad.sum(), x)
        return first, x.grad, gg, names, fold_repr(repr(first))
    ours, theirs = both(build)
    for a, b in zip(ours[:3], theirs[:3]):
        assert_close(a, b)
    assert ours[3] == theirs[3] == ["<CopyBackwards object at 0xADDR>", False, True,
                                    "<AddBackward0 object at 0xADDR>"]
    assert ours[4] == theirs[4]


def test_backward_create_graph_then_plain_backward_through_grad(torch):
    def build(lib):
        x = _leaf(lib, [1.0, -2.0, 0.5])
        with lib.no_grad():
            x.grad = lib.zeros_like(x)
        (x.sin() * x).sum().backward(create_graph=True)
        first = x.grad.detach().clone()
        x.grad.pow(2).sum().backward()
        return first, x.grad
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_backward_create_graph_with_inputs(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        w = _leaf(lib, [3.0, 4.0])
        (x * x * w).sum().backward(create_graph=True, inputs=[x])
        gg, = lib.autograd.grad(x.grad.sum(), w)
        return x.grad, gg, w.grad
    ours, theirs = both(build)
    assert ours[2] is None and theirs[2] is None
    for a, b in zip(ours[:2], theirs[:2]):
        assert_close(a, b)


def test_hooks_see_and_replace_gradients_with_history(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        seen = []
        h = x * x
        h.register_hook(lambda g: seen.append(g.requires_grad) or g * 3)
        g, = lib.autograd.grad(h.exp().sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return g, gg, seen
    ours, theirs = both(build)
    assert ours[2] == theirs[2] == [True, False]   # the second backward reaches h again
    for a, b in zip(ours[:2], theirs[:2]):
        assert_close(a, b)


def test_create_graph_under_no_grad_still_records(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        y = (x ** 3).sum()
        with lib.no_grad():
            g, = lib.autograd.grad(y, x, create_graph=True)
        return g, g.requires_grad
    ours, theirs = both(build)
    assert_close(ours[0], theirs[0])
    assert ours[1] is theirs[1] is True


# ---- printed grad_fns ------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["pow", "mul", "square", "exp", "sum", "linear_scale", "outer"])
def test_grad_fn_names_match_pytorch(torch, case):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        w = _leaf(lib, [3.0, 4.0])
        a = _leaf(lib, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        y, wrt = {"pow": ((x ** 3).sum(), [x]), "mul": ((x * w).sum(), [x, w]), "square": ((x * x).sum(), [x]),
                  "exp": (x.exp().sum(), [x]), "sum": (x.sum(), [x]), "linear_scale": ((x * 2).sum(), [x]),
                  "outer": ((a @ x).sum(), [a])}[case]
        grads = lib.autograd.grad(y, wrt, create_graph=True)
        return _node_names(grads), [fold_repr(repr(g)) for g in grads], [g.requires_grad for g in grads]
    ours, theirs = both(build)
    assert ours == theirs


def test_grad_fn_next_functions_lead_to_producers():
    x = _leaf(tapegrad, [1.0, 2.0])
    h = x.exp()
    g, = tapegrad.autograd.grad((h * h).sum(), x, create_graph=True)
    producers = {fn.name() for fn, _ in g.grad_fn.next_functions if fn is not None}
    assert "ExpBackward0" in producers


# ---- errors ----------------------------------------------------------------------------------

def test_second_backward_through_a_freed_graph_raises(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        h = x.exp()   # the double backward reads h through the graph that produced it
        g, = lib.autograd.grad((h * h).sum(), x, create_graph=True, retain_graph=False)
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            g.sum().backward()
        return g
    ours, theirs = both(build)
    assert_close(ours, theirs)


def test_create_graph_retains_the_graph_by_default(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        y = x.exp().sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(y, x)
        return g1, g2
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_in_place_change_of_a_value_the_double_backward_reads_raises(torch):
    for lib in (tapegrad, torch):
        x = _leaf(lib, [1.0, 2.0])
        g, = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
        with lib.no_grad():
            x.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g.sum().backward()


def test_backward_create_graph_warns_about_the_reference_cycle_once():
    import warnings
    from tapegrad.autograd import _api
    _api._warned[0] = False
    x = _leaf(tapegrad, [1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
    assert [str(w.message)[:60] for w in caught] == [
        "Using backward() with create_graph=True will create a refere"]


# ---- caching ---------------------------------------------------------------------------------

def test_recorded_backward_ops_are_cached_by_structure():
    from tapegrad.autograd import _higher

    def step(v):
        x = _leaf(tapegrad, v)
        g, = tapegrad.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
        g.sum().backward()
        return x.grad
    step([1.0, 2.0])
    before = len(_higher._backward_ops)
    first = step([0.5, 0.25])
    assert len(_higher._backward_ops) == before
    expected = [2 * np.cos(v) - v * np.sin(v) for v in (0.5, 0.25)]
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-12)


def test_retained_non_leaf_grad_with_history(torch):
    def build(lib):
        x = _leaf(lib, [1.0, 2.0])
        h = x * x
        h.retain_grad()
        (h ** 2).sum().backward(create_graph=True)
        grads = h.grad, x.grad, fold_repr(repr(h.grad.grad_fn))
        gg, = lib.autograd.grad(h.grad.sum() + x.grad.sum(), x)
        return grads[0], grads[1], gg, grads[2]
    ours, theirs = both(build)
    for a, b in zip(ours[:3], theirs[:3]):
        assert_close(a, b)
    assert ours[3] == theirs[3]


def test_graph_with_multi_output_ops(torch):
    def build(lib):
        x = _leaf(lib, [[1.0, 5.0], [3.0, 2.0]])
        values, _ = x.max(dim=1)
        a, b = x.split(1, dim=0)
        g, = lib.autograd.grad((values ** 2).sum() + (a * b).sum() ** 2, x, create_graph=True)
        gg, = lib.autograd.grad(g.pow(2).sum(), x)
        return g, gg
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_gradient_penalty_training_steps_with_an_optimizer(torch):
    rng = np.random.default_rng(4)
    weights = [rng.normal(size=s) * 0.3 for s in [(8, 4), (8,), (1, 8), (1,)]]
    xs = rng.normal(size=(16, 4))

    def build(lib):
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1)).double()
        with lib.no_grad():
            for p, w in zip(m.parameters(), weights):
                p.copy_(lib.tensor(w))
        opt = lib.optim.SGD(m.parameters(), lr=0.05)
        losses = []
        for _ in range(4):   # the structure repeats: later steps run compiled
            x = lib.tensor(xs).requires_grad_(True)
            out = m(x)
            g, = lib.autograd.grad(out.sum(), x, create_graph=True)
            loss = out.mean() + ((g.norm(2, dim=1) - 1) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses + [p.detach() for p in m.parameters()]
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_create_graph_in_eager_mode(torch):
    from tapegrad import _dispatch
    _dispatch.LAZY[0] = False
    try:
        x = _leaf(tapegrad, [1.0, 2.0])
        g, = tapegrad.autograd.grad((x ** 3).sum(), x, create_graph=True)
        gg, = tapegrad.autograd.grad(g.sum(), x)
    finally:
        _dispatch.LAZY[0] = True
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_recorded_backward_ops_are_dropped_by_clear_backward_cache():
    from tapegrad.autograd import _higher
    x = _leaf(tapegrad, [1.0, 2.0])
    tapegrad.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    assert len(_higher._backward_ops) > 0
    tapegrad.autograd.clear_backward_cache()
    assert len(_higher._backward_ops) == 0
