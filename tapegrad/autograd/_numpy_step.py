"""A backward step's NumPy tier from the kernels its first sight ran, without tracing the step.

A closed segment's step (forward and backward, see _fast) that comes back with the same input shapes
rents NumPy as one program (see _numpy_rent). Tracing the whole step to a jaxpr for that cost about
30 ms for a one-layer LSTM step, more than the step ran: a loop over sequences of random length paid it
for every length that came twice. But the step's first sight ran the general path op by op: every
forward kernel and every node's VJP kernel built a NumPy evaluator for the very inputs the step feeds it.
The step's evaluator runs those evaluators in the step's order: the segment's entries, then `walk` over
NumPy arrays. Which evaluator each call takes is settled once, by a dry run over avals; when one is
missing (a kernel evicted, run compiled, or a Python Function's node) the step is traced as before.
"""
import jax
import numpy as np

from .. import _numpy_eval, _programs
from .._equation import SIGNATURES
from .._numpy_rent import _input_kinds, forward_evaluator
from .._op_functions import forward_fn
from ._step_program import StepProgram
from ._walk import Arith, sum_to_dims

try:  # private but long-stable: an abstract array (shape, dtype, weak type)
    from jax._src.core import ShapedArray as _Aval
except ImportError:  # pragma: no cover
    _Aval = None


class _Missing(Exception):
    """A kernel the step needs has no NumPy evaluator for its inputs: the step is traced instead."""


def assembler(key):
    """program.assemble for the step `key` (less its tag): args -> (evaluator, output shapes) or None."""
    return lambda args: assemble(key, args)


def assemble(key, args):
    if _Aval is None:
        return None
    step = StepProgram(key)
    arrays, scalars, extra = args
    array_kinds = _input_kinds(list(arrays))
    extra_kinds = _input_kinds(list(extra))
    if array_kinds is None or extra_kinds is None:
        return None
    try:
        return _Dry(step, array_kinds, {k: [type(x) for x in v.tolist()] for k, v in scalars.items()},
                    extra_kinds).evaluator(len(arrays), tuple(sorted(scalars)))
    except Exception:   # _Missing, or anything the dry run did not foresee: the step is traced, as before
        return None


def _arguments(codes, arrays, scalars, results):
    """An entry's arguments by its input codes (as _lazy.run_forward reads them): the next array (-1), None,
    the next scalar of a kind (its letter), or an earlier entry's output ((position, output))."""
    return [next(arrays) if c == -1 else None if c is None else next(scalars[c]) if type(c) is str
            else results[c[0]][c[1]] for c in codes]


def _aval(kind):
    shape, dtype, weak = kind
    return _Aval(shape, dtype, weak_type=weak)


def _kind(value):
    """A dry-run value's kind as _numpy_rent keys evaluators: (shape, dtype, weak type), or a scalar's type."""
    return (value.shape, value.dtype, value.weak_type) if type(value) is _Aval else type(value)


def _marked(values):
    return [None if v is None else 0 for v in values]


class _Dry:
    """The step run over avals: finds each call's evaluator and the outputs' avals."""

    def __init__(self, step, array_kinds, scalar_types, extra_kinds):
        self.step = step
        self.kinds = (array_kinds, scalar_types, extra_kinds)   # (what the step's fused evaluator records on)
        self.forward, self.vjps = [], {}
        self.seconds, self.steps, self.draws = 0.0, [], False
        arrays = iter([_aval(k) if type(k) is tuple else k for k in array_kinds])
        scalars = {k: iter([t() for t in types]) for k, types in scalar_types.items()}
        self.results, self.args_of = [], []
        for sid, codes, _ in step.entries:
            args = _arguments(codes, arrays, scalars, self.results)
            # (an entry the first sight did not need, a clone of a gradient say, gets its evaluator now)
            run = self._counted(forward_evaluator(forward_fn(*SIGNATURES[sid]), args)).run
            self.forward.append(run)
            self.args_of.append(args)
            self.results.append(list(run.out_avals))
        extra = [_aval(k) for k in extra_kinds]
        self.grads = step.backward(self.results, self.args_of, extra, self._call, _DRY)

    def _counted(self, rented):
        """A kernel's _Rented NumPy evaluator, its cost counted into the step's."""
        if rented is None or rented.run is None:
            raise _Missing
        run = rented.run
        self.seconds += run.seconds
        self.steps += run.steps
        self.draws = self.draws or run.draws
        return rented

    def _call(self, i, sid, out_avals, kept, cts):
        kernel = _programs.cached_kernel(("vjp", sid, out_avals))
        rented = None if kernel is None else kernel.numpy.get(
            (jax.tree_util.tree_structure((_marked(kept), _marked(cts))),
             tuple(_kind(a) for a in list(kept) + list(cts) if a is not None)))
        rented = self._counted(rented)
        self.vjps[i] = (rented.run, rented.tree)
        return jax.tree_util.tree_unflatten(rented.tree, list(rented.run.out_avals))

    def evaluator(self, narrays, scalar_kinds):
        """(the step's evaluator, its outputs' tree) for leaves: `narrays` arrays, one packed array per scalar
        kind (sorted, as the flattened dict of kinds), then the extra values."""
        run = StepEvaluator()
        run.calls, run.fused, run.kinds = 0, None, self.kinds
        run.step, run.forward, run.vjps = self.step, self.forward, self.vjps
        run.narrays, run.scalar_kinds = narrays, scalar_kinds
        run.seconds, run.steps, run.draws = self.seconds, tuple(self.steps), self.draws
        run.out_avals = tuple(jax.tree_util.tree_leaves(self.grads))
        return run, jax.tree_util.tree_map(lambda a: 0, self.grads)   # (the outputs' tree)


