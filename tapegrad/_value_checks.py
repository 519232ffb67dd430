"""The checks PyTorch makes on tensor values (an index within its table, a class target within range,
probabilities in [0, 1]), which JAX would skip: it clamps indices and computes nan.

A value that exists (or is pending, then computed now) is checked on the host, when the op is recorded,
so the error points at the user's line. While `tapegrad.compile` traces a function the value is a
tracer: the check becomes part of the program (a flag and the first offending element are outputs of it),
and the compiled call raises the error without writing anything back (`_compile/_checks.py`). A
tapegrad.func transform traces under `jax.experimental.checkify` (`deferred`): the check is a checkify
check, and `raise_failed` raises its PyTorch error once the program has run (under vmap, for any
example). In other traces (an autograd.Function's backward, a checkpointed region) a traced value is not
checked; an index's bounds check (`check_array(strict=True)`) raises JAX's tracer error there instead, so
that the caller runs the code op by op on values it can check.
"""
import contextlib
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from . import _faults
from ._equation import SIGNATURES, Pending
from ._meta import MetaArray
from ._ops._registry import ALL_INPUTS

collector = None   # a list while tapegrad.compile traces: (flag, [first offending value, position], make_error)


def check(t, bad, make_error, key=None):
    """Raise make_error(value, flat position) of the first offending element when bad(values, xp) is
    true anywhere in tensor t (`xp` is NumPy on the host, jax.numpy in a traced program).

    `key` names the check (bad's meaning and parameters). With it, a tensor whose elements are all
    taken from arrays that passed the same check needs no value of its own: a loop that slices a dataset
    at new offsets each step (`Y[i:i+bs]`, nanoGPT's `torch.stack([data[i:i+block] for i in ix])`)
    checks the dataset once, and the batch stays pending, computed inside the step's program."""
    if type(t._storage._raw) is MetaArray:   # (no values to check, as PyTorch's meta kernels check none)
        return
    if _faults._in_flight[0] is not None:   # the arrays read below may be a program's results not yet awaited
        _faults.confirm()
    if key is not None and _taken_from_passing(t._peek(), bad, key):
        return
    check_array(t._value, bad, make_error)


def check_array(value, bad, make_error, strict=False):
    """check() of an array (or a tracer); strict: a tracer outside tapegrad.compile and tapegrad.func raises
    JAX's tracer error rather than going unchecked."""
    if isinstance(value, jax.core.Tracer):
        _check_traced(value, bad, make_error, strict)
        return
    if type(value) is MetaArray:   # (no values to check, as PyTorch's meta kernels check none)
        return
    if _faults._in_flight[0] is not None:   # the array may be a program's result not yet awaited
        _faults.confirm()
    host = np.asarray(value)
    mask = np.asarray(bad(host, np))
    if mask.any():
        at = int(np.argmax(mask.reshape(-1)))
        raise make_error(host.reshape(-1)[at].item(), at)


def _check_traced(value, bad, make_error, strict):
    mask = jnp.reshape(bad(value, jnp), (-1,))   # bad() is elementwise: the mask has value's shape
    at = jnp.argmax(mask)
    first = jnp.reshape(value, (-1,))[at]
    if collector is not None:
        collector.append((jnp.any(mask), jnp.stack([first.astype(jnp.float64), at.astype(jnp.float64)]),
                          make_error))
    elif _deferred:
        if len(_makers) >= _MAX_MAKERS:
            _makers.clear()   # (a program traced before then raises a RuntimeError with the values instead)
        key = _next_maker[0] = _next_maker[0] + 1
        _makers[key] = make_error
        _deferred[-1].append(key)
        checkify.check(~jnp.any(mask), f"value check {key}: element {{v}} at {{p}}", v=first, p=at)
    elif strict:
        bool(jnp.any(mask))   # JAX's tracer error


# ---- checks inside tapegrad.func transforms: checkify ------------------------------------------------

_deferred = []        # per tapegrad.func trace under checkify (innermost last): the keys of its checks
_makers = {}          # check key -> make_error, for the checkify checks traced so far
_next_maker = [0]
_MAX_MAKERS = 1 << 16


@contextlib.contextmanager
def deferred(keys):
    """Checks on traced values become checkify checks (the function is traced under checkify.checkify); their
    keys go to `keys`, which stays empty for a program with no check (its error need not be read)."""
    _deferred.append(keys)
    try:
        yield
    finally:
        _deferred.pop()


def raise_failed(error, keys):
    """After a checkified program whose trace made the checks `keys`: raise the PyTorch error of its first
    failed check. Inside an enclosing checkified trace (a transform within a transform) the error joins that
    program's instead."""
    if not keys:
        return
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(error)):
        if _deferred:
            _deferred[-1].extend(keys)
            checkify.check_error(error)
        return
    failed = error.get_exception()
    if failed is None:
        return
    key = int(failed.fmt_string.split(":", 1)[0].rsplit(" ", 1)[1])
    value, at = np.asarray(failed.kwargs["v"]).item(), int(failed.kwargs["p"])
    make_error = _makers.get(key)
    if make_error is None:
        raise RuntimeError(f"a value check failed on element {value} at flat position {at}") from None
    raise make_error(value, at) from None


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
