"""gradcheck / gradgradcheck: analytical gradients against central finite differences (PyTorch's slow mode).

Jacobians are laid out as PyTorch's: [input element][output element]. Inputs should be float64; a
float32 input warns as in PyTorch, since its finite differences are too coarse for the tolerances.
"""
import warnings

import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A Jacobian mismatch found by gradcheck."""


def _tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable(t):
    return _tensor(t) and t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True when the gradients of func at inputs match finite differences; else GradcheckError (or False).

    fast_mode is accepted and runs the full (slow-mode) comparison."""
    inputs = _as_tuple(inputs)
    wrt = [i for i, t in enumerate(inputs) if _differentiable(t)]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in wrt:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=2)
    for i in wrt:
        if inputs[i].dtype.is_complex:
            raise NotImplementedError("gradcheck of complex inputs is not supported by tapegrad; check the real "
                                      "and imaginary parts as two real inputs")
    outputs = _as_tuple(func(*inputs))
    for k, out in enumerate(outputs):
        if not (_tensor(out) and out.requires_grad):
            continue
        numerical = _numerical(func, inputs, wrt, k, eps)
        analytical = _analytical(out, inputs, wrt) if check_backward_ad else None
        forward = _forward(func, inputs, wrt, k) if check_forward_ad else None
        for j, i in enumerate(wrt):
            for name, found in (("Jacobian", analytical), ("Forward AD Jacobian", forward)):
                if found is None:
                    continue
                if not np.allclose(found[j], numerical[j], rtol=rtol, atol=atol):
                    return _fail(raise_exception, f"{name} mismatch for output {k} with respect to input {i},\n"
                                 f"numerical:{_show(numerical[j])}\nanalytical:{_show(found[j])}\n")
    return True


def _fail(raise_exception, message):
    if raise_exception:
        raise GradcheckError(message)
    return False


def _show(matrix):
    from .. import tensor
    return repr(tensor(matrix))


def _evaluate(func, inputs, k):
    # in grad mode, as PyTorch: func may differentiate inside (gradgradcheck's first-order function)
    out = _as_tuple(func(*inputs))[k]
    return np.asarray(out.detach()._value, dtype=np.float64).reshape(-1)


def _numerical(func, inputs, wrt, k, eps):
    """Central differences: d output k / d input i, one row per element of input i."""
    from .. import tensor
    jacobians = []
    for i in wrt:
        base = np.asarray(inputs[i].detach()._value)
        rows = []
        for e in range(base.size):
            shifted = []
            for sign in (1, -1):
                value = base.copy().reshape(-1)
                value[e] += sign * eps
                args = list(inputs)
                args[i] = tensor(value.reshape(base.shape), dtype=inputs[i].dtype, requires_grad=True)
                shifted.append(_evaluate(func, args, k))
            rows.append((shifted[0] - shifted[1]) / (2 * eps))
        jacobians.append(np.array(rows).reshape(base.size, -1))
    return jacobians


def _analytical(out, inputs, wrt):
    """d output / d input by one backward per output element (rows: input elements)."""
    from . import grad
    from .._creation import zeros_like
    flat = out.reshape(-1)
    columns = [[] for _ in wrt]
    for e in range(flat.numel()):
        seed = zeros_like(flat)
        seed[e] = 1
        grads = grad(flat, [inputs[i] for i in wrt], seed, retain_graph=True, allow_unused=True)
        for c, g, i in zip(columns, grads, wrt):
            c.append(np.zeros(inputs[i].numel()) if g is None else np.asarray(g._value, np.float64).reshape(-1))
    return [np.array(c).reshape(flat.numel(), inputs[i].numel()).T for c, i in zip(columns, wrt)]


def _forward(func, inputs, wrt, k):
    """d output / d input by forward mode (tapegrad.func.jacfwd)."""
    from .. import func as transforms
    argnums = tuple(range(len(wrt)))

    def of_wrt(*xs):
        args = list(inputs)
        for i, x in zip(wrt, xs):
            args[i] = x
        return _as_tuple(func(*args))[k]
    jac = transforms.jacfwd(of_wrt, argnums=argnums)(*[inputs[i].detach() for i in wrt])
    out_numel = int(np.prod(jac[0].shape[:jac[0].ndim - inputs[wrt[0]].ndim])) if jac else 0
    return [np.asarray(j._value, np.float64).reshape(out_numel, inputs[i].numel()).T for j, i in zip(jac, wrt)]


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=None):
    """gradcheck of the gradient of func (w.r.t. its inputs and the incoming gradients): second derivatives."""
    from . import grad
    from .. import rand
    inputs = _as_tuple(inputs)
    outputs = [o for o in _as_tuple(func(*inputs)) if _differentiable(o)]
    if grad_outputs is None:   # PyTorch draws them in [-1, 1), requiring grad
        grad_outputs = tuple((rand(tuple(o.shape), dtype=o.dtype) * 2 - 1).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_order(*args):
        xs, gs = args[:n], args[n:]
        outs = [o for o in _as_tuple(func(*xs)) if _differentiable(o)]
        wrt = [x for x in xs if _differentiable(x)]
        found = grad(outs, wrt, gs, create_graph=True, allow_unused=True)
        return tuple(g for g in found if g is not None)
    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
