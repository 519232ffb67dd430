"""The checks PyTorch makes on tensor values (an index within its table, a class target within range,
probabilities in [0, 1]), which JAX would skip: it clamps indices and computes nan.

A value that exists (or is pending, then computed now) is checked on the host, when the op is recorded,
so the error points at the user's line. While `tapegrad.compile` traces a function the value is a
tracer: the check becomes part of the program (a flag and the first offending element are outputs of it),
and the compiled call raises the error without writing anything back (`_compile/_checks.py`). Inside
other traces (torch.func transforms) values are not checked.
"""
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _faults
from ._equation import SIGNATURES, Pending
from ._ops._registry import ALL_INPUTS

collector = None   # a list while tapegrad.compile traces: (flag, [first offending value, position], make_error)


def check(t, bad, make_error, key=None):
    """Raise make_error(value, flat position) of the first offending element when bad(values, xp) is
    true anywhere in tensor t (`xp` is NumPy on the host, jax.numpy in a traced program).

    `key` names the check (bad's meaning and parameters). With it, a tensor whose elements are all
    taken from arrays that passed the same check needs no value of its own: a loop that slices a dataset
    at new offsets each step (`Y[i:i+bs]`, nanoGPT's `torch.stack([data[i:i+block] for i in ix])`)
    checks the dataset once, and the batch stays pending, computed inside the step's program."""
    if _faults._in_flight[0] is not None:   # the arrays read below may be a program's results not yet awaited
        _faults.confirm()
    if key is not None and _taken_from_passing(t._peek(), bad, key):
        return
    value = t._value
    if isinstance(value, jax.core.Tracer):
        if collector is not None:
            mask = jnp.reshape(bad(value, jnp), (-1,))   # bad() is elementwise: the mask has t's shape
            at = jnp.argmax(mask)
            collector.append((jnp.any(mask), jnp.stack([jnp.reshape(value, (-1,))[at].astype(jnp.float64),
                                                        at.astype(jnp.float64)]), make_error))
        return
    host = np.asarray(value)
    mask = np.asarray(bad(host, np))
    if mask.any():
        at = int(np.argmax(mask.reshape(-1)))
        raise make_error(host.reshape(-1)[at].item(), at)


_MAX_SOURCES = 64
_verdicts = {}   # id(array) -> (weakref to it, {check key: whether every element passed})
_MAX_VERDICTS = 256


def _taken_from_passing(value, bad, key):
    """Whether every element of `value` (an array, or a pending one) passed the check: it is an array
    that passed, or computed by element-moving ops from arrays that all did. Reads no pending value."""
    stack, arrays = [value], []
    while stack:
        v = stack.pop()
        if type(v) is Pending:
            if v.value is not None:
                v = v.value
            else:
                eq = v.node
                sources = SIGNATURES[eq.sid][0].elements_from   # (see Op.elements_from)
                if sources is None or type(eq.args) is not list:
                    return False   # (inputs dropped, or lost with a failed program: read the value)
                args = eq.args if sources is ALL_INPUTS else [eq.args[i] for i in sources]
                for a in args:
                    if getattr(a, "dtype", None) != v.dtype:
                        return False   # a conversion moves values, not elements
                stack.extend(args)
                continue
        if isinstance(v, jax.core.Tracer) or not hasattr(v, "dtype"):
            return False
        arrays.append(v)
        if len(arrays) + len(stack) > _MAX_SOURCES:
            return False
    return all(_passes(a, bad, key) for a in arrays)


def _passes(array, bad, key):
    entry = _verdicts.get(id(array))
    if entry is None or entry[0]() is not array:
        if len(_verdicts) >= _MAX_VERDICTS:
            _verdicts.clear()
        entry = _verdicts[id(array)] = (weakref.ref(array), {})
    verdict = entry[1].get(key)
    if verdict is None:
        verdict = entry[1][key] = not np.asarray(bad(np.asarray(array), np)).any()
    return verdict


def check_storage_size(shape, itemsize):
    """PyTorch's error for a size whose byte count overflows 64 bits (NumPy would abort the process)."""
    n = itemsize
    for s in shape:
        n *= s
    if n >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
