"""The Jacobians gradcheck compares, as NumPy arrays laid out as PyTorch's: [input element][output element].

Numerical ones are central differences; along a complex input's real and imaginary directions they combine as
d/dx + 1j d/dy (PyTorch's conjugate Wirtinger convention, which its backward follows for real outputs).
Analytical ones come from one backward per output element, or from forward mode.
"""
import numpy as np


def _flat(t):
    value = np.asarray(t.detach()._value)
    return value.astype(np.complex128 if np.iscomplexobj(value) else np.float64).reshape(-1)


def _outputs(fn, inputs):
    # in grad mode, as PyTorch: fn may differentiate inside (gradgradcheck's first-order function)
    from .gradcheck import _as_tuple, _tensor
    return [_flat(o) if _tensor(o) else None for o in _as_tuple(fn(*inputs))]


def _difference(fn, inputs, i, direction, eps):
    """Central difference of every output of fn when input i moves along direction (an array of its shape)."""
    from .. import tensor
    base = np.asarray(inputs[i].detach()._value)
    moved = []
    for sign in (1, -1):
        args = list(inputs)
        args[i] = tensor(base + sign * eps * direction, dtype=inputs[i].dtype, requires_grad=True)
        moved.append(_outputs(fn, args))
    return [None if a is None else (a - b) / (2 * eps) for a, b in zip(*moved)]


def numerical_along(fn, inputs, i, real, imag, eps):
    """J u for every output: the derivative along real (flat), plus 1j times the one along 1j * imag when
    input i is complex."""
    shape = tuple(inputs[i].shape)
    along = _difference(fn, inputs, i, real.reshape(shape), eps)
    if imag is None:
        return along
    across = _difference(fn, inputs, i, 1j * imag.reshape(shape), eps)
    return [None if a is None else a + b * 1j for a, b in zip(along, across)]


def numerical(fn, inputs, i, eps):
    """For every output: d output / d input i, one row per element of the input."""
    size = inputs[i].numel()
    rows = []
    for e in range(size):
        unit = np.zeros(size)
        unit[e] = 1.0
        rows.append(numerical_along(fn, inputs, i, unit, unit if inputs[i].is_complex() else None, eps))
    if not rows:
        return [None] * len(_outputs(fn, inputs))
    return [None if column[0] is None else np.array(column).reshape(size, -1) for column in zip(*rows)]


def vjp(out, inputs, wrt, v):
    """v^T J of output out for each input in wrt (PyTorch's gradient: conjugate Wirtinger for a complex input)."""
    from . import grad
    from .. import tensor
    seed = tensor(np.asarray(v).reshape(tuple(out.shape)), dtype=out.dtype)
    found = grad(out, [inputs[i] for i in wrt], seed, retain_graph=True, allow_unused=True)
    result = []
    for g, i in zip(found, wrt):
        dtype = np.complex128 if inputs[i].is_complex() else np.float64
        result.append(np.zeros(inputs[i].numel(), dtype) if g is None else np.asarray(g._value, dtype).reshape(-1))
    return result


def analytical(out, inputs, wrt):
    """d out / d input for each input in wrt, by one backward per output element."""
    rows = []
    for e in range(out.numel()):
        seed = np.zeros(out.numel())
        seed[e] = 1.0
        rows.append(vjp(out, inputs, wrt, seed))
    return [np.array([row[j] for row in rows]).reshape(out.numel(), inputs[i].numel()).T
            for j, i in enumerate(wrt)]


def forward(fn, inputs, wrt, k):
    """d output k / d input for each input in wrt, by forward mode (tapegrad.func.jacfwd)."""
    from .. import func as transforms
    from .gradcheck import _as_tuple

    def of_wrt(*xs):
        args = list(inputs)
        for i, x in zip(wrt, xs):
            args[i] = x
        return _as_tuple(fn(*args))[k]
    jac = transforms.jacfwd(of_wrt, argnums=tuple(range(len(wrt))))(*[inputs[i].detach() for i in wrt])
    result = []
    for j, i in zip(jac, wrt):
        value = np.asarray(j._value)
        value = value.astype(np.complex128 if np.iscomplexobj(value) else np.float64)
        result.append(value.reshape(-1, inputs[i].numel()).T)
    return result
