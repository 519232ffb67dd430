"""A pending plan's NumPy evaluator assembled from its ops' kernel evaluators, without tracing the plan.

A plan that comes back with the same input shapes rents NumPy as one program (see _numpy_rent). Tracing it
costs a few milliseconds per op (JAX traces each nested jnp function again for new shapes), more than its
NumPy run; but its first sight ran it op by op, and each op's kernel then built a NumPy evaluator for the
very inputs the plan feeds it. Chaining those evaluators along the plan's wiring gives the program's NumPy
tier with no trace: the same primitives on the same values as that first run.
"""
import jax
import numpy as np

from . import _numpy_eval, _numpy_template
from ._numpy_rules import CALL_SECONDS


class Assembled:
    """The plan's ops' NumPy steps fused into one flat evaluator (one slot list, one loop, one errstate),
    wired as the plan's key says; quacks like _numpy_eval.Compiled for _numpy_rent (seconds, steps, draws,
    out_avals). Calling each op's evaluator in turn cost about 7 us an op on top of its steps."""

    __slots__ = ("run", "sources", "arrays", "scalar_kinds", "seconds", "steps", "draws", "out_avals")

    def __call__(self, *leaves):
        # packed scalars (one array per kind, in the flattened dict's key order) as the Python scalars the
        # kernels were built for
        n = self.arrays
        scalars = {k: v.tolist() for k, v in zip(self.scalar_kinds, leaves[n:])}
        return self.run(*[leaves[s] if type(s) is int else scalars[s[0]][s[1]] for s in self.sources])


def _fused(parts, outputs):
    """One _numpy_eval.Compiled running every part's steps, each part's slots moved past the ones before;
    a part's input wired to an earlier part's output reads that output's slot. Also returns, per input
    of the fused evaluator, where it comes from: a plan array by index, or (kind, i) the i-th scalar of a
    kind."""
    fused = _numpy_eval.Compiled()
    fused.steps, fused.consts, fused.draws = [], [], False
    inputs, sources, produced = [], [], []
    counted = {}   # scalars of each kind met so far
    arrays = 0
    base = 0
    for run, codes in parts:
        wired = {}   # the part's input slots that read an earlier part's output
        leaves = iter(run.inputs)
        for c in codes:
            if c is None:
                continue
            slot, dtype = next(leaves)
            if type(c) is tuple:   # (an earlier output has this kernel's input kind: no cast needed)
                wired[slot] = produced[c[0]][c[1]]
                continue
            inputs.append((base + slot, dtype))
            if c == -1:
                sources.append(arrays)
                arrays += 1
            else:
                sources.append((c, counted.get(c, 0)))
                counted[c] = counted.get(c, 0) + 1
        produced.append(_numpy_eval.inline(fused, run, wired, base))
        base += run.nslots
    fused.nslots = base
    fused.inputs = tuple(inputs)
    fused.outputs = tuple(produced[i][k] for i, k in outputs)
    return fused, tuple(sources)


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
    parts, a.seconds = [], 0.0
    a.arrays, a.scalar_kinds = len(arrays), tuple(sorted(scalars))
    for sid, codes in node_keys:
        kinds = _wired(codes, array_kinds, scalar_types, out_kinds)
        tree = jax.tree_util.tree_structure(tuple(None if c is None else 0 for c in codes))
        rented = kernels(sid).numpy.get((tree, tuple(kinds)))
        run = rented.run if rented is not None else None
        if run is None:
            return None
        parts.append((run, codes))
        out_kinds.append([(tuple(v.shape), np.dtype(v.dtype), v.weak_type) for v in run.out_avals])
        a.seconds += run.seconds
    outputs = tuple(slots) + tuple(live)
    a.run, a.sources = _fused(parts, outputs)
    a.steps, a.draws = a.run.steps, a.run.draws
    a.out_avals = a.run.out_avals = tuple(_aval(out_kinds[i][k]) for i, k in outputs)
    a.seconds -= CALL_SECONDS * (len(parts) - 1)   # one call, not one per op
    a.run.seconds = a.seconds
    return a, ([0] * len(slots), [0] * len(live))   # (the outputs' tree)


def _aval(kind):
    shape, dtype, weak = kind
    return _numpy_template._core.ShapedArray(shape, dtype, weak_type=weak)
