"""A jaxpr evaluated with NumPy: kernels on first sight without an XLA compile.

XLA:CPU needs ~30 ms to compile even a one-op program (softmax ~180 ms), while NumPy runs the op in
microseconds. A kernel met with new shapes is traced to a jaxpr (about a millisecond) and, when every
primitive in it has a NumPy rule below, evaluated primitive by primitive; `_numpy_rent` decides when a
kernel has run often enough to be worth compiling. A primitive JAX lowers as a function of other
primitives is that function's jaxpr, inlined (`_numpy_lowered`). Anything without an exact NumPy rule
(the general eigendecomposition, zeta, float16 ...) makes the whole jaxpr unsupported, and the kernel is
compiled as before: this tier only ever saves compiles, it never changes which ops exist.

The rules (`_numpy_rules`) follow lax's semantics, not NumPy's where they differ; results are cast to
the dtype the jaxpr says, so NumPy's promotion never leaks.
"""
import contextlib
import threading
import weakref

import numpy as np

from . import _host_put, _numpy_template
from ._numpy_rules import _Unsupported


STRAIGHT_AFTER = 64


class Compiled:
    """A jaxpr flattened to a list of NumPy steps over numbered slots (sub-jaxprs inlined).

    Its calls interpret the steps until it has been called STRAIGHT_AFTER times; then the steps become
    one generated Python function (`_straight_line`), whose slots are local variables: 0.4 us less per
    step and call than the interpreting loop (a recurrent layer's scan body runs thousands of steps per
    training step), for about 28 us per step once to generate it, which those calls repay."""

    __slots__ = ("steps", "nslots", "inputs", "outputs", "consts", "out_avals", "seconds", "draws", "calls",
                 "straight")

    def __init__(self):
        self.calls = 0
        self.straight = None   # the generated function, once made (False: it cannot be)

    def __call__(self, *args):
        run = self.straight
        if run is None:
            self.calls += 1
            if self.calls > STRAIGHT_AFTER:
                run = self.straight = _straight_line(self)
        if not run or len(args) != len(self.inputs):
            run = self._interpret
        if _quiet.depth:
            return run(args)
        with np.errstate(all="ignore"):   # lax gives inf/nan silently, as PyTorch does
            return run(args)

    def _interpret(self, args):
        slots = [None] * self.nslots
        for (slot, dtype), a in zip(self.inputs, args):
            a = np.asarray(a)
            slots[slot] = a if a.dtype == dtype else a.astype(dtype)
        for slot, value in self.consts:
            slots[slot] = value
        self._steps(slots)
        return [slots[o] for o in self.outputs]

    def _steps(self, slots):
        for fn, ins, outs, dtypes in self.steps:
            r = fn(*[slots[i] for i in ins])
            if len(outs) == 1:
                r = np.asarray(r)
                slots[outs[0]] = r if r.dtype == dtypes[0] else r.astype(dtypes[0])
            else:
                for o, v, dt in zip(outs, r, dtypes):
                    v = np.asarray(v)
                    slots[o] = v if v.dtype == dt else v.astype(dt)


def inline(fused, run, bound, base):
    """Append `run`'s consts and steps to the Compiled `fused` (a plan's or a step's kernels fused into one):
    run's slot s becomes bound[s] where bound (an input wired to a value already in `fused`), else base + s.
    Returns the fused slots of run's outputs."""
    def moved(s):
        return bound.get(s, base + s)
    fused.consts += [(moved(s), value) for s, value in run.consts]
    fused.steps += [(fn, tuple(map(moved, ins)), tuple(map(moved, outs)), dtypes)
                    for fn, ins, outs, dtypes in run.steps]
    fused.draws = fused.draws or run.draws
    return [moved(s) for s in run.outputs]


