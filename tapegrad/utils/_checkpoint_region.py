"""A checkpointed region as one op whose VJP recomputes it: `jax.checkpoint` inside the compiled backward.

The region's function is traced (autograd._tracing) with its tensor arguments as inputs; tensors it
reads from elsewhere (a module's parameters and buffers) are found on a first trace and become inputs
too, so gradients reach them and their current values are read at every call. The op's function is
`jax.checkpoint` of that trace: its VJP keeps the inputs only and computes the region again in the
backward, inside the same program as everything else. Regions that cannot be traced so -- they draw
random numbers, write tensors in place, read values in Python or return non-tensors -- are rerun in
Python instead (utils.checkpoint).
"""
import contextlib

import jax

from .. import _dispatch, _programs
from .. import random as _random
from .._ops._registry import KEEP, Op
from .._storage import Storage
from ..autograd._tracing import TRACER_ERRORS, tracing, unwrap, wrap

_regions = _programs.bounded_cache()   # (function identity, argument kinds) -> (op, captured tensors) or None


def _tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _identity(function):
    """(key, anchors): what makes two calls of `checkpoint` run the same code on the same objects. The
    cache entry holds the anchors (the callable's owner and closure values), so their ids stay theirs."""
    code = getattr(function, "__code__", None) or getattr(getattr(function, "__func__", None), "__code__", None)
    if code is None:   # a module or another callable object
        return ("object", id(function)), (function,)
    anchors = (getattr(function, "__self__", None),) + tuple(
        c.cell_contents for c in (getattr(function, "__closure__", None) or ()))
    return (code,) + tuple(id(a) for a in anchors), anchors


def region_op(function, args):
    """(op, captured tensors) for `function(*args)` as one recomputing op, or None when it must run in Python."""
    kinds = tuple((tuple(a.shape), a.dtype, a.requires_grad) if _tensor(a) else ("const", a) for a in args)
    identity, anchors = _identity(function)
    try:
        key = (identity, kinds)
        hash(key)
    except TypeError:
        return None
    found = _regions.get(key)
    if found is None:
        found = _regions.put(key, (_build(function, args) or (None, None)) + (anchors,))
    return None if found[0] is None else found[:2]


def _build(function, args):
    positions = [i for i, a in enumerate(args) if _tensor(a)]
    captured = {}

    def capture(op_args):
        for a in op_args:
            if _tensor(a) and id(a) not in captured and not isinstance(a._storage._raw, jax.core.Tracer):
                captured[id(a)] = a

    def discover(*arrays):
        call = list(args)
        for i, x in zip(positions, arrays):
            call[i] = wrap(x)
        with tracing(on_arguments=capture):
            return _outputs(function(*call))
    counter, writes = _random.default_generator._counter, Storage.writes
    try:
        out = jax.eval_shape(discover, *[jax.ShapeDtypeStruct(tuple(args[i].shape), args[i].dtype.np)
                                         for i in positions])
    except (TRACER_ERRORS + (_NotTensors,)):
        return None
    finally:
        drew = _random.default_generator._counter != counter
        _random.default_generator._counter = counter   # the trace's draws are not the region's
    if drew or Storage.writes != writes:
        return None   # random draws or in-place writes: a trace would fix them; rerun in Python
    captured = list(captured.values())
    if any(t._view is not None for t in captured):
        return None
    nout = len(out)

    def region(*arrays):
        call = list(args)
        for i, x in zip(positions, arrays):
            call[i] = wrap(x)
        with tracing(), _swapped(captured, arrays[len(positions):]):
            outs = _outputs(function(*call))
        return outs if nout > 1 else outs[0]
    op = Op("checkpoint", jax.checkpoint(region), dtype_rule=KEEP, nout=nout,
            node_name="CheckpointFunctionBackward")
    return op, captured


class _NotTensors(Exception):
    pass


def _outputs(out):
    items = out if isinstance(out, tuple) else (out,)
    if not items or not all(_tensor(o) for o in items):
        raise _NotTensors
    return tuple(unwrap(o) for o in items)


@contextlib.contextmanager
def _swapped(tensors, values):
    """Read `tensors` as `values` (tracers) while the region is traced."""
    old = [t._storage._raw for t in tensors]
    for t, v in zip(tensors, values):
        t._storage._raw = v
    try:
        yield
    finally:
        for t, v in zip(tensors, old):
            t._storage._raw = v


def run(function, args):
    """function(*args) as a recorded recomputing op, or None (then the caller reruns it in Python)."""
    found = region_op(function, args)
    if found is None:
        return None
    op, captured = found
    return _dispatch.apply(op, *[a for a in args if _tensor(a)], *captured)
