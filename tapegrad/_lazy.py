"""Deferred execution: ops are recorded as pending values and run as one program.

Eager JAX dispatch costs ~5 us per op, several times PyTorch's; so `apply`
records an `Equation` (see _equation) and returns `Pending` values that know their shape and
dtype (from a cached abstract evaluation). Values are computed when something
needs them: printing, `.item()`, `.numpy()`, `backward()`, or JAX code reading
`tensor._value`. A `Plan` collects the pending subgraph, keys it by structure,
and evaluates it:

* the first time a structure is seen, op by op with each op's cached jitted
  forward (no whole-program compile for one-off code);
* when the structure comes back, as one `jax.jit` program.

`backward()` folds the pending forward into its compiled backward, so a
PyTorch-style training step (forward, backward, update under no_grad,
zero_grad) becomes one XLA call per step.

Pending values are pure (random ops draw from explicit keys), so a value
dropped from a program's outputs can be recomputed later with the same result.
"""
import operator
import weakref

import jax
import numpy as np

from . import _chunks, _faults, _host_values, _programs, _shape_poly
from ._op_functions import forward_fn, pure_fn
from ._equation import SIGNATURES, Equation, Pending, forward_signature  # noqa: F401 (the IR, re-exported)

try:  # private but long-stable: marks a traced value weakly typed, as a Python scalar is
    from jax._src.lax.lax import _convert_element_type
except ImportError:  # pragma: no cover
    def _convert_element_type(x, new_dtype, weak_type):
        return x

_abstract_cache = {}


def abstract_eval(op, static, cast, kinds):
    """Output avals ((shape, dtype), ...) of an op call, cached per signature."""
    key = (op, static, cast, kinds)
    avals = _abstract_cache.get(key)
    if avals is None:
        args = [jax.ShapeDtypeStruct(*k) if type(k) is tuple else _example(k) for k in kinds]
        traced = [i for i, a in enumerate(args) if isinstance(a, jax.ShapeDtypeStruct) or type(a) is float
                  or type(a) is int or type(a) is complex]
        f = pure_fn(op, static, cast)

        def on_traced(*xs):
            full = list(args)
            for i, x in zip(traced, xs):
                full[i] = x
            return f(*full)
        out = _shape_poly.eval_shape((op, static, cast), kinds, on_traced, [args[i] for i in traced])
        outs = out if op.nout > 1 else (out,)
        avals = _abstract_cache[key] = tuple((tuple(o.shape), o.dtype) for o in outs)
    return avals


def record(sid, values, avals):
    """Record an op call as a plain Equation; returns its outputs as Pending values (a tuple)."""
    return outputs(Equation(sid, values, avals, _faults.where_recorded()))


def outputs(node):
    """The Pending values of a recorded equation's outputs (a tuple): the equation keeps weak references."""
    avals = node.avals
    if len(avals) == 1:
        shape, dtype = avals[0]
        p = Pending(node, 0, shape, dtype)
        node.outs = (weakref.ref(p),)
        return (p,)
    outs = tuple(Pending(node, i, shape, dtype) for i, (shape, dtype) in enumerate(avals))
    node.outs = tuple(weakref.ref(p) for p in outs)
    return outs


def _example(kind):
    # A stand-in Python scalar of the given type (abstract evaluation only needs its type).
    return None if kind is type(None) else kind(1)


def done(p):
    return p.value is not None


def resolve(v):
    """The concrete value of v (computed now if pending)."""
    if type(v) is not Pending:
        return v
    if v.value is not None:
        return computed(v)
    value = run_plan(Plan([v]))[0]
    _set_results(v.node, (v.index,), (value,))
    return value


def computed(p):
    """A computed Pending's value as a device array (one handed on by an op-by-op run is converted once)."""
    value = p.value
    if type(value) is _host_values.HostArray:
        value = p.value = _host_values.on_device(value)
    return value


READS = [0]   # values computed because they were asked for (see _segment's windows)


def run_plan(plan, count=True):
    """plan.run(), with a failing program turned into the user's error (and its writes undone)."""
    READS[0] += 1
    try:
        values = plan.run(count)
        jax.block_until_ready(values)   # a failure shows when the result is awaited (see _programs)
    except _faults.RUNTIME_ERRORS as e:
        raise _faults.failed(e, plan.where(e)) from None
    _faults.settle()
    return values


