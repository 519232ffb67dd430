"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode against PyTorch."""
import threading

import pytest

import tapegrad
from conftest import both, require

torch = require("torch")


def _flags(lib):
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def test_context_managers_nest_and_restore():
    def build(lib):
        x = lib.ones(2, requires_grad=True)
        seen = [_flags(lib)]
        with lib.no_grad():
            seen.append(_flags(lib))
            seen.append((x * 2).requires_grad)
            with lib.enable_grad():
                seen.append(_flags(lib))
                seen.append((x * 2).requires_grad)
                with lib.set_grad_enabled(False):
                    seen.append(_flags(lib))
                seen.append(_flags(lib))
            seen.append(_flags(lib))
        seen.append(_flags(lib))
        with lib.inference_mode():
            seen.append(_flags(lib))
            with lib.inference_mode(False):
                seen.append(_flags(lib))
            seen.append(_flags(lib))
        seen.append(_flags(lib))
        return seen

    ours, theirs = both(build)
    assert ours == theirs


def test_modes_restore_after_exceptions():
    for lib in (tapegrad, torch):
        with pytest.raises(ZeroDivisionError):
            with lib.no_grad():
                1 / 0
        with pytest.raises(ZeroDivisionError):
            with lib.inference_mode():
                1 / 0
        assert _flags(lib) == (True, False)


def test_no_grad_results_do_not_require_grad():
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            y = x * 2
        return y.requires_grad, y.grad_fn, y.is_leaf, y.tolist()

    ours, theirs = both(build)
    assert ours == theirs


def test_decorators_on_functions():
    def build(lib):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad()
        def f_no_grad():
            return (x * 2).requires_grad, _flags(lib)

        @lib.enable_grad()
        def f_enable():
            return (x * 2).requires_grad, _flags(lib)

        @lib.set_grad_enabled(False)
        def f_set():
            return _flags(lib)

        @lib.inference_mode()
        def f_inference():
            return _flags(lib)

        @lib.inference_mode
        def f_inference_bare():
            return _flags(lib)

        out = [f_no_grad(), f_set(), f_inference(), f_inference_bare(), _flags(lib)]
        with lib.no_grad():
            out.append(f_enable())
        return out

    ours, theirs = both(build)
    assert ours == theirs


def test_decorator_preserves_function_metadata():
    @tapegrad.no_grad()
    def documented(a):
        """doc"""
        return a

    assert documented.__name__ == "documented" and documented.__doc__ == "doc"


def test_decorators_on_generator_functions():
    def build(lib):
        @lib.no_grad()
        def gen():
            received = yield _flags(lib)
            yield (received, _flags(lib))
            yield _flags(lib)

        g = gen()
        out = [next(g), _flags(lib), g.send("hello"), _flags(lib), next(g), _flags(lib)]

        @lib.inference_mode()
        def gen2():
            for _ in range(2):
                yield _flags(lib)

        out.append(list(gen2()))
        return out

    ours, theirs = both(build)
    assert ours == theirs


def test_generator_decorator_throw_runs_inside_the_mode():
    def build(lib):
        @lib.no_grad()
        def gen():
            try:
                yield 1
            except ValueError:
                yield ("caught", _flags(lib))

        g = gen()
        next(g)
        return g.throw(ValueError("x")), _flags(lib)

    ours, theirs = both(build)
    assert ours == theirs


def test_set_grad_enabled_as_a_function_call():
    def build(lib):
        lib.set_grad_enabled(False)
        off = _flags(lib)
        y = lib.ones(2, requires_grad=True) * 2
        lib.set_grad_enabled(True)
        return off, y.requires_grad, _flags(lib)

    ours, theirs = both(build)
    assert ours == theirs


def test_grad_mode_is_thread_local():
    def build(lib):
        seen = {}
        x = lib.ones(2, requires_grad=True)

        def worker():
            seen["thread"] = (_flags(lib), (x * 2).requires_grad)

        with lib.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen["main"] = (_flags(lib), (x * 2).requires_grad)
        return seen

    ours, theirs = both(build)
    assert ours == theirs
    assert ours["thread"] == ((True, False), True)


def test_thread_entering_no_grad_does_not_affect_main():
    entered, release = threading.Event(), threading.Event()

    def worker():
        with tapegrad.no_grad():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    entered.wait(10)
    try:
        assert tapegrad.is_grad_enabled()
        assert (tapegrad.ones(2, requires_grad=True) * 2).requires_grad
    finally:
        release.set()
        t.join()


# ---- inference mode ---------------------------------------------------------------------

def test_inference_tensors():
    def build(lib):
        x = lib.ones(2, requires_grad=True)
        plain = lib.ones(2)
        with lib.inference_mode():
            a = lib.ones(2)
            b = x * 2
            c = plain + 1
        with lib.inference_mode(False):
            d = lib.ones(2)
        return [(t.is_inference(), t.requires_grad) for t in (x, plain, a, b, c, d)]

    ours, theirs = both(build)
    assert ours == theirs


def test_inference_tensor_in_autograd_outside_inference_mode_raises():
    for lib in (tapegrad, torch):
        with lib.inference_mode():
            t = lib.ones(2)
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            w * t
        # Not saved (add's backward reads no input): allowed, as in PyTorch.
        assert (w + t).requires_grad
        # A clone is a normal tensor.
        assert (w * t.clone()).requires_grad


def test_inplace_on_inference_tensor_outside_inference_mode_raises():
    for lib in (tapegrad, torch):
        with lib.inference_mode():
            t = lib.ones(2)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            t.add_(1)


def test_requires_grad_on_inference_tensor_outside_inference_mode_raises():
    for lib in (tapegrad, torch):
        with lib.inference_mode():
            t = lib.ones(2)
        with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode is not allowed"):
            t.requires_grad_()


def test_inference_mode_false_is_not_inference():
    def build(lib):
        with lib.inference_mode(False):
            x = lib.ones(2, requires_grad=True)
            y = x * 2
        return y.requires_grad, y.is_inference(), _flags(lib)

    ours, theirs = both(build)
    assert ours == theirs


def test_no_grad_inside_inference_mode_and_back():
    def build(lib):
        out = []
        with lib.inference_mode():
            with lib.enable_grad():
                out.append(_flags(lib))
            out.append(_flags(lib))
        return out

    ours, theirs = both(build)
    assert ours == theirs
