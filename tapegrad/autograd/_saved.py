"""Which arguments a node's backward reads.

For each op signature we trace the VJP once and let JAX's dead-code
elimination say which primal inputs it uses. Only those are kept alive by the
node and only those are version-checked at backward time, as PyTorch checks
only the tensors its backward formula saves (mul saves both inputs, add none).

That trace is the node's backward kernel too, less the inputs it does not read: it is kept for the
kernel's NumPy tier (`_shape_poly.keep`), so the first backward through a new op traces its VJP once,
not twice. The op's output shapes, known from its abstract evaluation, spare a trace of its forward.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr

from .. import _inline_trace, _shape_poly
from .._ops._registry import guarded_saves
from .._op_functions import pure_fn

try:  # private but long-stable; without it every argument counts as used
    from jax._src.interpreters.partial_eval import dce_jaxpr
except ImportError:  # pragma: no cover
    dce_jaxpr = None

_plans = {}
_needed = {}
_scalars_read = {}
_SCALARS = (bool, int, float, complex)


def vjp_fn(op, static, cast, diff, nargs):
    """backward(args, cotangents) -> gradients for the `diff` arguments, derived with jax.vjp (an
    autograd.Function's node: its backward, traced)."""
    if op.custom is not None:
        from ._function_backward import traced_vjp
        return traced_vjp(op, static, diff)
    if not diff:   # (a recorded backward's gradient that gives its inputs none: see autograd._higher._node)
        return lambda args, cts: ()
    missing = _missing_derivatives(op, static, diff)
    if len(missing) == len(diff):   # (nothing it could compute: the walk raises before it runs, see missing_at)
        first = missing[0]

        def raises(args, cts):
            raise first[0](first[1])
        return raises
    f = pure_fn(op, static, cast, reverse=True)
    single = op.nout == 1

    # An argument without a derivative gets none (zeros: its gradient is asked for by no one). It is not
    # differentiated here, but stays an ordinary value of the formula: recorded with create_graph, the other
    # arguments' gradients are differentiated through it as PyTorch's formulas are (igamma's gradient for
    # `other` reads `self`, whose own derivative PyTorch does not implement).
    computed = [k for k in range(len(diff)) if k not in missing]

    def backward(args, cts):
        def on_diff(*d):
            full = list(args)
            for k, v in zip(computed, d):
                full[diff[k]] = v
            return f(*full)
        _, pullback = jax.vjp(on_diff, *(args[diff[k]] for k in computed))
        # PyTorch's complex gradient is the conjugate of JAX's: conjugate around the pullback
        # (a no-op at trace time for real dtypes).
        found = dict(zip(computed, pullback(_conj(cts[0]) if single else tuple(_conj(c) for c in cts))))
        return tuple(_conj(found[k]) if k in found else jnp.zeros_like(args[i]) for k, i in enumerate(diff))
    return backward


def _missing_derivatives(op, static, diff):
    """{k: (exception type, message)} for the differentiated arguments (k: the place in `diff`) whose derivative
    PyTorch's backward of this call does not implement: it raises when one of their gradients is needed."""
    whole = None if op.no_derivative is None else op.no_derivative(**dict(static))
    found = {}
    for k, i in enumerate(diff):
        missing = (op.no_derivative_at or {}).get(i)
        if missing is None and whole is not None:
            missing = whole.get(i) if isinstance(whole, dict) else whole
        if missing is not None:
            found[k] = missing
    return found


@functools.lru_cache(maxsize=None)
def missing_at(sid):
    """((k, (exception type, message)), ...) for a node signature's differentiated arguments without a
    derivative: PyTorch's engine raises only when the backward needs the gradient of one of them (the walk
    checks its wiring), as it computes no other (autograd.grad(out, [x]) of igamma(a, x) runs)."""
    op, static, _, diff, _ = SIGNATURES[sid]
    return tuple(sorted(_missing_derivatives(op, static, diff).items()))


def _conj(x):
    # 0 - imag, not -imag: an exact zero imaginary part stays +0, as PyTorch's formulas leave it (XLA keeps 0 - x)
    return jax.lax.complex(jnp.real(x), 0 - jnp.imag(x)) if jnp.iscomplexobj(x) else x


# Backward signatures (op, static, cast, diff, placeholders) are interned to small ints so that
# graph structure keys are cheap to build, hash and compare.
SIGNATURES = []
_signature_ids = {}


def plan(op, static, cast, diff, values, kinds, out_avals=None):
    """(needed, sig id): which arguments the backward reads, and the node's structural signature.
    out_avals: the op's ((shape, dtype), ...) outputs when known (spares a trace of its forward)."""
    key = (op, static, cast, diff, kinds)
    p = _plans.get(key)
    if p is None:
        # Which inputs a VJP reads depends on the formula, not on shapes: analyse once per ranks and dtypes,
        # from shapes without an empty dim. JAX's functions make constants of empty arrays, whose VJP then
        # reads nothing: a sort of an empty tensor made every later sort's backward read a placeholder index.
        empty = any(type(k) is tuple and 0 in k[0] for k in kinds) or (
            out_avals is not None and any(0 in shape for shape, _ in out_avals))
        rank_key = (op, static, cast, diff, tuple((len(k[0]), k[1]) if type(k) is tuple else k for k in kinds))
        dkey = key if empty else rank_key
        needed = _needed.get(dkey)
        traced = None
        if needed is None:
            if empty:
                # PyTorch saves (and version-checks) what its formula reads, empty or not: what the VJP reads at
                # shapes of the same rank with data, where the op takes them
                needed = _needed.get(rank_key) or _reads_with_data(op, static, cast, diff, values)
            if needed is None:
                needed, traced = _analyse(op, static, cast, diff, values, out_avals=out_avals)
            saves = op.saves_inputs_for(static, kinds, diff)
            if saves:   # PyTorch saves these whatever the VJP reads: keep them to check them
                needed = tuple(n or i in saves for i, n in enumerate(needed))
            _needed[dkey] = needed
        placeholders = tuple(None if keep else kinds[i] for i, keep in enumerate(needed))
        sid = intern((op, static, cast, diff, placeholders))
        if traced is not None:   # that kernel's NumPy tier needs no trace of its own
            _keep_kernel_jaxpr(sid, needed, *traced)
        # Which arguments are graph inputs in PyTorch (next_functions): tensors the op may differentiate,
        # and Python scalars where PyTorch wraps them into tensors.
        mask = tuple((type(k) is tuple or (op.wraps_scalars and k is not type(None)))
                     and (op.diff is None or i in op.diff) for i, k in enumerate(kinds))
        p = _plans[key] = (needed, sid, mask, _frees(op, static, cast, diff, values, kinds, dkey, needed))
    return p


def _reads_with_data(op, static, cast, diff, values):
    """Which arguments the VJP reads at the shapes of `values` with every empty dim made 1, or None where the
    op does not take those shapes (its statics name the empty size: a view to (0, 3))."""
    filled = [jax.ShapeDtypeStruct(tuple(d or 1 for d in v.shape), v.dtype) if hasattr(v, "dtype") else v
              for v in values]
    try:
        return _analyse(op, static, cast, diff, filled)[0]
    except Exception:   # (any error of the op at the made-up shapes: the empty analysis stands)
        return None


def _frees(op, static, cast, diff, values, kinds, dkey, needed):
    """Whether a backward without retain_graph frees what the node keeps, as PyTorch frees its saved
    tensors: a kept tensor, or a Python scalar that PyTorch wraps into a tensor (mul, div) and whose
    derivative reads it. Scalars saved as plain values (add's alpha, a select's index) are not freed, so
    a second backward through such nodes works as in PyTorch."""
    if any(keep and type(k) is tuple for keep, k in zip(needed, kinds)):
        return True
    # (only the scalars PyTorch wraps: those it lists as graph inputs, as the plan's mask; add's alpha is none)
    scalars = [i for i, (keep, k) in enumerate(zip(needed, kinds))
               if keep and k in _SCALARS and (op.diff is None or i in op.diff)]
    if not (op.wraps_scalars and scalars):
        return False
    read = _scalars_read.get(dkey)
    if read is None:
        try:
            read = _scalars_read[dkey] = _analyse(op, static, cast, diff, values, scalars_traced=True)[0]
        except Exception:   # a formula that needs the scalar's value while tracing: counted as read
            read = _scalars_read[dkey] = tuple(True for _ in values)
    return any(read[i] for i in scalars)


def intern(sig):
    """The id of a backward signature (op, static, cast, diff, placeholders): a None placeholder marks a
    kept argument, others give the kind of an argument the backward does not read."""
    sid = _signature_ids.get(sig)
    if sid is None:
        sid = _signature_ids[sig] = len(SIGNATURES)
        SIGNATURES.append(sig)
    return sid


@functools.lru_cache(maxsize=None)
def kept_positions(sid):
    """Indices of the arguments a node of signature `sid` keeps for its backward (a kept argument may be
    None: an optional bound the op was called without)."""
    return tuple(i for i, p in enumerate(SIGNATURES[sid][4]) if p is None)


def _analyse(op, static, cast, diff, values, scalars_traced=False, out_avals=None):
    """(which arguments the VJP reads, the trace or None). Python scalars stay concrete and count as read
    (they are cheap and always kept), unless scalars_traced: then they are traced too, as weakly typed 0-d
    values. The trace, (positions of the traced arguments, input avals, jaxpr, output shapes), is given where
    every argument is an array (or None): it is then the node's backward kernel, less its unread inputs."""
    args = [jax.ShapeDtypeStruct(v.shape, v.dtype) if hasattr(v, "dtype") else
            jax.ShapeDtypeStruct((), np.dtype(type(v)), weak_type=True) if scalars_traced and type(v) in _SCALARS
            else v for v in values]
    if len(_missing_derivatives(op, static, diff)) == len(diff):
        # a backward that only raises reads nothing, but checks the inputs PyTorch's node saves before it does
        saves = guarded_saves(op.saves_inputs, diff) or ()
        return tuple(i in saves for i in range(len(values))), None
    if dce_jaxpr is None:
        return tuple(True for _ in values), None
    backward = vjp_fn(op, static, cast, diff, len(values))
    if out_avals is None:
        out = jax.eval_shape(lambda *a: pure_fn_out(op, static, cast, a), *args)
        cts = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in (out if op.nout > 1 else (out,))]
    else:
        cts = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in out_avals]
    traced = [i for i, a in enumerate(args) if isinstance(a, jax.ShapeDtypeStruct)]

    def bwd_on_arrays(arrays, cts):
        full = list(args)
        for i, a in zip(traced, arrays):
            full[i] = a
        return backward(full, cts)

    closed, out_shapes = _inline_trace.make_jaxpr(bwd_on_arrays, [args[i] for i in traced], cts, ops=(op,))
    used_outputs = [True] * len(closed.jaxpr.outvars)
    _, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs)
    needed = [True] * len(values)
    for i, used in zip(traced, used_inputs[:len(traced)]):
        needed[i] = bool(used)
    needed = tuple(needed)
    if scalars_traced or any(a is not None and i not in traced for i, a in enumerate(args)):
        return needed, None   # (a Python scalar is a constant here, an input of the kernel)
    return needed, (traced, [args[i] for i in traced] + cts, closed, out_shapes)


def _keep_kernel_jaxpr(sid, needed, traced, avals, closed, out_shapes):
    """Keep the analysis' trace as the jaxpr of the backward kernel of `sid` (see _shape_poly.keep): its
    inputs are the kept arrays (`needed`: PyTorch's saved ones included, read or not), then every cotangent."""
    inputs = [needed[i] for i in traced] + [True] * (len(avals) - len(traced))
    pruned, _ = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=inputs)
    kinds = tuple((tuple(a.shape), np.dtype(a.dtype)) for a, keep in zip(avals, inputs) if keep)
    _shape_poly.keep(("vjp", sid), kinds, ClosedJaxpr(pruned, closed.consts), out_shapes)


def pure_fn_out(op, static, cast, args):
    return pure_fn(op, static, cast)(*args)
