"""compile(dynamic=True): one trace serves every size of the arguments' first dim, where JAX can trace so.

The walk (`Walk(dynamic=True)`) puts a symbol in the key where an argument tensor's first dim is (sizes
equal in one call share a symbol; 0 and 1 stay sizes, as PyTorch's dynamic shapes specialise them); the
trace runs on those symbolic shapes (JAX's shape polymorphism), and the program is that trace exported
with its symbols (`jax.export`), which XLA compiles once for each size it meets: a new batch size costs
XLA's compile, not tapegrad's trace of the whole step. A function that cannot be traced so -- its Python
branches on a size (`if x.shape[0] > 8`), an op whose tapegrad code needs a concrete size (a view's memory
layout), a draw from a CPU random stream (dropout), a size kept in Python state or returned -- is traced per
size, as without dynamic=True (`CompiledFunction.symbolic_failed` says why). Value checks (class targets in
range) stay inside such a program: NumPy, which runs them before the program otherwise, has no symbols.
"""
import jax


class NotSymbolic(Exception):
    """The trace cannot serve every size: the function is traced per size instead."""


def abstract_inputs(values, symbolic):
    """The trace's inputs: the storages in `symbolic` (storage index -> symbol) as shapes whose first dim
    is their symbol, each at least 2 (the sizes 0 and 1 are not symbols)."""
    if not symbolic:
        return values
    names = [f"b{k}" for k in range(max(symbolic.values()) + 1)]
    dims = jax.export.symbolic_shape(", ".join(names), constraints=[f"{n} >= 2" for n in names])
    out = list(values)
    for si, k in symbolic.items():
        v = values[si]
        out[si] = jax.ShapeDtypeStruct((dims[k],) + tuple(v.shape[1:]), v.dtype)
    return out


def check(traced):
    """Raise NotSymbolic where the symbolic trace cannot stand for every size."""
    if traced.host_draws:   # (their number is the size of what they fill)
        raise NotSymbolic("a draw from a CPU random stream in the step (dropout, randn_like...)")
    if _holds_symbol((traced.changes, traced.result, traced.lr_outputs)):
        raise NotSymbolic("a size kept in Python state or returned")


def _holds_symbol(x):
    if jax.export.is_symbolic_dim(x):
        return True
    if isinstance(x, (tuple, list)):
        return any(map(_holds_symbol, x))
    if isinstance(x, dict):
        return any(map(_holds_symbol, x.values()))
    return False


def exported(run, in_avals):
    """`run` (a function of the trace's jaxpr) as a function that takes concrete arrays of any size its
    symbols allow: the jaxpr exported with its symbolic shapes, compiled per size when called."""
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in in_avals]
    return jax.export.export(jax.jit(run))(*specs).call
