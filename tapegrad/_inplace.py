"""In-place ops: compute functionally, then write into the tensor's storage.

Autograd sees an in-place op as the functional op followed by a rebase of the
tensor's history onto the new node; on a view, as one CopySlices node on the
base plus a rebased view. PyTorch's leaf checks apply while grad mode is on.
"""

import jax

from . import _dispatch
from . import _dtypes as D
from ._dispatch import apply
from ._flags import warn_once
from ._grad_mode import _state, enable_grad
from ._ops import elementwise as E
from ._ops import indexing as I
from ._view_info import grad_views, gradless_base_histories
from ._views import (no_grad_view_message, outside_base, refresh_views, relative_steps, replayed, storage_error,
                     write)
from ._user_frames import warn_user

LEAF_ERROR = ("a leaf Variable that requires grad is being used in an in-place operation. "
              "Wrap the update in `with torch.no_grad():` (as an optimizer step does), "
              "or use an out-of-place op (x = x + 1).")
VIEW_OF_LEAF_ERROR = ("a view of a leaf Variable that requires grad is being used in an in-place operation. "
                      "Modify it under `with torch.no_grad():` or clone() the leaf first.")
UNREAD_VIEW_ERROR = ("a leaf Variable that requires grad is being used in an in-place operation. (This view was made "
                     "before its base gained a history in place; until its grad_fn is read it counts as a leaf, as "
                     "in PyTorch.) Modify the base instead, or clone() the view.")


def check_inplace(t, operands=()):
    if _state.grad_enabled:
        info = t._view
        if info is not None and info.creation is not None and (
                t._requires_grad or any(getattr(o, "_requires_grad", False) for o in operands)):
            raise RuntimeError(no_grad_view_message(t, indirect=False))
        if info is not None and info.base is None:
            info = None   # a detach()ed view: PyTorch's detach() is no view
        if t._requires_grad and t._grad_fn is None and info is None:
            raise RuntimeError(LEAF_ERROR)
        if info is not None:
            base = info.base
            # PyTorch refuses a view of a leaf that requires grad, and a view that requires grad of any leaf
            # (as the views of a leaf that is itself a view of a tensor without grad)
            if base._grad_fn is None and (base._requires_grad or t._requires_grad):
                raise RuntimeError(VIEW_OF_LEAF_ERROR if t._requires_grad or base is not t else LEAF_ERROR)
            if info.unread and t._requires_grad:   # PyTorch's check reads the view's grad_fn as it was: none
                raise RuntimeError(UNREAD_VIEW_ERROR)
    if t._inference and not _state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed. "
                           "You can make a clone to get a normal tensor before doing inplace update.")


# PyTorch's derivatives.yaml gives these in-place ops entries of their own, numbered after the out-of-place
# ones, so their nodes print under other names (x.acosh_() -> AcoshBackward1, x.squeeze_(0) -> SqueezeBackward4).
_INPLACE_NODE_NAMES = {
    "AcoshBackward0": "AcoshBackward1", "AsinhBackward0": "AsinhBackward1", "AtanhBackward0": "AtanhBackward1",
    "ConjPhysicalBackward0": "ConjPhysicalBackward1",
    "FillBackward0": "FillBackward2", "FillBackward1": "FillBackward3", "SqueezeBackward0": "SqueezeBackward3", "SqueezeBackward1": "SqueezeBackward4",
    "SqueezeBackward2": "SqueezeBackward5", "TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
    "UnsqueezeBackward0": "UnsqueezeBackward1", "AsStridedBackward0": "AsStridedBackward1",
}
INPLACE_NAMES = frozenset(_INPLACE_NODE_NAMES.values())
_inplace_node_classes = {}


def name_as_inplace(node):
    """Give the node of an in-place op the name PyTorch prints for it (see _INPLACE_NODE_NAMES)."""
    name = _INPLACE_NODE_NAMES.get(type(node).__name__)
    if name is None:
        return
    key = (name, type(node).optional_inputs)
    cls = _inplace_node_classes.get(key)
    if cls is None:
        from .autograd._node import node_class
        cls = _inplace_node_classes[key] = node_class(name, type(node).optional_inputs,
                                                      saves_result=type(node).saves_result)
    node.__class__ = cls


_warned = {"complex_to_real": False}


def warn_complex_to_real(src, dst):
    """PyTorch's warning when copy_, fill_ or setitem writes a complex tensor into a real one, whose
    imaginary part is dropped (see _ops/_cast); once per process, as PyTorch's TORCH_WARN_ONCE.
    src, dst: tapegrad dtypes."""
    if src.is_complex and not dst.is_complex and warn_once(_warned, "complex_to_real"):
        warn_user("Casting complex values to real discards the imaginary part", UserWarning)


