"""The NumPy tier: a kernel or whole program met with new input kinds runs its jaxpr on NumPy (see
_numpy_eval) until the rent paid so reaches about its compile price; `_programs.Program.run` asks here first."""
import os

import jax
import numpy as np

from . import _host_values, _inline_trace, _numpy_eval, _plan_parts, _shape_poly
from ._equation import SIGNATURES
from ._program_stats import _stats

# A kernel met with new shapes runs its jaxpr on NumPy (see _numpy_eval) until the time spent so on those
# shapes (tracing included, both estimated from the work, not clocked) reaches about what compiling them
# would cost; then it is compiled. Renting until the rent equals the price keeps a kernel within 2x of
# the better of the two choices made in hindsight. XLA:CPU's floor for a one-op program is ~30 ms;
# typical kernels take 40-180 ms.
NUMPY_BUDGET_SECONDS = 0.05
TRACE_SECONDS = 0.002
# A kernel that draws random numbers picks its tier from its shapes alone, never from its history: NumPy
# up to DRAW_SECONDS of estimated work per call, XLA above. XLA rewrites float arithmetic (it folds and
# reassociates constants), so the two tiers may differ in the last bit of a uniform draw; a choice made
# by shapes keeps `manual_seed(0); rand(n)` giving the same values on every call of a process.
DRAW_SECONDS = 0.02
# A whole program that comes back (a training step, a backward, a pending computation such as `.item()` or
# a no_grad evaluation) rents NumPy too, until its rent reaches its own compile price: XLA:CPU's ~30 ms
# floor plus about 3 ms per primitive. An evaluation loop over a few batch sizes, or a training loop over
# sequence lengths that each come back a few times, then never compiles; a loop that runs on compiles once
# the rent has paid for it.
PLAN_COMPILE_SECONDS = 0.03
PLAN_COMPILE_SECONDS_PER_STEP = 0.003
# A whole program on a steady streak (_programs.STEADY_STREAK calls in a row) is taken to come about
# STREAK_CALLS times more (an epoch over a dataset): it is compiled at once if that many calls on NumPy would
# pay for its compile (a training step whose NumPy run costs over a 256th of its compile price), and rents on
# otherwise, like any program. Measured on 2 CPU cores: a no_grad evaluation window of a small Linear ran in
# 0.69 ms on NumPy and 0.16 ms compiled, after a 0.15 s compile (~280 windows to pay it back; the streak
# compiled it at the third, and a 3,000-iteration loop took 1.8x as long as renting); a GRU's truncated-BPTT
# step, 11 ms and 1.4 ms after a 0.74 s compile, is compiled at once as before.
STREAK_CALLS = 256
NUMPY_KERNELS = [os.environ.get("TAPEGRAD_NUMPY_KERNELS", "1") != "0"]   # decided for CPU at first use

_COMPILE = object()
_ArrayImpl = jax._src.array.ArrayImpl   # the concrete type (naming it starts no backend: see tapegrad.distributed)
_SCALARS = (float, int, bool, complex)
_HostArray = _host_values.HostArray


class _Rented:
    """A kernel's NumPy evaluator for one set of input kinds, and the time spent on it so far."""

    __slots__ = ("run", "tree", "seconds", "budget")

    def __init__(self, run, tree, seconds, budget):
        self.run, self.tree, self.seconds, self.budget = run, tree, seconds, budget


def _input_kinds(leaves):
    kinds = []
    for x in leaves:
        t = type(x)
        if t is _ArrayImpl:
            kinds.append((x.shape, x.dtype, x.weak_type))
        elif t is np.ndarray or t is _HostArray:
            kinds.append((x.shape, x.dtype, False))
        elif t in _SCALARS:
            kinds.append(t)
        else:   # a tracer (the kernel is being traced into a program) or something NumPy must not see
            return None
    return tuple(kinds)


def _run_on_numpy(program, args, rent=True):
    """The kernel's outputs computed with NumPy, or _COMPILE when it should run compiled (rent=False: only
    when NumPy cannot run it)."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    kinds = _input_kinds(leaves)
    if kinds is None:
        return _COMPILE
    kinds = (tree, kinds)   # where the leaves sit matters too: (x, None, 0.5) is not (x, 0.5, None)
    rented = program.numpy.get(kinds)
    if rented is None:
        if not _numpy_allowed():
            return _COMPILE
        run, shapes = _numpy_evaluator(program, args, leaves, tree, kinds[1])
        budget = NUMPY_BUDGET_SECONDS
        if program.sync and run is not None:   # a whole plan: its compile costs more than a kernel's
            budget = PLAN_COMPILE_SECONDS + PLAN_COMPILE_SECONDS_PER_STEP * len(run.steps)
        rented = program.numpy[kinds] = _Rented(run, jax.tree_util.tree_structure(shapes), TRACE_SECONDS, budget)
    run = rented.run
    # (a whole program that draws rents like any other: its tier follows its history, the same in every run)
    if run is None or (run.draws if not rent   # (a draw's tier never depends on when a compile ends)
                       else run.seconds > DRAW_SECONDS if run.draws and not program.sync
                       else rented.seconds >= rented.budget or program.streak and _streak_pays(rented)):
        return _COMPILE
    try:
        outs = _host_values.keep(rented.run(*leaves), rented.run.out_avals)
    except Exception:   # an input NumPy cannot take: compile, and never try these kinds again
        rented.run = None
        return _COMPILE
    rented.seconds += rented.run.seconds
    _stats["numpy_runs"] += 1
    return jax.tree_util.tree_unflatten(rented.tree, outs)


def _streak_pays(rented):
    """Whether a whole program on a steady streak is compiled now: the calls a steady loop is taken to have
    left (STREAK_CALLS) would pay its compile price on NumPy."""
    return rented.run.seconds * STREAK_CALLS >= rented.budget


def _numpy_evaluator(program, args, leaves, tree, kinds):
    """(_numpy_eval evaluator, output shapes) of the program on inputs of `kinds`: an instance of the
    program's symbolic trace when one holds for them (no tracing, see _shape_poly), else traced for them.
    A pending plan is assembled from its ops' kernel evaluators where they all have one (_plan_parts)."""
    try:
        return _evaluator(program, args, leaves, tree, kinds)
    except Exception:   # let jax.jit report whatever went wrong, with its own error
        return None, None


