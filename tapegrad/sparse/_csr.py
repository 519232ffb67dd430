"""Sparse compressed tensors: PyTorch's CSR and CSC layouts (BSR and BSC in _bsr.py), each held as the COO tensor
of its entries in its order (batch by batch, then row by row for CSR, column by column for CSC; one per position),
so to_dense(), products with dense tensors and their gradients are COO's code; the compressed indices are counted
from the rows (columns). A batched tensor (size (*B, m, n, *D)) keeps its batch positions as leading index rows;
a hybrid one its dense dimensions in the values, (nnz, *D). Constructors and conversions from dense tensors are in
_compressed_build.py, add and sum in _compressed_math.py."""
import numpy as np

from .._dispatch import apply
from .._layout import sparse_coo, sparse_csc, sparse_csr
from .._ops import sparse as K
from . import _pattern as P
from ._coo import SparseTensor, _as_tensor
from ._coo_build import to_sparse

_SUPPORTED = ("tapegrad's sparse compressed tensors (CSR, CSC, BSR, BSC) support their index accessors, values(), "
              "to_dense(), to_sparse(), t(), transpose, select, sum(), add, mul, addmm, the unary ops that keep zeros "
              "and products with dense tensors (mm, matmul, @). Call .to_sparse() (COO) or .to_dense() first for other "
              "ops.")


class SparseCompressedTensor(SparseTensor):
    """What CSR and CSC share: `_dim` is the compressed dimension (0: rows, 1: columns)."""

    is_sparse = False
    _sp_compressed = True
    _blocked = False   # BSR and BSC (_bsr.py) say True

    # ---- shape: (*batch, rows, columns, *dense), held as (nbatch + 2, nnz * batches) indices ------------------

    @property
    def _nbatch(self):
        return self._sp_indices.shape[0] - 2

    def _batch_shape(self):
        return self._sp_size[:self._nbatch]

    def _grid(self):
        """The (rows, columns) the indices count: the matrix's, or its block grid's (BSR / BSC, _bsr.py)."""
        return self._sp_size[self._nbatch:self._nbatch + 2]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return self._sp_values.dim() - 1 - (2 if self._blocked else 0)

    def _nnz(self):
        batches = int(np.prod(self._batch_shape()))
        return self._sp_indices.shape[1] // batches if batches else 0

    def _batch_ids(self):
        """Each entry's batch, numbered row-major."""
        return P.linear(self._sp_indices.numpy()[:self._nbatch], self._batch_shape())

    def _compressed(self):
        batches, lines = int(np.prod(self._batch_shape())), self._grid()[self._dim]
        line = self._sp_indices.numpy()[self._nbatch + self._dim]
        counts = np.bincount(self._batch_ids() * lines + line, minlength=batches * lines).reshape(batches, lines)
        out = np.concatenate([np.zeros((batches, 1), np.int64), np.cumsum(counts, 1)], 1).astype(np.int64)
        return _as_tensor(out.reshape(*self._batch_shape(), lines + 1))

    def _plain(self):
        plain = self._sp_indices.numpy()[self._nbatch + 1 - self._dim]
        return _as_tensor(plain.reshape(*self._batch_shape(), self._nnz()).copy())

    def _values_shape(self):
        """PyTorch's values() shape, (*batch, nnz, *block, *dense), or None where it is the held one."""
        if not self._nbatch:
            return None
        return (*self._batch_shape(), self._nnz(), *self._sp_values.shape[1:])

    def _own(self, name, method):
        """An index accessor: this layout's, or PyTorch's refusal of the other compressed layout's."""
        if name not in self._accessors:
            kind = "row" if name in SparseCsrTensor._accessors else "column"
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {self._layout_name}. "
                               f"Use {'() / '.join(self._accessors)}() for this layout.")
        return method()

    def crow_indices(self):
        return self._own("crow_indices", self._compressed)

    def col_indices(self):
        return self._own("col_indices", self._plain)

    def ccol_indices(self):
        return self._own("ccol_indices", self._compressed)

    def row_indices(self):
        return self._own("row_indices", self._plain)

    def values(self):
        return apply(K.sparse_values, self._sp_values, shape=self._values_shape())

    def _repr_parts(self):
        shape = self._values_shape()
        values = self._sp_values if shape is None else self._sp_values.detach().reshape(shape)
        return ((self._accessors[0], self._compressed()), (self._accessors[1], self._plain()), ("values", values))

    def _same_layout(self, coo):
        """A COO tensor of this one's representation (a gradient: batch rows first) in this layout."""
        coo = coo.coalesce()
        order = _as_tensor(layout_order(coo._sp_indices.numpy(), self._nbatch, self._dim))
        return type(self)._make(coo._sp_indices.index_select(1, order), coo._sp_values.index_select(0, order),
                                coo._sp_size, True)

    # ---- conversions --------------------------------------------------------------------------------------------

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            return to_sparse(self, layout=layout, blocksize=blocksize, dense_dim=dense_dim)
        return SparseTensor._make(self._sp_indices, self._sp_values, self._sp_size, self._dim == 0)

    def to_sparse_csr(self, dense_dim=None):
        return to_compressed(self, SparseCsrTensor)

    def to_sparse_csc(self, dense_dim=None):
        return to_compressed(self, SparseCscTensor)

    def t(self):
        """The transpose: the same entries in the same order, so CSR's is CSC and CSC's is CSR."""
        self._check_2d()
        other = SparseCscTensor if self._dim == 0 else SparseCsrTensor
        return other._make(self._sp_indices.flip(0), self._sp_values.t(), self._sp_size[::-1], True)

    def _check_2d(self):
        if self.dim() > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D. Use "
                               "transpose(-2, -1) on .to_dense() for a batched or hybrid tensor.")

    def _added(self, other, alpha, node):
        """self + alpha * other for add_ / sub_ (_coo.py): PyTorch's in-place checks, then compressed_add."""
        from ._compressed_math import _type, compressed_add
        if node == "add" and not isinstance(other, SparseTensor):
            raise RuntimeError(f"Sparse {self._kind.upper()} tensors do not have is_contiguous: PyTorch cannot add a "
                               "dense tensor into a compressed one. Add into the dense tensor instead.")
        if node == "add" and other._sp_compressed and other.dtype is not self.dtype:
            raise RuntimeError(f"expected scalar type {_type(self.dtype)} but found {_type(other.dtype)}. Convert "
                               "the other operand (.to(dtype)) first.")
        return compressed_add(self, other, alpha, node)

    # ---- refusals and reductions --------------------------------------------------------------------------------

    def _refuse(self, name):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got {self._layout_name}. Call "
                           ".to_sparse() first for a COO tensor.")

    def indices(self):
        self._refuse("indices")

    def coalesce(self):
        self._refuse("coalesce")

    def is_coalesced(self):
        self._refuse("is_coalesced")

    def sum(self, dim=None, keepdim=False, dtype=None):
        from ._compressed_math import compressed_sum
        return compressed_sum(self, dim, keepdim, dtype)

    def _values(self):
        dispatch_op("_values", (self,))

    def _indices(self):
        dispatch_op("_indices", (self,))


