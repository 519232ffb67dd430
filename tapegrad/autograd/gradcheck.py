"""gradcheck / gradgradcheck: analytical gradients against central finite differences, as PyTorch checks them.

Jacobians are laid out as PyTorch's: [input element][output element]. Inputs should be float64 or complex128;
a float32 input warns as in PyTorch, since its finite differences are too coarse for the tolerances.

Complex numbers follow PyTorch's Wirtinger calculus: a function with complex outputs is checked twice, on the
imaginary parts of those outputs and then on their real parts (backward mode needs a real output); a complex
input's numerical derivative is d/dx + 1j d/dy, which is what PyTorch's backward returns for a real output.
Forward mode splits complex inputs instead: real and imaginary parts are perturbed as separate real inputs.
fast_mode compares projections v^T J u on random u, v (PyTorch's vectors are drawn by its own generator, so the
projections it reports differ) and on a mismatch recomputes the full Jacobians for the message, as PyTorch does.
"""

import numpy as np

from ._gradcheck_jacobians import analytical, forward, numerical, numerical_along, vjp
from .._user_frames import warn_user

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A Jacobian mismatch found by gradcheck."""


def _tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _requires_grad(t):
    return _tensor(t) and t.requires_grad


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True when the gradients of func at inputs match finite differences; else GradcheckError (or False)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if _requires_grad(t) and t.dtype.name not in ("float64", "complex128"):
            warn_user(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                      "This check will likely fail if all the inputs are not of double precision floating point "
                      "or complex. ", UserWarning)
    if not any(map(_requires_grad, inputs)):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    try:
        _check_real_imag(func, inputs, (eps, atol, rtol), check_backward_ad, check_forward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_real_imag(func, inputs, tol, backward, forward_ad, fast):
    """PyTorch's _gradcheck_real_imag: where outputs (backward mode) or inputs (forward mode) are complex, the
    imaginary parts are checked first, then the real parts, each as a function of real numbers."""
    outputs = _as_tuple(func(*inputs))
    if backward:
        complex_outputs = [n for n, o in enumerate(filter(_requires_grad, outputs)) if o.is_complex()]
        if any(_tensor(o) and o.is_complex() for o in outputs):
            for part in ("imag", "real"):
                _check(_output_part(func, part), inputs, tol, fast, note=(complex_outputs, part, "outputs"))
        else:
            _check(func, inputs, tol, fast)
    if forward_ad:
        complex_inputs = [i for i, t in enumerate(inputs) if _tensor(t) and t.is_complex()]
        if complex_inputs:
            for part in ("imag", "real"):
                fn, parts = _input_part(func, inputs, complex_inputs, part)
                _check(fn, parts, tol, fast, forward_ad=True, note=(complex_inputs, part, "inputs"))
        else:
            _check(func, inputs, tol, fast, forward_ad=True)


def _output_part(func, part):
    def fn(*xs):
        return tuple(getattr(o, part) if _tensor(o) and o.is_complex() else o for o in _as_tuple(func(*xs)))
    return fn


def _input_part(func, inputs, complex_inputs, part):
    """inp -> func(inp + 1j * x.imag) (part "real") or func(x.real + 1j * inp) ("imag"): the other part stays."""
    def fn(*xs):
        xs = list(xs)
        for i in complex_inputs:
            xs[i] = xs[i] + inputs[i].imag * 1j if part == "real" else inputs[i].real + xs[i] * 1j
        return _as_tuple(func(*xs))
    return fn, tuple(getattr(t, part) if i in complex_inputs else t for i, t in enumerate(inputs))


def _check(fn, inputs, tol, fast, forward_ad=False, note=None):
    eps, atol, rtol = tol
    outputs = _as_tuple(fn(*inputs))
    wrt = [i for i, t in enumerate(inputs) if _requires_grad(t)]
    diff = [k for k, o in enumerate(outputs) if _requires_grad(o)]
    if not diff:   # nothing to differentiate: the function must not change
        for columns in (numerical(fn, inputs, i, eps) for i in wrt):
            if any(c is not None and np.any(c != 0) for c in columns):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    if fast:
        _check_fast(fn, inputs, outputs, wrt, diff, tol, forward_ad, note)
        return
    found_numerical = [numerical(fn, inputs, i, eps) for i in wrt]
    for n, k in enumerate(diff):   # PyTorch counts differentiable outputs and inputs only
        found = forward(fn, inputs, wrt, k) if forward_ad else analytical(outputs[k], inputs, wrt)
        for j, expected in enumerate(found_numerical):
            if not np.allclose(found[j], expected[k], rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch(_show(found[j]), _show(expected[k]), n, j, note, forward_ad))


def _check_fast(fn, inputs, outputs, wrt, diff, tol, forward_ad, note):
    eps, atol, rtol = tol
    rng = np.random.default_rng(0)

    def unit(size):
        v = rng.random(size)
        return v / np.linalg.norm(v)
    us = [(unit(inputs[i].numel()), unit(inputs[i].numel())) if inputs[i].is_complex() else
          (unit(inputs[i].numel()), None) for i in wrt]
    vs = None if forward_ad else [unit(outputs[k].numel()) for k in diff]
    for j, (i, (ur, ui)) in enumerate(zip(wrt, us)):
        ju = numerical_along(fn, inputs, i, ur, ui, eps)
        scale = ur.sum() + (0 if ui is None else ui.sum())
        for n, k in enumerate(diff):
            if forward_ad:   # inputs are real here (complex ones were split): J u, from forward mode
                found, expected, shown = forward(fn, inputs, [i], k)[0].T @ ur, ju[k], _show
            else:
                vj, = vjp(outputs[k], inputs, [i], vs[n])
                found = vj.real @ ur + 1j * (vj.imag @ ui) if ui is not None else vj @ ur
                expected = vs[n] @ ju[k]
                shown = complex if ui is not None else float
            bound = atol * float(scale) * (1.0 if vs is None else float(vs[n].sum()))
            if not np.allclose(found, expected, rtol=rtol, atol=bound):
                raise GradcheckError(_mismatch(shown(found), shown(expected), n, j, note, forward_ad)
                                     + _slow_report(fn, inputs, outputs, i, k, tol, forward_ad))


_SLOW_WOULD_PASS = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _slow_report(fn, inputs, outputs, i, k, tol, forward_ad):
    eps, atol, rtol = tol
    expected = numerical(fn, inputs, i, eps)[k]
    found = forward(fn, inputs, [i], k)[0] if forward_ad else analytical(outputs[k], inputs, [i])[0]
    message = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
               "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
               "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
               f"Numerical:\n {_show(expected)}\nAnalytical:\n{_show(found)}\n\n"
               f"The max per-element difference (slow mode) is: {float(np.abs(expected - found).max())}.\n")
    return message + (_SLOW_WOULD_PASS if np.allclose(found, expected, rtol=rtol, atol=atol) else "")


def _mismatch(found, expected, output, inp, note, forward_ad):
    """PyTorch's message; note (complex indices, part, "outputs"/"inputs") names the part of complex numbers
    checked (PyTorch compares an input's place among the differentiable ones with the complex inputs' places)."""
    prefix = ""
    if note is not None:
        indices, part, element = note
        if (inp if forward_ad else output) in indices:
            name = "imaginary" if part == "imag" else "real"
            prefix = f"While considering the {name} part of complex {element} only, "
    mode = "computed with forward mode " if forward_ad else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {output} with respect to input {inp},\n"
            f"numerical:{expected}\nanalytical:{found}\n")


def _show(matrix):
    from .. import tensor
    return repr(tensor(matrix))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=None):
    """gradcheck of the gradient of func (w.r.t. its inputs and the incoming gradients): second derivatives."""
    from . import grad
    from .. import func as transforms, rand, view_as_complex
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    outputs = _as_tuple(func(*inputs))
    keep = [k for k, o in enumerate(outputs) if _requires_grad(o)]
    if grad_outputs is None:   # PyTorch draws them in [-1, 1) (both parts of a complex number), requiring grad
        def draw(o):
            if o.is_complex():
                part = o.real.dtype
                return view_as_complex(rand(tuple(o.shape) + (2,), dtype=part) * 2 - 1).requires_grad_()
            return (rand(tuple(o.shape), dtype=o.dtype) * 2 - 1).requires_grad_()
        grad_outputs = tuple(draw(outputs[k]) for k in keep)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if _requires_grad(x)]

    def first_order(*args):   # the gradient as the tape records it (reverse over reverse)
        xs, gs = args[:n], args[n:]
        outs = [o for o in _as_tuple(func(*xs)) if _requires_grad(o)]
        found = grad(outs, [x for x in xs if _requires_grad(x)], gs, create_graph=True, allow_unused=True)
        return tuple(g for g in found if g is not None)

    def first_order_traced(*args):
        # forward mode does not run through gradients taken on the tape: the same gradient by tapegrad.func.vjp
        xs, gs = args[:n], args[n:]

        def of_wrt(*ts):
            full = list(xs)
            for i, t in zip(wrt, ts):
                full[i] = t
            found = _as_tuple(func(*full))
            return tuple(found[k] for k in keep)
        _, pull = transforms.vjp(of_wrt, *[xs[i] for i in wrt])
        # differentiable outputs, as the tape's gradients are (gradcheck checks outputs that require grad)
        return tuple(g if g.requires_grad else g.requires_grad_() for g in pull(tuple(gs)))
    checks = dict(eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception, fast_mode=fast_mode)
    ok = True
    if check_rev_over_rev:
        ok = gradcheck(first_order, inputs + grad_outputs, **checks)
    if ok and check_fwd_over_rev:
        ok = gradcheck(first_order_traced, inputs + grad_outputs, check_forward_ad=True, check_backward_ad=False,
                       **checks)
    return ok
