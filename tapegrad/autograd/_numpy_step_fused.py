"""A NumPy step's kernels fused into one flat evaluator, as a plan's are (see _plan_parts).

A step that comes back on the NumPy tier runs its forward kernels, then `walk` calling each node's VJP
kernel and summing gradients (_numpy_step.StepEvaluator). Calling the kernels one by one costs several
microseconds each on top of their NumPy work (the walk's Python, each call's arguments and errstate): on a
small model that is about as much as the work. The walk's calls depend only on the step's key, so one run
over stand-in values records them: every kernel's steps, moved into one slot list, with the walk's sums,
seeds and reductions as steps of their own. The fused evaluator runs them in the walk's order, as one
_numpy_eval.Compiled (one loop, one errstate, a straight-line function once it has run often).
"""
import functools

import jax
import numpy as np

from .. import _numpy_eval
from ._numpy_step import _arguments, _sum_to
from ._walk import Arith

try:  # private but long-stable: an abstract array (shape, dtype, weak type)
    from jax._src.core import ShapedArray as _Aval
except ImportError:  # pragma: no cover
    _Aval = None


class _Unfusable(Exception):
    """An evaluator that is not a flat Compiled, or a value the recording cannot place."""


class _Value:
    """A stand-in for an array while recording: its shape and dtype, and an identity of its own (JAX interns
    equal avals, so an aval cannot tell two values apart)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type


class _Scalar:
    """A stand-in for a Python scalar argument: the `index`-th scalar of its `kind` among the step's inputs."""

    __slots__ = ("kind", "index")

    def __init__(self, kind, index):
        self.kind, self.index = kind, index


class _Recorder:
    """Builds the fused Compiled: each recorded value is a slot; values from outside (the step's arrays,
    scalars and extra values) become inputs of the fused evaluator at each use, cast as that use's kernel
    casts them."""

    def __init__(self):
        self.c = _numpy_eval.Compiled()
        self.c.steps, self.c.consts, self.c.draws = [], [], False
        self.inputs, self.sources = [], []   # fused inputs (slot, dtype); where each comes from
        self.nslots = 0
        self.slot_of = {}    # id(stand-in) -> its slot
        self.external = {}   # id(stand-in) -> its source, for values from outside
        self.kept = []       # every stand-in made (their ids stay unique while recording)

    def value(self, aval, slot):
        v = _Value(aval.shape, aval.dtype, getattr(aval, "weak_type", False))
        self.kept.append(v)
        self.slot_of[id(v)] = slot
        return v

    def outside(self, aval, source):
        v = _Value(aval.shape, aval.dtype, getattr(aval, "weak_type", False))
        self.kept.append(v)
        self.external[id(v)] = source
        return v

    def new_slot(self):
        self.nslots += 1
        return self.nslots - 1

    def slot(self, value, dtype):
        """The slot holding `value` for a use that reads it as `dtype`."""
        if type(value) is _Scalar:
            return self._input((value.kind, value.index), dtype)
        slot = self.slot_of.get(id(value))
        if slot is None:
            source = self.external.get(id(value))
            if source is None:
                raise _Unfusable
            return self._input(source, dtype)
        if np.dtype(value.dtype) != dtype:   # (a kernel's input cast, as its own evaluator makes it)
            out = self.new_slot()
            self.c.steps.append((_identity, (slot,), (out,), (dtype,)))
            return out
        return slot

    def _input(self, source, dtype):
        slot = self.new_slot()
        self.inputs.append((slot, dtype))
        self.sources.append(source)
        return slot

    def inline(self, run, args):
        """run's steps on `args` (stand-ins, in run's input order): its outputs as stand-ins."""
        if type(run) is not _numpy_eval.Compiled or len(args) != len(run.inputs):
            raise _Unfusable
        bound = {s: self.slot(a, np.dtype(dtype)) for (s, dtype), a in zip(run.inputs, args)}
        base, self.nslots = self.nslots, self.nslots + run.nslots
        outs = _numpy_eval.inline(self.c, run, bound, base)
        return [self.value(a, s) for a, s in zip(run.out_avals, outs)]

    def step(self, fn, ins, aval):
        """One NumPy step of the walk's own arithmetic: fn(*ins) as a value of `aval`."""
        out = self.new_slot()
        self.c.steps.append((fn, tuple(self.slot(v, np.dtype(v.dtype)) for v in ins), (out,), (np.dtype(aval.dtype),)))
        return self.value(aval, out)

    def arith(self):
        def ones(shape, dtype):
            return self.step(functools.partial(np.ones, tuple(shape), np.dtype(dtype)), (), _Value(shape, dtype))

        def zeros(shape, dtype):
            return self.step(functools.partial(np.zeros, tuple(shape), np.dtype(dtype)), (), _Value(shape, dtype))

        def add(a, b):
            if tuple(a.shape) != tuple(b.shape) or np.dtype(a.dtype) != np.dtype(b.dtype):
                raise _Unfusable
            return self.step(np.add, (a, b), a)

        def sum_to(g, shape):
            shape = tuple(shape)
            return self.step(functools.partial(_sum_to, shape=shape), (g,), _Value(shape, g.dtype))
        return Arith(ones, zeros, add, sum_to)

    def finish(self, outputs):
        c = self.c
        c.outputs = tuple(self.slot(v, np.dtype(v.dtype)) for v in outputs)   # (one from outside is an input)
        c.nslots = self.nslots
        c.inputs = tuple(self.inputs)
        c.out_avals = tuple(_Aval(v.shape, v.dtype, weak_type=v.weak_type) for v in outputs)
        c.seconds = 0.0
        return c, tuple(self.sources)


def _identity(x):
    return x


def fuse(evaluator, array_kinds, scalar_types, extra_kinds):
    """(fused Compiled, sources) for a _numpy_step.StepEvaluator, or None when it cannot be fused. Sources say
    where each fused input comes from: ("a", i) the i-th array, (kind, i) the i-th scalar of a kind, ("x", i)
    the i-th extra value."""
    if _Aval is None:
        return None
    try:
        return _record(evaluator, array_kinds, scalar_types, extra_kinds)
    except Exception:   # _Unfusable, or anything the recording did not foresee: the step runs unfused
        return None


def _record(evaluator, array_kinds, scalar_types, extra_kinds):
    rec = _Recorder()
    if any(type(k) is not tuple for k in list(array_kinds) + list(extra_kinds)):
        raise _Unfusable   # (a Python value among the arrays: left to the unfused evaluator)
    arrays = iter([rec.outside(_Value(*k), ("a", i)) for i, k in enumerate(array_kinds)])
    scalars = {kind: iter([_Scalar(kind, i) for i in range(len(types))]) for kind, types in scalar_types.items()}
    results, args_of = [], []
    for (sid, codes, _), run in zip(evaluator.step.entries, evaluator.forward):
        args = _arguments(codes, arrays, scalars, results)
        results.append(rec.inline(run, [a for a in args if a is not None]))
        args_of.append(args)
    extra = [rec.outside(_Value(*k), ("x", i)) for i, k in enumerate(extra_kinds)]
    vjps = evaluator.vjps

    def call(i, sid, out_avals, kept, cts):
        run, tree = vjps[i]
        outs = rec.inline(run, [a for a in kept if a is not None] + [c for c in cts if c is not None])
        return jax.tree_util.tree_unflatten(tree, outs)
    grads = evaluator.step.backward(results, args_of, extra, call, rec.arith())
    return rec.finish(jax.tree_util.tree_leaves(grads))
