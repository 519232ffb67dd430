"""tapegrad.func against torch.func: the same code, run by both libraries."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, raised


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=lib.float64)


def _f(lib):
    return lambda x, w: (lib.tanh(x @ w) ** 2).sum() + (w * w).sum()


def test_grad_vjp_jvp_and_jacobians(torch):
    def build(lib):
        x, w = _data(lib, 4, 3), _data(lib, 3, 2, seed=1)
        f = _f(lib)
        g_w = lib.func.grad(f, argnums=1)(x, w)
        g_both, value = lib.func.grad_and_value(f, argnums=(0, 1))(x, w)
        g = lambda x: lib.sin(x) * x.sum()
        out, vjp_fn = lib.func.vjp(g, x[0])
        (vjp_x,) = vjp_fn(lib.ones(3, dtype=lib.float64))
        out2, jvp_out = lib.func.jvp(g, (x[0],), (lib.ones(3, dtype=lib.float64),))
        jr = lib.func.jacrev(g)(x[0])
        jf = lib.func.jacfwd(g)(x[0])
        h = lib.func.hessian(lambda v: (v ** 3).sum() * v[0])(x[0])
        return g_w, *g_both, value, out, vjp_x, out2, jvp_out, jr, jf, h
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
        assert not a.requires_grad


def test_per_sample_gradients_of_a_module(torch):
    """vmap(grad(loss), in_dims=(None, 0, 0)) over functional_call: the torch.func tutorial's recipe."""
    def build(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        rng = np.random.default_rng(3)
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)), dtype=lib.float32))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = lib.tensor(rng.normal(size=(5, 3)), dtype=lib.float32)
        y = lib.tensor([0, 1, 1, 0, 1])

        def loss(params, sample, target):
            out = lib.func.functional_call(model, params, (sample.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        return [grads[k] for k in sorted(grads)], model[0].weight
    (ours, our_w), (theirs, their_w) = both(build)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape)[0] == 5
        assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert_close(our_w, their_w)   # the module's own parameters are back


def test_nested_vmap_and_out_dims(torch):
    def build(lib):
        x = _data(lib, 2, 3, 4)
        inner = lib.func.vmap(lambda r: r.sum() * r, in_dims=0)
        return lib.func.vmap(inner, in_dims=1, out_dims=1)(x)
    ours, theirs = both(build)
    assert_close(ours, theirs)


def test_grad_of_a_function_that_reads_values_runs_eagerly(torch):
    """grad and grad_and_value run a function that reads values in Python eagerly, as PyTorch's grad does
    (nested too); the other transforms trace it and refuse the read."""
    def f(lib):
        return lambda v: (v ** 3).sum() * v.sum().item() if v.sum() > 0 else v.sum()

    def build(lib):
        x = lib.tensor([1., 2., 3.])
        return (lib.func.grad(f(lib))(x), lib.func.grad(f(lib))(-x), lib.func.grad_and_value(f(lib))(x)[0],
                lib.func.grad(lambda s: lib.func.grad(f(lib))(s * x).sum())(lib.tensor(1.)))
    for ours, theirs in zip(*both(build)):
        assert_close(ours, theirs)
    with pytest.raises(RuntimeError, match=r"cannot read tensor values in Python \(\.item\(\)"):
        tapegrad.func.jvp(lambda v: v * v.sum().item(), (tapegrad.ones(3),), (tapegrad.ones(3),))


def test_functional_call_errors_and_tied_weights(torch):
    def build(lib):
        lin = lib.nn.Linear(2, 2)
        model = lib.nn.Sequential(lin, lin)   # one module twice: its weight is tied
        w = lib.ones(2, 2)
        out = lib.func.functional_call(model, {"0.weight": w, "0.bias": lib.zeros(2)}, (lib.ones(1, 2),))
        try:
            lib.func.functional_call(model, {"nope": w, "0.weight": w}, (lib.ones(1, 2),), strict=True)
        except RuntimeError as e:
            err = str(e)
        ignored = lib.func.functional_call(model, {"nope": w, "0.weight": w, "0.bias": lib.zeros(2)},
                                           (lib.ones(1, 2),))
        return (out, ignored), err
    (ours, err), (theirs, terr) = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    assert err == terr


def test_dicts_keep_their_order(torch):
    """JAX's pytrees sort a dict's keys; torch.func's results keep the order of the dicts given or built."""
    def build(lib):
        params = {"w": _data(lib, 2), "b": _data(lib, 1, seed=1)}
        results = [lib.func.grad(lambda p: (p["w"] * p["b"]).sum())(params),
                   lib.func.jacrev(lambda p: p["w"] * p["b"])(params),
                   lib.func.vmap(lambda x: {"z": x * 2, "a": x})(_data(lib, 3, 1)),
                   lib.func.vmap(lambda d: d["w"] * d["b"], in_dims=({"w": 0, "b": None},))(
                       {"w": _data(lib, 3, 2), "b": _data(lib, 2)})]
        out, pullback = lib.func.vjp(lambda p: {"y": p["w"] * 2, "x": p["b"]}, params)
        results += [out, pullback({"y": _data(lib, 2, seed=2), "x": _data(lib, 1, seed=3)})[0]]
        return results
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        if isinstance(b, dict):
            assert list(a) == list(b)
            for k in b:
                assert_close(a[k], b[k])
        else:
            assert_close(a, b)


@pytest.mark.parametrize("case", ["vjp_order", "vjp_list", "jvp_order"])
def test_structure_mismatch_errors(torch, case):
    def run(lib):
        p = {"w": lib.ones(2), "b": lib.ones(1)}
        if case == "jvp_order":
            return lib.func.jvp(lambda q: q["w"] * q["b"], (p,), ({"b": lib.ones(1), "w": lib.ones(2)},))
        if case == "vjp_list":
            return lib.func.vjp(lambda x: (x, x), lib.ones(2))[1]([lib.ones(2), lib.ones(2)])
        return lib.func.vjp(lambda q: {"y": q["w"], "x": q["b"]}, p)[1]({"x": lib.ones(1), "y": lib.ones(2)})
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(tapegrad)
    phrase = str(theirs.value).split(" Got ")[0].split("TreeSpec")[0]
    assert phrase in str(ours.value)


@pytest.mark.parametrize("case", ["getitem", "index_select", "gather", "grad_of_getitem", "jacrev", "cross_entropy"])
def test_index_checks_run_inside_transforms(torch, case):
    """An index tensor the transform maps over is a traced value: in range it is read as in PyTorch, out of
    range it raises PyTorch's error (checkify inside the program), where JAX would clamp it."""
    def run(lib, bad):
        x = lib.arange(12.0, dtype=lib.float64).view(4, 3)
        hi = 7 if bad else 3
        if case == "getitem":
            return lib.func.vmap(lambda i: x[i])(lib.tensor([0, 2, hi]))
        if case == "index_select":
            return lib.func.vmap(lambda i: x.index_select(0, i))(lib.tensor([[0], [hi]]))
        if case == "gather":
            return lib.func.vmap(lambda i: x.gather(0, i))(lib.tensor([[[0, 1, 2]], [[hi, 1, 2]]]))
        if case == "grad_of_getitem":
            grad = lib.func.grad(lambda w, i: (w[i] ** 2).sum())
            return lib.func.vmap(grad, in_dims=(None, 0))(x, lib.tensor([[1], [hi]]))
        if case == "jacrev":
            return lib.func.jacrev(lambda w: w[lib.tensor([0, hi + 1 if bad else hi])].sum(0))(x)
        classes = 2 + bad   # (a target of 3 over 3 classes when bad)
        return lib.func.vmap(lambda t: lib.nn.functional.cross_entropy(x[:, :3], t))(
            lib.tensor([[0, 1, 2, 1], [0, 1, classes, 1]]))
    assert_close(run(tapegrad, False), run(torch, False))
    with pytest.raises((IndexError, RuntimeError)) as theirs:
        run(torch, True)
    with pytest.raises((IndexError, RuntimeError), match="out of bounds") as ours:
        run(tapegrad, True)
    if case in ("getitem", "grad_of_getitem", "jacrev"):   # (torch's batching rules of the others name the
        assert type(ours.value) is type(theirs.value)     # batched dims in their messages)
        assert str(ours.value) == str(theirs.value)


def test_functionalize_debug_unwrap_and_batch_norm_replacement(torch):
    def run(lib):
        def f(x):
            y = x.clone()
            y.add_(1)
            x.mul_(2)
            return y.view(-1)
        x = lib.ones(2, 2)
        out = lib.func.functionalize(f, remove="mutations_and_views")(x)
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 3), lib.nn.BatchNorm2d(2, affine=False))
        assert lib.func.replace_all_batch_norm_modules_(model) is model and lib.func.debug_unwrap(x) is x
        stats = [(m.running_mean, m.running_var, m.num_batches_tracked, m.track_running_stats) for m in model[::2]]
        per_sample = lib.vmap(model[0], randomness="same")(lib.arange(24.0).view(4, 2, 3))
        return out, x, stats, per_sample
    ours, theirs = run(tapegrad), run(torch)
    assert ours[0].tolist() == theirs[0].tolist() and ours[1].tolist() == theirs[1].tolist()
    assert ours[2] == theirs[2] == [(None, None, None, False)] * 2
    assert_close(ours[3], theirs[3].detach())
    assert tapegrad.func.functionalize(lambda x: x)(tapegrad.ones(1)).tolist() == [1.0]
    assert raised(lambda: tapegrad.func.functionalize(abs, remove="x")) == raised(
        lambda: torch.func.functionalize(abs, remove="x"))


