"""autograd.Function under tapegrad.func: the Function's own rules, as torch.func uses them.

torch.func calls a Function's `backward` for grad, vjp and jacrev, its `jvp` for jvp and jacfwd, and
needs a vmap rule (`generate_vmap_rule = True`) under vmap; a Function with the old forward(ctx, ...)
is refused. Here the traced call becomes a `jax.custom_vjp` (backward) or `jax.custom_jvp` (jvp)
around its forward. `ACTIVE` names the transforms the traced function runs under (pushed by
tapegrad.func); forward, setup_context, backward and jvp run with it cleared, below the transforms,
as in PyTorch. Nested transforms: the innermost differentiating one picks the rule, and the outer ones
differentiate that rule's ops (jvp over grad differentiates backward, as PyTorch does); PyTorch would also
call the Function's rule of each outer level for the forward itself, which here is differentiated instead.
Under vmap alone a Function's own `vmap` staticmethod is its batching rule (`jax.custom_batching.custom_vmap`);
under vmap and a differentiating transform JAX batches the forward and the rules instead (generate_vmap_rule).
"""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from .._op_functions import TRANSFORMS as ACTIVE, innermost_differentiation
from ._function_backward import FunctionCtx, call_backward
from ._tracing import tracing, unwrap, wrap

NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
    "override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


@contextlib.contextmanager
def under(kinds):
    """The traced function runs under these transforms (tapegrad.func's wrappers)."""
    ACTIVE.extend(kinds)
    try:
        yield
    finally:
        del ACTIVE[len(ACTIVE) - len(kinds):]


@contextlib.contextmanager
def _below():
    """The Function's own code runs below the transforms: Functions it calls are plain calls."""
    saved = ACTIVE[:]
    ACTIVE.clear()
    try:
        with tracing():
            yield
    finally:
        ACTIVE[:] = saved


def apply(cls, args, base):
    """cls.apply(*args) inside a tapegrad.func transform."""
    if cls.setup_context is base.setup_context:
        raise RuntimeError(NEEDS_SETUP_CONTEXT)
    own_rule = _has_vmap(cls, base)
    if "vmap" in ACTIVE:
        generated = getattr(cls, "generate_vmap_rule", False)
        if generated and own_rule:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an overridden "
                "vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod "
                "to avoid ambiguity. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
        if not generated and not own_rule:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
                "implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
                "https://pytorch.org/docs/main/notes/extending.func.html")
    innermost = innermost_differentiation()
    if innermost == "reverse":
        return _Call(cls, args).with_backward()
    if innermost == "forward":
        return _Call(cls, args).with_jvp()
    if own_rule and "vmap" in ACTIVE:
        return _Call(cls, args).with_vmap()
    with _below():   # vmap alone: JAX batches the forward (generate_vmap_rule)
        output = cls.forward(*args)
    return output


def _has_vmap(cls, base):
    return any("vmap" in vars(c) for c in cls.__mro__ if c is not base and issubclass(c, base))


class _Ctx(FunctionCtx):
    """ctx for setup_context, backward and jvp under a transform."""

    def __init__(self, needs):
        self.needs_input_grad = needs
        self.materialize_grads = True
        self.to_save = ()
        self._jvp_saved = None

    @property
    def saved_tensors(self):
        return self._jvp_saved if self._jvp_saved is not None else tuple(self.to_save)

    saved_variables = saved_tensors


def _is_diff(dtype):
    return dtype.is_floating_point or dtype.is_complex


