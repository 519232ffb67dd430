"""Tracing an op for new shapes with the jitted functions it calls inlined.

First sight of a shape is spent tracing: the op's abstract evaluation, the analysis of what its backward
reads, its NumPy evaluator. jnp's functions are jitted, and each nested jit met with new shapes costs its
own bookkeeping (a cache miss, a sub-jaxpr, its checks) on top of tracing its body; under
`jax.disable_jit()` their bodies are traced in place, two to five times faster for a new shape, into a
jaxpr of the same primitives.

Under disable_jit, lax.scan (and fori_loop with known bounds) unrolls into a Python loop: a recurrent
layer's kernel would grow with its length. A trace that reaches a scan is therefore abandoned and traced
again as before, and its op remembered, so that its later traces, and those of the programs that run it,
go there directly.
"""
import gc
import threading

import jax

_state = threading.local()
_looping = set()   # ops whose trace reached a scan


class _ScanMet(Exception):
    pass


def _guard_scans():
    """Make lax.scan refuse to unroll while an inlined trace runs (it reads its length first); False when this
    JAX has no such step to hook, and nothing is inlined."""
    try:   # private but long-stable: scan infers its length before it looks at disable_jit
        from jax._src.lax.control_flow import loops
        infer = loops._infer_scan_length
    except (ImportError, AttributeError):  # pragma: no cover
        return False

    def guarded(*args, **kwargs):
        if getattr(_state, "inlining", False):
            raise _ScanMet
        return infer(*args, **kwargs)
    loops._infer_scan_length = guarded
    return True


_ENABLED = _guard_scans()


def make_jaxpr(fn, *args, ops=None):
    """(closed jaxpr, output shapes) of fn on args (jax.make_jaxpr's with return_shape), nested jits inlined
    when fn runs the table ops `ops` (None: unknown, traced as before) and none of them was seen to run a scan."""
    if _ENABLED and ops is not None and not any(op in _looping for op in ops):
        outer, _state.inlining = getattr(_state, "inlining", False), True
        try:
            with jax.disable_jit():
                return jax.make_jaxpr(fn, return_shape=True)(*args)
        except _ScanMet:
            if len(ops) == 1:   # (an op's own trace comes first, at its abstract evaluation)
                _looping.update(ops)
            gc.collect(1)   # (the abandoned trace's frames sit in a reference cycle with the exception)
        finally:
            _state.inlining = outer
    return jax.make_jaxpr(fn, return_shape=True)(*args)
