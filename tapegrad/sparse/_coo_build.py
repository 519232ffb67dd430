"""Building sparse COO tensors: PyTorch's sparse_coo_tensor from indices and values, with its checks, and
to_sparse, the COO tensor of a dense one's nonzero entries (or, with a layout, that layout's tensor)."""
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._layout import sparse_coo
from .._ops import sparse as K
from ._coo import SparseTensor, _as_tensor, _to_layout


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """PyTorch's sparse_coo_tensor: `values[k]` at position `indices[:, k]` (duplicates add up)."""
    from .._dtypes import int64
    indices = _as_tensor(indices)
    values = _as_tensor(values, dtype)
    if indices.dtype is not int64:
        indices = indices.to(int64)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        indices, values = indices.to(device), values.to(device)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim, nnz = indices.shape
    if values.dim() == 0 or values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0] if values.dim() else 1}")
    idx = indices.detach().numpy()
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sparse_dim
        size = size + tuple(values.shape[1:])
    size = tuple(size)
    if len(size) != sparse_dim + values.dim() - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {values.dim() - 1}")
    for d in range(sparse_dim):   # PyTorch checks these only with check_invariants; unchecked, they corrupt memory
        if nnz and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {idx[d].min()} for dim {d}")
        if nnz and idx[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{idx[d].max()}")
    if values.requires_grad and is_grad_enabled() and not requires_grad:
        values = apply(K.sparse_coo_tensor, values)
    else:   # shares the data, not the tensor: requires_grad_() on the result leaves `values` alone
        values = values.detach().requires_grad_(requires_grad)
    coalesced = nnz <= 1 if is_coalesced is None else is_coalesced
    return SparseTensor._make(indices, values, size, coalesced)


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO tensor of a dense one: its nonzero entries (rows of the first `sparse_dim` dims, or of all
    but the last `dense_dim`); another layout: that layout's tensor (_csr.py, _bsr.py), strided: to_dense()."""
    if layout is not None and layout is not sparse_coo:
        return _to_layout(input, layout, blocksize, dense_dim)
    if input.is_sparse:
        return input
    full = sparse_dim is None
    sparse_dim = input.dim() - (dense_dim or 0) if full else sparse_dim
    if not 0 < sparse_dim <= input.dim() and input.dim():
        raise RuntimeError(f"sparse_dim must be in [1, {input.dim()}] but got {sparse_dim}")
    data = input.detach().numpy()
    nonzero = data != 0
    if data.ndim > sparse_dim:
        nonzero = nonzero.any(axis=tuple(range(sparse_dim, data.ndim)))
    indices = _as_tensor(np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(sparse_dim, -1))
    values = apply(K.to_sparse, input, indices, full=full, csr=False)
    result = SparseTensor._make(indices, values, input.shape, True)
    if input.requires_grad:
        result._sp_dense = (input, input._version)
    return result
