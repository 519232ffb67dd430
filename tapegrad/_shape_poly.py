"""Shapes as symbols: one trace serves every size of a changing dimension.

Tracing a function to a jaxpr costs milliseconds for every new set of input shapes (JAX traces each nested
jnp function again), far more than NumPy takes to run it; a loop over changing batch sizes paid a trace of
every op, and of every program, for every size. A function met with a second set of shapes of the same
dtypes and ranks is traced once more with the dimensions that changed as symbols (jax.export's symbolic
shapes); later shapes that fit (the same fixed dimensions, each symbol one value) instantiate that trace:
output shapes by evaluating its dimension expressions, a NumPy evaluator (_numpy_eval) by evaluating its
parameters. Code that needs a concrete dimension fails the symbolic trace and is traced per shapes, as before.

JAX decides `d == 32` as False for a symbol d (it cannot prove it), so a trace holds only for values that
make every such comparison False: at least 2 (a size-1 dimension broadcasts), different from every fixed
dimension and from the other symbols' values. Other values are traced concretely.
"""
import gc

from jax import export

from . import _inline_trace
from ._lru import LRU

try:  # private but long-stable: the symbolic dimension type
    from jax._src.export.shape_poly import _DimExpr
except ImportError:  # pragma: no cover
    _DimExpr = None


traces = [0]   # functions traced to a jaxpr for output shapes or the NumPy tier (read by _programs.info)


class Family:
    """The traces of one function from the shapes it first met (one pattern: dtypes, ranks, where scalars
    sit): each later trace makes symbols of the dimensions that differ from those shapes."""

    __slots__ = ("first", "traces", "failed")

    def __init__(self, shapes):
        self.first = shapes     # the shapes first met (traced concretely)
        self.traces = []        # (per array input, per dimension: a symbol's name or None; the fixed
                                #  dimensions' values; what the trace returned)
        self.failed = False     # a symbolic trace failed: trace each shape set concretely

    def symbolize(self, shapes):
        """(names, fixed values, {symbol: symbolic dimension}) with the dimensions that differ from the first
        shapes as symbols (one per pair of sizes), or None when `shapes` would not bind them."""
        pairs, names, fixed = {}, [], set()
        for shape, first in zip(shapes, self.first):
            row = []
            for d, d0 in zip(shape, first):
                if d == d0:
                    row.append(None)
                    fixed.add(d)
                else:
                    row.append(pairs.setdefault((d0, d), f"d{len(pairs)}"))
            names.append(tuple(row))
        names = tuple(names)
        if self.bind_one(names, fixed, shapes) is None:
            return None
        return names, fixed, dict(zip(pairs.values(), export.symbolic_shape(",".join(pairs.values()))))

    def bind_one(self, names, fixed, shapes):
        """{symbol: value} for `shapes` under one trace's symbols, or None when that trace does not hold."""
        env = {}
        for shape, row, first in zip(shapes, names, self.first):
            for d, name, d0 in zip(shape, row, first):
                if name is None:
                    if d != d0:
                        return None
                elif env.setdefault(name, d) != d:
                    return None
        values = list(env.values())
        if len(set(values)) < len(values) or any(v < 2 or v in fixed for v in values):
            return None
        return env

    def bind(self, shapes):
        """(trace result, {symbol: value}) of a trace that holds for `shapes`, or None."""
        for names, fixed, result in self.traces:
            env = self.bind_one(names, fixed, shapes)
            if env is not None:
                return result, env
        return None


MAX_FAMILIES = 8   # per pattern: sizes that meet fixed ones start a family of their own
MAX_TRACES = 4     # per family: the layers of a model share a pattern but vary in other dimensions


def traced(families, kinds, trace):
    """(trace result, {symbol: value}) of a symbolic trace that holds for input `kinds`, or None: trace
    these shapes concretely.

    families: a dict kept by the caller per function; kinds: per input, (shape, dtype, weak_type) for an
    array or the type of a scalar; trace(shapes) traces the function on arrays of those shapes (some
    dimensions symbolic) and may raise.
    """
    if _DimExpr is None:
        return None
    pattern = tuple((len(k[0]), k[1], k[2]) if type(k) is tuple else k for k in kinds)
    shapes = tuple(k[0] for k in kinds if type(k) is tuple)
    found = families.get(pattern)
    if found is None:
        found = families[pattern] = []
    elif found[0].failed:
        return None
    for family in found:
        bound = family.bind(shapes)
        if bound is not None:
            return bound
    # shapes met with other sizes of some dimensions: trace them with those as symbols, from the family
    # whose first shapes differ in the fewest
    best = None
    for family in found:
        if family.first != shapes and len(family.traces) < MAX_TRACES:
            made = family.symbolize(shapes)
            if made is not None and (best is None or len(made[2]) < len(best[1][2])):
                best = family, made
    if best is None:
        if len(found) < MAX_FAMILIES and all(f.first != shapes for f in found):
            found.append(Family(shapes))
        return None
    family, (names, fixed, dims) = best
    traces[0] += 1
    try:
        result = trace([tuple(d if n is None else dims[n] for d, n in zip(shape, row))
                        for shape, row in zip(shapes, names)])
    except Exception:   # the function needs concrete dimensions (or JAX refuses): trace per shapes
        family.failed = True
        found[:] = [family]   # (no more symbolic traces of this pattern)
        return None
    finally:
        # JAX decides some symbolic comparisons by raising and catching; a caught exception in a reference
        # cycle holds its frames, and through them every caller's frame and the tensors in it (a pending
        # value then looks held by the user), until a full collection, which tapegrad makes rare
        gc.collect(1)
    family.traces.append((names, fixed, result))
    return result, family.bind_one(names, fixed, shapes)