# A step evaluator's calls before its kernels are fused into one (see _numpy_step_fused): a step that comes
# back only a few times (a sequence length) keeps its kernels, which their many calls across steps have
# made straight-line functions already, rather than pay for the recording and an interpreted fused run
# (measured on the lstm_varlen benchmark: fusing at the third call cost about 8% of its repeated steps;
# at the ninth, nothing; a small MLP step ran in 0.25 ms fused against 0.33 ms).
FUSE_AFTER = 8


class StepEvaluator:
    """Quacks like _numpy_eval.Compiled for _numpy_rent (seconds, steps, draws, out_avals)."""

    __slots__ = ("step", "forward", "vjps", "narrays", "scalar_kinds", "seconds", "steps", "draws", "out_avals",
                 "kinds", "calls", "fused")

    def __call__(self, *leaves):
        fused = self.fused
        if fused is None:
            self.calls += 1
            if self.calls > FUSE_AFTER:
                from ._numpy_step_fused import fuse   # (it reads this module's wiring: imported once per step)
                fused = self.fused = fuse(self, *self.kinds) or False
        if fused:
            return self._run_fused(fused, leaves)
        n = self.narrays
        arrays = iter(leaves[:n])
        scalars = {k: iter(np.asarray(v).tolist()) for k, v in zip(self.scalar_kinds, leaves[n:])}
        extra = [np.asarray(v) for v in leaves[n + len(self.scalar_kinds):]]
        results, args_of = [], []
        with _numpy_eval.quiet():
            for (sid, codes, _), run in zip(self.step.entries, self.forward):
                args = _arguments(codes, arrays, scalars, results)
                results.append(run(*[a for a in args if a is not None]))
                args_of.append(args)
            vjps = self.vjps

            def call(i, sid, out_avals, kept, cts):
                run, tree = vjps[i]
                return jax.tree_util.tree_unflatten(
                    tree, run(*[a for a in kept if a is not None], *[c for c in cts if c is not None]))
            grads = self.step.backward(results, args_of, extra, call, _NUMPY)
        return jax.tree_util.tree_leaves(grads)

    def _run_fused(self, fused, leaves):
        run, sources = fused
        n, nk = self.narrays, len(self.scalar_kinds)
        scalars = {k: np.asarray(v).tolist() for k, v in zip(self.scalar_kinds, leaves[n:n + nk])}
        extra = leaves[n + nk:]
        return run(*[leaves[i] if kind == "a" else extra[i] if kind == "x" else scalars[kind][i]
                     for kind, i in sources])


def _add(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        raise _Missing   # (summed gradients of one tensor agree; anything else is left to the trace)
    return a


def _sum_to(g, shape):
    dims = sum_to_dims(tuple(g.shape), tuple(shape))
    return (np.sum(g, dims, keepdims=True) if dims else g).reshape(shape)


def _filled(shape, dtype):
    return _Aval(tuple(shape), np.dtype(dtype))


_DRY = Arith(_filled, _filled, _add, lambda g, shape: _Aval(tuple(shape), g.dtype))   # (ones and zeros alike)
_NUMPY = Arith(np.ones, np.zeros, np.add, _sum_to)
