"""Sparse compressed matrices: PyTorch's CSR and CSC layouts, each held as the COO tensor of its entries in its
order (row by row for CSR, column by column for CSC; one per position), so to_dense(), products with dense tensors
and their gradients are COO's code; the compressed indices are counted from the rows (columns). tapegrad's
compressed tensors are 2-D; ops beyond the basics refuse, pointing at to_sparse()."""
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._layout import sparse_coo, sparse_csc, sparse_csr
from .._ops import sparse as K
from ._coo import SparseTensor, _as_tensor, to_sparse

_SUPPORTED = ("tapegrad's sparse compressed tensors (CSR, CSC, BSR, BSC) support their index accessors, values(), "
              "to_dense(), to_sparse(), t(), sum(), the unary ops that keep zeros, scalar products and products with "
              "dense tensors (mm, matmul, @). Call .to_sparse() (COO) or .to_dense() first for other ops.")


class SparseCompressedTensor(SparseTensor):
    """What CSR and CSC share: `_dim` is the compressed dimension (0: rows, 1: columns)."""

    is_sparse = False
    _sp_compressed = True
    _blocked = False   # BSR and BSC (_bsr.py) say True

    def _grid(self):
        return self._sp_size   # (the block grid of BSR / BSC, _bsr.py)

    def _compressed(self):
        counts = np.bincount(self._sp_indices.numpy()[self._dim], minlength=self._grid()[self._dim])
        return _as_tensor(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    def _plain(self):
        return _as_tensor(self._sp_indices.numpy()[1 - self._dim].copy())

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
        return apply(K.sparse_values, self._sp_values)

    def _repr_parts(self):
        return ((self._accessors[0], self._compressed()), (self._accessors[1], self._plain()),
                ("values", self._sp_values))

    def _same_layout(self, coo):
        return to_compressed(coo, type(self))

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            return to_sparse(self, layout=layout, blocksize=blocksize)
        return SparseTensor._make(self._sp_indices, self._sp_values, self._sp_size, self._dim == 0)

    def to_sparse_csr(self, dense_dim=None):
        return to_compressed(self, SparseCsrTensor)

    def to_sparse_csc(self, dense_dim=None):
        return to_compressed(self, SparseCscTensor)

    def t(self):
        """The transpose: the same entries in the same order, so CSR's is CSC and CSC's is CSR."""
        other = SparseCscTensor if self._dim == 0 else SparseCsrTensor
        return other._make(self._sp_indices.flip(0), self._sp_values.t(), self._sp_size[::-1], True)

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
        if dim is not None:
            dispatch_op("sum", (self,), self._layout_name)
        return super().sum(dim, keepdim, dtype)

    def _values(self):
        dispatch_op("_values", (self,), self._layout_name)

    def _indices(self):
        dispatch_op("_indices", (self,), self._layout_name)


class SparseCsrTensor(SparseCompressedTensor):
    """A sparse CSR matrix (layout tapegrad.sparse_csr). Build one with `tapegrad.sparse_csr_tensor` or
    `Tensor.to_sparse_csr()`."""

    is_sparse_csr = True
    _layout_name = "SparseCsr"
    _dim = 0
    _accessors = ("crow_indices", "col_indices")

    @property
    def layout(self):
        return sparse_csr


class SparseCscTensor(SparseCompressedTensor):
    """A sparse CSC matrix (layout tapegrad.sparse_csc). Build one with `tapegrad.sparse_csc_tensor` or
    `Tensor.to_sparse_csc()`."""

    _layout_name = "SparseCsc"
    _dim = 1
    _accessors = ("ccol_indices", "row_indices")

    @property
    def layout(self):
        return sparse_csc


def dispatch_op(name, args, layout_name="SparseCsr"):
    """An op-table entry met with a CSR or CSC argument: the products with a dense tensor run as COO's; others
    refuse."""
    if name in ("mm", "matmul", "mv") and len(args) == 2:
        from ._matmul import sparse_mm
        return sparse_mm(args[0], args[1], via="mv" if name == "mv" else "mm")
    raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{layout_name}CPU' backend. "
                              + _SUPPORTED)


def to_compressed(input, cls):
    """The CSR or CSC matrix (cls) of a dense, sparse COO or compressed 2-D tensor (a COO one is coalesced first,
    as PyTorch does); entries reordered for it are recorded as PyTorch's ToSparseCsr/ToSparseCscBackward0."""
    if isinstance(input, cls):
        return input
    name = "to_sparse_" + cls._layout_name[6:].lower()
    if input.dim() != 2:
        if input.dim() < 2:   # (PyTorch's CSR and CSC conversions fail at different steps)
            raise IndexError((f"select(): index 1 out of range for tensor of size [{input.numel()}, 1] at dimension 1"
                              if cls._dim == 0 else "Dimension out of range (expected to be in range of [-1, 0], but "
                              "got 1)") + f". {name}() takes a 2-D tensor.")
        raise NotImplementedError(f"{name}(): tapegrad's compressed sparse tensors are 2-D; batched ones are not "
                                  "supported. Use a list of 2-D ones or the COO layout (to_sparse()).")
    kind = True if cls is SparseCsrTensor else "csc"   # the to_sparse op's overload
    if isinstance(input, SparseCompressedTensor):
        coo = input
    elif input.is_sparse:
        if input.dense_dim():
            raise RuntimeError(f"{name}(): expected a sparse COO tensor with 2 sparse dimensions. Call .to_dense() "
                               "first.")
        coo = input.coalesce()
    else:
        coo = to_sparse(input, csr=kind)
    indices, values = coo._sp_indices, coo._sp_values
    order = np.lexsort(indices.numpy()[[1 - cls._dim, cls._dim]])
    if np.any(order != np.arange(len(order))):
        indices = _as_tensor(indices.numpy()[:, order])
        values = apply(K.to_sparse, values, _as_tensor(order[None]), full=False, csr=kind)
    out = cls._make(indices, values, coo._sp_size, True)
    out._sp_dense = coo._sp_dense
    return out


