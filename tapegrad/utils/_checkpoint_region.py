"""A checkpointed region as one op whose VJP recomputes it: `jax.checkpoint` inside the compiled backward.

The region's function is traced (autograd._tracing) with its tensor arguments as inputs; tensors it
reads from elsewhere (a module's parameters and buffers) are found on a first trace and become inputs
too, so gradients reach them and their current values are read at every call. The op's function is
`jax.checkpoint` of that trace: its VJP keeps the inputs only and computes the region again in the
backward, inside the same program as everything else. Regions that cannot be traced so -- they draw
random numbers, write tensors in place, read values in Python or return non-tensors -- are rerun in
Python instead (utils.checkpoint).
"""
import jax

from .. import _dispatch, _programs
from .._ops._registry import KEEP, Op
from ..autograd._tracing import TRACER_ERRORS, Identity, Untraceable, discover, swapped, tracing, unwrap, wrap

_regions = _programs.bounded_cache()   # (function state, argument kinds) -> (op, captured's places, [read], anchors)


def _tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def region_op(function, args):
    """(op, captured tensors) for `function(*args)` as one recomputing op, or None when it must run in Python."""
    kinds = tuple((tuple(a.shape), a.dtype, a.requires_grad) if _tensor(a) else ("const", a) for a in args)
    state = Identity(function)
    try:
        key = (state.key, kinds)
        hash(key)
    except TypeError:
        return None
    found = _regions.get(key)
    if found is None:
        op, captured, reading = _build(function, args) or (None, None, None)
        found = _regions.put(key, (op, captured and state.places(captured), reading, state.anchors))
    if found[0] is None:
        return None
    captured = found[2][0] = state.recapture(found[1])   # (a trace of the op reads this call's tensors)
    return found[0], captured


def _build(function, args):
    positions = [i for i, a in enumerate(args) if _tensor(a)]

    def call(arrays):
        called = list(args)
        for i, x in zip(positions, arrays):
            called[i] = wrap(x)
        return _outputs(function(*called))

    def trace(capture, *arrays):
        with tracing(on_arguments=capture):
            return call(arrays)
    try:
        out, captured = discover(trace, [jax.ShapeDtypeStruct(tuple(args[i].shape), args[i].dtype.np)
                                         for i in positions])
    except (TRACER_ERRORS + (_NotTensors, Untraceable)):
        return None
    nout = len(out)
    reading = [captured]   # the tensors the region reads as its last arrays: the current call's

    def region(*arrays):
        with tracing(), swapped(reading[0], arrays[len(positions):]):
            outs = call(arrays[:len(positions)])
        return outs if nout > 1 else outs[0]
    op = Op("checkpoint", jax.checkpoint(region), dtype_rule=KEEP, nout=nout,
            node_name="CheckpointFunctionBackward")
    op.node_class.repr_module = "torch.autograd.function."   # (PyTorch's CheckpointFunction is a Python Function)
    return op, captured, reading


class _NotTensors(Exception):
    pass


def _outputs(out):
    items = out if isinstance(out, tuple) else (out,)
    if not items or not all(_tensor(o) for o in items):
        raise _NotTensors
    return tuple(unwrap(o) for o in items)


def run(function, args):
    """function(*args) as a recorded recomputing op, or None (then the caller reruns it in Python)."""
    found = region_op(function, args)
    if found is None:
        return None
    op, captured = found
    return _dispatch.apply(op, *[a for a in args if _tensor(a)], *captured)
