"""add and sum of sparse compressed tensors, as PyTorch's CPU kernels: compressed + compressed of one layout is
that layout (the entry lists merged, as COO's; CSR and 1x1-block BSR only, PyTorch's MKL add), compressed + dense and
dense + compressed are dense, sub is refused; sum(dim) of a 2-D CSR tensor is a CSR tensor (keepdim only) whose
backward PyTorch refuses. Where PyTorch refuses a combination, so does tapegrad, with its error."""
import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import sparse as K
from . import _pattern as P
from ._add import _check_alpha, dense_form, merged_values
from ._coo import SparseTensor, _as_tensor


def _type(dtype):
    from .._functional._common import SCALAR_NAME
    return SCALAR_NAME.get(dtype.name, dtype.name)


def compressed_add(a, b, alpha, node):
    """a + alpha * b with a compressed operand (node: "add" or "sub", whose alpha is already negated)."""
    compressed = a if getattr(a, "_sp_compressed", False) else b
    if node == "sub":
        raise RuntimeError(f"unsupported tensor layout: {compressed._layout_name} (PyTorch has no sub for compressed "
                           "sparse tensors). Use torch.add(a, b, alpha=-1) instead.")
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        return _sparse_sparse(a, b, alpha, node)
    if compressed._blocked:
        raise RuntimeError("src.layout() == kSparseCsr || src.layout() == kSparseCsc INTERNAL ASSERT FAILED: PyTorch "
                           f"cannot add a dense tensor and a {compressed._layout_name} tensor. Call .to_dense() first.")
    other = b if compressed is a else a
    if tuple(getattr(other, "shape", ())) != tuple(compressed.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(getattr(other, 'shape', ()))} while other has size {list(compressed.shape)} (FYI: "
                           "op2-sparse addition does not currently support broadcasting)")
    from .._functional._arith import add
    if compressed is a:   # a dense result; the compressed operand's gradient is dense, as PyTorch's
        return add(dense_form(a), b, alpha=alpha)
    return add(a, dense_form(b), alpha=alpha)


def _sparse_sparse(a, b, alpha, node):
    if not a._sp_compressed:
        raise RuntimeError("memory format option is only supported by strided tensors: PyTorch cannot add a "
                           f"{b._layout_name} tensor to a sparse COO one. Convert one operand (to_sparse()).")
    if not b._sp_compressed:
        raise RuntimeError("at::sparse_csr::is_sparse_compressed(other) INTERNAL ASSERT FAILED: PyTorch cannot add a "
                           f"sparse COO tensor to a {a._layout_name} one. Convert one operand (to_sparse_csr()).")
    if a.shape != b.shape:
        raise RuntimeError(f"torch.add: Expected input tensors to have the same shape, but got tensor `self` with shape "
                           f"{list(a.shape)} and tensor `other` with shape {list(b.shape)}")
    dtype = D.promote_types(a.dtype, b.dtype)
    _check_alpha(dtype, alpha)
    for t in (a, b):
        if t._dim == 1:
            raise RuntimeError(f"crow_indices expected sparse row compressed tensor layout but got {t._layout_name}: "
                               "PyTorch adds CSR and BSR tensors only. Convert both (to_sparse_csr()) first.")
    if a.dtype is not b.dtype:
        found = a.dtype if a.dtype is not dtype else b.dtype
        raise RuntimeError(f"expected scalar type {_type(dtype)} but found {_type(found)}. Convert one operand "
                           "(.to(dtype)) first.")
    for t in (a, b):
        if t._blocked and t._blocksize[0] != t._blocksize[1]:
            raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks. Add the tensors' "
                               ".to_dense() instead.")
    for t in (a, b):
        if t._blocked and t._blocksize != (1, 1):
            raise RuntimeError("MKL error: SPARSE_STATUS_NOT_SUPPORTED when calling `mkl_sparse_?_add`: PyTorch's CPU "
                               "add of block tensors takes 1x1 blocks only. Add the tensors' .to_dense() instead.")
    if a._nbatch != b._nbatch:
        raise RuntimeError(f"add: expected 'self' and 'other' to have the same batch and dense dimensions, but 'self' "
                           f"has {a._nbatch} batch dimensions and 'other' {b._nbatch}")
    av, bv = a._sp_values, b._sp_values
    if a._blocked is not b._blocked:   # CSR and 1x1-block BSR: b's values in a's form
        bv = bv.reshape(-1, *bv.shape[3:]) if b._blocked else bv.reshape(-1, 1, 1, *bv.shape[1:])
    sizes = tuple(a.shape[:a._nbatch + 2])
    ai, bi = a._sp_indices.numpy(), b._sp_indices.numpy()
    indices, take_a, take_b = P.merge(ai, bi, sizes)   # both in CSR order, so is the walk's result
    from ._compressed_build import check_batches
    check_batches(indices, sizes[:a._nbatch])
    values, rs = merged_values(a, b, alpha, node, indices, take_a, take_b, av, bv, dtype)
    out = type(a)._make(_as_tensor(indices), values, a.shape, True)
    out._sp_routes = rs if rs else None
    if a._blocked and out.requires_grad:
        out.grad_fn.register_prehook(_refuse_block_add_backward)
    return out