def _straight_line(c):
    """c's steps as one Python function of its inputs (a tuple), with the interpreter's semantics: inputs
    and every step's results cast to the jaxpr's dtypes. False when a step reads a slot nothing wrote."""
    env = {"asarray": np.asarray}
    lines = ["def run(args):"]
    written = set()
    for k, (slot, dtype) in enumerate(c.inputs):
        env[f"I{k}"] = dtype
        lines.append(f" s{slot} = asarray(args[{k}])")
        lines.append(f" if s{slot}.dtype is not I{k} and s{slot}.dtype != I{k}: s{slot} = s{slot}.astype(I{k})")
        written.add(slot)
    for k, (slot, value) in enumerate(c.consts):
        env[f"C{k}"] = value
        lines.append(f" s{slot} = C{k}")
        written.add(slot)
    for j, (fn, ins, outs, dtypes) in enumerate(c.steps):
        if not written.issuperset(ins):
            return False
        env[f"F{j}"] = fn
        call = f"F{j}({''.join(f's{i}, ' for i in ins)})"
        if len(outs) == 1:
            env[f"D{j}"] = dtypes[0]
            lines.append(f" r = asarray({call})")
            lines.append(f" s{outs[0]} = r if r.dtype is D{j} or r.dtype == D{j} else r.astype(D{j})")
        else:
            lines.append(f" r = {call}")
            for m, (o, dtype) in enumerate(zip(outs, dtypes)):
                env[f"D{j}_{m}"] = dtype
                lines.append(f" v = asarray(r[{m}])")
                lines.append(f" s{o} = v if v.dtype is D{j}_{m} or v.dtype == D{j}_{m} else v.astype(D{j}_{m})")
        written.update(outs)
    if not written.issuperset(c.outputs):
        return False
    lines.append(f" return [{''.join(f's{o}, ' for o in c.outputs)}]")
    exec(compile("\n".join(lines), "<tapegrad NumPy kernel>", "exec"), env)
    return env["run"]


class _Quiet(threading.local):
    depth = 0


_quiet = _Quiet()


@contextlib.contextmanager
def quiet():
    """NumPy's floating-point warnings off for a run of many kernels at once (entering np.errstate costs
    about a microsecond, a sizeable share of a small kernel's call)."""
    _quiet.depth += 1
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        _quiet.depth -= 1


def to_device(values, avals):
    """NumPy results as JAX arrays on the (single) CPU device, in one cheap transfer each (_host_put);
    committed, as the outputs of a jitted call are: jax.jit compiles again for a change of either."""
    device = _target()
    return [_host_put.put(v, device, a) for v, a in zip(values, avals)]


_target_cache = []


def _target():
    if not _target_cache:
        import jax
        _target_cache.append(jax.local_devices()[0])   # this process's (several processes: see distributed)
    return _target_cache[0]


def _scan(params, outvars):
    """lax.scan as a Python loop over its body, itself evaluated with NumPy (RNN, LSTM and GRU layers are
    scans: their kernels then run on first sight for any sequence length without a compile)."""
    body = _shared_evaluator(params["jaxpr"])
    if body is None:
        raise _Unsupported
    length, reverse = params["length"], params["reverse"]
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    y_avals = [v.aval for v in outvars[n_carry:]]

    def scan(*ins):
        consts, carry, xs = ins[:n_consts], list(ins[n_consts:n_consts + n_carry]), ins[n_consts + n_carry:]
        ys = [np.empty(a.shape, np.dtype(a.dtype)) for a in y_avals]
        for i in (reversed(range(length)) if reverse else range(length)):
            outs = body(*consts, *carry, *[x[i] for x in xs])
            carry = outs[:n_carry]
            for y, value in zip(ys, outs[n_carry:]):
                y[i] = value
        return (*carry, *ys)
    return scan, params["length"] * body.seconds, body.draws


# A while loop's trip count is known only when it runs; the cost estimate (see _numpy_rent) assumes this.
WHILE_TRIPS = 16