def _can_cast(src, dst):
    if src.is_complex and not dst.is_complex:
        return False
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    if src is not D.bool_ and dst is D.bool_:
        return False
    return True


def refused_cast(result, desired, cpp_names=False, hint=""):
    """PyTorch's error for a result of dtype `result` written into a tensor of dtype `desired`, which cannot hold
    it (cpp_names: the desired type named as C++ does, 'long int')."""
    name = D.cpp_name(desired) if cpp_names else D.SCALAR_NAMES[desired.name]
    return RuntimeError(f"result type {D.SCALAR_NAMES[result.name]} can't be cast to the desired output type "
                        f"{name}{hint}")


def inplace(t, op, *rest, **static):
    """t.op_(*rest): run op(t, *rest) and write the result into t."""
    check_inplace(t, rest)
    out = apply(op, t, *rest, **static)
    commit(t, out)
    return t


# In-place methods whose PyTorch batching rule lets the kernel refuse a batched operand by its shape, and those
# it refuses as "inplace arithmetic"; the others fall back to a per-example loop, which names the aten op.
_SHAPE_REFUSED = {n + "_" for n in ("add", "atan2", "arctan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
                                    "bitwise_right_shift", "bitwise_xor", "copysign", "gcd", "lcm")} | {"__iadd__"}
_ARITHMETIC = {n + "_" for n in ("clamp_max", "clamp_min", "div", "divide", "logical_and", "logical_or",
                                 "logical_xor", "mul", "multiply", "sub", "true_divide")} | {
    "__imul__", "__isub__", "__itruediv__", "copy_", "masked_fill_"}


def _refuse_mapped_write(t, written, read, name):
    """Inside a vmap, a result mapped over the batch written into a tensor that is not (`y = zeros(3);
    y.mul_(x)`): PyTorch's error for the in-place op `name` (JAX would map the tensor silently)."""
    from jax._src.interpreters import batching
    if not isinstance(written, batching.BatchTracer) or written.batch_dim is None:   # (None: not mapped)
        return
    if isinstance(read, batching.BatchTracer) and read._trace is written._trace \
            and read.batch_dim is not None:
        return
    if name in _SHAPE_REFUSED:
        raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast shape "
                           f"{[written._trace.axis_data.size, *t.shape]}")
    if name is None or name in _ARITHMETIC:
        op, where = "inplace arithmetic", "in a vmap"
    else:
        from ._op_functions import TRANSFORMS
        level = max((i + 1 for i, kind in enumerate(TRANSFORMS) if kind == "vmap"), default=1)
        op, where = f"aten::{name}", f"at level {level}"
    raise RuntimeError(f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in "
                       "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
                       f"over but `self` not being vmapped over {where}. Please try to use out-of-place operators "
                       f"instead of {op}. If said operator is being called inside the PyTorch framework, please "
                       "file a bug report instead.")


