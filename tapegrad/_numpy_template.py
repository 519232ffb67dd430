"""A jaxpr flattened once into NumPy steps over numbered slots, instantiated for each set of sizes.

A symbolic trace (see _shape_poly) serves every batch size of a kernel. Flattening it (walking its
equations, checking dtypes, making each primitive's NumPy rule) cost ~0.3 ms per kernel and new size, most
of a new batch size's first run on the NumPy tier. The template keeps what the sizes do not change: slots,
constants, and the rules whose parameters hold no symbol; an instance evaluates only the parameters and
cost estimates that hold one. A concrete jaxpr is a template with nothing left to evaluate.
"""
import math

import numpy as np

from . import _numpy_lowered, _numpy_random
from ._numpy_rules import _HALF, _RULES, CALL_SECONDS, COSTS, DRAW_NAMES, ELEMENT_SECONDS, STEP_SECONDS, _Unsupported
from ._shape_poly import concrete, symbolic

try:  # private but long-stable: the jaxpr classes
    from jax._src import core as _core
    _Literal = _core.Literal
    _ClosedJaxpr = _core.ClosedJaxpr
except ImportError:  # pragma: no cover
    _core = None

_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
          "custom_vjp_call_jaxpr": "fun_jaxpr", "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr"}
# A jitted function this large is one step, its evaluator shared by every jaxpr that calls it (see
# _numpy_eval.shared_evaluator); smaller ones (jnp's helpers) are inlined.
SHARED_CALL_EQNS = 24

_dtype_ok = {}   # dtype -> whether NumPy holds it exactly (no half precision, no float0 or key types)


def _aval_ok(aval):
    dt = getattr(aval, "dtype", None)
    if dt is None:
        return False
    ok = _dtype_ok.get(dt)
    if ok is None:
        ok = _dtype_ok[dt] = np.dtype(dt) not in _HALF and not str(dt).startswith(("key", "float0"))
    return ok


def _avals_ok(name, avals):
    if any(_numpy_random.is_threefry_key(a) for a in avals):
        return name in _numpy_random.KEY_PRIMITIVES and all(
            _numpy_random.is_threefry_key(a) or _aval_ok(a) for a in avals)
    return all(_aval_ok(a) for a in avals)


def _np_dtype(aval):   # keys are held as their uint32 data
    return _numpy_random.KEY_DTYPE if _numpy_random.is_threefry_key(aval) else np.dtype(aval.dtype)


class Template:
    """steps: [fn, input slots, output slots, dtypes], fn None where `deferred` makes it per instance;
    deferred: (step index, make(concrete params) -> fn, params); sized: (output shapes, cost function, params,
    input avals, output avals) of the steps whose cost depends on the sizes; seconds: the rest's cost."""

    __slots__ = ("steps", "deferred", "sized", "nslots", "inputs", "outputs", "consts", "out_avals", "seconds",
                 "draws")

    def instance(self, c, dims):
        """Fill the Compiled `c` for the symbols' values `dims` (None: a concrete jaxpr)."""
        c.inputs, c.outputs, c.consts = self.inputs, self.outputs, self.consts
        c.nslots, c.draws = self.nslots, self.draws
        if dims is None:
            c.steps, c.out_avals, c.seconds = self.steps, self.out_avals, self.seconds
            return c
        steps, memo = list(self.steps), {}
        for i, make, params in self.deferred:
            steps[i] = (make(concrete(params, dims, memo)), *steps[i][1:])
        seconds = self.seconds
        for shapes, cost, params, ins, outs in self.sized:
            seconds += sum(math.prod(concrete(s, dims, memo)) for s in shapes) * ELEMENT_SECONDS
            if cost is not None:
                seconds += cost(concrete(params, dims, memo), [_shaped(a, dims, memo) for a in ins],
                                [_shaped(a, dims, memo) for a in outs])
        c.steps, c.seconds = steps, seconds
        c.out_avals = tuple(_shaped(a, dims, memo) for a in self.out_avals)
        return c


def _shaped(aval, dims, memo):
    return aval.update(shape=concrete(aval.shape, dims, memo)) if hasattr(aval, "shape") else aval