def to_sparse_csr(input):
    return to_compressed(input, SparseCsrTensor)


def to_sparse_csc(input):
    return to_compressed(input, SparseCscTensor)


def _compressed_tensor(cls, compressed, plain, values, size, dtype, device, requires_grad):
    """PyTorch's sparse_csr_tensor / sparse_csc_tensor (and the block ones, _bsr.py): line i (a row of CSR, a
    column of CSC, a row or column of blocks) holds values[compressed[i]:compressed[i + 1]] at positions
    plain[compressed[i]:compressed[i + 1]] along it."""
    from .._dtypes import int64
    compressed, plain = _as_tensor(compressed), _as_tensor(plain)
    values = _as_tensor(values, dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    name = "sparse_" + cls._layout_name[6:].lower() + "_tensor"
    if compressed.dim() != 1 or plain.dim() != 1 or values.dim() != (3 if cls._blocked else 1):
        raise NotImplementedError(f"{name}: tapegrad's compressed sparse tensors are 2-D with scalar (or block) values "
                                  "and 1-D index tensors; batched or hybrid ones are not supported.")
    c, k = compressed.numpy().astype(np.int64), plain.numpy().astype(np.int64)
    d, blocksize = cls._dim, tuple(values.shape[1:]) if cls._blocked else (1, 1)
    if size is None:   # the compressed dimension from its index count, the other from the largest index
        grid = [0, 0]
        grid[d], grid[1 - d] = len(c) - 1, int(k.max()) + 1 if len(k) else 0
        size = (grid[0] * blocksize[0], grid[1] * blocksize[1])
    size = tuple(int(n) for n in size)
    for i in range(min(len(size), 2)):
        if size[i] % blocksize[i]:
            raise RuntimeError(f"tensor shape[{i}] (={size[i]}) must be divisible with blocksize[{i}] "
                               f"(={blocksize[i]}) as defined by values shape")
    grid = tuple(n // b for n, b in zip(size, blocksize))
    _check(cls, c, k, values.shape[0], grid)
    lines = np.repeat(np.arange(grid[d], dtype=np.int64), np.diff(c))
    indices = _as_tensor(np.stack([lines, k] if d == 0 else [k, lines])).to(int64)
    if values.requires_grad and is_grad_enabled() and not requires_grad:
        values = apply(K.sparse_coo_tensor, values, csr=True)
    else:
        values = values.detach().requires_grad_(requires_grad)
    return cls._make(indices, values, size, True)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_csr_tensor: row i holds values[crow[i]:crow[i + 1]] at columns col[crow[i]:crow[i + 1]]."""
    return _compressed_tensor(SparseCsrTensor, crow_indices, col_indices, values, size, dtype, device, requires_grad)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_csc_tensor: column j holds values[ccol[j]:ccol[j + 1]] at rows row[ccol[j]:ccol[j + 1]]."""
    return _compressed_tensor(SparseCscTensor, ccol_indices, row_indices, values, size, dtype, device, requires_grad)


def _check(cls, compressed, plain, nnz, size):
    """PyTorch's CSR / CSC invariants (it checks them with check_invariants=True; tapegrad always does)."""
    def fail(condition):
        raise RuntimeError(f"`{condition}` is not satisfied.")
    if len(size) != 2:
        raise NotImplementedError("tapegrad's compressed sparse tensors are 2-D; batched or hybrid ones are not "
                                  "supported.")
    c, p = cls._accessors
    d = cls._dim
    lines, other = ("row", "ncols") if d == 0 else ("column", "nrows")
    lines += " blocks" if cls._blocked else "s"
    if len(compressed) != size[d] + 1:
        raise RuntimeError(f"{c}.shape[-1] must be equal to the number of {lines} + 1 (={size[d] + 1}), but "
                           f"got {len(compressed)}")
    if len(plain) != nnz:
        raise RuntimeError(f"{p}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], but "
                           f"got {len(plain)}")
    if compressed[0] != 0:
        fail(f"{c}[..., 0] == 0")
    if compressed[-1] != nnz:
        fail(f"{c}[..., -1] == nnz")
    if np.any(np.diff(compressed) < 0):
        fail(f"0 <= {c}[..., 1:] - {c}[..., :-1] <= {other}")
    if len(plain) and (plain.min() < 0 or plain.max() >= size[1 - d]):
        fail(f"0 <= {p} < {other}")
    line = np.repeat(np.arange(size[d]), np.diff(compressed))
    if len(plain) > 1 and np.any((np.diff(plain) <= 0) & (np.diff(line) == 0)):
        fail(f"{p}[..., {c}[..., i - 1]:{c}[..., i]] for all i = 1, ..., {'nrows' if d == 0 else 'ncols'}"
             " are sorted and distinct along the last dimension values")
