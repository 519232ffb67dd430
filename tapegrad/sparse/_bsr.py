"""Sparse block matrices: PyTorch's BSR and BSC layouts, the compressed tensors (_csr.py) of a grid of
blocksize blocks, each held block by block: indices are the nonzero blocks' (row, column) on the grid, in
BSR's or BSC's order, values their blocks (nnz, *blocksize), so the values carry the history as COO's do.
to_dense() lays the blocks out; tapegrad's block tensors support conversions, sparse_bsr_tensor / sparse_bsc_tensor,
accessors, values(), to_dense(), to_sparse(), t(), sum() and BSR @ dense (PyTorch's only block product on CPU);
other ops refuse, pointing at to_dense()."""
import numpy as np

from .._dispatch import apply
from .._layout import sparse_bsc, sparse_bsr
from .._ops import sparse as K
from ._coo import SparseTensor, _as_tensor
from ._routes import combined, routes
from ._csr import SparseCscTensor, SparseCsrTensor, _compressed_tensor


class _Blocked:
    """What BSR and BSC add to CSR and CSC: the blocksize, the grid, and dense laying out of the blocks."""

    @property
    def _blocksize(self):
        return tuple(self._sp_values.shape[1:])   # values are (nnz, *blocksize)

    _blocked = True

    def _grid(self):
        (m, n), (r, c) = self._sp_size, self._blocksize
        return m // r, n // c

    def dense_dim(self):
        return 0   # the blocks are not dense dimensions (PyTorch's count)

    def _entries(self):
        """The (row, column) of every entry of the blocks, block by block."""
        (r, c), blocks = self._blocksize, self._sp_indices.numpy()
        rows = (blocks[0][:, None, None] * r + np.arange(r)[None, :, None]).repeat(c, 2).reshape(-1)
        cols = (blocks[1][:, None, None] * c + np.arange(c)[None, None, :]).repeat(r, 1).reshape(-1)
        return rows, cols

    def to_dense(self, dtype=None, *, masked_grad=True):
        dense = apply(K.to_dense, _as_tensor(np.stack(self._entries())), self._sp_values.reshape(-1),
                      size=self._sp_size)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """The COO tensor of every entry of the blocks (explicit zeros too, as PyTorch's), row by row."""
        from .._layout import sparse_coo
        if layout is not None and layout is not sparse_coo:
            return to_sparse_blocked(self, layout, blocksize)
        rows, cols = self._entries()
        order = np.lexsort((cols, rows))
        values = self._sp_values.reshape(-1).index_select(0, _as_tensor(order))
        out = SparseTensor._make(_as_tensor(np.stack([rows[order], cols[order]])), values, self._sp_size, True)
        out._sp_routes = combined((routes(self), 1)) or None   # the same entries: the gradient passes on
        return out

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is not None:
            raise RuntimeError(f"Currently the only compressed sparse format supported for sum.dim_IntList is CSR, "
                               f"but got layout {self._layout_name}. Call .to_sparse() first.")
        return self.to_sparse().sum(dtype=dtype)

    def to_sparse_csr(self, dense_dim=None):
        self._refuse_conversion("csr")

    def to_sparse_csc(self, dense_dim=None):
        self._refuse_conversion("csc")

    def _refuse_conversion(self, kind):
        raise RuntimeError(f"sparse_compressed_to_sparse_{kind}: expected SparseCsr or SparseCsc layout but got "
                           f"{self._layout_name}. Call .to_dense() first.")

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        return to_sparse_blocked(self, sparse_bsr, blocksize)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        return to_sparse_blocked(self, sparse_bsc, blocksize)

    def t(self):
        """The transpose: BSR's is BSC and BSC's BSR, each block transposed."""
        other = SparseBscTensor if self._dim == 0 else SparseBsrTensor
        return other._make(self._sp_indices.flip(0), self._sp_values.transpose(1, 2), self._sp_size[::-1], True)

    def _same_layout(self, coo):
        return to_sparse_blocked(coo, self.layout, self._blocksize)


class SparseBsrTensor(_Blocked, SparseCsrTensor):
    """A sparse BSR matrix (layout tapegrad.sparse_bsr). Build one with `Tensor.to_sparse_bsr(blocksize)`."""

    is_sparse_csr = False
    _layout_name = "SparseBsr"

    @property
    def layout(self):
        return sparse_bsr


class SparseBscTensor(_Blocked, SparseCscTensor):
    """A sparse BSC matrix (layout tapegrad.sparse_bsc). Build one with `Tensor.to_sparse_bsc(blocksize)`."""

    _layout_name = "SparseBsc"

    @property
    def layout(self):
        return sparse_bsc


def to_sparse_blocked(input, layout, blocksize):
    """The BSR or BSC matrix (layout) of a 2-D tensor with the given blocksize: its blocks holding a nonzero."""
    from ._coo import to_sparse
    if layout is not sparse_bsr and layout is not sparse_bsc:
        return to_sparse(input, layout=layout)
    cls, kind = (SparseBsrTensor, "bsr") if layout is sparse_bsr else (SparseBscTensor, "bsc")
    if blocksize is None:
        raise RuntimeError(f"dense_to_sparse: conversion from {'Strided' if input.layout.name == 'strided' else 'a'} "
                           f"to {cls._layout_name} without blocksize argument given is not supported. Pass "
                           "blocksize=(rows, cols).")
    r, c = (blocksize, blocksize) if isinstance(blocksize, int) else (int(blocksize[0]), int(blocksize[1]))
    if isinstance(input, cls) and input._blocksize == (r, c):
        return input
    if input.dim() != 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got -2). to_sparse_{kind}() takes a 2-D tensor.")
    m, n = input.shape
    if m % r or n % c:
        raise RuntimeError(f"dense_to_sparse_{kind}: tensor sparse size ({m},{n}) must be divisible by given "
                           f"blocksize ({r},{c}). Pick a blocksize dividing the shape.")
    dense = input.to_dense() if isinstance(input, SparseTensor) else input
    blocks = dense.reshape(m // r, r, n // c, c).permute(0, 2, 1, 3)
    nonzero = (dense.detach().numpy().reshape(m // r, r, n // c, c) != 0).any(axis=(1, 3))
    indices = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(2, -1)
    if cls._dim == 1:   # column by column
        indices = indices[:, np.lexsort(indices)]
    values = apply(K.to_sparse, blocks, _as_tensor(indices), full=False, csr=kind)
    out = cls._make(_as_tensor(indices), values, (m, n), True)
    if dense is input and input.requires_grad:   # a dense gradient (torch.mm's) passes to the source
        out._sp_dense = (input, input._version)
    return out


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_bsr_tensor: block row i holds the blocks values[crow[i]:crow[i + 1]] at block columns
    col[crow[i]:crow[i + 1]]; values are (nnz, *blocksize)."""
    return _compressed_tensor(SparseBsrTensor, crow_indices, col_indices, values, size, dtype, device, requires_grad)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_bsc_tensor: block column j holds the blocks values[ccol[j]:ccol[j + 1]] at block rows
    row[ccol[j]:ccol[j + 1]]; values are (nnz, *blocksize)."""
    return _compressed_tensor(SparseBscTensor, ccol_indices, row_indices, values, size, dtype, device, requires_grad)
