"""autograd.Function against PyTorch: the same Function classes, written once, run by both libraries."""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import _programs
from conftest import assert_close, both, fold_repr


def _functions(lib):
    """Custom Functions in the styles PyTorch's docs use, defined over `lib`."""

    class Exp(lib.autograd.Function):   # saves its output
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    class Scale(lib.autograd.Function):   # a non-tensor argument kept on ctx
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class MulAdd(lib.autograd.Function):   # new style: setup_context, two tensor inputs, two outputs
        @staticmethod
        def forward(x, w, b):
            return x * w + b, x * w

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, b = inputs
            ctx.save_for_backward(x, w)

        @staticmethod
        def backward(ctx, g_sum, g_prod):
            x, w = ctx.saved_tensors
            gx = (g_sum + g_prod) * w if ctx.needs_input_grad[0] else None
            gw = ((g_sum + g_prod) * x).sum(0) if ctx.needs_input_grad[1] else None
            return gx, gw, g_sum.sum(0) if ctx.needs_input_grad[2] else None

    class Clamp(lib.autograd.Function):   # reads a value in Python: runs node by node
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(-1, 1)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            if x.abs().max().item() <= 1:
                return g
            return g * (x.abs() <= 1).to(g.dtype)

    class Cube(lib.autograd.Function):   # differentiable backward: double backward
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * g * x ** 2

    return Exp, Scale, MulAdd, Clamp, Cube


def _x(lib, rows=3):
    return lib.tensor(np.linspace(-1.5, 1.5, rows * 2).reshape(rows, 2), dtype=lib.float64, requires_grad=True)


def test_values_gradients_and_node_names(torch):
    def build(lib):
        Exp, Scale, MulAdd, Clamp, Cube = _functions(lib)
        x = _x(lib)
        w = lib.tensor([0.5, -2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.0, 0.25], dtype=lib.float64, requires_grad=True)
        s, p = MulAdd.apply(Exp.apply(x), w, b)
        y = Scale.apply(s, 3.0) + p + Clamp.apply(x * 0.5) + Cube.apply(x)
        names = [t.grad_fn.name() for t in (s, p, y)] + [type(s.grad_fn).__name__]
        nexts = [n.name() if n is not None else None for n, _ in Exp.apply(x).grad_fn.next_functions]
        y.sum().backward()
        return (y, s, p, x.grad, w.grad, b.grad), names + nexts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (ours, our_names), (theirs, their_names) = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    assert our_names == their_names


def test_traced_backward_compiles_with_the_step(torch):
    """A traceable backward runs inside the step's compiled program after the first steps."""
    Exp = _functions(tapegrad)[0]
    x = _x(tapegrad)
    for _ in range(1 + _programs.STEADY_STREAK):   # first sight, then the streak that compiles a steady loop
        x.grad = None
        Exp.apply(x * 2).sum().backward()
    before = tapegrad.autograd.backward_cache_info()
    x.grad = None
    Exp.apply(x * 2).sum().backward()
    after = tapegrad.autograd.backward_cache_info()
    assert after["compiles"] == before["compiles"] and after["hits"] == before["hits"] + 1
    assert_close(x.grad, 2 * torch.tensor(np.linspace(-1.5, 1.5, 6).reshape(3, 2) * 2).exp())


