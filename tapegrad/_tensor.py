"""Tensor: PyTorch's stateful tensor over a shared, mutable Storage.

This module holds the state, value access, metadata and the per-op paths (`_wrap`,
`_init`, `_peek`, `_edge`). Colder families of methods are attached to the class by
their own modules: autograd attributes by `_tensor_autograd.py`, conversions and
printing by `_tensor_conversions.py`, the maths by `_methods.py`, layout by
`_tensor_layout.py`, dtype and device moves by `_tensor_dtype_device.py`.
"""
import math
import weakref

import jax

from . import _dtypes as D
from . import _faults
from ._arg_types import as_int
from ._size import Size, new_size
from ._storage import Storage
from .autograd._node import AccumulateGrad
from .device import device_of

_dtype_of = D._BY_NP.get


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
        if value.dtype != self.dtype.np or tuple(value.shape) != tuple(self.shape):
            from ._lazy import resolve
            value = jax.numpy.broadcast_to(resolve(value).astype(self.dtype.np), self.shape)
        if self._view is None:
            self._storage.write(value)
        else:
            from ._views import write   # (a per-call import costs a microsecond: only on the colder path)
            write(self, value)

    # ---- metadata -------------------------------------------------------------------

    # (these read the value as _peek does, inline: every check of every op reads them, often several times)
    @property
    def shape(self):
        return new_size(Size, (self._storage._raw if self._view is None else self._view_value()).shape)

    def size(self, dim=None):
        return _size((self._storage._raw if self._view is None else self._view_value()).shape, dim)

    def dim(self):
        return len((self._storage._raw if self._view is None else self._view_value()).shape)

    ndimension = dim

    @property
    def ndim(self):
        return len((self._storage._raw if self._view is None else self._view_value()).shape)

    def numel(self):
        n = math.prod(self._peek().shape)   # a product of symbols while tapegrad.export traces dynamic dims
        return n if type(n) is int or jax.export.is_symbolic_dim(n) else int(n)

    nelement = numel

    @property
    def dtype(self):
        np_dtype = (self._storage._raw if self._view is None else self._view_value()).dtype
        found = _dtype_of(np_dtype)
        return found if found is not None else D.from_jax(np_dtype)

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
        from .sparse._coo_build import to_sparse
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

    # ---- autograd: where gradient goes (the attributes: _tensor_autograd.py) ----

    def _edge(self):
        """Where gradient for this tensor goes: (grad_fn, output index) or its leaf accumulator."""
        info = self._view
        if info is not None:
            info.unread = False   # (PyTorch reads a view's grad_fn to collect its edge)
            if info.creation is not None:
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


# (pickles name it here, tapegrad._tensor._rebuild: it stays in this module)
def _rebuild(array, requires_grad):
    from ._creation import tensor
    return tensor(array, requires_grad=requires_grad)


def _size(shape, dim):
    """Tensor.size(dim) of a value of `shape`."""
    if dim is None:
        return new_size(Size, shape)
    if type(dim) is not int:
        dim = as_int(dim, "dim", "size", 1)
    return shape[_wrap_dim(dim, len(shape))]


def _wrap_dim(dim, ndim):
    if type(dim) is not int:
        dim = as_int(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


class PeekedMetadata:
    """Shape and dtype read through `_peek()`, for the Tensor subclasses whose value is not their storage's
    (sparse, jagged, uninitialized): Tensor's own read the storage directly (see Tensor.shape)."""

    @property
    def shape(self):
        return Size(self._peek().shape)

    def size(self, dim=None):
        return _size(self._peek().shape, dim)

    def dim(self):
        return len(self._peek().shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._peek().shape)

    @property
    def dtype(self):
        return D.from_jax(self._peek().dtype)
