"""tapegrad.sparse: PyTorch's sparse COO tensors for the common cases (see _coo.py for the representation).

`tapegrad.sparse_coo_tensor(indices, values, size)`, `Tensor.to_sparse()`, `to_dense()`, `coalesce()`,
`sparse.mm` / `spmm` / `mm` / `mv` / `matmul` / `@` with the sparse tensor on the left, `sparse.sum`, `t()`, scalar
mul/div and the unary ops that keep zeros. Other ops on a sparse tensor raise NotImplementedError; call
`.to_dense()` first.
"""
from ._coo import SparseTensor, sparse_coo_tensor, to_sparse, sparse_sum as sum  # noqa: F401
from ._matmul import sparse_mm as mm  # noqa: F401



def spmm(input, mat2):
    """PyTorch's torch.spmm: torch.mm with a sparse COO first operand."""
    return mm(input, mat2, via="mm")


__all__ = ["mm", "sum"]
