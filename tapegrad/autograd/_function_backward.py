"""How an autograd.Function's backward runs: traced into the compiled backward, or in Python.

`signature` decides once per Function, shapes and ctx values: ctx's plain attributes and the values its
backward reads from outside (globals, closure: `_tracing.Identity`) key the trace,
and one abstract trace (`_probe`) finds what cannot be traced (values read in Python, printing, writes
to ctx). `traced_vjp` is the node's VJP for the engine; `call_backward` calls the user's backward and
checks what it returns as PyTorch does (count, shapes summed back from broadcasts, dtypes cast).
"""
import contextlib
import io

import jax

from .._ops._registry import KEEP, Op
from .._tensor import Tensor
from . import _saved
from ._tracing import TRACER_ERRORS, Identity, tracing, unwrap, wrap
from .._user_frames import warn_user

MAX_TRACED_SIGNATURES = 8   # per Function: beyond, its ctx values change at every call; run it in Python
_CTX_FIELDS = frozenset({"to_save", "saved_for_forward", "dirty_tensors", "non_differentiable",
                         "materialize_grads", "needs_input_grad", "_saved_objects", "_in_meta", "_out_meta",
                         "_saved_positions", "_jvp_saved"})


class FunctionCtx:
    """What `forward` / `setup_context` may call on ctx."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _Custom:
    """Op.custom of a Function's node ops."""

    __slots__ = ("function", "python")

    def __init__(self, function, python):
        self.function, self.python = function, python


def _op(node_cls, nout, python):
    ops = node_cls.__dict__.get("_ops")
    if ops is None:
        ops = {}
        setattr(node_cls, "_ops", ops)
    op = ops.get((nout, python))
    if op is None:
        op = ops[(nout, python)] = Op("custom_function", _passthrough(nout), dtype_rule=KEEP, nout=nout,
                                      node_name=node_cls.node_name)
        op.node_class = node_cls
        op.custom = _Custom(node_cls.function, python)
    return op


def _passthrough(nout):
    # the forward of a Function's segment entry (see _join_segment): its last nout inputs, unchanged
    def forward(*inputs, **static):
        return inputs[-nout:] if nout > 1 else inputs[-1]
    return forward


# ---- which way the backward runs --------------------------------------------------------------

_probed = {}      # traced sid -> None (traceable) or the reason it is not
_warned = set()   # Functions warned about
_traced_sids = {}  # Function -> traced sids seen


def signature(ctx, saved_map, diff, values):
    cls = type(ctx).function
    nout = len(ctx._out_meta)
    kinds = tuple((tuple(v.shape), v.dtype) if hasattr(v, "dtype") else type(v) for v in values)
    reason = "" if getattr(cls, "_runs_in_python", False) else None   # a Function that asks for Python
    try:
        state = _static_state(ctx) if reason is None else None
    except _NotStatic as e:
        reason = str(e)
    if reason is None and len(_traced_sids.get(cls, ())) >= MAX_TRACED_SIGNATURES:
        reason = (f"the values it keeps on ctx or reads from its globals differ at every call "
                  f"({MAX_TRACED_SIGNATURES} versions seen); save tensors with ctx.save_for_backward instead")
    if reason is None:
        kept = set(p for p in saved_map if p is not None)
        placeholders = tuple(None if i in kept else k for i, k in enumerate(kinds))
        # (and what its backward reads besides ctx, its globals and closure: a trace holds them as constants)
        static = (("state", state), ("saved", saved_map), ("needs", ctx.needs_input_grad),
                  ("materialize", ctx.materialize_grads), ("inputs", ctx._in_meta), ("outputs", ctx._out_meta),
                  ("reads", Identity(cls.backward).key))
        op = _op(type(ctx), nout, False)
        sid = _saved.intern((op, static, None, diff, placeholders))
        if sid not in _probed:
            _probed[sid] = _probe(sid, values)
            if _probed[sid] is None:
                _traced_sids.setdefault(cls, set()).add(sid)
        reason = _probed[sid]
        if reason is None:
            return sid, op
    if reason and cls not in _warned:
        _warned.add(cls)
        warn_user(f"{cls.__name__}.backward runs node by node in Python, outside the compiled backward: "
                  f"{reason}.", UserWarning)
    op = _op(type(ctx), nout, True)
    return _saved.intern((op, (), None, diff, kinds)), op


class _NotStatic(Exception):
    pass


_STATIC_TYPES = (type(None), bool, int, float, complex, str, bytes, slice, type(Ellipsis))


def _static_state(ctx):
    """ctx's own attributes (set in forward) as a hashable key, or _NotStatic saying why not."""
    items = []
    for name, v in sorted(vars(ctx).items()):
        if name in _CTX_FIELDS:
            continue
        items.append((name, _static_value(name, v)))
    return tuple(items)


class _AsList(tuple):
    pass


