"""Sums of sparse COO tensors: torch.sparse.sum (a dense result when every sparse dimension is summed, else a
sparse one) and Tensor.sum, as op-table segment sums over the values, the result pattern worked out on the host."""
import numpy as np

from .._dispatch import apply
from .._ops import sparse as K
from . import _pattern as P
from ._coo import SparseTensor, _as_tensor
from ._routes import routes


def sparse_sum(input, dim=None, dtype=None, *, keepdim=False, node="sum"):
    """PyTorch's torch.sparse.sum: a dense result when every sparse dimension is summed, else a sparse one,
    coalesced. keepdim (Tensor.sum's): that result unsqueezed at each summed dimension, as PyTorch's, so a
    sparse one gains a sparse dimension where it can."""
    if not isinstance(input, SparseTensor) or (input._sp_compressed and node == "sum"):
        if dim is not None and isinstance(input, SparseTensor):   # PyTorch's one dispatch key for compressed layouts
            raise NotImplementedError("Could not run 'aten::_indices' with arguments from the 'SparseCsrCPU' backend. "
                                      "Call .sum(dim, keepdim=True) (CSR) or .to_sparse() first.")
        layout = input._layout_name if isinstance(input, SparseTensor) else "Strided"
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {layout}. Call .sum() on a "
                           "dense or compressed tensor.")
    values = input._sp_values if dtype is None else input._sp_values.to(dtype)
    if dim is None:
        return values.sum()
    from .._tensor import _wrap_dim
    dims = sorted({_wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)})
    nsparse = input.sparse_dim()
    dense_axes = tuple(d - nsparse + 1 for d in dims if d >= nsparse)
    kept = [d for d in range(nsparse) if d not in dims]
    shape = [n for d, n in enumerate(input.shape) if d not in dims]
    if not kept:   # every sparse dimension summed: a dense result
        keep_shape = tuple(1 if d in dims else n for d, n in enumerate(input.shape)) if keepdim else None
        return apply(K.sparse_segment_sum, values, _as_tensor(np.zeros(input._nnz(), np.int64)), count=1,
                     node=node, dense_axes=dense_axes, drop=True, shape=keep_shape)
    indices, inverse = P.unique(input._sp_indices.numpy()[kept], tuple(input.shape[d] for d in kept))
    count = indices.shape[1]
    values_shape = None
    if keepdim:   # PyTorch's unsqueeze of a sparse tensor: a sparse dimension at d <= sparse_dim, else dense
        dense_shape = shape[len(kept):]
        for d in dims:
            if d <= indices.shape[0]:
                indices = np.insert(indices, d, 0, axis=0)
            else:
                dense_shape.insert(d - indices.shape[0], 1)
            shape.insert(d, 1)
        values_shape = (count, *dense_shape)
    summed = apply(K.sparse_segment_sum, values, _as_tensor(inverse), count=count, node=node,
                   dense_axes=dense_axes, shape=values_shape)
    return SparseTensor._make(_as_tensor(indices), summed, tuple(shape), not keepdim or count <= 1)


def tensor_sum(input, dim=None, keepdim=False, dtype=None):
    """Tensor.sum of a sparse tensor: dense when every sparse dimension is summed, with PyTorch's dense
    gradient (SumBackward); a sparse result's backward is refused, as PyTorch's (it cannot expand a sparse
    gradient)."""
    from .._tensor import _wrap_dim
    if keepdim and dim is None:
        dim = tuple(range(input.dim()))
    dims = None if dim is None else {_wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)}
    dense_result = dims is None or all(d in dims for d in range(input.sparse_dim()))
    if dense_result and routes(input):
        from ._add import dense_form
        return dense_form(input).sum(dim, keepdim, dtype=dtype)
    out = sparse_sum(input, dim, dtype, keepdim=keepdim, node="tensor_sum")
    if not dense_result and out.requires_grad:
        out.grad_fn.register_prehook(_refuse_sparse_expand)
    return out


def _refuse_sparse_expand(grad_outputs):
    raise RuntimeError("expand is unsupported for Sparse tensors: the gradient of Tensor.sum with a sparse "
                       "result cannot be computed (as in PyTorch). Use tapegrad.sparse.sum instead.")