def concrete(x, env, memo=None):
    """`x` (a shape, a primitive's parameters) with each symbolic dimension evaluated for `env`.
    memo: a dict kept by a caller that evaluates many parts under one env (JAX's evaluation of an expression
    costs microseconds; a jaxpr holds the same few expressions many times)."""
    t = type(x)
    if t is _DimExpr:
        if memo is None:
            return int(x._evaluate(env))
        value = memo.get(x)
        if value is None:
            value = memo[x] = int(x._evaluate(env))
        return value
    if t is tuple or t is list:
        items = [concrete(v, env, memo) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else t(items)
    if t is dict:
        return {k: concrete(v, env, memo) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):   # a NamedTuple (gather's dimension numbers)
        items = [concrete(v, env, memo) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else t(*items)
    return x


def symbolic(x):
    """Whether `x` (a shape, a primitive's parameters) holds a symbolic dimension that `concrete` evaluates."""
    t = type(x)
    if t is _DimExpr:
        return True
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
        return any(symbolic(v) for v in x)
    if t is dict:
        return any(symbolic(v) for v in x.values())
    return False


_eval_families = LRU(4096)   # (op, static, cast, where arrays and scalars sit) -> {pattern: [Family]}
_jaxprs = LRU(1024)   # (op, static, cast, input kinds) -> (closed jaxpr, {symbol: value} or None, outputs)


def eval_shape(key, kinds, fn, args):
    """jax.eval_shape(fn, *args) (args: ShapeDtypeStructs and Python scalars; `kinds` all the op's inputs,
    scalars left out of args included), through the symbolic trace of `key` when one holds. The jaxpr is
    kept for the op's kernel, whose NumPy tier then needs no trace of its own (`jaxpr`)."""
    import jax
    if not all(isinstance(d, int) for k in kinds if type(k) is tuple for d in k[0]):
        return jax.eval_shape(fn, *args)   # the caller's own symbols (tapegrad.export's dynamic dims)
    where = (key, tuple(len(k[0]) if type(k) is tuple else k for k in kinds))
    families = _eval_families.get(where)
    if families is None:
        families = _eval_families.put(where, {})

    def trace(shapes):
        shapes = iter(shapes)
        return _inline_trace.make_jaxpr(fn, *[jax.ShapeDtypeStruct(next(shapes), a.dtype, weak_type=a.weak_type)
                                              if type(a) is jax.ShapeDtypeStruct else a for a in args], ops=key[:1])
    found = traced(families, tuple((a.shape, a.dtype, a.weak_type) if type(a) is jax.ShapeDtypeStruct
                                   else type(a) for a in args), trace)
    if found is None:
        traces[0] += 1
        closed, out = _inline_trace.make_jaxpr(fn, *args, ops=key[:1])
        _jaxprs.put(key + (kinds,), (closed, None, out))
        return out
    (closed, out), dims = found
    _jaxprs.put(key + (kinds,), (closed, dims, out))
    return jax.tree_util.tree_map(lambda o: jax.ShapeDtypeStruct(concrete(o.shape, dims), o.dtype), out)


def keep(key, kinds, closed, out):
    """Keep a jaxpr traced elsewhere for the kernel `key` on inputs of `kinds` (a node's VJP, traced by the
    analysis of what it reads: autograd/_saved), for its NumPy tier (`jaxpr`)."""
    _jaxprs.put(key + (kinds,), (closed, None, out))


def jaxpr(key, kinds):
    """(closed jaxpr, {symbol: value} or None, output shapes) that eval_shape traced for `key` on inputs of `kinds`
    (per input: (shape, dtype) for an array, else the type), or None."""
    return _jaxprs.get(key + (kinds,))
