"""apply(): record one op-table entry's call on the tape.

Per call: unwrap tensors, pick the computation dtype by PyTorch's promotion rules and the output avals
(cached per signature), record one Equation -- an autograd Node when grad mode is on and an input
requires grad -- whose outputs are Pending values, and wrap them as tensors. With LAZY off (tracing,
debugging) the op's kernel runs at once instead.
"""
import numpy as np

from . import _dtypes as D
from ._dtypes import DIFFERENTIABLE
from . import _broadcast_errors, _faults, _lazy, _meta
from ._equation import Equation
from ._op_functions import Opmath, forward_fn, pure_fn  # noqa: F401 (re-exported: the op table's functions)
from . import _segment
from ._grad_mode import _state
from ._ops._registry import FLOAT, KEEP
from .autograd import _saved
from .autograd._graph import changed_shape, note_reshaped
from .autograd.anomaly_mode import _mode as _anomaly, remember
from .autograd.graph import _stack as _graph_hooks
from .device import MIXED_DEVICES, check_same_device
from ._tensor import Tensor
from ._view_info import make_view
from ._pointwise_layout import lay_out, lay_out_in_order


def _packed(tensor):
    from .autograd.graph import pack
    _segment.current().hooked = True   # the segment's program would read the unpacked values: general path
    return pack(tensor)

LAZY = [True]  # record ops as pending values (see _lazy); False runs each op eagerly
OBSERVERS = []  # called after each op with (op, static, signature, args, result): forward AD, fx's recorder
CAPTURE = [None]  # while a function is traced (eager ops): called with each op's arguments first


class Redirect(Exception):
    """Raised by the storage of a Tensor subclass that implements ops over other tensors (tapegrad.sparse's
    SparseTensor, tapegrad.masked's MaskedTensor) when apply() reads it: apply hands the call to
    `handler(op, args, static)`, as PyTorch's dispatcher hands an op to a layout's or a subclass's kernels."""

    def __init__(self, handler):
        super().__init__(handler)
        self.handler = handler


def compute(op, static, values):
    """Run (or, in lazy mode, record) an op on raw values without autograd; returns one value."""
    return compute_all(op, static, values)[0]


def compute_all(op, static, values):
    """As compute(), for every output of the op (a tuple)."""
    if _meta.USED[0] and _meta.among(values):   # (a meta value: no data, only the result's shape and dtype)
        kinds = tuple((v.shape, v.dtype) if hasattr(v, "dtype") else type(v) for v in values)
        return _meta.outputs(_lazy.abstract_eval(op, static, None, kinds))
    if LAZY[0]:
        kinds = tuple((v.shape, v.dtype) if hasattr(v, "dtype") else type(v) for v in values)
        outs = _lazy.record(_lazy.forward_signature(op, static, None), values,
                            _lazy.abstract_eval(op, static, None, kinds))
        _segment.add(outs[0].node, values, None)
        return outs
    out = forward_fn(op, static, None)(*_lazy.resolve_all(values))
    return out if op.nout > 1 else (out,)


def _computation_dtype(rule, signature):
    """signature: per argument, (numpy dtype, is_zero_dim) for tensors or the Python type of a scalar."""
    dims, zero_dims, scalars = [], [], []
    for s in signature:
        if type(s) is tuple:
            (zero_dims if s[1] else dims).append(D.from_jax(s[0]))
        elif s is not type(None):
            scalars.append(s(1))
    result = D.result_type(dims, zero_dims, scalars)
    if rule is FLOAT and not (result.is_floating_point or result.is_complex):
        result = D.get_default_dtype()
    return result.np


_REDUCED = (np.dtype("float16"), D.bfloat16.np)


class _Signature:
    """What one op signature (op, statics, input shapes/dtypes) always yields, computed once."""

    __slots__ = ("cast", "avals", "differentiable", "plans", "sid", "node_class", "candidates")

    def __init__(self, op, static, kinds):
        rule = op.dtype_rule
        if rule is KEEP:
            self.cast = None
        else:
            promo = tuple((k[1], not k[0]) if type(k) is tuple else k for k in kinds)
            self.cast = _computation_dtype(rule, promo)
            if op.scalar_opmath and self.cast in _REDUCED and any(k is float or k is int for k in kinds):
                self.cast = Opmath(np.dtype(np.float32), self.cast)   # (PyTorch takes the scalar in float32)
        if op.no_kernel_for is not None:
            _refuse_kernel_dtype(op, static, self.cast, kinds)
        self.avals = _lazy.abstract_eval(op, static, self.cast, kinds)
        self.differentiable = tuple(dt in DIFFERENTIABLE for _, dt in self.avals)
        self.sid = _lazy.forward_signature(op, static, self.cast)
        self.node_class = op.node_class_for(static, kinds)
        # the tensor arguments autograd may differentiate (those that require grad are, per call)
        allowed = op.diff
        self.candidates = tuple(i for i, k in enumerate(kinds) if type(k) is tuple and k[1] in DIFFERENTIABLE
                                and (allowed is None or i in allowed))
        self.plans = {}   # which arguments require grad (bit i for argument i) -> _NodePlan