def test_vmap_over_autograd_grad_of_a_graph_recorded_outside(torch):
    """(the Jacobians tutorial) vmap over autograd.grad of a graph recorded before the transform: PyTorch runs
    the function once, tapegrad traces it more than once, so the graph is freed only when vmap returns."""
    from functools import partial

    def build(lib):
        w, b, x = _data(lib, 5, 5), _data(lib, 5, seed=1), _data(lib, 5, seed=2).requires_grad_()
        y = lib.nn.functional.linear(x, w, b).tanh()
        (jac,) = lib.func.vmap(partial(lib.autograd.grad, y, x))(lib.eye(5, dtype=lib.float64))
        rows = lib.stack([lib.autograd.grad(lib.nn.functional.linear(x, w, b).tanh(), x, v)[0]
                          for v in lib.eye(5, dtype=lib.float64)])
        freed = raised(lambda: lib.autograd.grad(y, x, lib.ones(5, dtype=lib.float64)))
        return jac, rows, freed
    ours, theirs = both(build)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    assert ours[2] == theirs[2]


def test_jvp_takes_dict_tangents_in_their_primals_order(torch):
    """(the neural tangent kernel tutorial) tangents given as a dict keep their keys' order: JAX's dict node
    sorts them, which made them differ from the primals' structure."""
    def build(lib):
        params = {"weight": _data(lib, 3, 2), "bias": _data(lib, 3, seed=1)}
        f = lambda p: lib.tanh(_data(lib, 4, 2, seed=2) @ p["weight"].t() + p["bias"])
        out, vjp_fn = lib.func.vjp(f, params)
        (tangents,) = vjp_fn(lib.ones_like(out))
        return list(tangents), lib.func.jvp(f, (params,), (tangents,))[1]
    ours, theirs = both(build)
    assert ours[0] == theirs[0]
    assert_close(ours[1], theirs[1])


