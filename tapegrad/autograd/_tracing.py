"""Run tapegrad code on JAX tracers: the bridge from the stateful Tensor API to a pure JAX function.

Inside `tracing()` ops run eagerly (no deferred recording, no tape) and outside grad mode, so a
function of Tensors whose values are JAX tracers computes a traced value: the function becomes
one pure JAX function that `jax.jit`, `jax.vjp`, `jax.jvp` and `jax.vmap` can transform. A custom
Function's backward, `tapegrad.func` and the forward mode of `autograd.functional` are traced so.
Code that reads a value in Python (`.item()`, `.tolist()`, printing, data-dependent `if`) cannot be
traced; JAX then raises one of `TRACER_ERRORS`.
"""
import contextlib

import jax

from .. import _dispatch
from .._grad_mode import _state

TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError,
                 jax.errors.UnexpectedTracerError)


@contextlib.contextmanager
def tracing(grad=False, on_arguments=None):
    """Ops run eagerly, outside grad mode; on_arguments(args) sees each op's arguments first."""
    lazy, enabled, hook = _dispatch.LAZY[0], _state.grad_enabled, _dispatch.CAPTURE[0]
    _dispatch.LAZY[0] = False
    _state.grad_enabled = grad

    def arguments(args):
        _computed(args)
        if on_arguments is not None:
            on_arguments(args)
    _dispatch.CAPTURE[0] = arguments
    try:
        yield
    finally:
        _dispatch.LAZY[0] = lazy
        _state.grad_enabled = enabled
        _dispatch.CAPTURE[0] = hook


def _computed(args):
    """Compute the deferred values of tensors read from outside the trace (a closure's, a module's) now,
    outside the trace: computed inside it they would be tracers, kept by tensors that outlive it."""
    from .._lazy import Pending
    from .._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor) and (type(a._storage._raw) is Pending or a._view is not None):
            with jax.ensure_compile_time_eval():
                a._value


def wrap(value):
    from .._tensor import Tensor
    return value if value is None else Tensor._wrap(value)


def unwrap(t):
    from .._tensor import Tensor
    return t._value if isinstance(t, Tensor) else t
