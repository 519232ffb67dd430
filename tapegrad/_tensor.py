"""Tensor: PyTorch's stateful tensor over a shared, mutable Storage.

This module holds the state and the autograd-facing attributes (requires_grad,
grad, grad_fn, is_leaf, retain_grad, detach, backward) and conversions. The
maths methods are attached from the op table by `_methods.py`.
"""
import math
import warnings
import weakref

import jax
import numpy as np

from . import _dtypes as D
from . import _faults
from . import _printing
from . import _tracer_warnings
from ._tracer_warnings import TRACING as _TRACING
from ._grad_mode import _state
from ._size import Size
from ._storage import Storage
from ._view_info import gradless_base_histories
from .autograd._node import AccumulateGrad
from .device import device_of

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information.")


class Tensor:
    """A PyTorch-style tensor. Build one with `tapegrad.tensor(...)` or the creation functions."""

    __slots__ = ("_storage", "_view", "_grad_fn", "_out_idx", "_requires_grad", "_grad", "_retains_grad",
                 "_accumulator", "_inference", "_hooks", "__weakref__", "__dict__")

    # ---- construction -------------------------------------------------------------

    def __init__(self, *args, device=None):
        # Legacy constructor: Tensor(2, 3) (uninitialised float), Tensor([1, 2]) (data), Tensor().
        from ._creation import legacy_tensor_value
        self._init(Storage(legacy_tensor_value(args, device)), None, False)

    def _init(self, storage, view, inference):
        """Set every field of a fresh tensor without autograd history (the one place that does)."""
        self._storage = storage
        self._view = view
        self._grad_fn = None
        self._out_idx = 0
        self._requires_grad = False
        self._grad = None
        self._retains_grad = False
        self._accumulator = None
        self._inference = inference
        self._hooks = None
        return self

    @classmethod
    def _wrap(cls, value, inference=False):
        return object.__new__(Tensor)._init(Storage(value), None, inference)

    def _attach(self, node, index):
        moved = self._retains_grad   # a new history (an in-place op): PyTorch moves retain_grad to its grad_fn
        if moved:
            self._unretain()
            self._retains_grad = False
        self._grad_fn = node
        self._out_idx = index
        self._requires_grad = True
        if moved:
            self.retain_grad()

    def _unretain(self):
        node = self._grad_fn
        retained = node.retained if node is not None else None
        if retained:
            ref = retained.get(self._out_idx)
            if ref is not None and ref() is self:
                del retained[self._out_idx]
                if not retained:
                    node.retained = None

    # ---- value access ---------------------------------------------------------------

    @property
    def _value(self):
        """The concrete jax.Array (computing pending work if needed)."""
        if self._view is None:
            return self._storage.value   # (which awaits a program in flight first)
        if _faults._in_flight[0] is not None:   # the view's value may come from a program not yet awaited
            _faults.confirm()
        from ._lazy import resolve
        return resolve(self._view_value())

    def _peek(self):
        """The value as recorded: a jax.Array or a Pending with shape and dtype."""
        return self._storage._raw if self._view is None else self._view_value()

    def _view_value(self):
        info = self._view
        if info.version == self._storage.version:
            return info.value   # the value read since the storage's last write (_views.read keeps it)
        from ._views import read
        return read(self)

    def _set_value(self, value):
        """Write a new value into this tensor (through its view, if any) and bump the version."""
        from ._views import write
        if value.dtype != self.dtype.np or tuple(value.shape) != tuple(self.shape):
            from ._lazy import resolve
            value = jax.numpy.broadcast_to(resolve(value).astype(self.dtype.np), self.shape)
        if self._view is None:
            self._storage.write(value)
        else:
            write(self, value)

    # ---- metadata -------------------------------------------------------------------

    @property
    def shape(self):
        return Size(self._peek().shape)

    def size(self, dim=None):
        shape = self._peek().shape
        if dim is None:
                return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    def dim(self):
        return len(self._peek().shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._peek().shape)

    def numel(self):
        n = math.prod(self._peek().shape)   # a product of symbols while tapegrad.export traces dynamic dims
        return n if type(n) is int or jax.export.is_symbolic_dim(n) else int(n)

    nelement = numel

    @property
    def dtype(self):
        return D.from_jax(self._peek().dtype)

    @property
    def device(self):
        v = self._peek()
        while not hasattr(v, "devices"):   # a pending value lives where its inputs live
            v = _first_array(v)
        return device_of(v)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    is_sparse = False   # tapegrad.sparse's SparseTensor says True
    is_sparse_csr = False   # and its SparseCsrTensor this
    _sp_compressed = False   # CSR, CSC, BSR, BSC (tapegrad.sparse._csr) say True
    is_nested = False   # tapegrad.nested's jagged nested tensors say True

    def to_sparse_csr(self, dense_dim=None):
        from .sparse._csr import to_sparse_csr
        return to_sparse_csr(self, dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        from .sparse._csr import to_sparse_csc
        return to_sparse_csc(self, dense_dim)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        from .sparse._bsr import to_sparse_blocked
        from ._layout import sparse_bsr
        return to_sparse_blocked(self, sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        from .sparse._bsr import to_sparse_blocked
        from ._layout import sparse_bsc
        return to_sparse_blocked(self, sparse_bsc, blocksize, dense_dim)

    @property
    def layout(self):
        from ._layout import strided
        return strided

    def to_sparse(self, *args, **kwargs):
        from .sparse._coo import to_sparse
        return to_sparse(self, *args, **kwargs)

    def sparse_mask(self, mask):
        from .sparse._sparse_mask import sparse_mask
        return sparse_mask(self, mask)

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def element_size(self):
        return self.dtype.itemsize

    def get_device(self):
        d = self.device
        return -1 if d.type == "cpu" else d.index

    @property
    def _version(self):
        return self._storage.version

    def is_inference(self):
        return self._inference

    # ---- autograd attributes --------------------------------------------------------

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients "
                f"(got {self.dtype}). Convert first, e.g. x.float().requires_grad_().")
        if requires_grad and self._inference and not _state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed. "
                "Make a clone() of it first.")
        if self._view is not None or not requires_grad:
            gradless_base_histories[0] = True
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        if self._view is not None and self._view.creation is not None:
            _check_rebase(self)
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._view is not None and self._view.creation is not None:
            _check_rebase(self)
        return self._grad_fn

    @property
    def output_nr(self):
        info = self._view
        if info is not None and info.output_nr is not None and self._grad_fn is not None:
            return info.output_nr   # the k-th output of unbind or split (one node each here)
        return self._out_idx

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            if value.dtype != self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype.name}' to a tensor "
                                   f"with grad_dtype '{self.dtype.name}'. Convert it first, e.g. "
                                   "x.grad = g.to(x.dtype).")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False. "
                               "Set requires_grad=True on the tensor (or an input it depends on) first.")
        if self._grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        node = self._grad_fn
        if node.retained is None:
            node.retained = {}
        node.retained[self._out_idx] = weakref.ref(self)
        if node.seg is not None and not node.seg.ended:
            node.seg.retained.append(weakref.ref(node))

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; it may return a replacement."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd._hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) after this leaf's .grad has been accumulated."""
        from .autograd._hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def _edge(self):
        """Where gradient for this tensor goes: (grad_fn, output index) or its leaf accumulator."""
        if self._view is not None and self._view.creation is not None:
            _check_rebase(self)
            if self._grad_fn is None:
                from ._views import NOWHERE
                return (NOWHERE, 0)
        if self._grad_fn is not None:
            return (self._grad_fn, self._out_idx)
        acc = self._accumulator() if self._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._accumulator = weakref.ref(acc)
        return (acc, 0)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A tensor sharing this one's data and version counter, cut from the graph (not a view: in-place
        ops on it record on it alone, as in PyTorch)."""
        view = self._view
        if view is not None:
            from ._views import ViewInfo
            view = ViewInfo(None, view.steps, view.positions, view.version, view.value)
        return object.__new__(Tensor)._init(self._storage, view, self._inference)

    def detach_(self):
        """Cut this tensor from the graph in place. A backward that reads it as saved then raises PyTorch's
        error; the retain_grad() of its former grad_fn still fills its .grad, as in PyTorch."""
        if self._view is not None and self._view.base is not None:   # any view, with a history or not
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:
            self._storage.counter.detach(self._grad_fn, self._out_idx)
        self._grad_fn = None
        self._out_idx = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        # `.data = t` rebinds this tensor to t's storage without autograd knowing (as in PyTorch).
        self._storage = value._storage
        self._view = value._view

    # ---- conversions ----------------------------------------------------------------

    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if _TRACING[0]:
            _tracer_warnings.converting("NumPy array")
        return _writable_numpy(self)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy(force=False) if not self._requires_grad else _writable_numpy(self)
        return a.astype(dtype) if dtype is not None else a

    def item(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar. "
                               "Index it first (t[0]) or reduce it (t.sum()).")
        if _TRACING[0]:
            _tracer_warnings.converting("Python number")
        return self._host_scalar()

    def _host_scalar(self):
        # Read through NumPy: a jax reshape here would run (and on first sight compile) a program of its own.
        if self._view is not None:   # (out[0].item(): NumPy picks the element, see _host_read)
            from ._host_read import view_element
            value = view_element(self)
            if value is not None:
                return value
        return np.asarray(self._value).reshape(()).item()

    def tolist(self):
        if _TRACING[0]:
            _tracer_warnings.converting("Python list")
        return np.asarray(self._value).tolist()

    def __float__(self):
        if _TRACING[0]:
            _tracer_warnings.converting("Python float")
        return float(self._scalar("float"))

    def __int__(self):
        if _TRACING[0]:
            _tracer_warnings.converting("Python integer")
        return int(self._scalar("int"))

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._host_scalar())

    def __complex__(self):
        if _TRACING[0]:
            _tracer_warnings.converting("Python complex")
        return complex(self._scalar("complex"))

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'}"
                               " is ambiguous. Use .any() or .all() to reduce it first.")
        if _TRACING[0]:
            _tracer_warnings.converting("Python boolean")
        return bool(self._host_scalar())

    def _scalar(self, kind):
        if self.numel() != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars")
        return self._host_scalar()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        if _TRACING[0]:
            _tracer_warnings.warn(_tracer_warnings.LEN)
        return self._peek().shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        if _TRACING[0]:
            _tracer_warnings.warn(_tracer_warnings.ITER)
        return (self[i] for i in range(self._peek().shape[0]))

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (np.asarray(self._value), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                               "deepcopy protocol at the moment. Use detach().clone() first.")
        t = Tensor._wrap(self._value, self._inference)
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        new = t if type(self) is Tensor else type(self)._from_tensor(t)
        memo[id(self)] = new
        return new

    # ---- printing -------------------------------------------------------------------

    def __repr__(self, *, tensor_contents=None):
        value = np.asarray(self._value)
        dev = self.device
        return _printing.tensor_repr(
            value, dtype_name=self.dtype.name, default_float_dtype_name=D.get_default_dtype().name,
            requires_grad=self._requires_grad,
            grad_fn_name=type(self._grad_fn).__name__ if self._grad_fn is not None else None,
            device=None if dev.type == "cpu" else str(dev),
            is_parameter=getattr(self, "_is_parameter", False))

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)


def _check_rebase(t):
    from ._views import check_rebase
    check_rebase(t)


def _first_array(p):
    from ._lazy import Pending, computed
    node = p.node
    if p.value is not None:
        return computed(p)
    for a in node.args or ():
        if hasattr(a, "devices") or type(a) is Pending:
            return a
    from ._lazy import resolve
    return resolve(p)


def _writable_numpy(t):
    # np.asarray of a jax.Array is read-only; PyTorch's numpy() shares memory and is writable.
    # We return a copy: writes to it do not reach the tensor (documented difference).
    return np.array(t._value)


def _rebuild(array, requires_grad):
    from ._creation import tensor
    return tensor(array, requires_grad=requires_grad)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
