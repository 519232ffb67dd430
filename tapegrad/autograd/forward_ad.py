"""Forward-mode AD (PyTorch's torch.autograd.forward_ad): dual tensors whose tangents ride along every op.

Inside `dual_level()`, a tensor made with `make_dual(x, tangent)` carries its tangent. Every op that
goes through the op table (`_dispatch.apply`) and has an input with a tangent records a second op
whose function is `jax.jvp` of the entry's pure function (one rule for every entry, built here): its
result is the output's tangent. The tangent op is an ordinary recorded op, so it runs deferred like any
other, and a tangent that depends on tensors requiring grad is differentiable (forward-over-reverse).

An autograd.Function's forward runs with tangents paused; its outputs' tangents are what its `jvp`
staticmethod returns (`function_jvp`), as in PyTorch.

A gradient computed inside a level carries a tangent too, as in PyTorch (forward-over-reverse: a
Hessian-vector product is the tangent of a gradient). An op that records an autograd node notes the
tangents of its inputs and outputs against that node (`saved_tangents`); the backward reads them beside
the values the node saved, and differentiates its own function forward (see autograd/_higher).

Differences from PyTorch: the tangent of a view is a new tensor, not a view of the input's tangent;
an in-place op on a view updates the view's tangent but not its base's.
"""
import contextlib
import weakref
from collections import namedtuple

import jax
import jax.numpy as jnp

from .. import _dispatch
from .._op_functions import cast_inputs, cast_outputs
from .._ops._registry import KEEP, Op
from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]

_levels = []   # the active level tokens; PyTorch supports one level at a time
# autograd node -> {input position: its tangent, -1-k: output k's tangent}, for the nodes recorded in the
# active level (what a backward inside the level differentiates forward); emptied when the level exits
_node_tangents = weakref.WeakKeyDictionary()


class _Level:
    __slots__ = ()


def enter_dual_level():
    """Enter a new forward-grad level; returns its index (0: PyTorch supports one level)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(_Level())
    _dispatch.OBSERVERS.append(propagate)
    return 0


def exit_dual_level(*, level=None):
    """Exit the current level; every tangent made in it is dropped."""
    if level is None:
        level = len(_levels) - 1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != len(_levels) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _levels.pop()
    _dispatch.OBSERVERS.remove(propagate)
    _node_tangents.clear()


class dual_level:
    """Context manager (and decorator) for a forward-AD level: tangents live until it exits."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "Namedtuple returned by unpack_dual(): the primal view and the tangent."


def _check_level(level, where):
    if not _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level is not None and level != len(_levels) - 1:
        raise RuntimeError(f"Invalid level given to {where}")


def tangent_of(t):
    """t's tangent at the active level, or None."""
    fw = t.__dict__.get("_fw")
    if fw is None or not _levels or fw[0] is not _levels[-1] or _pause[0]:
        return None
    return fw[1]


def set_tangent(t, tangent):
    """Give t `tangent` at the active level."""
    t.__dict__["_fw"] = (_levels[-1], tangent)


def detached(t):
    """t cut from the graph, carrying its tangent cut from the graph too (a gradient computed without
    create_graph inside a level)."""
    tangent = tangent_of(t)
    out = t.detach()
    if tangent is not None:
        set_tangent(out, tangent.detach())
    return out


def carried():
    """Whether a backward now may meet tangents: a level is active and a node recorded in it noted some."""
    return bool(_levels) and not _pause[0] and bool(_node_tangents)


