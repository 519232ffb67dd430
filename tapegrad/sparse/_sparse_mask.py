"""A dense (or sparse) tensor read at a sparse tensor's pattern: Tensor.sparse_mask(mask), and
torch.sparse.sampled_addmm, the product of two dense matrices at a CSR tensor's pattern. Both return the mask's
layout and pattern; the values are gathered by differentiable indexing, so the dense operands get their gradients
on those positions (PyTorch's backward of a compressed mask refuses, and so does this one's)."""
import numpy as np

from ._coo import SparseTensor, _as_tensor


def _positions(mask):
    """The mask's entries as index arrays into a dense tensor, and the shape its values take."""
    if getattr(mask, "_blocked", False):
        nnz = mask._sp_values.shape[0]
        return mask._entries(), (nnz, *mask._blocksize)
    return mask._sp_indices.numpy(), None


def _gather(dense, mask):
    positions, shape = _positions(mask)
    values = dense[tuple(_as_tensor(row) for row in positions)]
    return values if shape is None else values.reshape(*shape, *values.shape[1:])


def sparse_mask(self, mask):
    """PyTorch's Tensor.sparse_mask: self's entries at mask's positions, in mask's layout."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError(f"sparse_mask expects mask to be sparse, got {mask.layout}. Convert the mask with "
                           ".to_sparse() first.")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} but "
                           f"mask has size {list(mask.shape)}")
    if isinstance(self, SparseTensor) and self._sp_compressed:
        if not mask._sp_compressed:
            raise RuntimeError(f"sparse_mask_sparse_compressed expects mask to have sparse compressed layout, got "
                               f"{mask._layout_name}. Convert the mask with .to_sparse_csr() first.")
        from ._compressed_ops import mul
        ones = mask._with_values(mask._sp_values.detach().new_ones(mask._sp_values.shape).to(self.dtype))
        return mul(ones, self)   # (the entries both hold, in mask's layout: PyTorch's product and its refusals)
    source = self.to_dense() if isinstance(self, SparseTensor) else self
    out = type(mask)._make(mask._sp_indices, _gather(source, mask), mask._sp_size, mask._sp_coalesced)
    if mask._sp_compressed and out.requires_grad:
        out.grad_fn.register_prehook(lambda grads: _refuse_backward(mask._layout_name))
    return out


def _refuse_backward(layout):
    raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got {layout}: PyTorch cannot "
                       "compute the gradient of sparse_mask with a compressed mask. Use a COO mask (.to_sparse()).")


def sampled_addmm(input, mat1, mat2, *, beta=1., alpha=1., out=None):
    """torch.sparse.sampled_addmm: beta * input + alpha * (mat1 @ mat2) at input's (a CSR matrix's) positions."""
    if not isinstance(input, SparseTensor) or not input._sp_compressed:
        layout = getattr(input, "_layout_name", "Strided")
        raise NotImplementedError(f"Could not run 'aten::sparse_sampled_addmm' with arguments from the '{layout}CPU' "
                                  "backend. Pass a CSR input (.to_sparse_csr()).")
    if input._blocked:
        raise RuntimeError(f"empty_sparse_compressed expected sparse compressed (non-block) tensor layout but got "
                           f"{input._layout_name}. Use a CSR input (.to_dense().to_sparse_csr()).")
    if input._layout_name != "SparseCsr":
        raise RuntimeError(f"sampled_addmm: Expected result to have sparse csr layout, but got {input._layout_name}. "
                           "Convert the input with .to_sparse_csr() first.")
    from .._functional._common import SCALAR_NAME
    if mat1.dtype is not mat2.dtype or mat1.dtype is not input.dtype:
        a, b = (mat1, mat2) if mat1.dtype is not mat2.dtype else (input, mat1)
        raise RuntimeError(f"sampled_addmm: Expected {'mat1 and mat2' if a is mat1 else 'self and mat1'} to have the "
                           f"same dtype, but got {SCALAR_NAME[a.dtype.name]} and {SCALAR_NAME[b.dtype.name]}")
    if input.dim() != 2 or mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("sampled_addmm: tapegrad takes 2-D matrices. Multiply batched ones matrix by matrix.")
    for a, b, what in ((input.shape[0], mat1.shape[0], "self.shape[-2] must match mat1.shape[-2]"),
                       (input.shape[1], mat2.shape[1], "self.shape[-1] must match mat2.shape[-1]"),
                       (mat1.shape[1], mat2.shape[0], "mat1.shape[-1] must match mat2.shape[-2]")):
        if a != b:
            raise RuntimeError(f"sampled_addmm: {what}")
    rows, cols = (_as_tensor(np.ascontiguousarray(r)) for r in input._sp_indices.numpy())
    products = (mat1[rows] * mat2.t()[cols]).sum(-1)
    values = products * alpha if beta == 0 else input._sp_values * beta + products * alpha
    return type(input)._make(input._sp_indices, values, input._sp_size, True)
