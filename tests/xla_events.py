"""Count what XLA really does, from JAX's side: backend compiles (JAX's own monitoring event) and
executions (every call of a compiled executable, through JAX's Python dispatch path).

JAX's C++ fast path runs cached executables without entering Python, so while counting, the fast path
is switched off (its data is never handed to C++) and caches are cleared first; every execution then
passes through `ExecuteReplicated.__call__`, where it is counted. Timings inside are meaningless.
"""
import contextlib

import jax
from jax._src import monitoring, pjit
from jax._src.interpreters import pxla

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class Counts:
    def __init__(self):
        self.compiles = 0
        self.executions = 0

    def __repr__(self):
        return f"Counts(compiles={self.compiles}, executions={self.executions})"


@contextlib.contextmanager
def counting():
    counts = Counts()
    original_call = pxla.ExecuteReplicated.__call__
    original_fastpath = pjit._get_fastpath_data

    def counted_call(self, *args):
        counts.executions += 1
        return original_call(self, *args)

    def on_duration(event, seconds, **_):
        if event == _COMPILE_EVENT:
            counts.compiles += 1

    jax.clear_caches()
    pxla.ExecuteReplicated.__call__ = counted_call
    pjit._get_fastpath_data = lambda *args, **kwargs: None
    monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield counts
    finally:
        pxla.ExecuteReplicated.__call__ = original_call
        pjit._get_fastpath_data = original_fastpath
        monitoring.unregister_event_duration_listener(on_duration)
        jax.clear_caches()
