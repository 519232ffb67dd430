"""The graph node of an autograd.Function call (see autograd.function): ctx in forward, grad_fn after.

Node layout: one position per forward argument (edges to the tensor arguments that require grad),
then one position per saved tensor that is not an argument. A traced node keeps the saved values at
their positions, so the engine hands them to the node's VJP like any op's kept arguments; the VJP
is the user's backward traced on them (`_function_backward.traced_vjp`). A Python node keeps nothing
the engine reads: the engine calls `FunctionNode.run_python` with the node itself.
"""
import weakref

from .._grad_mode import set_grad_enabled
from . import _saved, anomaly_mode
from ._function_backward import FunctionCtx, call_backward, signature
from ._graph import FREED_GRAPH, changed_shape, note_reshaped
from .._equation import _seq
from .._tensor import Tensor
from ._node import Node, producer_name


class FunctionNode(FunctionCtx, Node):
    """ctx in forward, grad_fn afterwards (a subclass per Function, named `<Function>Backward`)."""

    function = None

    def _start(self, needs):
        self.needs_input_grad = needs
        self.materialize_grads = True
        self.to_save = ()
        self._saved_objects = self._jvp_saved = None
        self.op = self.kept = self.sig = self.seg = None
        self.edges, self.avals, self.checks, self.tensor_args = (), (), [], ()
        self.retained = self.hooks = self.fn_hooks = None
        self.saves, self.pos, self.closed, self.seq = True, -1, False, -1
        self.sid = self.args = self.where = None   # its forward ops are equations of their own
        self.outs = ()

    @property
    def saved_tensors(self):
        if self._jvp_saved is not None:   # inside jvp: what forward gave ctx.save_for_forward
            return self._jvp_saved
        if self._saved_objects is None:
            if self.kept is None:
                raise RuntimeError(FREED_GRAPH)
            return tuple(self.to_save)
        return self._saved_objects

    saved_variables = saved_tensors

    def release(self):
        self.kept = None
        self._saved_objects = None

    def run_python(self, cts, create_graph):
        """The user's backward on concrete tensors: returns the gradients of the differentiated arguments
        (arrays, or tensors with history when create_graph)."""
        if self.kept is None:
            raise RuntimeError(FREED_GRAPH)
        with set_grad_enabled(create_graph):
            grads = call_backward(self, self.function, cts, self._in_meta, self._out_meta, self.materialize_grads)
        diff = _saved.SIGNATURES[self.sig][3]
        if create_graph:
            return [grads[i] for i in diff]
        return [None if grads[i] is None else grads[i]._value for i in diff]

    def saved_description(self, index, counter=None):
        """How PyTorch's version error names a saved tensor of a Function: ", which is output k of X,"
        with X its current producer without the Backward suffix, or the Function for a saved output."""
        if index < 0:
            return f", which is output {-1 - index} of {self.function.__name__},"
        t = self._saved_objects[self._saved_positions.index(index)]
        if t._grad_fn is None:
            return ""
        return f", which is output {t._out_idx} of {producer_name(t._grad_fn)},"

    def __repr__(self):
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"


# ---- building the node after forward ran ------------------------------------------------------

def build_node(ctx, args, output, record, force=False):
    """Wrap forward's outputs; when recording, connect them to ctx, the node. Returns the outputs."""
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
    ctx.kept = values
    ctx.edges = [a._edge() if needs[i] else None for i, a in enumerate(args)] + [None] * (len(values) - nin)
    reshaped = {i: shape for i, (a, e) in enumerate(zip(args, ctx.edges)) if e is not None
                and (shape := changed_shape(a, e)) is not None}
    ctx.tensor_args = tuple(isinstance(a, Tensor) for a in args) + (False,) * (len(values) - nin)
    ctx.avals = tuple(None if m is None else (m[0], m[1].np) for m in ctx._out_meta)
    ctx.checks = checks
    ctx.seq = next(_seq)
    diff = tuple(i for i in range(nin) if needs[i])
    ctx.sig, ctx.op = signature(ctx, tuple(saved_map), diff, values)
    ctx._saved_objects = saved
    if reshaped:
        note_reshaped(ctx, reshaped)
    if anomaly_mode.is_anomaly_enabled():
        anomaly_mode.remember(ctx)
    ctx._saved_positions = tuple(saved_map)
    attached = []
    for k, (o, f) in enumerate(zip(outputs, final)):
        if isinstance(f, Tensor) and id(o) not in non_diff and (f.dtype.is_floating_point or f.dtype.is_complex):
            f._attach(ctx, k)
            attached.append((k, f))
        elif isinstance(f, Tensor) and id(o) in non_diff:
            f._requires_grad = False
    # PyTorch forbids modifying in place a view that a Function returns (its backward would be overridden):
    # with one differentiable output as made inside a custom Function, with several as a multi-output view
    creation = "multi_output" if len(attached) > 1 else "custom_function"
    for k, f in attached:
        if f._view is not None and f._view.base is not None:
            f._view.creation, f._view.output_nr = creation, k
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
    if not _dispatch.LAZY[0] or not all(isinstance(o, Tensor) and o._view is None for o in outputs):
        return
    values = [o._peek() for o in outputs]
    inputs = list(ctx.kept) + values
    op, static = ctx.op, _saved.SIGNATURES[ctx.sig][1]
    pending = _lazy.record(_lazy.forward_signature(op, static, None), inputs,
                           tuple((v.shape, v.dtype) for v in values))
    ctx.edges = list(ctx.edges) + [None] * len(values)
    ctx.tensor_args = ctx.tensor_args + (False,) * len(values)
    for o, p in zip(outputs, pending):
        o._storage._raw = p
        p.storage = weakref.ref(o._storage)
    _segment.add(pending[0].node, inputs, ctx)


