"""autograd.Function under forward AD against PyTorch: its jvp staticmethod gives the outputs' tangents."""
import numpy as np
import pytest

from conftest import assert_close, both


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=lib.float64)


def _functions(lib):
    class MulExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, n, k):
            seen.append(lib.autograd.forward_ad.unpack_dual(x).tangent is None)   # forward runs without tangents
            ctx.save_for_backward(y)
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, n.clone(), y.exp()

        @staticmethod
        def backward(ctx, a, b, c):
            y, = ctx.saved_tensors
            return a * y * ctx.k, None, None, None

        @staticmethod
        def jvp(ctx, tx, ty, tn, tk):
            seen.append((tn, tk, len(ctx.saved_tensors)))
            x, y = ctx.saved_tensors
            # a rule unlike the derivative of forward's ops, so the test sees that jvp was used
            return (tx * y + ty * x) * ctx.k * 10, None, ty * y.exp()

    class Sin(lib.autograd.Function):   # new style: forward without ctx, setup_context
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx):
            return ctx.saved_tensors[0].cos() * tx + 1

    seen = []
    return MulExp, Sin, seen


def test_jvp_gives_the_tangents(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        MulExp, Sin, seen = _functions(lib)
        x = _data(lib, 3).requires_grad_()
        y, n = _data(lib, 3, seed=1), lib.tensor([1, 2, 3])
        with fwAD.dual_level():
            d = fwAD.make_dual(x, _data(lib, 3, seed=2))
            outs = MulExp.apply(d, y, n, 2.0)
            tangents = [fwAD.unpack_dual(o).tangent for o in outs]
            sin = fwAD.unpack_dual(Sin.apply(d))
            outs[0].sum().backward()   # the backward still is the Function's
        flags = [s if isinstance(s, bool) else (s[0], s[1], s[2]) for s in seen]
        return tangents, sin, x.grad, flags
    (t, sin, g, flags), (tt, tsin, tg, tflags) = both(build)
    assert_close(t[0], tt[0])
    assert t[1] is None and tt[1] is None
    assert_close(t[2], tt[2])    # y has no tangent: jvp saw zeros (materialized)
    assert_close(sin.tangent, tsin.tangent)
    assert_close(sin.primal, tsin.primal)
    assert_close(g, tg)
    assert flags == tflags == [True, (None, None, 2)]


def test_tangent_of_jvp_is_differentiable_and_grad_mode_is_the_callers(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        _, Sin, _ = _functions(lib)
        tangent = _data(lib, 3, seed=2).requires_grad_()
        with fwAD.dual_level():
            out = fwAD.unpack_dual(Sin.apply(fwAD.make_dual(_data(lib, 3), tangent))).tangent
            out.sum().backward()
            with lib.no_grad():
                quiet = fwAD.unpack_dual(Sin.apply(fwAD.make_dual(_data(lib, 3), tangent))).tangent
        return out.requires_grad, tangent.grad, quiet.requires_grad
    (r, g, q), (tr, tg, tq) = both(build)
    assert (r, q) == (tr, tq) == (True, False)
    assert_close(g, tg)


def test_materialize_grads_false_passes_none(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        given = []

        class Add(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.set_materialize_grads(False)
                return x + y

            @staticmethod
            def jvp(ctx, tx, ty):
                given.append(ty)
                return tx
        with fwAD.dual_level():
            out = Add.apply(fwAD.make_dual(_data(lib, 2), _data(lib, 2, seed=1)), _data(lib, 2, seed=3))
            return fwAD.unpack_dual(out).tangent, given
    (t, given), (tt, tgiven) = both(build)
    assert_close(t, tt)
    assert given == tgiven == [None]


def test_mark_dirty_jvp_modifies_the_tangent_in_place(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def jvp(ctx, tx):
                return tx.mul_(2)
        with fwAD.dual_level():
            d = fwAD.make_dual(_data(lib, 3), _data(lib, 3, seed=1))
            out = Double.apply(d)
            return fwAD.unpack_dual(out).tangent, fwAD.unpack_dual(d).tangent
    (a, b), (ta, tb) = both(build)
    assert_close(a, ta)
    assert_close(b, tb)


def _error(lib, case):
    fwAD = lib.autograd.forward_ad

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x.argmax()

        @staticmethod
        def backward(ctx, g, _):
            return g * 2

    jvps = {"count": lambda ctx, tx: tx,
            "non_differentiable": lambda ctx, tx: (tx, tx),
            "shape": lambda ctx, tx: (lib.zeros(4, dtype=lib.float64), None),
            "not_a_tensor": lambda ctx, tx: (tx, 3)}
    if case in jvps:
        NoJvp = type("Bad", (NoJvp,), {"jvp": staticmethod(jvps[case])})

    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if case == "dirty_not_input":
                y = x * 2
                ctx.mark_dirty(y)
                return y
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def jvp(ctx, tx):
            return tx * 2 if case != "dirty_other" else tx.clone().mul_(2)

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def jvp(ctx, tx):
            return tx * 3

    with fwAD.dual_level():
        d = fwAD.make_dual(_data(lib, 3), _data(lib, 3, seed=1))
        try:
            if case.startswith("dirty"):
                Dirty.apply(d)
            elif case == "same":
                Same.apply(d)
            else:
                NoJvp.apply(d)
        except Exception as e:   # the type and the message are compared
            return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["missing", "count", "non_differentiable", "shape", "not_a_tensor",
                                  "dirty_copy", "dirty_other", "dirty_not_input", "same"])
def test_errors_as_pytorch(torch, case):
    ours, theirs = both(lambda lib: _error(lib, case))
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1].rstrip(".")), (ours[1], theirs[1])


def test_no_tangent_no_jvp(torch):
    # a Function without jvp is fine inside a level when none of its arguments carries a tangent
    def build(lib):
        fwAD = lib.autograd.forward_ad

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        with fwAD.dual_level():
            out = Twice.apply(_data(lib, 3))
            return out, fwAD.unpack_dual(out).tangent
    (o, t), (to, tt) = both(build)
    assert_close(o, to)
    assert t is None and tt is None
