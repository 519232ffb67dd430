"""A pending plan's NumPy evaluator assembled from its ops' kernel evaluators, without tracing the plan.

A plan that comes back with the same input shapes rents NumPy as one program (see _programs). Tracing it
costs a few milliseconds per op (JAX traces each nested jnp function again for new shapes), more than its
NumPy run; but its first sight ran it op by op, and each op's kernel then built a NumPy evaluator for the
very inputs the plan feeds it. Chaining those evaluators along the plan's wiring gives the program's NumPy
tier with no trace: the same primitives on the same values as that first run.
"""
import jax
import numpy as np

from . import _numpy_eval


class Assembled:
    """The plan's ops run by their kernels' NumPy evaluators, wired as the plan's key says; quacks like
    _numpy_eval.Compiled for _programs (seconds, steps, draws, out_avals)."""

    __slots__ = ("parts", "outputs", "arrays", "scalar_kinds", "seconds", "steps", "draws", "out_avals")

    def __call__(self, *leaves):
        n = self.arrays
        arrays = iter(leaves[:n])
        # packed scalars (one array per kind, in the flattened dict's key order) as the Python scalars the
        # kernels were built for
        scalars = {k: iter(v.tolist()) for k, v in zip(self.scalar_kinds, leaves[n:])}
        results = []
        for run, codes in self.parts:
            results.append(run(*_wired(codes, arrays, scalars, results)))
        return [results[i][k] for i, k in self.outputs]


def _wired(codes, arrays, scalars, results):
    """An op's leaves by the plan key's codes: the next input array (-1), an earlier op's output
    ((position, output)), the next scalar of a kind (its letter); None leaves nothing."""
    leaves = []
    for c in codes:
        if c == -1:
            leaves.append(next(arrays))
        elif type(c) is tuple:
            leaves.append(results[c[0]][c[1]])
        elif c is not None:
            leaves.append(next(scalars[c]))
    return leaves


def assemble(plan_key, args, kernels):
    """An Assembled evaluator for the plan `plan_key` on `args` (its packed inputs: arrays, scalars by kind),
    or None when an op's kernel has no NumPy evaluator for its inputs yet (then the plan is traced).
    kernels(sid) -> the op's forward kernel (a _programs.Program)."""
    node_keys, slots, live = plan_key
    arrays, scalars = args
    if any(type(s) is not tuple for s in slots):   # (a plan handing back an input or a scalar: traced)
        return None
    array_kinds = iter([(a.shape, a.dtype, getattr(a, "weak_type", False)) for a in arrays])
    scalar_types = {k: iter([type(x) for x in v.tolist()]) for k, v in scalars.items()}
    out_kinds = []   # per node, per output: (shape, dtype, weak_type)
    a = Assembled()
    a.parts, a.seconds, a.steps, a.draws = [], 0.0, [], False
    a.arrays, a.scalar_kinds = len(arrays), tuple(sorted(scalars))
    for sid, codes in node_keys:
        kinds = _wired(codes, array_kinds, scalar_types, out_kinds)
        tree = jax.tree_util.tree_structure(tuple(None if c is None else 0 for c in codes))
        rented = kernels(sid).numpy.get((tree, tuple(kinds)))
        run = rented.run if rented is not None else None
        if run is None:
            return None
        a.parts.append((run, codes))
        out_kinds.append([(tuple(v.shape), np.dtype(v.dtype), v.weak_type) for v in run.out_avals])
        a.seconds += run.seconds
        a.steps += run.steps
        a.draws = a.draws or run.draws
    a.outputs = tuple(slots) + tuple(live)
    a.out_avals = tuple(_aval(out_kinds[i][k]) for i, k in a.outputs)
    a.seconds -= _numpy_eval.CALL_SECONDS * (len(a.parts) - 1)   # one call, not one per op
    return a, ([0] * len(slots), [0] * len(live))   # (the outputs' tree)


def _aval(kind):
    shape, dtype, weak = kind
    return _numpy_eval._core.ShapedArray(shape, dtype, weak_type=weak)
