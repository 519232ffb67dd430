"""torch.sparse.softmax and log_softmax of a sparse COO tensor: along a sparse dimension, over the entries each
line holds (the others count as -inf, so they stay unspecified); along a dense dimension, the values' own softmax.
Composed of tapegrad ops on the values (gather, exp, index_add), so its gradient is derived as theirs."""
import numpy as np

from ._coo import SparseTensor, _as_tensor


def sparse_softmax(input, dim, *, dtype=None, log=False):
    name = "_sparse_log_softmax" if log else "_sparse_softmax"
    if not isinstance(input, SparseTensor) or input._sp_compressed:
        backend = f"{input._layout_name}CPU" if isinstance(input, SparseTensor) else "CPU"
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. Pass a "
                                  "sparse COO tensor (.to_sparse()), or use tapegrad.softmax on a dense one.")
    n = input.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    d = dim % n
    c = input.coalesce()
    values = c._sp_values if dtype is None else c._sp_values.to(dtype)
    if not (values.dtype.is_floating_point or values.dtype.is_complex):
        from .._functional._common import SCALAR_NAME
        kind = SCALAR_NAME.get(values.dtype.name)
        raise NotImplementedError(f"\"{'log_' if log else ''}softmax\" not implemented for '{kind}'. Pass "
                                  "dtype=tapegrad.float32 (or convert the values) first.")
    nsparse = c.sparse_dim()
    if d >= nsparse:   # a dense dimension: each entry's values on their own
        from ..nn import functional as F
        out = (F.log_softmax if log else F.softmax)(values, d - nsparse + 1)
        return SparseTensor._make(c._sp_indices, out, c._sp_size, True)
    others = np.delete(c._sp_indices.numpy(), d, 0)
    _, inverse = np.unique(others, axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    groups = int(inverse.max()) + 1 if inverse.size else 0
    peak = np.full((groups, *values.shape[1:]), -np.inf)
    np.maximum.at(peak, inverse, values.detach().numpy())   # (a constant shift: softmax does not change)
    group = _as_tensor(inverse.astype(np.int64))
    shifted = values - _as_tensor(peak, values.dtype)[group]
    exp = shifted.exp()
    from .._creation import zeros
    total = zeros(groups, *values.shape[1:], dtype=values.dtype).index_add(0, group, exp)
    out = shifted - total.log()[group] if log else exp / total[group]
    return SparseTensor._make(c._sp_indices, out, c._sp_size, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax of a sparse COO tensor."""
    return sparse_softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax of a sparse COO tensor."""
    return sparse_softmax(input, dim, dtype=dtype, log=True)
