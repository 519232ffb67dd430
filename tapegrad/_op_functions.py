"""An op call as a pure JAX function: what every interpreter of the tape runs for an equation.

`pure_fn` binds an op-table entry's statics and casts its inputs to the computation dtype; `forward_fn` is
that function as a cached kernel (per op, statics and dtype). Both sit below `_dispatch` and `_lazy`, which
record and replay equations with them.
"""
import jax.numpy as jnp

from . import _programs


def forward_fn(op, static, cast):
    """The jitted forward of an op for given statics and computation dtype."""
    return _programs.kernel(("forward", op, static, cast), lambda: pure_fn(op, static, cast))


def pure_fn(op, static, cast):
    """op.fn with statics bound and inputs cast to the computation dtype: what the tape replays."""
    kwargs = dict(static)
    f = op.fn
    if cast is None:
        return lambda *xs: f(*xs, **kwargs)
    return lambda *xs: f(*(x if x is None else jnp.asarray(x, cast) for x in xs), **kwargs)