# ---- plans: a pending subgraph as a structure key plus flat inputs -------------------------

class Plan:
    """The pending subgraph behind `values`, ready to run op by op or as one traced function.

    After construction: `key` (hashable structure), `inputs` (concrete arrays/scalars in order).
    `evaluate(inputs)` is pure and returns (resolved values, outputs of live nodes): usable inside jit.
    """

    __slots__ = ("values", "nodes", "key", "inputs", "slots", "live")

    def packed_inputs(self):
        """Inputs for the compiled program: arrays, plus one NumPy array per scalar kind."""
        arrays, scalars = self.inputs
        return arrays, {k: np.asarray(v, _SCALAR_DTYPES[k]) for k, v in scalars.items()}

    def __init__(self, values):
        self.values = values
        seen = set()
        nodes = []
        stack = [v.node for v in values if type(v) is Pending and not done(v)]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            nodes.append(n)
            for a in n.args:
                if type(a) is Pending and a.value is None and a.node not in seen:
                    stack.append(a.node)
        nodes.sort(key=_seq_of)
        self.nodes = nodes
        position = {n: i for i, n in enumerate(nodes)}
        arrays = []
        scalars = {}
        kinds = _SCALAR_KINDS

        # Wiring code of one argument: (node, output) for pending work, -1 for an input array,
        # a scalar-kind letter for a Python scalar (packed into one array per kind), None.
        def wiring(args):
            codes = []
            for a in args:
                t = type(a)
                if t is Pending:
                    if a.value is None:
                        codes.append((position[a.node], a.index))
                        continue
                    a = computed(a)
                    t = type(a)
                if a is None:
                    codes.append(None)
                    continue
                kind = kinds.get(t)
                if kind is None:
                    arrays.append(a)
                    codes.append(-1)
                else:
                    lst = scalars.get(kind)
                    if lst is None:
                        lst = scalars[kind] = []
                    lst.append(a)
                    codes.append(kind)
            return tuple(codes)

        node_keys = tuple([(n.sid, wiring(n.args)) for n in nodes])
        self.slots = wiring(values)
        # Values still held by a live tensor come back from the program; other intermediates stay
        # pending (and are recomputed if ever needed again, which pure functions make safe).
        self.live = live_outputs(nodes)
        self.inputs = (arrays, scalars)
        self.key = (node_keys, self.slots, self.live)

    def where(self, exc):
        """Where the failing op was recorded: known when it ran op by op, else found by running the plan
        op by op once more (only after a failure); all the plan's ops if that run does not fail."""
        i = getattr(exc, "tapegrad_entry", None)
        if i is None:
            try:
                self.evaluate(self.inputs, call="eager")
            except _faults.RUNTIME_ERRORS as e:
                i = getattr(e, "tapegrad_entry", None)
        if i is not None and i < len(self.nodes):
            return [self.nodes[i].where]
        return [n.where for n in self.nodes]

    def evaluate(self, inputs, call=None):
        return evaluate(self.key, inputs, call)

    def run(self, count=True, host=False, remember=True):
        """Compute the values: op by op the first time this structure is seen, compiled after.
        count=False when the run is part of a larger lookup (a backward) that counts its own miss.
        host=True: values computed op by op may come back as host arrays (an eager backward walks them
        next: see _host_values). remember=False: op by op, and not a sighting of the structure."""
        if not self.nodes:
            return [resolve_done(v) for v in self.values]
        fn = None
        if remember and len(self.nodes) <= _programs.MAX_PROGRAM_OPS:
            fn = _programs.lookup(("plan", self.key), _programs.shapes_of(self.inputs[0]),
                                  lambda: (_plan_program(self.key),), count)
        elif remember:
            steady = _chunks.long_and_seen("plan-chunks", self.key, count)
            if steady is not None:
                resolved, live = _chunks.run_plan(*self.key, self.inputs, steady)
                self.write_back([live[code] for code in self.live])
                return resolved
        if fn is None:
            with _host_values.op_by_op():
                resolved, _, results = self.evaluate(self.inputs, call="eager")
            for n, r in zip(self.nodes, results):
                _set_results(n, range(len(r)), r)
        else:
            resolved, live = fn(self.packed_inputs())
            self.write_back(live)
            if not _host_values.active():
                return resolved   # (only a whole plan renting NumPy inside an op-by-op run gives host arrays)
        return resolved if host else [_host_values.on_device(v) for v in resolved]

    def write_back(self, live):
        for (i, k), value in zip(self.live, live):
            _set_results(self.nodes[i], (k,), (value,))