def _static_value(name, v):
    from .._dtypes import dtype
    if type(v) in _STATIC_TYPES or isinstance(v, dtype):
        return v
    if isinstance(v, (tuple, list)):
        items = tuple(_static_value(name, x) for x in v)
        return _AsList(items) if isinstance(v, list) else type(v)(items) if type(v) is not tuple else items
    if isinstance(v, Tensor):
        raise _NotStatic(f"ctx.{name} holds a tensor; save it with ctx.save_for_backward so that it is an input "
                         f"of the compiled backward")
    raise _NotStatic(f"ctx.{name} holds a {type(v).__name__}, which the compiled backward cannot be keyed on")


def _probe(sid, values):
    """Trace the backward once on abstract values: None when it traces, else why not."""
    kept = [jax.ShapeDtypeStruct(values[i].shape, values[i].dtype) for i in _saved.kept_positions(sid)]
    op, static, _, diff, placeholders = _saved.SIGNATURES[sid]
    outs = dict(static)["outputs"]
    cts = [None if m is None else jax.ShapeDtypeStruct(m[0], m[1].np) for m in outs]
    from ._walk import node_backward
    run = node_backward(sid, None)
    printed = io.StringIO()
    _TracedCtx.written[0] = False
    try:
        with contextlib.redirect_stdout(printed):
            jax.eval_shape(run, kept, cts)
    except TRACER_ERRORS:
        return ("it reads tensor values in Python (.item(), .tolist(), .numpy(), bool() or a data-dependent "
                "if); compute with tensor ops (torch.where) to have it compiled")
    except Exception:   # noqa: BLE001 -- a faulty backward raises when it runs, as in PyTorch
        return ""
    if printed.getvalue() or _TracedCtx.written[0]:
        return ""   # it prints or changes ctx: run it each time, as PyTorch does
    return None


class _TracedCtx(FunctionCtx):
    """ctx as a traced backward sees it: what forward kept, the saved tensors as traced tensors."""

    written = [False]   # whether a traced backward set an attribute (a side effect: run it in Python)

    def __init__(self, state, saved, needs, materialize):
        init = object.__setattr__
        for name, v in state:
            init(self, name, _restored(v))
        init(self, "saved_tensors", saved)
        init(self, "saved_variables", saved)
        init(self, "needs_input_grad", needs)
        init(self, "materialize_grads", materialize)

    def __setattr__(self, name, value):
        _TracedCtx.written[0] = True
        object.__setattr__(self, name, value)


def _restored(v):
    if isinstance(v, _AsList):
        return [_restored(x) for x in v]
    if type(v) is tuple:
        return tuple(_restored(x) for x in v)
    return v


def traced_vjp(op, static, diff):
    """backward(args, cotangents) of a traced Function node: the user's backward on tracers."""
    st = dict(static)
    cls = op.custom.function

    def backward(args, cts):
        with tracing():
            saved = tuple(None if p is None else wrap(args[p]) for p in st["saved"])
            ctx = _TracedCtx(st["state"], saved, st["needs"], st["materialize"])
            grads = call_backward(ctx, cls, cts, st["inputs"], st["outputs"], st["materialize"])
            return tuple(unwrap(grads[i]) for i in diff)
    return backward


# ---- calling backward and checking what it returns ------------------------------------------------

def call_backward(ctx, cls, cts, in_meta, out_meta, materialize):
    from .._creation import zeros
    grad_outputs = []
    for c, m in zip(cts, out_meta):
        if c is None:
            if materialize and m is not None:
                c = zeros(m[0], dtype=m[1])
        elif not isinstance(c, Tensor):
            c = wrap(c)
        grad_outputs.append(c)
    result = cls.backward(ctx, *grad_outputs)
    return _checked(cls.__name__ + "Backward", result, in_meta)


def _checked(name, grads, in_meta):
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(in_meta):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {len(in_meta)}, "
                           f"got {len(grads)})")
    checked = []
    for i, (g, m) in enumerate(zip(grads, in_meta)):
        if g is None:
            checked.append(None)
            continue
        if m is None:
            raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, but "
                               f"the corresponding forward input was not a Variable")
        if not isinstance(g, Tensor):
            raise TypeError(f"function {name} returned a {type(g).__name__} as gradient {i}; expected a Tensor or "
                            f"None")
        shape, dtype = m
        if tuple(g.shape) != shape:
            g = _sum_to(name, i, g, shape)
        if g.dtype != dtype:
            g = g.to(dtype)
        checked.append(g)
    return checked


def _sum_to(name, i, g, shape):
    """PyTorch accepts a gradient the input's shape broadcasts to, and sums it back to that shape."""
    got = tuple(g.shape)
    lead = len(got) - len(shape)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(shape, got[lead:])):
        raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got {list(got)} but "
                           f"expected shape compatible with {list(shape)}")
    dims = tuple(range(lead)) + tuple(lead + j for j, s in enumerate(shape) if s == 1 and got[lead + j] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape)

