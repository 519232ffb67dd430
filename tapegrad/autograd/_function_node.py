"""The graph node of an autograd.Function call, and the two ways its backward runs (see autograd.function).

Node layout: one position per forward argument (edges to the tensor arguments that require grad),
then one position per saved tensor that is not an argument. A traced node keeps the saved values at
their positions, so the engine hands them to the node's VJP like any op's kept arguments; the VJP
is the user's backward traced on them (`traced_vjp`). A Python node keeps nothing the engine reads:
the engine calls `FunctionNode.run_python` with the node itself.
"""
import contextlib
import io
import re
import warnings
import weakref

import jax

from .._grad_mode import set_grad_enabled
from .._ops._registry import KEEP, Op
from . import _saved, anomaly_mode
from ._graph import FREED_GRAPH
from ._node import Node, _seq
from ._tracing import TRACER_ERRORS, tracing, unwrap, wrap

MAX_TRACED_SIGNATURES = 8   # per Function: beyond, its ctx values change at every call; run it in Python
_CTX_FIELDS = frozenset({"to_save", "saved_for_forward", "dirty_tensors", "non_differentiable",
                         "materialize_grads", "needs_input_grad", "_saved_objects", "_in_meta", "_out_meta",
                         "_saved_positions"})


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


class FunctionNode(FunctionCtx, Node):
    """ctx in forward, grad_fn afterwards (a subclass per Function, named `<Function>Backward`)."""

    function = None

    def _start(self, needs):
        self.needs_input_grad = needs
        self.materialize_grads = True
        self.to_save = ()
        self._saved_objects = None
        self.op = self.args = self.sig = self.seg = None
        self.edges, self.out_avals, self.checks, self.tensor_args = (), (), [], ()
        self.retained = self.hooks = None
        self.saves, self.pos, self.closed, self.seq = True, -1, False, -1

    @property
    def saved_tensors(self):
        if self._saved_objects is None:
            if self.args is None:
                raise RuntimeError(FREED_GRAPH)
            return tuple(self.to_save)
        return self._saved_objects

    saved_variables = saved_tensors

    def release(self):
        self.args = None
        self._saved_objects = None

    def run_python(self, cts, create_graph):
        """The user's backward on concrete tensors: returns the gradients of the differentiated arguments
        (arrays, or tensors with history when create_graph)."""
        if self.args is None:
            raise RuntimeError(FREED_GRAPH)
        with set_grad_enabled(create_graph):
            grads = call_backward(self, self.function, cts, self._in_meta, self._out_meta, self.materialize_grads)
        diff = _saved.SIGNATURES[self.sig][3]
        if create_graph:
            return [grads[i] for i in diff]
        return [None if grads[i] is None else grads[i]._value for i in diff]

    def saved_description(self, index):
        """How PyTorch's version error names a saved tensor of a Function: ", which is output k of X,"
        with X its current producer without the Backward suffix, or the Function for a saved output."""
        if index < 0:
            return f", which is output {-1 - index} of {self.function.__name__},"
        t = self._saved_objects[self._saved_positions.index(index)]
        if t._grad_fn is None:
            return ""
        return f", which is output {t._out_idx} of {re.sub(r'Backward[0-9]*$', '', t._grad_fn.name())},"

    def __repr__(self):
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"


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


# ---- building the node after forward ran ------------------------------------------------------

def build_node(ctx, args, output, record, force=False):
    """Wrap forward's outputs; when recording, connect them to ctx, the node. Returns the outputs."""
    from .._tensor import Tensor
    single = not isinstance(output, tuple)
    outputs = (output,) if single else tuple(output)
    arg_pos = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    final = []
    for o in outputs:
        if isinstance(o, Tensor) and id(o) in arg_pos and id(o) not in dirty:
            # an argument handed back unchanged comes out as a new tensor on its data, as in PyTorch
            if record or force:
                with set_grad_enabled(False):
                    o = o.view_as(o)
            else:
                o = o.detach()
        final.append(o)
    if not (record or force):
        return final[0] if single else tuple(final)
    for o in outputs:
        if isinstance(o, Tensor) and id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            o._storage.counter.value += 1   # PyTorch counts the marked write once more
    _connect(ctx, args, outputs, final, arg_pos, non_diff)
    return final[0] if single else tuple(final)