def _refuse_block_add_backward(grad_outputs):
    raise IndexError("Dimension out of range (expected to be in range of [-2, 1], but got 2): PyTorch cannot compute "
                     "the gradient of an add of block tensors. Add their .to_dense() instead.")


def compressed_sum(s, dim, keepdim, dtype):
    """Tensor.sum of a compressed tensor: dense without dim; with dim, PyTorch's CSR reduction (keepdim=True, 2-D)."""
    if dim is None:
        if keepdim:
            raise RuntimeError("dim has no value, cannot be used in sum.dim_IntList. Pass dim=(0, 1).")
        return SparseTensor.sum(s, None, False, dtype)
    if s._dim != 0 or s._blocked:
        raise RuntimeError(f"Currently the only compressed sparse format supported for sum.dim_IntList is CSR, but got "
                           f"layout {s._layout_name}. Call .to_sparse() first.")
    target = dtype if dtype is not None else D.int64 if not (s.dtype.is_floating_point or s.dtype.is_complex) \
        else s.dtype
    if target is D.bool_ or (dtype is None and s.dtype is D.bool_):
        raise NotImplementedError("\"_sparse_csr_sum_cpu\" not implemented for 'Bool'. Sum .to(torch.int64) first.")
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported. Pass keepdim=True "
                           "or call .to_dense() first.")
    from .._tensor import _wrap_dim
    dims = [_wrap_dim(d, s.dim()) for d in ((dim,) if isinstance(dim, int) else dim)]
    if s.dim() != 2:
        raise RuntimeError("input_dim == 2 INTERNAL ASSERT FAILED: PyTorch's CSR sum over dimensions takes a 2-D "
                           "tensor. Call .to_dense() (or .to_sparse()) first for a batched or hybrid one.")
    dims = dims or [0, 1]
    if len(dims) != len(set(dims)):
        raise RuntimeError("((dims[0] == 0 && dims[1] == 1) || (dims[0] == 1 && dims[1] == 0)) INTERNAL ASSERT "
                           "FAILED: a dimension appears twice in dim.")
    indices = s._sp_indices.numpy()
    kept = [d for d in (0, 1) if d not in dims]   # the dimension the result keeps, if any
    keys = indices[kept[0]] if kept else np.zeros(indices.shape[1], np.int64)
    lines, inverse = np.unique(keys, return_inverse=True)
    result = np.zeros((2, len(lines)), np.int64)
    if kept:
        result[kept[0]] = lines
    values = s._sp_values if s._sp_values.dtype is target else s._sp_values.to(target)
    summed = apply(K.sparse_segment_sum, values, _as_tensor(inverse.reshape(-1)), count=len(lines), node="tensor_sum")
    size = tuple(1 if d in dims else n for d, n in enumerate(s.shape))
    from ._csr import SparseCsrTensor
    out = SparseCsrTensor._make(_as_tensor(result), summed, size, True)
    if out.requires_grad:
        out.grad_fn.register_prehook(_refuse_sum_backward)
    return out


def _refuse_sum_backward(grad_outputs):
    raise RuntimeError("expand is unsupported for SparseCsr tensors: the gradient of a CSR sum over dimensions cannot "
                       "be computed (as in PyTorch). Sum the tensor's .to_dense() instead.")
