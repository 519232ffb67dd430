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
from .._grad_mode import TRACED_OFF, _state
from .._tensor import Tensor

TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError,
                 jax.errors.UnexpectedTracerError)


@contextlib.contextmanager
def tracing(grad=False, on_arguments=None):
    """Ops run eagerly, outside grad mode; on_arguments(args) sees each op's arguments first."""
    lazy, enabled, hook = _dispatch.LAZY[0], _state.grad_enabled, _dispatch.CAPTURE[0]
    _dispatch.LAZY[0] = False
    _state.grad_enabled = grad or TRACED_OFF

    def arguments(args):
        if hook is not None:
            hook(args)   # an enclosing trace sees what a nested one reads
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
    for a in args:
        if isinstance(a, Tensor) and (type(a._storage._raw) is Pending or a._view is not None):
            with jax.ensure_compile_time_eval():
                a._value


def wrap(value):
    return value if value is None else Tensor._wrap(value)


def unwrap(t):
    return t._value if isinstance(t, Tensor) else t


# ---- functions that read tensors from outside their arguments ----------------------------------------
# A traced function may read tensors it was not given (a closure's, a module's parameters). Traced once
# with `discover`, it names them; traced again with those tensors `swapped` for tracers, it is a pure
# function of its arguments and them, so a cached compiled version reads their current values.

class Identity:
    """What makes two calls of a traced function run the same code on the same state: `key` holds its code
    and every Python value it can reach (its closure, the globals it names, its object's attributes, a
    module's `training`: the walk of tapegrad.compile's guard, _compile._walk), so a changed global scalar,
    attribute or flag is a new key rather than a stale program. Tensors count by shape, dtype and place:
    the tensors a cached trace reads are found again by their place in this call's walk (`recapture`), so a
    global rebound to another tensor of the same shape is read, not the one first traced. `anchors` keep
    the objects the key names by id alive while a cache entry holds them. A state too large to walk falls
    back to the function's code and the identity of its closure's values."""

    __slots__ = ("key", "anchors", "_walk")

    def __init__(self, function):
        from .._compile._walk import TooLarge, Walk
        try:
            walk = Walk([function])
        except TooLarge:
            walk = None
        if walk is None:
            code = getattr(function, "__code__", None) or getattr(getattr(function, "__func__", None), "__code__", None)
            if code is None:   # a module or another callable object
                self.key, self.anchors = ("object", id(function)), (function,)
            else:
                self.anchors = (getattr(function, "__self__", None),) + tuple(
                    c.cell_contents for c in (getattr(function, "__closure__", None) or ()))
                self.key = (code,) + tuple(id(a) for a in self.anchors)
        else:
            self.key, self.anchors = walk.key, tuple(walk.opaque)
        self._walk = walk

    def places(self, tensors):
        """Where each of `tensors` sits in this call's walk (or the tensor itself, when the walk does not
        reach it: a tensor read through a library's global stays that tensor)."""
        index = self._walk.index if self._walk is not None else {}
        return tuple(index.get(id(t), t) for t in tensors)

    def recapture(self, places):
        """The tensors at `places` in this call's walk."""
        objects = self._walk.objects if self._walk is not None else ()
        return [objects[p] if type(p) is int else p for p in places]


class Untraceable(Exception):
    """The function draws random numbers, writes tensors from outside in place or runs a backward over a graph
    recorded outside: a trace would freeze that."""


def discover(trace, structs):
    """The tensors from outside that `trace(*structs)` reads (abstract evaluation, nothing computed).

    trace runs the function under `tracing(on_arguments=...)` given by the caller through `capture`."""
    from .. import random as _random
    found = {}   # id -> (tensor, its version when first read)

    def capture(op_args):
        for a in op_args:
            if isinstance(a, Tensor) and id(a) not in found and not isinstance(a._storage._raw, jax.core.Tracer):
                found[id(a)] = (a, a._storage.version)
    from .._func_checks import OUTSIDE_BACKWARDS
    counter, backwards = _random.default_generator._counter, OUTSIDE_BACKWARDS[0]
    try:
        out = jax.eval_shape(lambda *xs: trace(capture, *xs), *structs)
    finally:
        drew = _random.default_generator._counter != counter
        _random.default_generator._counter = counter   # the trace's draws are not the function's
    # (in-place ops on tensors the function makes are its own business; on tensors from outside, the program
    # could not write them back; a backward over a graph from outside reads its saved values as constants)
    if drew or OUTSIDE_BACKWARDS[0] != backwards or any(t._storage.version != v for t, v in found.values()):
        raise Untraceable
    captured = [t for t, _ in found.values()]
    if any(t._view is not None for t in captured):
        raise Untraceable
    return out, captured


@contextlib.contextmanager
def swapped(tensors, values):
    """Read `tensors` as `values` (tracers) while a function is traced."""
    old = [t._storage._raw for t in tensors]
    for t, v in zip(tensors, values):
        t._storage._raw = v
    try:
        yield
    finally:
        for t, v in zip(tensors, old):
            t._storage._raw = v