def test_transforms_are_transparent_to_autograd(torch):
    """torch.func's transforms compose with autograd: vmap's results require grad when what they are computed
    from does, and backward reaches those tensors (model ensembling trained with one backward); a gradient
    that does not depend on a tensor (a linear function's) does not require grad."""
    def build(lib):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2).double() for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        x = _data(lib, 4, 3)

        def fmodel(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))
        out = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        (out ** 2).mean().backward()
        w = _data(lib, 3, 2, seed=3).requires_grad_()
        captured = lib.func.vmap(lambda xi: lib.tanh(xi @ w).sum())(x)
        captured.sum().backward()
        g = lib.func.grad(lambda w: (lib.tanh(x @ w) ** 2).sum())(w)
        (hvp,) = lib.autograd.grad(g.sum(), w)
        linear = lib.func.grad(lambda w: (x @ w).sum())(w)
        with lib.no_grad():
            quiet = lib.func.vmap(lambda xi: (xi @ w).sum())(x)
        flags = (out.requires_grad, captured.requires_grad, g.requires_grad, linear.requires_grad,
                 quiet.requires_grad)
        return [params[k].grad for k in params], w.grad, hvp, flags
    ours, theirs = both(build)
    for o, t in zip(ours[0], theirs[0]):
        assert_close(o, t)
    assert_close(ours[1], theirs[1])
    assert_close(ours[2], theirs[2])
    assert ours[3] == theirs[3]