def test_untraceable_backward_warns_once_and_runs_in_python(torch):
    Clamp = _functions(tapegrad)[3]
    x = _x(tapegrad)
    with pytest.warns(UserWarning, match=r"Clamp.backward runs node by node in Python.*\.item\(\)"):
        y = Clamp.apply(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Clamp.apply(x).sum().backward()
    tx = torch.tensor(np.linspace(-1.5, 1.5, 6).reshape(3, 2), requires_grad=True)
    torch.clamp(tx, -1, 1).sum().backward()
    assert_close(x.grad, tx.grad)
    y.sum().backward()
    assert_close(x.grad, 2 * tx.grad)


def test_backward_that_prints_runs_at_every_backward(capsys):
    class Loud(tapegrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            print("backward ran")
            return g * 2
    x = _x(tapegrad)
    for _ in range(3):
        Loud.apply(x).sum().backward()
    assert capsys.readouterr().out == "backward ran\n" * 3


def test_changing_ctx_values_stop_compiling_new_kernels():
    Scale = _functions(tapegrad)[1]
    x = _x(tapegrad)
    with pytest.warns(UserWarning, match="differ at every call"):
        for k in range(12):
            Scale.apply(x, float(k)).sum().backward()
    assert x.grad.tolist() == [[66.0, 66.0]] * 3   # sum of k over 0..11


def test_double_backward_through_a_function(torch):
    def build(lib):
        Cube = _functions(lib)[4]
        x = _x(lib)
        g, = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad((g * g).sum(), x)
        return g, g2, g.grad_fn.name()
    (g, g2, name), (tg_, tg2, tname) = both(build)
    assert_close(g, tg_)
    assert_close(g2, tg2)
    assert name == tname


def _square(lib, once_differentiable=False):
    """x * x as a custom Function that saves its input."""
    def twice_x(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        backward = staticmethod(lib.autograd.function.once_differentiable(twice_x) if once_differentiable
                                else twice_x)
    return Square


def test_once_differentiable(torch):
    def build(lib):
        Sq = _square(lib, once_differentiable=True)
        x = _x(lib)
        seed = lib.ones(3, 2, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(Sq.apply(x), x, grad_outputs=seed, create_graph=True)
        try:
            g.sum().backward()
        except RuntimeError as e:
            return g, g.requires_grad, str(e)
    (g, req, msg), (tg_, treq, tmsg) = both(build)
    assert_close(g, tg_)
    assert req and treq and msg == tmsg


def test_ctx_api_mark_non_differentiable_dirty_materialize(torch):
    def build(lib):
        class SortDesc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, idx = x.sort(descending=True)
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(idx)
                return values, idx

            @staticmethod
            def backward(ctx, g, g_idx):
                idx, = ctx.saved_tensors
                return lib.zeros_like(g).scatter(0, idx, g)

        class DoubleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 1, x * 2

            @staticmethod
            def backward(ctx, g1, g2):
                ctx.seen = (g1 is None, g2 is None)
                return g1 if g2 is None else g1 + 2 * g2

        x = lib.tensor([0.3, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        values, idx = SortDesc.apply(x)
        a = x * 1
        b = DoubleInPlace.apply(a)
        first, second = Split.apply(x)
        (values * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        (b.sum() + first.sum()).backward()
        try:
            DoubleInPlace.apply(x)
        except RuntimeError as e:
            leaf_error = str(e)
        return (x.grad, values), (idx.requires_grad, b is a, a.grad_fn.name(), a._version,
                                 first.grad_fn.seen if hasattr(first.grad_fn, "seen") else None, leaf_error)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (ours, facts), (theirs, tfacts) = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    assert facts == tfacts


def test_returned_input_is_a_new_tensor_and_apply_takes_keywords(torch):
    def build(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=1.0):
                return x

            @staticmethod
            def backward(ctx, g):
                return g, None
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = Ident.apply(a, scale=2.0)
        with lib.no_grad():
            z = Ident.apply(a)
        return y is a, y.grad_fn.name(), z is a, z.requires_grad, y.next_functions if hasattr(y, "x") else None
    ours, theirs = both(build)
    assert ours == theirs


@pytest.mark.parametrize("bad", ["count", "shape", "non_tensor_grad"])
def test_bad_gradients_raise_pytorchs_errors(torch, bad):
    def build(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, g):
                if bad == "count":
                    return (g,)
                if bad == "shape":
                    return lib.ones(5), None
                return g, g
        x = lib.ones(3, 2, requires_grad=True)
        try:
            Bad.apply(x, 2).sum().backward()
        except RuntimeError as e:
            return str(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = both(build)
    assert ours == theirs


def test_broadcastable_gradient_is_summed_and_cast(torch):
    def build(lib):
        class Wide(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.double().expand(4, 3, 2)
        x = lib.ones(3, 2, requires_grad=True)
        Wide.apply(x).sum().backward()
        return x.grad
    ours, theirs = both(build)
    assert_close(ours, theirs)


def test_saved_tensor_checks_and_freed_graph(torch):
    def build(lib):
        Exp = _functions(lib)[0]
        x = _x(lib)
        a = x * 1
        y = Exp.apply(a)
        y.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as e:
            modified = str(e).split(" Hint")[0]
        y = Exp.apply(x)
        y.sum().backward()
        try:
            y.grad_fn.saved_tensors
        except RuntimeError as e:
            freed = str(e)
        return modified, freed, fold_repr(repr(y.grad_fn))
    ours, theirs = both(build)
    assert ours == theirs


def test_saved_tensors_freed_by_a_repeated_step(torch):
    # from the second step on, a step's backward is its tape segment's one program: it frees the same
    def build(lib):
        Square = _square(lib)
        messages = []
        for _ in range(4):
            x = lib.ones(3, requires_grad=True)
            y = Square.apply(x * 1.0).sum()
            y.backward()
            try:
                y.grad_fn.next_functions[0][0].saved_tensors
                messages.append(None)
            except RuntimeError as e:
                messages.append(str(e).split(".")[0])
        return messages
    ours, theirs = both(build)
    assert ours == theirs


def test_legacy_call_style_raises(torch):
    def build(lib):
        class Old(lib.autograd.Function):
            def forward(self, x):
                return x
        try:
            Old()(lib.ones(1))
        except RuntimeError as e:
            return str(e).split(" (")[0]
    ours, theirs = both(build)
    assert ours == theirs