_KERNEL_GROUPS = {"complex64": "complex", "complex128": "complex", "float16": "half", "bfloat16": "half",
                  "bool": "bool"}
_KERNEL_FIXES = {"complex": ". Take .real, .imag or .abs() first.",
                 "half": ". Convert the input first, e.g. x.float().",
                 "bool": ". Convert the input first, e.g. x.long()."}


def _refuse_kernel_dtype(op, static, cast, kinds):
    """PyTorch's error for a call that computes in a dtype its kernel has no version of (Op.no_kernel_for): the
    computation dtype, or for an op that does not promote, its first input's of such a dtype."""
    names = [getattr(cast, "name", None)] if cast is not None else [k[1].name for k in kinds if type(k) is tuple]
    for name in names:
        group = _KERNEL_GROUPS.get(name)
        text = op.no_kernel_for.get(group) if group is not None else None
        if text is not None:
            text = text if type(text) is str else text(dict(static), kinds)
            raise NotImplementedError(text.format(D.SCALAR_NAMES[name]) + _KERNEL_FIXES[group])


class _NodePlan:
    """How a node of one signature is recorded when given arguments require grad (worked out once)."""

    __slots__ = ("diff", "sig", "mask", "saves", "kept")

    def __init__(self, candidates, requiring):
        self.diff = tuple(i for i in candidates if requiring >> i & 1)   # the differentiated positions
        self.kept = None   # analysed on first use (after the edges: see _record)

    def analyse(self, op, static, cast, values, kinds, avals):
        needed, self.sig, self.mask, self.saves = _saved.plan(op, static, cast, self.diff, values, kinds, avals)
        if op.node_class_for(static, kinds).__name__ == "CopySlices":
            self.saves = True   # (PyTorch's CopySlices drops the node it wraps in a backward: a second one fails)
        saves = op.saves_inputs_for(static, kinds, self.diff)
        # per argument the backward reads: (position, is a tensor, whether its version is checked)
        self.kept = tuple((i, type(kinds[i]) is tuple, saves is None or i in saves)
                          for i, keep in enumerate(needed) if keep)


_signatures = {}
D.default_dtype_caches.append(_signatures)   # promotion of Python floats follows the default dtype