def evaluate(key, inputs, call=None):
    """Pure: (resolved values, live outputs, all results) of a plan's structure on flat inputs.

    call="eager" runs each op through its cached jitted forward (tier 1); otherwise the ops are
    traced into the enclosing jit.
    """
    node_keys, slots, live = key
    results, _, arg = run_forward(node_keys, inputs, call)
    resolved = [arg(s) for s in slots]
    return resolved, [results[i][k] for i, k in live], results


def live_outputs(nodes):
    """((position, output), ...) of the outputs a Storage still holds (None entries are skipped)."""
    live = []
    i = -1
    for n in nodes:   # (a backward runs this over every op of its segment: counters, not enumerate)
        i += 1
        if n is None:
            continue
        outs = n.outs
        if len(outs) == 1:   # (most ops)
            p = outs[0]()
            if p is not None:
                s = p.storage
                if s is not None:
                    st = s()
                    if st is not None and st._raw is p:
                        live.append((i, 0))
            continue
        k = 0
        for ref in outs:
            p = ref()
            if p is not None:
                s = p.storage
                if s is not None:
                    st = s()
                    if st is not None and st._raw is p:
                        live.append((i, k))
            k += 1
    return tuple(live)


def run_forward(entries, inputs, call=None):
    """Evaluate (forward sid, input codes) entries in order on flat inputs.

    Codes: (position, output) of an earlier entry, -1 for the next input array, a scalar-kind letter
    for the next packed scalar, None. Returns (outputs per entry, arguments per entry, the decoder).
    """
    arrays, scalars = inputs
    arrays = iter(arrays)
    if call:
        scalar_iters = {k: iter(v) for k, v in scalars.items()}
    else:
        # Packed scalars are strong-typed 64-bit arrays; Python scalars are weak-typed in JAX
        # (they do not widen float32 maths), so restore the weak type.
        scalar_iters = {k: iter([_weak(v[i]) for i in range(v.shape[0])]) for k, v in scalars.items()}
    results = []
    args_of = []

    def arg(code):
        if code == -1:
            return next(arrays)
        if code is None:
            return None
        if type(code) is str:
            return next(scalar_iters[code])
        return results[code[0]][code[1]]

    for i, entry in enumerate(entries):
        op, static, cast = SIGNATURES[entry[0]]
        args = [arg(c) for c in entry[1]]
        if call:
            try:
                out = forward_fn(op, static, cast)(*args)
            except Exception as e:
                e.tapegrad_entry = i   # the op that failed, for the error message
                raise
        else:
            out = pure_fn(op, static, cast)(*args)
        results.append(out if op.nout > 1 else (out,))
        args_of.append(args)
    return results, args_of, arg


SCALAR_KINDS = _SCALAR_KINDS = {float: "f", int: "i", bool: "b", complex: "c"}
_SCALAR_DTYPES = {"f": np.float64, "i": np.int64, "b": np.bool_, "c": np.complex128}


def _weak(x):
    return _convert_element_type(x, None, weak_type=True)


def _set_results(node, indices, values):
    """Memoise computed outputs on their Pending references, hand them to the storages holding them, and
    drop the equation's inputs once no output can be asked for any more. (An output whose Pending is gone
    cannot be asked for: the value is not kept.)"""
    for k, value in zip(indices, values):
        p = node.outs[k]()
        if p is None:
            continue
        p.value = value
        if p.storage is not None:
            s = p.storage()
            if s is not None and s._raw is p:
                s._raw = computed(p)
    forget_inputs(node)


def forget_inputs(node):
    """Drop an equation's forward inputs when every output is computed or no longer referenced."""
    if node.args is None:
        return
    for ref in node.outs:
        p = ref()
        if p is not None and p.value is None:
            return
    node.args = None


def resolve_all(values):
    """Concrete values for a list (one program for all pending ones)."""
    if not any(type(v) is Pending and not done(v) for v in values):
        return [resolve_done(v) for v in values]
    return run_plan(Plan(list(values)))


def resolve_done(v):
    return computed(v) if type(v) is Pending else v


def _plan_program(key):
    def program(inputs):
        resolved, live, _ = evaluate(key, inputs)
        return resolved, live
    return program


_seq_of = operator.attrgetter("seq")
