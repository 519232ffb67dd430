"""MaskedTensor: PyTorch's torch.masked.MaskedTensor as (data, mask), two ordinary tensors.

A MaskedTensor is a Tensor subclass whose storage hands every op to `_dispatch_op` (through
_dispatch.Redirect), as PyTorch's __torch_dispatch__ does: elementwise ops run on the data and keep the mask,
view and shape ops run on both, reductions are torch.masked's over the mask, softmax fills masked-out entries
with zeros. Gradients are the data's: `mt.grad` is the data's gradient under the same mask.
"""

import numpy as np

from .. import _dtypes as D
from .._redirect import InnerAutograd, RedirectingStorage
from .._tensor import PeekedMetadata, Tensor
from . import _ops
from .._user_frames import warn_user

_PROTOTYPE_WARNING = ("The PyTorch API of MaskedTensors is in prototype stage and will change in the near future. "
                      "Please open a Github issue for features requests and see our documentation on the "
                      "torch.masked module for further information about the project.")
_ALLOWED = {"float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64"}
_REDUCTIONS = {"sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "var", "std"}


# (apply() hands ops to _dispatch_op, below)
_STORAGE = RedirectingStorage(lambda: _dispatch_op, (TypeError, "This operation reads a MaskedTensor as a dense "
                                                     "tensor, which tapegrad does not do. Use mt.get_data() (all "
                                                     "values) or mt.to_tensor(fill_value)."))


class MaskedTensor(PeekedMetadata, InnerAutograd, Tensor):
    """A tensor whose masked-out elements are ignored by every operation (PyTorch's prototype torch.masked)."""

    _autograd_inner = "_masked_data"   # its requires_grad, is_leaf and grad_fn (_redirect)

    def __new__(cls, data, mask, requires_grad=False):
        return _make_checked(data, mask, requires_grad)

    def __init__(self, data, mask, requires_grad=False):
        pass   # built by __new__

    @classmethod
    def _make(cls, data, mask):
        self = object.__new__(cls)
        self._init(_STORAGE, None, False)
        self._masked_data, self._masked_mask = data, mask
        return self

    # ---- data and mask ------------------------------------------------------------------------------------

    def get_data(self):
        return self._masked_data

    def get_mask(self):
        return self._masked_mask

    def to_tensor(self, value):
        return self._masked_data.masked_fill(~self._masked_mask, value)

    def _peek(self):
        return self._masked_data._peek()

    @property
    def device(self):
        return self._masked_data.device

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    # ---- autograd: the data's ---------------------------------------------------------------------------------

    @property
    def grad(self):
        g = self._masked_data._grad
        return None if g is None else MaskedTensor._make(g, self._masked_mask)

    @grad.setter
    def grad(self, value):
        self._masked_data.grad = None if value is None else value.get_data()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if isinstance(gradient, MaskedTensor):
            gradient = gradient.get_data()
        self._masked_data.backward(gradient, retain_graph, create_graph, inputs)

    def detach(self):
        return MaskedTensor._make(self._masked_data.detach(), self._masked_mask)

    def to(self, *args, **kwargs):
        return MaskedTensor._make(self._masked_data.to(*args, **kwargs), self._masked_mask)

    def numpy(self, *, force=False):
        raise TypeError("can't convert a MaskedTensor to numpy: its masked-out values are undefined. Use "
                        "mt.get_data().numpy() or mt.to_tensor(fill_value).numpy().")

    def item(self):
        return self._masked_data.item()

    def __lt__(self, other):   # PyTorch's MaskedTensor compares the data and keeps this mask
        return MaskedTensor._make(self._masked_data < _data(other), self._masked_mask)

    def __repr__(self):
        return _repr(self)

    __str__ = __repr__
    __hash__ = object.__hash__


def is_masked_tensor(obj):
    return isinstance(obj, MaskedTensor)


def _make_checked(data, mask, requires_grad=False):
    if isinstance(data, MaskedTensor) or not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    if isinstance(mask, MaskedTensor) or not isinstance(mask, Tensor):
        raise TypeError("mask must be a Tensor")
    warn_user(_PROTOTYPE_WARNING, UserWarning)
    if data.is_sparse or mask.is_sparse:
        raise TypeError(f"data layout of {data.layout} is not supported by tapegrad's MaskedTensor (PyTorch's "
                        "also takes sparse COO/CSR data). Pass dense data and mask: call .to_dense() on them.")
    if data.requires_grad:
        warn_user("It is not recommended to create a MaskedTensor with a tensor that requires_grad. To avoid "
                  "this, you can use data.detach().clone()", UserWarning)
    if mask.dtype is not D.bool_:
        raise TypeError("mask must have dtype bool.")
    if data.dtype.name not in _ALLOWED:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.size() != mask.size():
        raise ValueError("data.size() must equal mask.size()")
    data = data.detach().clone()
    if requires_grad:
        data.requires_grad_()
    return MaskedTensor._make(data, mask.clone())


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor holding copies of `data` and `mask` (a leaf: requires_grad makes it one)."""
    return _make_checked(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor over `data` and `mask`; gradients flow back to `data`."""
    mt = _make_checked(data.detach(), mask)
    mt._masked_data = data
    return mt


# ---- ops --------------------------------------------------------------------------------------------------------

def _data(a):
    return a._masked_data if isinstance(a, MaskedTensor) else a


def _masks_match(args):
    masks = [a._masked_mask for a in args if isinstance(a, MaskedTensor)]
    first = masks[0]
    for m in masks[1:]:
        if m is not first and (m.shape != first.shape or not bool((m == first).all())):
            return None
    return first


def _dispatch_op(op, args, static):
    """Run op-table entry `op` on MaskedTensor arguments (PyTorch's MaskedTensor __torch_dispatch__ rules)."""
    from .._dispatch import apply
    kw = dict(static)
    name = op.name
    if name in _REDUCTIONS:
        return _reduce(name, args[0], kw)
    if name == "softmax":
        mt = args[0]
        data = mt._masked_data.masked_fill(~mt._masked_mask, -np.inf)
        probs = apply(op, data, **kw)   # fully masked rows give 0, as PyTorch's _masked_softmax
        return MaskedTensor._make(probs.masked_fill(~mt._masked_mask, 0.0), mt._masked_mask)
    if name == "where":
        cond, x, y = args
        x, y = (a if isinstance(a, MaskedTensor) else MaskedTensor._make(a, a.new_ones(a.shape, dtype=D.bool_))
                for a in (x, y))
        return MaskedTensor._make(apply(op, cond, x._masked_data, y._masked_data),
                                  apply(op, cond, x._masked_mask, y._masked_mask))
    family = getattr(op.fn, "__module__", "").rsplit(".", 1)[-1]
    if op.view or family == "shape":   # both data and mask go through the same view
        data = apply(op, *[_data(a) for a in args], **kw)
        mask = apply(op, *[a._masked_mask if isinstance(a, MaskedTensor) else a for a in args], **kw)
        return MaskedTensor._make(data, mask)
    if family == "elementwise":
        mask = _masks_match(args)
        if mask is None:
            raise ValueError("Input masks must match. If you need support for this, please open an issue on Github.")
        data = apply(op, *[_data(a) for a in args], **kw)
        if tuple(mask.shape) != tuple(data.shape):
            mask = mask.expand(data.shape)
        return MaskedTensor._make(data, mask)
    raise TypeError(f"{name} is not implemented for MaskedTensor. Compute on mt.get_data() (with mt.get_mask()) "
                    "or on mt.to_tensor(fill_value).")


def _reduce(name, mt, kw):
    from .._functional import any as any_
    data, mask = mt._masked_data, mt._masked_mask
    dim = kw.get("dim")
    if isinstance(dim, int):
        dim = (dim,)
    keepdim = kw.get("keepdim", False)
    if name == "all":
        filled = data.masked_fill(~mask, True)
        result = filled.all() if dim is None else filled.all(dim[0], keepdim=keepdim)
    else:
        fn = getattr(_ops, name)
        if dim is None:
            result = fn(data, mask=mask)
        elif name in ("var", "std"):
            result = fn(data, dim, correction=kw.get("correction"), keepdim=keepdim, mask=mask)
        elif name in ("argmax", "argmin"):
            result = fn(data, dim[0], keepdim=keepdim, mask=mask)
        else:
            dtype = kw.get("dtype")
            result = fn(data, dim, keepdim=keepdim, dtype=None if dtype is None else D.from_jax(dtype), mask=mask)
    if dim is None:
        return MaskedTensor._make(result, any_(mask))
    out_mask = mask
    for d in sorted(dim, reverse=True):
        out_mask = any_(out_mask, d, keepdim=keepdim)
    return MaskedTensor._make(result, out_mask)


# ---- printing ---------------------------------------------------------------------------------------------------

def _format(value):
    return "{0:8.4f}".format(value) if isinstance(value, float) else str(value)


def _masked_str(data, mask):
    if data.ndim == 1:
        cells = [_format(v) for v in data.tolist()]
        width = max(8 if not m else len(c) for c, m in zip(cells, mask.tolist()))
        return "[" + ", ".join(c if m else "--".rjust(width) for c, m in zip(cells, mask.tolist())) + "]"
    subs = [_masked_str(d, m) for d, m in zip(data, mask)]
    subs = ["\n".join("  " + line for line in s.split("\n")) for s in subs]
    return "[\n" + ",\n".join(subs) + "\n]"


def _repr(mt):
    data = np.asarray(mt._masked_data.detach().numpy())
    mask = np.asarray(mt._masked_mask.numpy())
    if data.ndim == 0:
        text = _format(data.item()) if mask.item() else "--"
        return f"MaskedTensor({text}, {bool(mask.item())})"
    body = "\n".join("  " + line for line in _masked_str(data, mask).split("\n"))
    return "MaskedTensor(\n" + body + "\n)"