def apply(op, *args, **static):
    """Run `op` on tensors / Python scalars; returns a Tensor (or a tuple for multi-output ops)."""
    static = tuple(static.items()) if static else ()
    values = []
    kinds = []
    requiring = 0   # bit i: argument i is a tensor that requires grad
    bit = 1
    viewed = False   # a view among the inputs: the only tensors that may not be contiguous
    try:
        for a in args:
            if isinstance(a, Tensor):
                if a._view is None:
                    v = a._storage._raw
                else:
                    v = a._view_value()
                    viewed = True
                values.append(v)
                kinds.append((v.shape, v.dtype))
                if a._requires_grad:
                    requiring |= bit
            else:
                if type(a) is int and not -_INT64 <= a < _INT64:
                    a = _beyond_int64(a, args)
                values.append(a)
                kinds.append(type(a))
            bit <<= 1
    except Redirect as r:   # a tensor subclass that runs ops itself (no cost to the ordinary path)
        return r.handler(op, args, static)
    kinds = tuple(kinds)
    meta = _meta.USED[0] and _meta.among(values)
    if meta:
        _meta.check_devices([a for a in args if isinstance(a, Tensor)])
    elif MIXED_DEVICES[0]:
        check_same_device([a for a in args if isinstance(a, Tensor)])
    key = (op, static, kinds)
    sig = _signatures.get(key)
    if sig is None:
        try:
            sig = _Signature(op, static, kinds)
        except (ValueError, TypeError) as e:   # JAX's "incompatible shapes for broadcasting": PyTorch's error
            edges_before_kernel(args)
            error = _broadcast_errors.from_jax(e, args)
            if error is None:
                raise
            raise error from None
        _signatures[key] = sig
    inference = _state.inference
    lazy = LAZY[0]
    where = _faults.where_recorded() if lazy else None
    node = None
    if requiring and _state.grad_enabled and (op.nout > 1 or sig.differentiable[0]):
        node = _record(op, static, sig, values, args, kinds, requiring, lazy, where)
    if meta:   # (no kernel runs: see _meta)
        outs = _meta.outputs(sig.avals)
    elif lazy:
        # the node, if any, is the call's equation
        eq = node if node is not None else Equation(sig.sid, values, sig.avals, where)
        outs = _lazy.outputs(eq)
    else:
        if CAPTURE[0] is not None:   # only set while tracing, which runs eagerly: nothing on the lazy path
            CAPTURE[0](args)
        out = forward_fn(op, static, sig.cast)(*_lazy.resolve_all(values))
        if _state.grad_enabled is False and CAPTURE[0] is not None:
            from jax.lax import stop_gradient
            out = stop_gradient(out)   # the user's no_grad inside a traced function (see _tracing.tracing)
        outs = out if op.nout > 1 else (out,)
    if op.nout == 1:
        out = outs[0]
        result = Tensor._wrap(out, inference)
        if viewed and op.pointwise:   # PyTorch's result takes its inputs' memory order
            lay_out(result, args, op)
        if op.result_order is not None:
            lay_out_in_order((result,), op.result_order(dict(static), (result.shape,)))
        if op.view:
            make_view(result, args[0], op, static, out, args[1:])
        if node is not None:
            result._grad_fn = node
            result._requires_grad = True
            if node.saves_result:   # (the op's, or its PyTorch overload's: see _ops.overload)
                counter = result._storage.counter
                node.checks.append((counter, counter.value, -1))
    else:
        result = tuple(Tensor._wrap(o, inference) for o in outs)
        if op.result_order is not None:
            lay_out_in_order(result, op.result_order(dict(static), tuple(r.shape for r in result)))
        if node is not None:
            for i, r in enumerate(result):
                if sig.differentiable[i]:
                    r._attach(node, i)
            saved = node.saves_result   # True: every output; else the positions PyTorch's backward saves
            if saved:
                for i in (range(len(result)) if saved is True else saved):
                    counter = result[i]._storage.counter
                    node.checks.append((counter, counter.value, -1 - i))
    if lazy and not meta:
        _segment.add(eq, values, node)
    if OBSERVERS:
        for observe in tuple(OBSERVERS):
            observe(op, static, sig, args, result)
    return result


_INT64 = 1 << 63


def edges_before_kernel(args):
    """Before a kernel refuses its operands (their sizes, their dtypes), PyTorch's autograd has collected
    their edges: a view made with grad mode off, whose base was modified in place since, raises its error
    first (see _views.check_rebase). Called on those refusals' paths only."""
    if not _state.grad_enabled or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
        return
    for a in args:
        if isinstance(a, Tensor) and a._view is not None and a._view.creation is not None:
            a._edge()


def _beyond_int64(a, args):
    """A Python int outside int64 as PyTorch's scalar conversion reads it: up to 2**64 as an unsigned 64-bit
    value, converted to the float of a floating or complex tensor's op, else wrapped as its int64 bits."""
    if a >= 2 * _INT64:
        raise OverflowError("int too big to convert")
    if a < -_INT64:
        raise OverflowError("can't convert negative int to unsigned")
    if any(isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex) for t in args):
        return float(a)
    return a - 2 * _INT64


def _record(op, static, sig, values, args, kinds, requiring, lazy, where):
    plan = sig.plans.get(requiring)
    if plan is None:
        plan = sig.plans[requiring] = _NodePlan(sig.candidates, requiring)
    diff = plan.diff
    if not diff:
        return None
    edges = [None] * len(args)
    reshaped = None
    for i in diff:
        t = args[i]
        edges[i] = t._edge()
        if t._view is not None and t._view.reshaped:
            shape = changed_shape(t, edges[i])
            if shape is not None:
                reshaped = reshaped or {}
                reshaped[i] = shape
    if plan.kept is None:
        plan.analyse(op, static, sig.cast, values, kinds, sig.avals)
    checks = []
    saved = [None] * len(args)
    for i, is_tensor, checked in plan.kept:
        if is_tensor:
            t = args[i]
            if t._inference:
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.")
            if checked:
                counter = t._storage.counter
                checks.append((counter, counter.value, i))
            saved[i] = values[i] if not _graph_hooks else _packed(t)
        else:
            saved[i] = values[i]
    node = sig.node_class(op, saved, edges, sig.avals, plan.sig, checks, plan.saves, plan.mask,
                          sig.sid if lazy else None, values if lazy else None, where)
    if reshaped:
        note_reshaped(node, reshaped)
    if _anomaly["enabled"]:
        remember(node)
    return node
