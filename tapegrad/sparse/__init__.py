"""tapegrad.sparse: PyTorch's sparse COO tensors for the common cases (see _coo.py for the representation)
and sparse CSR and CSC tensors over the same representation (_csr.py), BSR and BSC ones of blocks (_bsr.py), batched
(leading batch dimensions) and hybrid (trailing dense dimensions) as PyTorch's.

COO: `tapegrad.sparse_coo_tensor(indices, values, size)`, `Tensor.to_sparse()`, `to_dense()`, `coalesce()`,
sparse +/- sparse and dense +/- sparse (_add.py), `sparse.mm` / `spmm` / `mm` / `mv` / `matmul` / `@` with sparse
operands on either side or both (_matmul.py), `sparse.sum` and `Tensor.sum` (keepdim too, _sum.py), `t()`, scalar
mul/div and the unary ops that keep zeros. CSR: `tapegrad.sparse_csr_tensor`, `Tensor.to_sparse_csr(dense_dim)`,
`crow_indices()`, `col_indices()`, `values()`, `to_dense()`, `to_sparse()`, `sum()` and `sum(dim, keepdim=True)`,
`t()` (a CSC matrix), CSR + CSR, CSR + dense (_compressed_math.py), products of 2-D ones with dense tensors. CSC: the
same with `tapegrad.sparse_csc_tensor`, `Tensor.to_sparse_csc()`, `ccol_indices()`, `row_indices()` (no CSC + CSC
nor sum(dim), as in PyTorch). BSR / BSC: `Tensor.to_sparse_bsr(blocksize)` / `to_sparse_bsc`,
`tapegrad.sparse_bsr_tensor` / `sparse_bsc_tensor`, the same accessors with block values, `to_dense()`,
`to_sparse()`, `t()`, `sum()`, BSR @ dense, BSR + BSR of 1x1 blocks. `tapegrad.sparse_compressed_tensor` builds any of
the four. All four take the unary ops that keep zeros and scalar products on their values.
Elementwise mul by a sparse, dense or 0-d tensor, transpose, select / integer indexing, addmm and `sparse.addmm`,
`sparse_mask`, `sparse.sampled_addmm`, and the in-place forms (mul_, abs_..., zero_, fill_, copy_) as PyTorch's
(_compressed_ops.py, _sparse_mask.py); COO index_select, cat, stack, unsqueeze, norm, `sparse.softmax` /
`log_softmax`, sparse_resize_ (_coo_ops.py, _softmax.py). Other ops on a sparse tensor raise PyTorch's error, or
NotImplementedError where PyTorch has none; call `.to_dense()` first.
"""
from ._coo import SparseTensor  # noqa: F401
from ._coo_build import sparse_coo_tensor, to_sparse  # noqa: F401
from ._sum import sparse_sum as sum  # noqa: F401
from ._matmul import sparse_mm as mm  # noqa: F401
from ._csr import SparseCsrTensor, SparseCscTensor  # noqa: F401
from ._bsr import SparseBsrTensor, SparseBscTensor  # noqa: F401
from ._compressed_build import sparse_csr_tensor, sparse_csc_tensor, sparse_bsr_tensor, sparse_bsc_tensor  # noqa: F401
from ._compressed_build import sparse_compressed_tensor  # noqa: F401
from ._compressed_ops import sparse_addmm as addmm  # noqa: F401
from ._sparse_inplace import install as _install
from ._sparse_mask import sampled_addmm  # noqa: F401
from ._softmax import softmax, log_softmax  # noqa: F401
_install()



def spmm(input, mat2):
    """PyTorch's torch.spmm: torch.mm with a sparse COO first operand."""
    return mm(input, mat2, via="mm")


__all__ = ["mm", "sum"]