class SparseCsrTensor(SparseCompressedTensor):
    """A sparse CSR matrix (layout tapegrad.sparse_csr). Build one with `tapegrad.sparse_csr_tensor` or
    `Tensor.to_sparse_csr()`."""

    is_sparse_csr = True
    _layout_name = "SparseCsr"
    _dim = 0
    _kind = "csr"
    _accessors = ("crow_indices", "col_indices")

    @property
    def layout(self):
        return sparse_csr


class SparseCscTensor(SparseCompressedTensor):
    """A sparse CSC matrix (layout tapegrad.sparse_csc). Build one with `tapegrad.sparse_csc_tensor` or
    `Tensor.to_sparse_csc()`."""

    _layout_name = "SparseCsc"
    _dim = 1
    _kind = "csc"
    _accessors = ("ccol_indices", "row_indices")

    @property
    def layout(self):
        return sparse_csc


def dispatch_op(name, args, layout_name="SparseCsr"):
    """An op-table entry met with a compressed argument that _compressed_ops.compressed_op does not run: add and
    the products with a dense tensor run; others refuse."""
    if name in ("mm", "matmul", "mv") and len(args) == 2:
        from ._matmul import sparse_mm
        return sparse_mm(args[0], args[1], via="mv" if name == "mv" else "mm")
    if name in ("add", "sub", "add_scaled", "sub_scaled"):
        from ._compressed_math import compressed_add
        alpha = args[2] if len(args) > 2 else 1
        return compressed_add(args[0], args[1], -alpha if name.startswith("sub") else alpha, name[:3])
    if name == "expand":   # (matmul with an N-D operand)
        raise RuntimeError(f"expand is unsupported for {layout_name} tensors. Call .to_dense() first.")
    raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{layout_name}CPU' backend. "
                              + _SUPPORTED)


def layout_order(indices, nbatch, dim):
    """The order putting entries (indices (nbatch + 2, n)) batch by batch, then along compressed dimension `dim`."""
    keys = [indices[nbatch + 1 - dim], indices[nbatch + dim]] + [indices[i] for i in reversed(range(nbatch))]
    return np.lexsort(keys)


def to_compressed(input, cls, dense_dim=None):
    """The CSR or CSC tensor (cls) of a dense, sparse COO or compressed tensor (a COO one is coalesced first, as
    PyTorch does); entries reordered for it are recorded as PyTorch's ToSparseCsr/ToSparseCscBackward0."""
    if type(input) is cls:
        return input
    if not isinstance(input, SparseTensor):
        from ._compressed_build import dense_to_compressed
        return dense_to_compressed(input, cls, (1, 1), dense_dim)
    if getattr(input, "_blocked", False):
        input._refuse_conversion(cls._kind)
    if isinstance(input, SparseCompressedTensor):
        coo, nbatch = input, input._nbatch
    else:
        if input.sparse_dim() != 2:
            raise RuntimeError(f"coo_to_sparse_{cls._kind}: conversion from Sparse to {cls._layout_name} for input "
                               "tensors with sparse_dim()!=2 is not supported. Convert the dense tensor "
                               "(.to_dense()) instead: its leading dimensions become batch dimensions.")
        coo, nbatch = input.coalesce(), 0
    indices, values = coo._sp_indices, coo._sp_values
    order = layout_order(indices.numpy(), nbatch, cls._dim)
    if np.any(order != np.arange(len(order))):
        indices = _as_tensor(indices.numpy()[:, order])
        values = apply(K.to_sparse, values, _as_tensor(order[None]), full=False,
                       csr=True if cls._dim == 0 else "csc")
    out = cls._make(indices, values, coo._sp_size, True)
    out._sp_dense = coo._sp_dense
    return out


def to_sparse_csr(input, dense_dim=None):
    return to_compressed(input, SparseCsrTensor, dense_dim)


def to_sparse_csc(input, dense_dim=None):
    return to_compressed(input, SparseCscTensor, dense_dim)
