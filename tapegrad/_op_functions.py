"""An op call as a pure JAX function: what every interpreter of the tape runs for an equation.

`pure_fn` binds an op-table entry's statics and casts its inputs to the computation dtype; `forward_fn` is
that function as a cached kernel (per op, statics and dtype). Both sit below `_dispatch` and `_lazy`, which
record and replay equations with them.

An entry with a `reverse_fn` (PyTorch's backward is not its forward's derivative) has two forms of equal
value: the backward walk differentiates the reverse form, forward-mode AD the plain one. A call traced for a
tapegrad.func transform takes the form its innermost differentiating transform needs.
"""
import jax
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


class Opmath(tuple):
    """A computation dtype that is not the result's: inputs cast to `compute` (float32), outputs to `result`
    (float16 or bfloat16), as PyTorch's kernels take a Python scalar with a half-precision tensor (see
    Op.scalar_opmath)."""
    __slots__ = ()

    def __new__(cls, compute, result):
        return super().__new__(cls, (compute, result))


def cast_inputs(values, cast):
    """The op's inputs in its computation dtype (None stays None)."""
    dtype = cast[0] if type(cast) is Opmath else cast
    return [v if v is None else jnp.asarray(v, dtype) for v in values]


def cast_outputs(out, cast):
    """The op's outputs in its result dtype (only an Opmath computation changes them)."""
    if type(cast) is not Opmath:
        return out
    return jax.tree_util.tree_map(lambda o: o.astype(cast[1]), out)


def pure_fn(op, static, cast, reverse=False):
    """op.fn (or, with reverse, the form reverse mode differentiates) with statics bound and inputs cast to the
    computation dtype: what the tape replays."""
    kwargs = dict(static)
    f = op.reverse_fn if reverse and op.reverse_fn is not None else op.fn
    if cast is None:
        return lambda *xs: f(*xs, **kwargs)
    if type(cast) is Opmath:
        return lambda *xs: cast_outputs(f(*cast_inputs(xs, cast), **kwargs), cast)
    return lambda *xs: f(*(x if x is None else jnp.asarray(x, cast) for x in xs), **kwargs)
