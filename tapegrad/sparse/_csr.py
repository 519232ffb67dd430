"""SparseCsrTensor: PyTorch's sparse CSR matrix, held as the COO tensor of its entries (row by row, one per
position), so to_dense(), products with dense tensors and their gradients are COO's code; crow_indices() is
counted from the rows. tapegrad's CSR tensors are 2-D; ops beyond the basics refuse, pointing at to_sparse()."""
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._layout import sparse_coo, sparse_csr
from .._ops import sparse as K
from ._coo import SparseTensor, _as_tensor, to_sparse

_SUPPORTED = ("tapegrad's sparse CSR tensors support crow_indices(), col_indices(), values(), to_dense(), "
              "to_sparse(), sum() and products with dense tensors (mm, matmul, @). Call .to_sparse() (COO) or "
              ".to_dense() first for other ops.")


class SparseCsrTensor(SparseTensor):
    """A sparse CSR matrix (layout tapegrad.sparse_csr). Build one with `tapegrad.sparse_csr_tensor` or
    `Tensor.to_sparse_csr()`."""

    is_sparse = False
    is_sparse_csr = True
    _layout_name = "SparseCsr"

    @property
    def layout(self):
        return sparse_csr

    def crow_indices(self):
        rows = self._sp_indices.numpy()[0]
        counts = np.bincount(rows, minlength=self._sp_size[0])
        return _as_tensor(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    def col_indices(self):
        return _as_tensor(self._sp_indices.numpy()[1].copy())

    def values(self):
        return apply(K.sparse_values, self._sp_values)

    def _repr_parts(self):
        return ("crow_indices", self.crow_indices()), ("col_indices", self.col_indices()), \
            ("values", self._sp_values)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is sparse_csr:
            return self
        if layout is not None and layout is not sparse_coo:
            raise NotImplementedError(f"to_sparse(layout={layout}): tapegrad supports the sparse_coo and sparse_csr "
                                      "layouts only. Convert to one of them.")
        return SparseTensor._make(self._sp_indices, self._sp_values, self._sp_size, True)

    def to_sparse_csr(self, dense_dim=None):
        return self

    def _refuse(self, name):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got SparseCsr. Call .to_sparse() "
                           "first for a COO tensor.")

    def indices(self):
        self._refuse("indices")

    def coalesce(self):
        self._refuse("coalesce")

    def is_coalesced(self):
        self._refuse("is_coalesced")

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is not None:
            dispatch_op("sum", (self,))
        return super().sum(dim, keepdim, dtype)

    def t(self):
        dispatch_op("t", (self,))

    def _values(self):
        dispatch_op("_values", (self,))

    def _indices(self):
        dispatch_op("_indices", (self,))


def dispatch_op(name, args):
    """An op-table entry met with a CSR argument: the products with a dense tensor run as COO's; others refuse."""
    if name in ("mm", "matmul", "mv") and len(args) == 2:
        from ._matmul import sparse_mm
        return sparse_mm(args[0], args[1], via="mv" if name == "mv" else "mm")
    raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'SparseCsrCPU' backend. "
                              + _SUPPORTED)


def to_sparse_csr(input):
    """The CSR matrix of a dense or sparse COO 2-D tensor (a COO one is coalesced first, as PyTorch does)."""
    if isinstance(input, SparseCsrTensor):
        return input
    if input.dim() != 2:
        if input.dim() < 2:
            raise IndexError(f"select(): index 1 out of range for tensor of size [{input.numel()}, 1] at dimension "
                             "1. to_sparse_csr() takes a 2-D tensor.")
        raise NotImplementedError("to_sparse_csr(): tapegrad's CSR tensors are 2-D; batched CSR is not supported. "
                                  "Use a list of 2-D ones or the COO layout (to_sparse()).")
    if input.is_sparse:
        if input.dense_dim():
            raise RuntimeError("to_sparse_csr(): expected a sparse COO tensor with 2 sparse dimensions. Call "
                               ".to_dense() first.")
        coo = input.coalesce()
    else:
        coo = to_sparse(input, csr=True)
    out = SparseCsrTensor._make(coo._sp_indices, coo._sp_values, coo._sp_size, True)
    out._sp_dense = coo._sp_dense
    return out


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_csr_tensor: row i holds values[crow[i]:crow[i + 1]] at columns col[crow[i]:crow[i + 1]]."""
    from .._dtypes import int64
    crow, col = _as_tensor(crow_indices), _as_tensor(col_indices)
    values = _as_tensor(values, dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise NotImplementedError("sparse_csr_tensor: tapegrad's CSR tensors are 2-D with scalar values (1-D "
                                  "crow_indices, col_indices and values); batched or hybrid CSR is not supported.")
    c, k = crow.numpy().astype(np.int64), col.numpy().astype(np.int64)
    if size is None:
        size = (len(c) - 1, int(k.max()) + 1 if len(k) else 0)
    size = tuple(int(n) for n in size)
    _check(c, k, values.shape[0], size)
    rows = np.repeat(np.arange(size[0], dtype=np.int64), np.diff(c))
    indices = _as_tensor(np.stack([rows, k])).to(int64)
    if values.requires_grad and is_grad_enabled() and not requires_grad:
        values = apply(K.sparse_coo_tensor, values, csr=True)
    else:
        values = values.detach().requires_grad_(requires_grad)
    return SparseCsrTensor._make(indices, values, size, True)


def _check(crow, col, nnz, size):
    """PyTorch's CSR invariants (it checks them with check_invariants=True; tapegrad always does)."""
    def fail(condition):
        raise RuntimeError(f"`{condition}` is not satisfied.")
    if len(size) != 2:
        raise NotImplementedError("sparse_csr_tensor: tapegrad's CSR tensors are 2-D; batched or hybrid CSR is not "
                                  "supported.")
    if len(crow) != size[0] + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 (={size[0] + 1}), but "
                           f"got {len(crow)}")
    if len(col) != nnz:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], but "
                           f"got {len(col)}")
    if crow[0] != 0:
        fail("crow_indices[..., 0] == 0")
    if crow[-1] != nnz:
        fail("crow_indices[..., -1] == nnz")
    if np.any(np.diff(crow) < 0):
        fail("0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols")
    if len(col) and (col.min() < 0 or col.max() >= size[1]):
        fail("0 <= col_indices < ncols")
    rows = np.repeat(np.arange(size[0]), np.diff(crow))
    if len(col) > 1 and np.any((np.diff(col) <= 0) & (np.diff(rows) == 0)):
        fail("col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, ..., nrows are sorted "
             "and distinct along the last dimension values")
