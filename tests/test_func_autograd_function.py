"""autograd.Function under tapegrad.func against torch.func: the Function's backward (grad, vjp,
jacrev) and jvp (jvp) are used, not its forward's ops; the rules deliberately differ from the true
derivative so a test tells which one ran."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, raised


def _functions(lib):
    class ScaledSin(lib.autograd.Function):
        """sin(x) * y; backward says k * x (k set in setup_context), jvp says 5 tx + 2 ty."""

        @staticmethod
        def forward(x, y):
            return x.sin() * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.k = 3.0

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * ctx.k * x, None

        @staticmethod
        def jvp(ctx, tx, ty):
            x, y = ctx.saved_tensors
            return tx * 5.0 + ty * 2.0 + 0 * x

    class TwoOut(lib.autograd.Function):
        """(x * scale, x.exp()) with a Python scale; backward 2 g0 + g1 x, jvp (t, 4 t)."""
        generate_vmap_rule = True

        @staticmethod
        def forward(x, scale):
            return x * scale, x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g0, g1):
            (x,) = ctx.saved_tensors
            return 2 * g0 + g1 * x, None

        @staticmethod
        def jvp(ctx, t, _):
            return t, 4 * t
    return ScaledSin, TwoOut


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=lib.float64)


def test_reverse_transforms_use_backward(torch):
    def build(lib):
        F, G = _functions(lib)
        x, y = _data(lib, 3), _data(lib, 3, seed=1)
        f = lambda x, y: F.apply(x, y).sum()
        out, vjp_fn = lib.func.vjp(F.apply, x, y)
        g = lambda x: sum(o.sum() for o in G.apply(x, 1.5))
        return (lib.func.grad(f)(x, y), lib.func.grad(f, argnums=1)(x, y), *lib.func.grad_and_value(f)(x, y),
                out, *vjp_fn(lib.ones(3, dtype=lib.float64)), lib.func.jacrev(F.apply)(x, y),
                lib.func.grad(g)(x), lib.func.vmap(lib.func.grad(g))(x))
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_forward_transforms_use_jvp(torch):
    def build(lib):
        F, G = _functions(lib)
        x, y = _data(lib, 3), _data(lib, 3, seed=1)
        t = lib.ones(3, dtype=lib.float64)
        return (*lib.func.jvp(F.apply, (x, y), (t, 2 * t)), *lib.func.jvp(lambda x: G.apply(x, 2.0), (x,), (t,))[1],
                lib.func.jacfwd(lambda x: G.apply(x, 2.0)[1])(x))
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_plain_autograd_and_generated_vmap_rule(torch):
    def build(lib):
        _, G = _functions(lib)
        x = _data(lib, 2, 3).requires_grad_()
        sum(o.sum() for o in G.apply(x, 1.5)).backward()
        return x.grad, *lib.func.vmap(lambda r: G.apply(r, 3.0))(x.detach())
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "vmap"])
def test_old_style_function_is_refused(torch, transform):
    def call(lib):
        class Old(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        x = _data(lib, 3)
        {"grad": lambda: lib.func.grad(lambda v: Old.apply(v).sum())(x),
         "vjp": lambda: lib.func.vjp(Old.apply, x),
         "jvp": lambda: lib.func.jvp(Old.apply, (x,), (x,)),
         "vmap": lambda: lib.func.vmap(Old.apply)(x)}[transform]()
    ours, theirs = raised(lambda: call(tapegrad)), raised(lambda: call(torch))
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("case", ["vmap_without_rule", "jacfwd_without_rule", "jvp_without_jvp"])
def test_missing_rules_raise_as_torch(torch, case):
    def call(lib):
        F, _ = _functions(lib)

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g
        x, y = _data(lib, 3), _data(lib, 3, seed=1)
        {"vmap_without_rule": lambda: lib.func.vmap(F.apply)(x, y),
         "jacfwd_without_rule": lambda: lib.func.jacfwd(F.apply)(x, y),
         "jvp_without_jvp": lambda: lib.func.jvp(NoJvp.apply, (x,), (x,))}[case]()
    ours, theirs = raised(lambda: call(tapegrad)), raised(lambda: call(torch))
    assert theirs is not None and ours == theirs


def test_a_program_compiled_alone_is_not_reused_under_vmap(torch):
    """grad(f) compiled on its own, then called under vmap, still checks the Function's vmap rule."""
    def call(lib):
        F, _ = _functions(lib)
        x, y = _data(lib, 2, 3), _data(lib, 3, seed=1)
        inner = lib.func.grad(lambda r: F.apply(r, y).sum())
        inner(x[0])
        lib.func.vmap(inner)(x)
    ours, theirs = raised(lambda: call(tapegrad)), raised(lambda: call(torch))
    assert theirs is not None and ours == theirs


def test_jvp_over_grad_differentiates_backward(torch):
    def build(lib):
        F, _ = _functions(lib)
        x, y = _data(lib, 3), _data(lib, 3, seed=1)
        inner = lib.func.grad(lambda x: F.apply(x, y).sum())
        return lib.func.jvp(inner, (x,), (lib.ones(3, dtype=lib.float64),))
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def _with_vmap_rule(lib):
    class Scaled(lib.autograd.Function):
        """x * k; its vmap rule adds the batch size (not the forward's batching) so a test tells it ran."""

        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g, None

        @staticmethod
        def vmap(info, in_dims, x, k):
            return x * k + info.batch_size, in_dims[0]
    return Scaled


def test_vmap_staticmethod_is_the_batching_rule(torch):
    def build(lib):
        F = _with_vmap_rule(lib)
        x = _data(lib, 2, 3)
        f = lambda r: F.apply(r, 2.0)
        return lib.func.vmap(f)(x), lib.func.vmap(f, in_dims=1)(x), lib.func.vmap(lib.func.vmap(f))(x)
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_vmap_staticmethod_and_generated_rule_are_exclusive(torch):
    def call(lib):
        class Both(_with_vmap_rule(lib)):
            generate_vmap_rule = True
        lib.func.vmap(lambda r: Both.apply(r, 2.0))(_data(lib, 2, 3))
    ours, theirs = raised(lambda: call(tapegrad)), raised(lambda: call(torch))
    assert theirs is not None and ours == theirs


def test_backward_sees_none_and_needs_input_grad_as_torch(torch):
    """set_materialize_grads(False): an unused output's gradient is None; needs_input_grad names the
    arguments the transform differentiates."""
    def build(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(x, y, z):
                return x * y * z, x * 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.set_materialize_grads(False)
                ctx.save_for_backward(*inputs)

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append((tuple(ctx.needs_input_grad), g0 is None, g1 is None))
                x, y, z = ctx.saved_tensors
                return g0 * y * z * 7, g0 * x * z * 11, g0 * x * y
        x, y, z = _data(lib, 3), _data(lib, 3, seed=1), _data(lib, 3, seed=2)
        g = lib.func.grad(lambda x, y: Two.apply(x, y, z)[0].sum(), argnums=1)(x, y)
        return g, seen[-1]
    (g, seen), (t_g, t_seen) = both(build)
    assert_close(g, t_g)
    assert seen == t_seen