class _Call:
    """One Function call over the arrays of its tensor arguments."""

    def __init__(self, cls, args):
        from .._tensor import Tensor
        self.cls, self.args = cls, args
        self.positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.in_meta = tuple((tuple(a.shape), a.dtype) if isinstance(a, Tensor) else None for a in args)
        self.needs = tuple(m is not None and _is_diff(m[1]) for m in self.in_meta)
        self.out = None   # forward's output, with its non-tensor parts (the structure the arrays fill)

    def _forward(self, arrays, needs=None):
        """(ctx, the output arrays) of forward and setup_context on these arrays."""
        from .._tensor import Tensor
        args = list(self.args)
        for i, v in zip(self.positions, arrays):
            args[i] = wrap(v)
        ctx = _Ctx(self.needs if needs is None else needs)
        with _below():
            out = self.cls.forward(*args)
            self.cls.setup_context(ctx, tuple(args), out)
        self.out = out
        outs = out if isinstance(out, tuple) else (out,)
        self.out_meta = tuple((tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in outs)
        return ctx, tuple(o._value for o in outs if isinstance(o, Tensor))

    def _result(self, arrays):
        from .._tensor import Tensor
        it = iter(arrays)
        outs = self.out if isinstance(self.out, tuple) else (self.out,)
        final = tuple(wrap(next(it)) if isinstance(o, Tensor) else o for o in outs)
        return final if isinstance(self.out, tuple) else final[0]

    def _arrays(self):
        return [self.args[i]._value for i in self.positions]

    # ---- reverse mode: the Function's backward ----------------------------------------------------

    def with_backward(self):
        kept = {}   # the ctx of the last forward, for backward's plain attributes

        @jax.custom_vjp
        def call(*arrays):
            return self._forward(arrays)[1]

        def fwd(*primals):   # (symbolic zeros: JAX says which arguments are differentiated, and which
            # cotangents are zero, which backward sees as None when it set_materialize_grads(False))
            arrays = tuple(p.value for p in primals)
            needs = list(self.needs)
            for i, p in zip(self.positions, primals):
                needs[i] = needs[i] and p.perturbed
            ctx, outs = self._forward(arrays, tuple(needs))
            saved = tuple(ctx.to_save)
            kept["ctx"], kept["saved"] = ctx, [s is not None for s in saved]
            return outs, (tuple(unwrap(s) for s in saved if s is not None), tuple(arrays))

        def bwd(res, cts):
            saved_arrays, arrays = res
            ctx = _Ctx(self.needs)
            ctx.__dict__.update({k: v for k, v in vars(kept["ctx"]).items() if k not in ("to_save", "_jvp_saved")})
            it = iter(saved_arrays)
            ctx.to_save = tuple(wrap(next(it)) if present else None for present in kept["saved"])
            with _below():
                cts = [None if isinstance(c, SymbolicZero) or c.dtype == jax.dtypes.float0 else c for c in cts]
                grads = call_backward(ctx, self.cls, _spread(cts, self.out_meta), self.in_meta,
                                      self.out_meta, ctx.materialize_grads)
            return tuple(_cotangent(grads[i], a) for i, a in zip(self.positions, arrays))

        call.defvjp(fwd, bwd, symbolic_zeros=True)
        return self._result(call(*self._arrays()))

    # ---- forward mode: the Function's jvp ---------------------------------------------------------

    def with_jvp(self):
        @jax.custom_jvp
        def call(*arrays):
            return self._forward(arrays)[1]

        @call.defjvp
        def rule(primals, tangents):
            ctx, outs = self._forward(primals)
            given = [None] * len(self.args)
            for i, t in zip(self.positions, tangents):
                if t.dtype != jax.dtypes.float0:
                    given[i] = wrap(t)
            ctx._jvp_saved = tuple(getattr(ctx, "saved_for_forward", ()))
            with _below():
                results = self.cls.jvp(ctx, *given)
            results = results if isinstance(results, tuple) else (results,)
            if len(results) != len(self.out_meta):
                raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                                   f"{len(self.out_meta)} but got {len(results)}). Return one tangent (or None) "
                                   "per output.")
            out_tangents = tuple(_tangent(r, o) for r, m, o in
                                 zip(results, self.out_meta, _spread(outs, self.out_meta)) if m is not None)
            return outs, out_tangents

        return self._result(call(*self._arrays()))

    # ---- vmap: the Function's vmap staticmethod -------------------------------------------------------

    def with_vmap(self):
        from jax.custom_batching import custom_vmap
        from .._tensor import Tensor

        @custom_vmap
        def call(*arrays):
            return self._forward(arrays)[1]

        @call.def_vmap
        def rule(axis_size, in_batched, *arrays):
            args, dims = list(self.args), [None] * len(self.args)
            for i, v, batched in zip(self.positions, arrays, in_batched):
                args[i], dims[i] = wrap(v), 0 if batched else None
            with _below():
                out, out_dims = self.cls.vmap(_VmapInfo(axis_size), tuple(dims), *args)
            outs = out if isinstance(out, tuple) else (out,)
            out_dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outs)
            pairs = [(o._value if d is None else jnp.moveaxis(o._value, d, 0), d is not None)
                     for o, d in zip(outs, out_dims) if isinstance(o, Tensor)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

        return self._result(call(*self._arrays()))


class _VmapInfo:
    """`info` of a Function's vmap staticmethod."""

    def __init__(self, batch_size):
        self.batch_size, self.randomness = batch_size, "error"


def _spread(arrays, meta):
    """One entry per output: the arrays at the tensor outputs, None elsewhere."""
    it = iter(arrays)
    return [None if m is None else next(it) for m in meta]


def _cotangent(grad, primal):
    """A gradient from backward as JAX's cotangent of `primal` (zeros for None, float0 for integers)."""
    if not jnp.issubdtype(primal.dtype, jnp.inexact):
        return np.zeros(primal.shape, jax.dtypes.float0)
    if grad is None:
        return jnp.zeros(primal.shape, primal.dtype)
    return unwrap(grad).astype(primal.dtype)


def _tangent(result, primal):
    if not jnp.issubdtype(primal.dtype, jnp.inexact):
        return np.zeros(primal.shape, jax.dtypes.float0)
    if result is None:
        return jnp.zeros(primal.shape, primal.dtype)
    return jnp.broadcast_to(unwrap(result), primal.shape).astype(primal.dtype)
