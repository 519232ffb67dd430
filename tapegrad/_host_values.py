"""Values that stay in host memory between the kernels of one op-by-op run.

On first sight a graph runs op by op, and most kernels run on NumPy (see _numpy_eval). Putting each
output on the device only for the next kernel to read it back costs more than many of those kernels: a
quarter of an unrolled RNN's first forward and backward. Inside `op_by_op()` (a plan's op-by-op forward,
the eager backward walk) a NumPy kernel's output is therefore handed on as a `HostArray`, and becomes a
device array only where it leaves: a value memoised on its `Pending` is converted when first read
(`_lazy.computed`), a storage or a gradient is converted when written, and an XLA call converts its
arguments (a NumPy argument would make `jax.jit` compile again: its outputs are committed arrays).

Weakly typed outputs are put on the device at once: a NumPy array has no weak type, and promoting with
it would change the next op's dtype.
"""
import contextlib
import threading

import numpy as np

from . import _numpy_eval, _numpy_template


class HostArray(np.ndarray):
    """A read-only NumPy kernel output that has not left its op-by-op run. The type marks it: every exit
    converts exactly these."""


class _Local(threading.local):
    depth = 0   # > 0 inside op_by_op() on this thread


_local = _Local()
_avals = {}


@contextlib.contextmanager
def op_by_op():
    _local.depth += 1
    try:
        with _numpy_eval.quiet():
            yield
    finally:
        _local.depth -= 1


def active():
    return _local.depth > 0


def keep(values, avals):
    """A NumPy kernel's outputs: host arrays inside op_by_op(), device arrays otherwise."""
    if not _local.depth:
        return _numpy_eval.to_device(values, avals)
    out = []
    for v, a in zip(values, avals):
        if a.weak_type:
            out.append(_numpy_eval.to_device([v], [a])[0])
            continue
        v = v.view(HostArray)
        v.flags.writeable = False   # it may be a view of a kernel's input; no one may write through it
        out.append(v)
    return out


def on_device(v):
    """v as a device array if it is a host array, else v itself."""
    if type(v) is not HostArray:
        return v
    key = (v.shape, v.dtype)
    aval = _avals.get(key)
    if aval is None:
        aval = _avals[key] = _numpy_template._core.ShapedArray(v.shape, v.dtype)
    return _numpy_eval.to_device([v.view(np.ndarray)], [aval])[0]


def args_on_device(args):
    """An XLA call's arguments (nested tuples, lists and dicts) with every host array on the device."""
    t = type(args)
    if t is HostArray:
        return on_device(args)
    if t is tuple or t is list:
        return t(args_on_device(a) for a in args)
    if t is dict:
        return {k: args_on_device(a) for k, a in args.items()}
    return args