def _while(params, outvars):
    """lax.while_loop as a Python loop (gcd, the special polynomials' recurrences), its condition and body
    evaluated with NumPy. One that draws random bits (a gamma sampler's rejection loop) is left to XLA: a
    last-bit difference between the tiers could flip one of its accept decisions."""
    cond, body = _shared_evaluator(params["cond_jaxpr"]), _shared_evaluator(params["body_jaxpr"])
    if cond is None or body is None or cond.draws or body.draws:
        raise _Unsupported
    n_cond, n_body = params["cond_nconsts"], params["body_nconsts"]

    def loop(*ins):
        cond_consts, body_consts, carry = ins[:n_cond], ins[n_cond:n_cond + n_body], ins[n_cond + n_body:]
        while cond(*cond_consts, *carry)[0]:
            carry = body(*body_consts, *carry)
        return tuple(carry)
    return loop, WHILE_TRIPS * body.seconds, False


def _linear_solve(params, outvars):
    """lax.custom_linear_solve (jnp.linalg.solve): its forward is its `solve` jaxpr on that jaxpr's
    constants and the right-hand side, as lax evaluates it."""
    solve = _shared_evaluator(params["jaxprs"].solve)
    if solve is None:
        raise _Unsupported
    lengths = params["const_lengths"]
    start = lengths.matvec + lengths.vecmat
    stop, before_b = start + lengths.solve, sum(lengths)

    def run(*ins):
        return tuple(solve(*ins[start:stop], *ins[before_b:]))
    return run, solve.seconds, solve.draws


def _cond(params, outvars):
    """lax.cond (and switch) as a Python choice of the branch, itself evaluated with NumPy (jnp.diagonal's
    platform-dependent branches are one)."""
    branches = [_shared_evaluator(b) for b in params["branches"]]
    if any(b is None for b in branches):
        raise _Unsupported
    last = len(branches) - 1

    def cond(index, *operands):
        return branches[min(max(int(index), 0), last)](*operands)
    return cond, max(b.seconds for b in branches), any(b.draws for b in branches)


# Primitives whose rule runs jaxprs of its own: name -> (params, outvars) -> (function, seconds, draws)
_CONTROL = {"scan": _scan, "while": _while, "custom_linear_solve": _linear_solve, "cond": _cond}


# A jitted function's jaxpr is one object in every trace that calls it (jax.jit caches its trace), so its
# evaluator is made once: flattening a recurrent kernel (see nn_rnn's length buckets) into every program
# that calls it cost more than running it. Small calls (jnp's helpers) are inlined (_numpy_template).
_shared = weakref.WeakKeyDictionary()   # ClosedJaxpr -> its evaluator (None: unsupported)


def _shared_evaluator(closed):
    try:
        return _shared[closed]
    except KeyError:
        made = _shared[closed] = compile_jaxpr(closed)
        return made
    except TypeError:   # (not weakly referable)
        return compile_jaxpr(closed)


_templates = weakref.WeakKeyDictionary()   # symbolic ClosedJaxpr -> its _numpy_template.Template (None: unsupported)


def compile_jaxpr(closed, dims=None):
    """A Compiled evaluator for a ClosedJaxpr, or None when a primitive has no NumPy rule.
    dims: the values of the jaxpr's symbolic dimensions (see _shape_poly), evaluated into its parameters; the
    jaxpr is flattened once for all of them (_numpy_template)."""
    if dims is None:
        template = _numpy_template.build(closed, False, _CONTROL, _shared_evaluator)
    else:
        try:
            template = _templates[closed]
        except KeyError:
            template = _templates[closed] = _numpy_template.build(closed, True, _CONTROL, _shared_evaluator)
        except TypeError:   # (not weakly referable)
            template = _numpy_template.build(closed, True, _CONTROL, _shared_evaluator)
    if template is None:
        return None
    try:
        return template.instance(Compiled(), dims)
    except (_Unsupported, KeyError, TypeError, ValueError):   # a rule that refuses the sizes' parameters
        return None