def saved_tangents(node):
    """{input position: tangent, -1-k: output k's tangent} noted for `node` in the active level, or None."""
    if not _levels or _pause[0]:
        return None
    return _node_tangents.get(node)


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` as its forward gradient (inside a dual_level)."""
    _check_level(level, "_make_dual")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}. Convert it "
                             "first, e.g. t.double().")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
                           f"given forward gradient is of size {list(tangent.shape)}. Pass a tangent of the tensor's shape.")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {len(_levels) - 1} is not supported. Use its primal: unpack_dual(t).primal.")
    dual = _view(tensor)
    set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of `tensor` without its tangent, and the tangent (None if it has none)."""
    tangent = tangent_of(tensor) if level is None or level == len(_levels) - 1 else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    from .._ops import shape
    with _paused():
        primal = _dispatch.apply(shape.alias, tensor, fw_primal=True)   # (PyTorch's Identity node)
    return UnpackedDualTensor(primal, tangent)


_pause = [0]   # > 0: forward AD is off (tangent ops, a Function's forward and jvp): no tangent is read or made


@contextlib.contextmanager
def _paused(pause=True):
    _pause[0] += pause
    try:
        yield
    finally:
        _pause[0] -= pause


def _view(tensor):
    # PyTorch's dual and primal are views of the tensor (ViewBackward0 when it requires grad)
    from .._ops import shape
    return _dispatch.apply(shape.view, tensor, shape=tuple(tensor.shape))


# ---- the tangent rule of every op-table entry -------------------------------------------------------

_jvp_ops = {}


def _jvp_op(op, positions, mask):
    """An Op computing the tangents of op's outputs `mask` from its inputs and the tangents of `positions`."""
    key = (op, positions, mask)
    jop = _jvp_ops.get(key)
    if jop is None:
        n = len(positions)
        single = sum(mask) == 1

        def fn(*xs, _cast, **static):
            values = list(xs[:-n])
            if _cast is not None:   # the entry's computation dtype, as _op_functions.pure_fn casts
                values = cast_inputs(values, _cast)
            primals = [values[i] for i in positions]
            tangents = [jnp.asarray(t, p.dtype) for t, p in zip(xs[-n:], primals)]

            def partial(*diff):
                full = list(values)
                for i, x in zip(positions, diff):
                    full[i] = x
                return op.fn(*full, **static)
            _, out = jax.jvp(partial, primals, tangents)
            out = cast_outputs(out, _cast)
            outs = out if op.nout > 1 else (out,)
            picked = tuple(o for o, keep in zip(outs, mask) if keep)
            return picked[0] if single else picked
        jop = _jvp_ops[key] = Op(op.name + "_jvp", fn, dtype_rule=KEEP, nout=sum(mask))
    return jop


def propagate(op, static, sig, args, result):
    """Called by apply() inside a dual level: give `result` the tangents of op's outputs."""
    if op.custom is not None or _pause[0]:
        return
    allowed = op.diff
    positions, tangents = [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and (allowed is None or i in allowed):
            t = tangent_of(a)
            if t is not None:
                positions.append(i)
                tangents.append(t)
    mask = sig.differentiable
    if not positions or not any(mask):
        return
    jop = _jvp_op(op, tuple(positions), mask)
    with _paused():   # the tangent op itself carries no tangent
        out = _dispatch.apply(jop, *args, *tangents, _cast=sig.cast, **dict(static))
    outs = out if jop.nout > 1 else (out,)
    results = result if op.nout > 1 else (result,)
    node = next((r._grad_fn for r in results if r._grad_fn is not None), None)
    noted = None   # a backward through the op's node reads these tangents
    if node is not None:
        noted = _node_tangents[node] = dict(zip(positions, tangents))
    for k, t in zip((k for k, keep in enumerate(mask) if keep), outs):
        set_tangent(results[k], t)
        if noted is not None:
            noted[-1 - k] = t


def inplace(t, out):
    """An in-place op wrote `out` into t: t now carries out's tangent."""
    tangent = tangent_of(out) if _levels else None
    if tangent is not None:
        set_tangent(t, tangent)


# ---- the tangent rule of an autograd.Function: its jvp staticmethod -----------------------------------

def function_tangents(args):
    """The tangents of a Function's arguments (None per argument without one), or None when none has one:
    then the Function's forward runs with tangents paused and its jvp gives its outputs' tangents."""
    if not _levels:
        return None
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    return tangents if any(t is not None for t in tangents) else None


def function_paused(tangents):
    """Around a Function's forward: no tangents ride along its ops (PyTorch runs it outside forward AD)."""
    return _paused(tangents is not None)


def function_jvp(cls, ctx, args, tangents, outputs, final):
    """Call `cls.jvp(ctx, *tangents)` after forward and give `final` (the wrapped outputs) its results,
    with PyTorch's checks. `outputs` are forward's own results (what mark_dirty and
    mark_non_differentiable name)."""
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    final = final if isinstance(final, tuple) else (final,)
    given = []
    for a, t in zip(args, tangents):
        if t is None and isinstance(a, Tensor) and ctx.materialize_grads and (a.dtype.is_floating_point
                                                                              or a.dtype.is_complex):
            t = a.new_zeros(a.shape)   # PyTorch materializes a missing tangent as zeros
        given.append(t)
    versions = [None if t is None else t._version for t in tangents]
    ctx._jvp_saved = tuple(getattr(ctx, "saved_for_forward", ()))   # ctx.saved_tensors inside jvp
    try:
        with _paused():
            results = cls.jvp(ctx, *given)
    finally:
        ctx._jvp_saved = None
    results = results if isinstance(results, tuple) else (results,)
    if len(results) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                           f"{len(outputs)} but got {len(results)}). Return one tangent (or None) per output.")
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    arg_pos = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    for i, (raw, out, tangent) in enumerate(zip(outputs, final, results)):
        if tangent is not None and not isinstance(tangent, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(tangent).__name__}) for grad output {i}. "
                               "Return a tensor or None per output.")
        if not isinstance(raw, Tensor):
            continue
        if id(raw) in non_diff or not (raw.dtype.is_floating_point or raw.dtype.is_complex):
            if tangent is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                                   "forward output is not a differentiable Tensor.You should return None at that "
                                   "position instead.")
            continue
        if tangent is None:
            continue
        if id(raw) in dirty:
            if id(raw) not in arg_pos:
                raise RuntimeError("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an "
                                   "input, there is no need to pass it to mark_dirty().")
            k = arg_pos[id(raw)]
            before = tangents[k]
            if before is not None:
                if tangent._version == versions[k]:
                    raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients "
                                       "inplace. If the forward is modifying an input inplace, then the jvp "
                                       "function must modify the corresponding gradient inplace.")
                if tangent is not before:
                    raise RuntimeError("An inplace custom Function is not returning the forward mode gradients "
                                       "as-is. If the forward is modifying an input inplace, then the jvp function "
                                       "must modify the gradient inplace and return it as-is.")
        elif _views_an_input_with_tangent(raw, out, args, tangents) and tangent._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp is "
                               "not returning a view. Return a view of the input's tangent (e.g. tangent.view_as"
                               "(tangent)).")
        if tuple(tangent.shape) != tuple(out.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(out.shape)} while "
                               f"the given forward gradient is of size {list(tangent.shape)}. Return a tangent of "
                               "the output's shape.")
        set_tangent(out, tangent)


def _views_an_input_with_tangent(raw, out, args, tangents):
    # an input handed back as-is counts as its view (PyTorch returns a view of it, recorded or not)
    base = out._base
    return any(t is not None and (raw is a or base is not None and (a is base or a._base is base))
               for a, t in zip(args, tangents))