def commit(t, out, value=None, name=None, cpp_names=False):
    """Write the tensor `out` (computed from t) into t, rebasing t's autograd history onto out's. `value`,
    when given, is what t holds instead of out's value (autograd still records out's op). `name`: the in-place
    method, for the error PyTorch's vmap gives it. cpp_names: a refused cast names t's dtype as C++ does ('long
    int'), as PyTorch's clamp_ with number bounds."""
    if out.is_sparse or out._sp_compressed:   # t.mul_(sparse): PyTorch writes a COO product's dense form
        if out._sp_compressed:
            raise RuntimeError("Expected result Tensor to be of format CSR: PyTorch cannot write a compressed product "
                               "into a dense tensor in place. Use the out-of-place product instead.")
        out = out.to_dense()
    tdtype = t.dtype
    computed = out._grad_fn   # the op's own node, which read t's old value
    if tuple(out.shape) != tuple(t.shape):   # (PyTorch's TensorIterator checks shapes before dtypes)
        raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if out.dtype is not tdtype:
        if not _can_cast(out.dtype, tdtype):
            raise refused_cast(out.dtype, tdtype, cpp_names)
        out = apply(E.to_dtype, out, dtype=tdtype.np)
    if _dispatch.OBSERVERS:
        from .autograd import forward_ad
        forward_ad.inplace(t, out)
    node = out._grad_fn
    if node is not None:
        name_as_inplace(node)
    written = (out if value is None else value)._peek()
    read = t._peek()              # the value the op read from t
    if isinstance(written, jax.core.Tracer):
        _refuse_mapped_write(t, written, read, name)
    storage = t._storage          # a view's storage is its base's
    old_version = storage.version
    if t._view is None or t._view.base is None:
        if t._view is None:
            storage.write(written)
        else:
            write(t, written)   # a detach()ed view: through its recipe, its history alone
        if node is not None:
            storage.counter.rebase(t._grad_fn, t._out_idx, node, out._out_idx)
            t._attach(node, out._out_idx)
            _exempt_own_inputs(node, computed, read, storage, old_version)
            _retarget_output_check(node, storage)
            refresh_views(t)
        else:
            _untracked_write(t)
        _aliases_written(t, t)
        return
    base = t._view.base
    steps, positions = relative_steps(t)
    if node is None and not base._requires_grad:
        write(t, written)
        _untracked_write(base)
        _aliases_written(t, base)
        return
    whole = base._view is not None and outside_base(t)
    error = storage_error(t) if whole else None
    statics = {"steps": steps, **({"outside": error} if error else {})}
    new_base = apply(I.copy_slices, base, out, *positions, **statics)
    new_value = new_base._peek() if value is None else _dispatch.compute(
        I.copy_slices, tuple(statics.items()), [base._peek(), written, *positions])
    if base._view is None:
        storage.write(new_value)
    elif whole:
        write(t, written)   # (new_value lacks what t holds outside its base)
    else:
        write(base, new_value)
    if node is not None:
        _exempt_own_inputs(node, computed, read, storage, old_version)
        _retarget_output_check(node, storage)
    if node is None:
        _untracked_write(base)
    if new_base._grad_fn is not None:
        storage.counter.rebase(base._grad_fn, base._out_idx, new_base._grad_fn)
        base._attach(new_base._grad_fn, 0)
        refresh_views(base, skip=t)
        view = replayed(base, steps, positions)
        if not whole:
            t._view.value, t._view.version = view._peek(), storage.version
        if view._grad_fn is not None:
            t._attach(view._grad_fn, 0)
    _aliases_written(t, base)


def _aliases_written(t, base):
    """A write through t (of `base`'s storage) moves the version that base's detach()ed aliases share with it: the
    views made from an alias take a new history through it (AsStridedBackward0), as PyTorch regenerates a view's
    grad_fn once the version moved. (Regenerated at the write, as tapegrad regenerates every view's history;
    PyTorch does it when the view's grad_fn is next read, which only a retained grad can tell apart.)"""
    views = grad_views.get(t._storage)
    if not views:
        return
    aliases = {}
    for v in list(views):
        other = v._view.base if v._view is not None else None
        if other is not None and other is not base and other is not t:
            aliases[id(other)] = other
    for alias in aliases.values():
        _untracked_write(alias, skip=t)


def _untracked_write(base, skip=None):
    """After a write autograd did not record (no_grad), the views of `base` with a history (but `skip`) take a
    new one through as_strided of the base (AsStridedBackward0), as PyTorch regenerates a view's grad_fn once
    its version has moved; the values their gradients reach are the same. A base that does not require grad
    has views with a history only under a leaf that is itself a view: theirs then leads nowhere."""
    if _state.inference or not (base._requires_grad or gradless_base_histories[0]):
        return
    views = grad_views.get(base._storage)
    if not views:
        return   # (an optimizer's step writes parameters with no live views: nothing to do)
    if not base._requires_grad and not any(v._grad_fn is not None for v in views):
        return
    with enable_grad():
        refresh_views(base, skip=skip, with_history=True)


def _exempt_own_inputs(node, computed, read, storage, old_version):
    _exempt_own_input(node, read, storage, old_version)
    if computed is not None and computed is not node:   # (a result cast to t's dtype: the op's own node read t)
        _exempt_own_input(computed, read, storage, old_version)


def _exempt_own_input(node, read, storage, old_version):
    # The op read t's old value, which the node holds (JAX arrays are immutable): this write and later
    # ones do not touch it (PyTorch saves a clone of the original self for this), so drop that one check.
    # Only self's: another argument on the same storage (y.mul_(y), v.mul_(y[:2])) was saved as it is
    # and is now modified, which PyTorch reports at backward.
    counter = storage.counter
    for k, (c, version, index) in enumerate(node.checks):
        if c is counter and version == old_version and index >= 0 and node.kept[index] is read:
            del node.checks[k]
            return


def _retarget_output_check(node, storage):
    # The node's result now lives in t's storage (a view's: its base's): check that one for later edits.
    if node.checks and node.checks[-1][2] == -1:
        node.checks[-1] = (storage.counter, storage.version, -1)