def test_vmap_over_autograd_grad_at_new_points_reads_each_graph(torch):
    """A transform whose function runs a backward over a graph recorded outside it reads that graph's saved
    values as constants: it is traced again for every call (never a cached program of another graph), and
    the graph's pending values are computed outside the trace."""
    from functools import partial

    def build(lib):
        rows = []
        for k in range(4):
            x = lib.full((3,), float(k + 1), dtype=lib.float64, requires_grad=True)
            y = (x ** 2).sin()
            (jac,) = lib.func.vmap(partial(lib.autograd.grad, y, x))(lib.eye(3, dtype=lib.float64))
            rows.append(jac)
        return lib.stack(rows)
    ours, theirs = both(build)
    assert_close(ours, theirs)


def test_vjp_and_its_pullback_are_transparent_to_autograd(torch):
    """func.vjp's output and the gradients its vjp_fn returns stay on the tape: a loss made of them
    differentiates back to the primals and to the cotangents."""
    def build(lib):
        w = _data(lib, 3).requires_grad_()
        out, vjp_fn = lib.func.vjp(lambda x: (x * x).sin(), w)
        (g,) = vjp_fn(lib.ones(3, dtype=lib.float64))
        (out.sum() + g.sum()).backward()
        ct = _data(lib, 3, seed=1).requires_grad_()
        out2, vjp_fn2 = lib.func.vjp(lambda x: x.exp(), _data(lib, 3, seed=2))
        (g2,) = vjp_fn2(ct)
        g2.sum().backward()
        return w.grad, ct.grad, (out.requires_grad, g.requires_grad, out2.requires_grad, g2.requires_grad)
    ours, theirs = both(build)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    assert ours[2] == theirs[2]


def test_linearize_is_on_the_tape_at_its_point(torch):
    """func.linearize's output differentiates back to the primals; its jvp_fn is linear in the tangents, the
    point's primals its constants, as PyTorch's (whose result's gradient does not reach the primals)."""
    def build(lib):
        w = _data(lib, 3).requires_grad_()
        out, jvp_fn = lib.func.linearize(lambda x: (x * x).sin(), w)
        t = jvp_fn(lib.ones(3, dtype=lib.float64))
        (out.sum() + t.sum()).backward()
        tangent = _data(lib, 3, seed=1).requires_grad_()
        _, jvp_fn2 = lib.func.linearize(lambda x: x.exp(), _data(lib, 3, seed=2))
        jvp_fn2(tangent).sum().backward()
        return w.grad, tangent.grad, out.requires_grad
    ours, theirs = both(build)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    assert ours[2] == theirs[2]