def _connect(ctx, args, outputs, final, arg_pos, non_diff):
    from .._tensor import Tensor
    needs = ctx.needs_input_grad
    nin = len(args)
    saved = tuple(ctx.to_save)
    out_pos = {id(o): k for k, o in enumerate(outputs) if isinstance(o, Tensor)}
    out_pos.update((id(o), k) for k, o in enumerate(final) if isinstance(o, Tensor))
    values = [a._peek() if isinstance(a, Tensor) else a for a in args]
    saved_map, checks = [], []
    for t in saved:
        if t is None:
            saved_map.append(None)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {len(saved_map)} is of "
                            f"type {type(t).__name__}")
        pos = arg_pos.get(id(t))
        if pos is None:
            pos = len(values)
            values.append(t._peek())
        k = out_pos.get(id(t))
        counter = t._storage.counter
        checks.append((counter, counter.value, pos if k is None else -1 - k))
        saved_map.append(pos)
    ctx._in_meta = tuple((tuple(a.shape), a.dtype) if isinstance(a, Tensor) else None for a in args)
    ctx._out_meta = tuple((tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in final)
    ctx.args = values
    ctx.edges = [a._edge() if needs[i] else None for i, a in enumerate(args)] + [None] * (len(values) - nin)
    ctx.tensor_args = tuple(isinstance(a, Tensor) for a in args) + (False,) * (len(values) - nin)
    ctx.out_avals = tuple(None if m is None else (m[0], m[1].np) for m in ctx._out_meta)
    ctx.checks = checks
    ctx.seq = next(_seq)
    diff = tuple(i for i in range(nin) if needs[i])
    ctx.sig, ctx.op = _signature(ctx, tuple(saved_map), diff, values)
    ctx._saved_objects = saved
    if anomaly_mode.is_anomaly_enabled():
        anomaly_mode.remember(ctx)
    ctx._saved_positions = tuple(saved_map)
    for k, (o, f) in enumerate(zip(outputs, final)):
        if isinstance(f, Tensor) and id(o) not in non_diff and (f.dtype.is_floating_point or f.dtype.is_complex):
            f._attach(ctx, k)
        elif isinstance(f, Tensor) and id(o) in non_diff:
            f._requires_grad = False
    if not ctx.op.custom.python and all(o is f for o, f in zip(outputs, final)):
        _join_segment(ctx, final)


def _join_segment(ctx, outputs):
    """Put a traced node on the tape segment, so a step that uses the Function is still one program.

    The segment holds forward ops with their autograd nodes; the Function's forward ops are there
    already (recorded outside grad mode), so its entry is an op that hands its outputs through: its
    inputs are the node's values (what the backward reads) then the outputs, which the output tensors
    now hold as this op's results."""
    from .. import _dispatch, _lazy, _segment
    from .._storage import Storage
    from .._tensor import Tensor
    if not _dispatch.LAZY[0] or not all(isinstance(o, Tensor) and o._view is None for o in outputs):
        return
    values = [o._peek() for o in outputs]
    inputs = list(ctx.args) + values
    op, static = ctx.op, _saved.SIGNATURES[ctx.sig][1]
    pending = _lazy.record(_lazy.forward_signature(op, static, None), inputs,
                           tuple((v.shape, v.dtype) for v in values))
    ctx.edges = list(ctx.edges) + [None] * len(values)
    ctx.tensor_args = ctx.tensor_args + (False,) * len(values)
    for o, p in zip(outputs, pending):
        o._storage._raw = p
        p.storage = weakref.ref(o._storage)
    _segment.add(pending[0].node, inputs, ctx)


# ---- which way the backward runs --------------------------------------------------------------

_probed = {}      # traced sid -> None (traceable) or the reason it is not
_warned = set()   # Functions warned about
_traced_sids = {}  # Function -> traced sids seen


def _signature(ctx, saved_map, diff, values):
    cls = type(ctx).function
    nout = len(ctx._out_meta)
    kinds = tuple((tuple(v.shape), v.dtype) if hasattr(v, "dtype") else type(v) for v in values)
    reason = "" if getattr(cls, "_runs_in_python", False) else None   # a Function that asks for Python
    try:
        state = _static_state(ctx) if reason is None else None
    except _NotStatic as e:
        reason = str(e)
    if reason is None and len(_traced_sids.get(cls, ())) >= MAX_TRACED_SIGNATURES:
        reason = (f"the values it keeps on ctx differ at every call ({MAX_TRACED_SIGNATURES} versions seen); "
                  "save tensors with ctx.save_for_backward instead")
    if reason is None:
        kept = set(p for p in saved_map if p is not None)
        placeholders = tuple(None if i in kept else k for i, k in enumerate(kinds))
        static = (("state", state), ("saved", saved_map), ("needs", ctx.needs_input_grad),
                  ("materialize", ctx.materialize_grads), ("inputs", ctx._in_meta), ("outputs", ctx._out_meta))
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
        warnings.warn(f"{cls.__name__}.backward runs node by node in Python, outside the compiled backward: "
                      f"{reason}.", UserWarning, stacklevel=6)
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
    from .._tensor import Tensor
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
    from ._engine import _node_backward
    run = _node_backward(sid, None)
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
    from .._tensor import Tensor
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
    from .._tensor import Tensor
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