def _evaluator(program, args, leaves, tree, kinds):
    if program.assemble is not None:
        assembled = program.assemble(args)
        if assembled is not None:
            return assembled
    if type(program.key) is tuple and program.key[0] == "plan":
        assembled = _plan_parts.assemble(program.key[1], args[0], _forward_kernel)
        if assembled is not None:
            return assembled
    if type(program.key) is tuple and program.key[0] == "forward" and bool not in kinds and all(
            type(k) is not tuple or not k[2] for k in kinds):
        # the op's abstract evaluation traced it for these inputs (its Python booleans stay constants there,
        # its arrays are strong-typed: only then is the jaxpr the kernel's)
        made = _kept_jaxpr(program.key[1:], tuple(
            type(a) if a is None or type(a) in _SCALARS else (a.shape, a.dtype) for a in args))
        if made is not None:
            return made
    if type(program.key) is tuple and program.key[0] == "vjp" and all(
            type(k) is tuple and not k[2] for k in kinds):
        # a node's backward: the analysis of what it reads traced it for these inputs (autograd/_saved)
        made = _kept_jaxpr(("vjp", program.key[1]), tuple((tuple(k[0]), np.dtype(k[1])) for k in kinds))
        if made is not None:
            return made
    if program.families is None:
        program.families = {}
    families = program.families.get(tree)
    if families is None:
        families = program.families[tree] = {}

    def trace(shapes):
        shapes = iter(shapes)
        specs = [jax.ShapeDtypeStruct(next(shapes), k[1], weak_type=k[2]) if type(k) is tuple else a
                 for a, k in zip(leaves, kinds)]
        return _inline_trace.make_jaxpr(program.fn, *jax.tree_util.tree_unflatten(tree, specs),
                                        ops=_ops_of(program.key))
    found = _shape_poly.traced(families, kinds, trace)
    if found is not None:
        (closed, shapes), dims = found
        run = _numpy_eval.compile_jaxpr(closed, dims)
        if run is not None:
            return run, shapes
    _shape_poly.traces[0] += 1
    closed, shapes = _inline_trace.make_jaxpr(program.fn, *args, ops=_ops_of(program.key))
    return _numpy_eval.compile_jaxpr(closed), shapes


def _ops_of(key):
    """The table ops a program runs, from its key (a forward kernel's op, a plan's), or None when it does not
    say: whether its trace may inline jnp's jits depends on them (_inline_trace)."""
    if type(key) is tuple and key and key[0] == "forward":
        return key[1:2]
    if type(key) is tuple and key and key[0] == "plan":
        return tuple({SIGNATURES[sid][0] for sid, _ in key[1][0]})
    return None


def _kept_jaxpr(key, kinds):
    """(evaluator, output shapes) of the jaxpr traced elsewhere for the kernel `key` on `kinds`
    (_shape_poly.jaxpr), or None."""
    made = _shape_poly.jaxpr(key, kinds)
    if made is None:
        return None
    run = _numpy_eval.compile_jaxpr(made[0], made[1])
    return None if run is None else (run, made[2])


def forward_evaluator(program, args):
    """The _Rented NumPy evaluator of a forward kernel for `args` (avals, Python scalars, None), made if need
    be as a first sight makes it: from the jaxpr its op's abstract evaluation kept when the op was
    recorded, else traced for these kinds. None when NumPy cannot run it."""
    tree = jax.tree_util.tree_structure(tuple(None if a is None else 0 for a in args))
    kinds = tuple((a.shape, a.dtype, a.weak_type) if type(a) not in _SCALARS else type(a)
                  for a in args if a is not None)
    rented = program.numpy.get((tree, kinds))
    if rented is None and _numpy_allowed():
        specs = tuple(a if a is None or type(a) in _SCALARS else
                      jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in args)
        run, shapes = _numpy_evaluator(program, specs, [s for s in specs if s is not None], tree, kinds)
        rented = program.numpy[(tree, kinds)] = _Rented(run, jax.tree_util.tree_structure(shapes), TRACE_SECONDS,
                                                        NUMPY_BUDGET_SECONDS)
    return rented if rented is not None and rented.run is not None else None


def _forward_kernel(sid):
    from ._op_functions import forward_fn   # (it makes its kernels here: imported when first needed)
    return forward_fn(*SIGNATURES[sid])


def _numpy_allowed():
    """NumPy stands in for XLA only on a single CPU device (it would move data off an accelerator)."""
    allowed = NUMPY_KERNELS[0] = NUMPY_KERNELS[0] and jax.default_backend() == "cpu" and jax.local_device_count() == 1
    return allowed
