"""gradcheck / gradgradcheck with complex inputs and outputs against PyTorch: Wirtinger derivatives, the real
and imaginary parts of complex outputs (and, in forward mode, of complex inputs) checked separately, slow and
fast mode, PyTorch's messages when a gradient is wrong, raise_exception=False."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from conftest import fold_repr

Z = np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j])
W = np.array([0.3, -1.2, 2.0])


def _z(lib, values=Z):
    return lib.tensor(values, requires_grad=True)


def _w(lib):
    return lib.tensor(W, requires_grad=True)


def _wrong(lib, factor):
    """x * 2 whose backward multiplies by factor instead."""
    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * factor
    return Wrong.apply


CORRECT = {
    "mul": lambda lib: (lambda a, b: a * b, (_z(lib), _z(lib, Z[::-1].copy()))),
    "abs": lambda lib: (lambda a: a.abs(), (_z(lib),)),
    "angle": lambda lib: (lambda a: a.angle(), (_z(lib),)),
    "exp": lambda lib: (lambda a: a.exp(), (_z(lib),)),
    "conj": lambda lib: (lambda a: a.conj() * a.exp(), (_z(lib),)),
    "real_imag": lambda lib: (lambda a: (a.real * a.imag, a.imag), (_z(lib),)),
    "view_as_real": lambda lib: (lambda a: lib.view_as_real(a * a), (_z(lib),)),
    "matmul": lambda lib: (lambda a, b: a @ b, (_z(lib, np.outer(Z[:2], Z[::-1])), _z(lib, np.outer(Z, Z[1:])))),
    "real_to_complex": lambda lib: (lambda x: lib.complex(x * x, x.sin()), (_w(lib),)),
    "mixed": lambda lib: (lambda x, a: (x * a, x.sum() + a.abs().sum()), (_w(lib), _z(lib))),
    "constant_input": lambda lib: (lambda c, a: c * a, (lib.tensor(Z), _z(lib))),
}


def _gradcheck(lib, build, check=None, **kw):
    func, inputs = build(lib)
    try:
        return True, (check or lib.autograd.gradcheck)(func, inputs, **kw)
    except Exception as e:
        return False, (type(e).__name__, fold_repr(str(e)))


@pytest.mark.parametrize("name", CORRECT)
def test_correct_functions_pass(name):
    for kw in (dict(), dict(fast_mode=True)):
        assert _gradcheck(tg, CORRECT[name], **kw) == _gradcheck(torch, CORRECT[name], **kw) == (True, True)


@pytest.mark.parametrize("name", ["view_as_real", "real_to_complex", "mixed"])
def test_forward_mode_splits_complex_inputs(name):
    kw = dict(check_forward_ad=True, check_backward_ad=False)
    assert _gradcheck(tg, CORRECT[name], **kw) == _gradcheck(torch, CORRECT[name], **kw) == (True, True)


WRONG = {   # each gradient is wrong; PyTorch's message names which part of which output or input
    "complex_to_complex": lambda lib: (lambda a: _wrong(lib, 2j)(a), (_z(lib),)),
    "complex_to_real": lambda lib: (lambda a: _wrong(lib, 3)(a).real, (_z(lib),)),
    "real_to_complex": lambda lib: (lambda x: _wrong(lib, 2j)(x * (1 + 1j)), (_w(lib),)),
    "conjugated": lambda lib: (lambda a: _wrong(lib, 1)(a), (_z(lib),)),
    "second_output": lambda lib: (lambda c, a: (c * 1, _wrong(lib, 1j)(a)), (lib.tensor(W), _z(lib))),
}


@pytest.mark.parametrize("name", WRONG)
def test_wrong_gradient_is_reported_as_pytorch_does(name):
    ours, theirs = _gradcheck(tg, WRONG[name]), _gradcheck(torch, WRONG[name])
    assert ours == theirs and not ours[0]
    assert ours[1][0] == "GradcheckError"
    for lib in (tg, torch):
        assert _gradcheck(lib, WRONG[name], raise_exception=False) == (True, False)


@pytest.mark.parametrize("name", ["complex_to_complex", "real_to_complex", "conjugated"])
def test_fast_mode_reports_projections_then_slow_jacobians(name):
    # The projections v^T J u use random vectors (PyTorch draws its own), so only the phrase before them and
    # the slow-mode Jacobians after them are PyTorch's exactly.
    ours, theirs = _gradcheck(tg, WRONG[name], fast_mode=True), _gradcheck(torch, WRONG[name], fast_mode=True)
    assert not ours[0] and not theirs[0] and ours[1][0] == theirs[1][0] == "GradcheckError"
    (our_head, our_slow), (their_head, their_slow) = (
        (m.split("\n")[0], m.split("we recompute numerical and analytical jacobians in slow mode:")[1])
        for m in (ours[1][1], theirs[1][1]))
    assert our_head == their_head
    # the largest difference is printed in full: its last digits are those of each library's arithmetic
    (our_slow, our_max), (their_slow, their_max) = (m.split("The max per-element difference (slow mode) is: ")
                                                     for m in (our_slow, their_slow))
    assert our_slow == their_slow
    (our_max, our_rest), (their_max, their_rest) = (m.split(".\n", 1) for m in (our_max, their_max))
    assert float(our_max) == pytest.approx(float(their_max)) and our_rest == their_rest


def test_imaginary_parts_are_checked_first():
    _, (_, message) = _gradcheck(tg, WRONG["complex_to_complex"])
    assert message.startswith("While considering the imaginary part of complex outputs only, Jacobian mismatch "
                              "for output 0 with respect to input 0,")
    _, (_, message) = _gradcheck(tg, lambda lib: (lambda a: _wrong(lib, 2 + 1j)(a).real, (_z(lib),)))
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,")


def test_forward_mode_names_the_part_of_complex_inputs():
    # tapegrad's forward mode derives a custom Function's jvp from its forward, so a wrong forward derivative
    # cannot be built through the public API; PyTorch's message for one is matched by the message tapegrad
    # would give for the same failing check.
    class WrongJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2j
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch") as theirs:
        torch.autograd.gradcheck(WrongJvp.apply, (_z(torch),), check_forward_ad=True, check_backward_ad=False)
    from tapegrad.autograd.gradcheck import _mismatch
    ours = _mismatch("analytical", "numerical", 0, 0, ([0], "imag", "inputs"), forward_ad=True)
    assert ours.split("\n")[0] == str(theirs.value).split("\n")[0]
    assert tg.autograd.gradcheck(lambda a: a.conj() * a, (_z(tg),), check_forward_ad=True)


GRADGRAD = {
    "mul": lambda lib: (lambda a, b: a * b * a, (_z(lib), _z(lib, Z[::-1].copy()))),
    "abs": lambda lib: (lambda a: (a * a).abs(), (_z(lib),)),
    "real_to_complex": lambda lib: (lambda x: lib.complex(x * x, x.sin()), (_w(lib),)),
    "matmul": lambda lib: (lambda a, b: (a @ b) * b,
                           (_z(lib, np.outer(Z[:2], Z[1:])), _z(lib, np.outer(Z[1:], Z[:2])))),
}


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name):
    for kw in (dict(), dict(fast_mode=True)):
        theirs = _gradcheck(torch, GRADGRAD[name], check=torch.autograd.gradgradcheck, **kw)
        ours = _gradcheck(tg, GRADGRAD[name], check=tg.autograd.gradgradcheck, **kw)
        assert ours == theirs == (True, True)


@pytest.mark.parametrize("name", ["abs", "real_to_complex"])
def test_gradgradcheck_forward_over_reverse(name):
    kw = dict(check_fwd_over_rev=True)
    theirs = _gradcheck(torch, GRADGRAD[name], check=torch.autograd.gradgradcheck, **kw)
    assert _gradcheck(tg, GRADGRAD[name], check=tg.autograd.gradgradcheck, **kw) == theirs == (True, True)


def test_gradgradcheck_finds_a_wrong_second_derivative():
    def build(lib):
        class Square(lib.autograd.Function):   # its backward is right but not differentiable through x
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 2 * x.detach().conj()
        return Square.apply, (_z(lib),)
    for lib in (tg, torch):
        assert lib.autograd.gradcheck(*build(lib))
        ok, (kind, message) = _gradcheck(lib, build, check=lib.autograd.gradgradcheck)
        assert not ok and kind == "GradcheckError"
        assert "part of complex outputs only, Jacobian mismatch for output 0 with respect to input 0," in message


def test_real_gradient_of_a_complex_product_casts_without_numpy_warnings():
    # the real input's gradient is the real part of a complex one; the NumPy tier (first sight of a graph)
    # casts it as lax does, without NumPy's ComplexWarning (shapes unique to this test keep it first sight)
    grads = []
    for lib in (torch, tg):
        x = lib.tensor(np.linspace(-1, 1, 7), requires_grad=True)
        a = lib.tensor(np.linspace(-1, 1, 7) * (2 - 1j))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x * a).exp().real.sum().backward()
        assert not [w for w in caught if "discards the imaginary part" in str(w.message)]
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