def build(closed, is_symbolic, control, shared):
    """The Template of a ClosedJaxpr, or None when a primitive has no NumPy rule.
    is_symbolic: its shapes hold symbols (its calls are then inlined, its loops and lowered primitives left to
    a concrete trace); control: {primitive name: (params, outvars) -> (function, seconds, draws)} for those
    that run jaxprs of their own; shared(closed) -> the shared evaluator of a large jitted function (None:
    unsupported)."""
    if _core is None:
        return None
    t = Template()
    t.steps, t.deferred, t.sized, t.consts = [], [], [], []
    t.draws = False   # it draws random bits: see _numpy_rent for why such kernels never change tier
    counter = [0]
    work = [CALL_SECONDS]

    def slot():
        counter[0] += 1
        return counter[0] - 1

    def add_step(fn, ins, outvars):
        outs = tuple(slot() for _ in outvars)
        for v, s in zip(outvars, outs):
            env[v] = s
        t.steps.append((fn, tuple(ins), outs, tuple(_np_dtype(v.aval) for v in outvars)))
        return outs

    env = {}

    def flatten(jaxpr, consts, in_slots):
        for v, s in zip(jaxpr.invars, in_slots):
            env[v] = s
        for v, value in zip(jaxpr.constvars, consts):
            s = slot()
            t.consts.append((s, np.asarray(value)))
            env[v] = s

        def read(v):
            if type(v) is _Literal:
                s = slot()
                t.consts.append((s, np.asarray(v.val, dtype=v.aval.dtype)))
                return s
            return env[v]

        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if not _avals_ok(name, [v.aval for v in list(eqn.invars) + list(eqn.outvars)]):
                raise _Unsupported
            ins = [read(v) for v in eqn.invars]
            in_shapes = [getattr(v.aval, "shape", ()) for v in eqn.invars]
            out_shapes = [getattr(v.aval, "shape", ()) for v in eqn.outvars]
            sized = symbolic(in_shapes) or symbolic(out_shapes)
            sub = _CALLS.get(name)
            if sub is not None:
                inner = eqn.params[sub]
                closed_inner = isinstance(inner, _ClosedJaxpr)
                inner_jaxpr, inner_consts = (inner.jaxpr, inner.consts) if closed_inner else (inner, ())
                if (is_symbolic or len(inner_jaxpr.eqns) < SHARED_CALL_EQNS or inner_jaxpr is inner
                        or not _avals_ok("", [v.aval for v in list(inner_jaxpr.invars) + list(inner_jaxpr.outvars)])):
                    for v, s in zip(eqn.outvars, flatten(inner_jaxpr, inner_consts, ins)):
                        env[v] = s
                    continue
                evaluator = shared(inner)   # a large jitted function: one step, evaluated as made once
                if evaluator is None:
                    raise _Unsupported
                fn = evaluator if len(eqn.outvars) != 1 else (lambda call: lambda *xs: call(*xs)[0])(evaluator)
                work[0] += evaluator.seconds
                t.draws = t.draws or evaluator.draws
                add_step(fn, ins, eqn.outvars)
                continue
            params = eqn.params
            if name in _numpy_lowered.FUNCTIONS:   # JAX lowers it as a function of primitives: inline that
                if sized:   # (its jaxpr is traced for concrete shapes)
                    raise _Unsupported
                inner = _numpy_lowered.jaxpr(name, tuple(sorted(params.items())),
                                             tuple((tuple(v.aval.shape), np.dtype(v.aval.dtype)) for v in eqn.invars))
                for v, s in zip(eqn.outvars, flatten(inner.jaxpr, inner.consts, ins)):
                    env[v] = s
                continue
            later = symbolic(params)
            rule = control.get(name)
            cost = None
            if rule is not None:
                if is_symbolic:   # (their bodies' shapes would need the symbols too)
                    raise _Unsupported
                fn, seconds, draws = rule(params, eqn.outvars)
                work[0] += seconds
                t.draws = t.draws or draws
            else:
                make = _RULES.get(name)
                if make is None:
                    raise _Unsupported
                fn = None if later else make(params)
                cost = COSTS.get(name)
                if cost is not None and not sized:
                    work[0] += cost(params, [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars])
            work[0] += STEP_SECONDS
            if sized:
                t.sized.append((out_shapes, cost, params, [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars]))
            else:
                work[0] += sum(math.prod(s) for s in out_shapes) * ELEMENT_SECONDS
            if name in DRAW_NAMES:
                t.draws = True
            if eqn.primitive.multiple_results and len(eqn.outvars) == 1:   # (unstack of one, a one-output scan)
                if later:
                    make = (lambda m: lambda p: _first(m(p)))(make)
                else:
                    fn = _first(fn)
            if later:
                t.deferred.append((len(t.steps), make, params))
            add_step(fn, ins, eqn.outvars)
        return [read(v) for v in jaxpr.outvars]

    try:
        jaxpr = closed.jaxpr
        if not all(_aval_ok(v.aval) for v in jaxpr.invars):
            return None
        in_slots = [slot() for _ in jaxpr.invars]
        t.inputs = tuple((s, np.dtype(v.aval.dtype)) for s, v in zip(in_slots, jaxpr.invars))
        t.outputs = tuple(flatten(jaxpr, closed.consts, in_slots))
        t.out_avals = tuple(closed.out_avals)
        t.seconds = work[0]
    except (_Unsupported, KeyError, TypeError, ValueError):
        return None
    t.nslots = counter[0]
    return t


def _first(fn):
    return lambda *xs: fn(*xs)[0]
