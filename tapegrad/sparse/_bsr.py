"""Sparse block tensors: PyTorch's BSR and BSC layouts, the compressed tensors (_csr.py) of a grid of blocksize
blocks, each held block by block: indices are the nonzero blocks' (*batch, row, column) on the grid, in BSR's or
BSC's order, values their blocks (nnz, *blocksize, *dense), so the values carry the history as COO's do.
to_dense() lays the blocks out; tapegrad's block tensors support conversions, sparse_bsr_tensor / sparse_bsc_tensor,
accessors, values(), to_dense(), to_sparse(), t(), sum(), add of (1, 1) blocks, BSR @ dense and dense @ BSC (PyTorch's
block products on CPU), and the ops of _compressed_ops.py PyTorch runs on blocks; other ops refuse, pointing at
to_dense()."""
import numpy as np

from .._dispatch import apply
from .._layout import sparse_bsc, sparse_bsr
from .._ops import sparse as K
from ._coo import SparseTensor, _as_tensor
from ._routes import combined, routes
from ._csr import SparseCompressedTensor, SparseCscTensor, SparseCsrTensor
from ._compressed_build import dense_to_compressed


class _Blocked:
    """What BSR and BSC add to CSR and CSC: the blocksize, the grid, and dense laying out of the blocks."""

    @property
    def _blocksize(self):
        return tuple(self._sp_values.shape[1:3])   # values are (nnz, *blocksize, *dense)

    _blocked = True

    def _grid(self):
        nb = self._nbatch
        (m, n), (r, c) = self._sp_size[nb:nb + 2], self._blocksize
        return m // r, n // c

    def _entries(self):
        """The (*batch, row, column) of every entry of the blocks, block by block, each block row by row."""
        (r, c), blocks, nb = self._blocksize, self._sp_indices.numpy(), self._nbatch
        shape = (blocks.shape[1], r, c)
        rows = blocks[nb][:, None, None] * r + np.arange(r)[None, :, None]
        cols = blocks[nb + 1][:, None, None] * c + np.arange(c)[None, None, :]
        parts = [blocks[i][:, None, None] for i in range(nb)] + [rows, cols]
        return np.stack([np.broadcast_to(p, shape) for p in parts]).reshape(nb + 2, -1)

    def _entry_values(self):
        return self._sp_values.reshape(-1, *self._sp_values.shape[3:])

    def to_dense(self, dtype=None, *, masked_grad=True):
        dense = apply(K.to_dense, _as_tensor(self._entries()), self._entry_values(), size=self._sp_size)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """The COO tensor of every entry of the blocks (explicit zeros too, as PyTorch's), block by block."""
        from .._layout import sparse_coo
        if layout is not None and layout is not sparse_coo:
            from ._coo import _to_layout
            return _to_layout(self, layout, blocksize, dense_dim)
        coalesced = self._blocksize == (1, 1) and self._dim == 0
        out = SparseTensor._make(_as_tensor(self._entries()), self._entry_values(), self._sp_size, coalesced)
        out._sp_routes = combined((routes(self), 1)) or None   # the same entries: the gradient passes on
        return out

    def sum(self, dim=None, keepdim=False, dtype=None):
        if dim is not None or keepdim:   # (compressed_sum's refusals)
            return SparseCompressedTensor.sum(self, dim, keepdim, dtype)
        return self.to_sparse().sum(dtype=dtype)

    def to_sparse_csr(self, dense_dim=None):
        self._refuse_conversion("csr")

    def to_sparse_csc(self, dense_dim=None):
        self._refuse_conversion("csc")

    def _refuse_conversion(self, kind):
        raise RuntimeError(f"sparse_compressed_to_sparse_{kind}: expected SparseCsr or SparseCsc layout but got "
                           f"{self._layout_name}. Call .to_dense() first.")

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        return to_sparse_blocked(self, sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        return to_sparse_blocked(self, sparse_bsc, blocksize, dense_dim)

    def t(self):
        """The transpose: BSR's is BSC and BSC's BSR, each block transposed."""
        self._check_2d()
        other = SparseBscTensor if self._dim == 0 else SparseBsrTensor
        return other._make(self._sp_indices.flip(0), self._sp_values.transpose(1, 2), self._sp_size[::-1], True)

    def _same_layout(self, coo):
        return to_sparse_blocked(coo, self.layout, self._blocksize)


class SparseBsrTensor(_Blocked, SparseCsrTensor):
    """A sparse BSR matrix (layout tapegrad.sparse_bsr). Build one with `Tensor.to_sparse_bsr(blocksize)`."""

    is_sparse_csr = False
    _layout_name = "SparseBsr"
    _kind = "bsr"

    @property
    def layout(self):
        return sparse_bsr


class SparseBscTensor(_Blocked, SparseCscTensor):
    """A sparse BSC matrix (layout tapegrad.sparse_bsc). Build one with `Tensor.to_sparse_bsc(blocksize)`."""

    _layout_name = "SparseBsc"
    _kind = "bsc"

    @property
    def layout(self):
        return sparse_bsc


def to_sparse_blocked(input, layout, blocksize, dense_dim=None):
    """The BSR or BSC tensor (layout) of a tensor with the given blocksize: its blocks holding a nonzero."""
    from ._coo_build import to_sparse
    if layout is not sparse_bsr and layout is not sparse_bsc:
        return to_sparse(input, layout=layout, dense_dim=dense_dim)
    cls = SparseBsrTensor if layout is sparse_bsr else SparseBscTensor
    if blocksize is None:
        raise RuntimeError(f"dense_to_sparse: conversion from {'Strided' if input.layout.name == 'strided' else 'a'} "
                           f"to {cls._layout_name} without blocksize argument given is not supported. Pass "
                           "blocksize=(rows, cols).")
    r, c = (blocksize, blocksize) if isinstance(blocksize, int) else (int(blocksize[0]), int(blocksize[1]))
    if isinstance(input, cls) and input._blocksize == (r, c):
        return input
    if not isinstance(input, SparseTensor):
        return dense_to_compressed(input, cls, (r, c), dense_dim)
    if isinstance(input, SparseCompressedTensor) and input._nbatch:
        raise RuntimeError(f"sparse_compressed_to_sparse_{cls._kind}: conversion from {input._layout_name} to "
                           f"{cls._layout_name} for batched inputs is not supported. Convert the dense tensor "
                           "(.to_dense()) instead.")
    if not input._sp_compressed and input.sparse_dim() != 2:
        raise RuntimeError(f"coo_to_sparse_{cls._kind}: conversion from Sparse to {cls._layout_name} for input tensors "
                           "with sparse_dim()!=2 is not supported. Convert the dense tensor (.to_dense()) instead.")
    out = dense_to_compressed(input.to_dense(), cls, (r, c), input.dense_dim())
    out._sp_dense = None   # (its gradient reaches the input through to_dense(), masked)
    return out
