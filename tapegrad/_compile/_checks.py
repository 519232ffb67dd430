"""A compiled step's value checks (`_value_checks`: a class target within range, an index within its
table): where they run, so that a call whose check fails writes nothing.

The traced program ends with each check's flag and first offending value. A check that reads only what
the program does not write (the batch's targets and indices, the usual case) runs before the program,
on the host: its part of the program (dead-code eliminated from the rest) is evaluated by NumPy
(`_numpy_eval`, lax's exact rules), and the program itself is compiled without it. A failing check then
raises before anything is donated or dispatched. Arrays are immutable: a check reading the same arrays
as the last call that passed (a batch used again) passes without evaluating anything. A check that
reads written state (probabilities computed from parameters) stays in the program: each written output
becomes `select(ok, new, old)`, so a failed check hands the old values back. That select costs XLA
copies of every donated input (the old value must outlive the in-place update): on an MLP's Adam step,
about a tenth of the step.
"""
import operator

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Var

from .._numpy_eval import _Unsupported, compile_jaxpr

try:  # private but long-stable (autograd/_saved uses it too); without it every check stays in the program
    from jax._src.interpreters.partial_eval import dce_jaxpr
except ImportError:  # pragma: no cover
    dce_jaxpr = None


class HostChecks:
    """The checks' part of a traced program, evaluated on the host before the program runs: the flags at
    every call, the first offending values only when a flag is set."""

    def __init__(self, closed, flags, flags_jaxpr, used, nstate, makers):
        self.closed, self.flags, self.flags_jaxpr = closed, flags, flags_jaxpr
        self.storages = [i for i in used if i < nstate]       # the storages the flags read
        self.rest = [i - nstate for i in used if i >= nstate]   # and the other inputs (rates, offsets)
        self.nstate, self.makers = nstate, makers
        self.passed = None   # the arrays of the last call whose checks passed

    def run(self, storages, rest):
        """Raise the first failing check's error, for the program's inputs: the walk's storages, `rest`."""
        values = [storages[i].value for i in self.storages]
        if self.passed is not None and all(map(operator.is_, values, self.passed)):
            return   # the same (immutable) arrays as the last call that passed: the same flags
        args = [*values, *[rest[i] for i in self.rest]]
        try:
            flags = self.flags(*args)
        except _Unsupported:   # a NumPy rule that declines these values: the same jaxpr, on XLA
            flags = jax.extend.core.jaxpr_as_fun(self.flags_jaxpr)(*args)
        if any(flags):
            self._raise(flags, storages, rest)
        if not self.rest:   # (rates and offsets are new objects at every call)
            self.passed = values

    def _raise(self, flags, storages, rest):
        n = len(self.makers)
        nmain = len(self.closed.out_avals) - 2 * n
        firsts, used = dce_jaxpr(self.closed.jaxpr, [False] * (nmain + n) + [True] * n)
        args = [storages[i].value if i < self.nstate else rest[i - self.nstate] for i, u in enumerate(used) if u]
        firsts = jax.extend.core.jaxpr_as_fun(ClosedJaxpr(firsts, self.closed.consts))(*args)
        for flag, first, make_error in zip(flags, firsts, self.makers):
            if flag:
                value, at = np.asarray(first).tolist()
                raise make_error(int(value) if value.is_integer() else value, int(at))   # (nan stays nan)


def split(traced):
    """(the jaxpr the program runs, HostChecks or None). With HostChecks the jaxpr has no check outputs."""
    closed = traced.jaxpr
    n = len(traced.checks)
    if not n or dce_jaxpr is None or traced.symbolic:   # (NumPy evaluates no symbolic shapes: in the program)
        return closed, None
    nmain = len(closed.out_avals) - 2 * n
    _, read = dce_jaxpr(closed.jaxpr, [False] * nmain + [True] * 2 * n)
    if any(read[i] for i in traced.written):
        return closed, None
    flags, used = dce_jaxpr(closed.jaxpr, [False] * nmain + [True] * n + [False] * n)
    flags = ClosedJaxpr(flags, closed.consts)
    evaluator = compile_jaxpr(ClosedJaxpr(_without_device_puts(flags.jaxpr), closed.consts))
    if evaluator is None:
        return closed, None
    main, _ = dce_jaxpr(closed.jaxpr, [True] * nmain + [False] * 2 * n, instantiate=True)
    host = HostChecks(closed, evaluator, flags, [i for i, u in enumerate(used) if u], traced.nstate,
                      traced.checks)
    return ClosedJaxpr(main, closed.consts), host


def read_only(closed):
    """(the jaxpr without the inputs it never reads, which inputs it reads): a program called with fewer
    arguments dispatches faster (the generator's key, unread by a step that draws nothing, is flattened by
    Python at every call)."""
    if dce_jaxpr is None:
        return closed, [True] * len(closed.in_avals)
    pruned, read = dce_jaxpr(closed.jaxpr, [True] * len(closed.out_avals))
    return ClosedJaxpr(pruned, closed.consts), read


def _without_device_puts(jaxpr):
    """The jaxpr with its top-level device_puts (a constant placed on the device) read as their inputs:
    on the host they are the identity, and NumPy has no rule for them."""
    same, eqns = {}, []
    for e in jaxpr.eqns:
        invars = [same.get(v, v) if isinstance(v, Var) else v for v in e.invars]
        if e.primitive.name == "device_put":
            same.update(zip(e.outvars, invars))
        else:
            eqns.append(e.replace(invars=invars))
    outvars = [same.get(v, v) if isinstance(v, Var) else v for v in jaxpr.outvars]
    return jaxpr.replace(eqns=eqns, outvars=outvars)


def keep_old_values(outs, state, written, n):
    """In the program: a failed check (the last 2n outputs: flags, firsts) hands back the old value of
    every written storage (its input was donated, so the program must hand one back)."""
    ok = jnp.logical_not(jnp.any(jnp.stack(outs[-2 * n:-n])))
    for j, i in enumerate(written):
        if outs[j].shape == state[i].shape and outs[j].dtype == state[i].dtype:
            outs[j] = jax.lax.select(ok, outs[j], state[i])
    return outs
