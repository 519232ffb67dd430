"""An op call as a pure JAX function: what every interpreter of the tape runs for an equation.

`pure_fn` binds an op-table entry's statics and casts its inputs to the computation dtype; `forward_fn` is
that function as a cached kernel (per op, statics and dtype). Both sit below `_dispatch` and `_lazy`, which
record and replay equations with them.

An entry with a `reverse_fn` (PyTorch's backward is not its forward's derivative) has two forms of equal
value: the backward walk differentiates the reverse form, forward-mode AD the plain one. A call traced for a
tapegrad.func transform takes the form its innermost differentiating transform needs.
"""
import jax.numpy as jnp

from . import _programs

# "reverse", "forward", "vmap": the tapegrad.func transforms around the code being traced, outermost first
# (pushed by autograd._function_transforms.under)
TRANSFORMS = []


def innermost_differentiation():
    """"reverse", "forward" or None: the innermost differentiating tapegrad.func transform being traced."""
    return next((k for k in reversed(TRANSFORMS) if k != "vmap"), None)


def forward_fn(op, static, cast):
    """The jitted forward of an op for given statics and computation dtype."""
    if op.reverse_fn is not None and TRANSFORMS and innermost_differentiation() == "reverse":
        return _programs.kernel(("reverse", op, static, cast), lambda: pure_fn(op, static, cast, reverse=True))
    return _programs.kernel(("forward", op, static, cast), lambda: pure_fn(op, static, cast))


def pure_fn(op, static, cast, reverse=False):
    """op.fn (or, with reverse, the form reverse mode differentiates) with statics bound and inputs cast to the
    computation dtype: what the tape replays."""
    kwargs = dict(static)
    f = op.reverse_fn if reverse and op.reverse_fn is not None else op.fn
    if cast is None:
        return lambda *xs: f(*xs, **kwargs)
    return lambda *xs: f(*(x if x is None else jnp.asarray(x, cast) for x in xs), **kwargs)
