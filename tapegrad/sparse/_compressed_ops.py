"""Ops PyTorch's CPU build runs on sparse tensors beyond add, sum and products: elementwise mul with a sparse, dense or
0-d operand, transpose / permute, select and integer indexing, addmm with a sparse operand (their in-place forms are
in _sparse_inplace.py). Each keeps PyTorch's result layout and refusals; values are computed on the operands'
values, so gradients reach them masked to the pattern."""
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._tensor import Tensor
from . import _pattern as P
from ._coo import SparseTensor, _as_tensor

UNHANDLED = object()   # compressed_op's answer for an op it does not run
COMPRESSED_UNARY = frozenset({"angle"})   # (PyTorch refuses it on COO)


def compressed_op(op, args, static):
    """An op-table entry met with a sparse argument (COO or compressed) that PyTorch runs, or UNHANDLED."""
    name, kw = op.name, dict(static)
    if name in COMPRESSED_UNARY and len(args) == 1 and args[0]._sp_compressed:
        return args[0]._with_values(apply(op, args[0]._sp_values, **kw))
    if name == "mul" and len(args) == 2:
        return mul(*args)
    compressed = next((a for a in args if getattr(a, "_sp_compressed", False)), None)
    if compressed is not None and name in ("cat", "stack", "unsqueeze"):
        missing = "strides" if name == "unsqueeze" else "is_contiguous"
        raise RuntimeError(f"Sparse {compressed._kind.upper()} tensors do not have {missing}: PyTorch cannot {name} "
                           "compressed tensors. Convert them (.to_sparse() or .to_dense()) first.")
    if name == "div" and args[0]._sp_compressed:
        raise RuntimeError(f"unsupported tensor layout: {args[0]._layout_name} (PyTorch has no division of compressed "
                           "tensors). Multiply by the reciprocal (s * (1 / k)) instead.")
    if name == "transpose":
        return transpose(args[0], kw["dim0"], kw["dim1"])
    if name == "permute" and not args[0]._sp_compressed:
        return _permute_coo(args[0], kw["dims"])
    if name in ("t", "clone") and len(args) == 1:
        return getattr(args[0], name)()
    if name == "select" and isinstance(args[0], SparseTensor):
        dim = next(i for i, s in enumerate(kw["spec"]) if s == ("i",) or isinstance(s, int))
        index = args[1] if len(args) > 1 else kw["spec"][dim]
        return select(args[0], dim, int(index))
    if name == "unbind" and isinstance(args[0], SparseTensor):
        dim = len(kw["spec"]) - 1
        return tuple(select(args[0], dim, i) for i in range(args[0].shape[dim]))
    if name == "addmm" and len(args) in (3, 5):   # (3: beta = alpha = 1)
        return addmm(*args)
    if name == "addmv" and len(args) == 5:
        return addmv(*args)
    return UNHANDLED


# ---- mul ---------------------------------------------------------------------------------------------------------

def mul(a, b):
    """a * b with a sparse operand: by a 0-d tensor, the values scaled; by a sparse tensor, the entries both hold
    (the first operand's layout); by a dense tensor of the same shape, the sparse operand's entries."""
    from .._functional._arith import mul as dense_mul
    sparse = a if isinstance(a, SparseTensor) else b
    other = b if sparse is a else a
    if not isinstance(other, Tensor) or other.dim() == 0 and not isinstance(other, SparseTensor):
        return scaled_batched(sparse, sparse._with_values(dense_mul(sparse._sp_values, other)))
    first = a if isinstance(a, SparseTensor) else None
    if sparse._sp_compressed or getattr(other, "_sp_compressed", False):
        if getattr(first, "_blocked", False) or (first is None and sparse._blocked):
            raise RuntimeError(f"empty_sparse_compressed expected sparse compressed (non-block) tensor layout but got "
                               f"{sparse._layout_name}. Multiply the tensors' .to_dense() instead.")
        result = a if first is not None else b
        if getattr(result, "_layout_name", None) != "SparseCsr":
            raise RuntimeError("Expected result Tensor to be of format CSR: PyTorch multiplies elementwise into a CSR "
                               "tensor only. Convert the first sparse operand with .to_sparse_csr() first.")
    if any(getattr(t, "_sp_compressed", False) and t._nbatch for t in (a, b)):
        raise RuntimeError("coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with "
                           "sparse_dim()!=2 is not supported: PyTorch multiplies batched compressed tensors by "
                           "numbers only. Multiply their .to_dense() instead.")
    if isinstance(other, SparseTensor):
        return _mul_sparse(a, b)
    if not sparse._sp_compressed and other.dim() <= sparse.dim() and all(
            n in (1, m) for n, m in zip(reversed(other.shape), reversed(sparse.shape))):
        other = other.expand(sparse.shape)   # (COO's product broadcasts the dense operand)
    if tuple(other.shape) != tuple(sparse.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(other.shape)} but "
                           f"mask has size {list(sparse.shape)}. Broadcast the dense operand (.expand) first.")
    s = sparse if sparse._sp_compressed else sparse.coalesce()
    picked = other[tuple(_as_tensor(row) for row in s._sp_indices.numpy())]   # the dense entries at s's positions
    values = dense_mul(s._sp_values, picked) if s is a else dense_mul(picked, s._sp_values)
    out = type(s)._make(s._sp_indices, values, s._sp_size, True)
    if s._sp_compressed and other.requires_grad and is_grad_enabled():
        index = 1 if s is a else 0
        out.grad_fn.register_prehook(lambda grads: _refuse_dense_grad(index))
    return out


def _refuse_dense_grad(index):
    raise RuntimeError(f"Function MulBackward0 returned an invalid gradient at index {index} - expected layout Strided "
                       "but got SparseCsr: PyTorch cannot give the dense operand of a CSR product its gradient. "
                       "Multiply by the dense tensor's .detach(), or by .to_sparse_csr() of it.")


def _mul_sparse(a, b):
    """The entries both sparse operands hold, multiplied, in a's layout (coalesced)."""
    from .._functional._arith import mul as dense_mul
    if a.dim() != b.dim() or a.sparse_dim() != b.sparse_dim() or tuple(a.shape) != tuple(b.shape):
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    a = a if a._sp_compressed else a.coalesce()
    b_coo = b.to_sparse().coalesce() if b._sp_compressed else b.coalesce()
    sizes = a._sp_size[:a._sp_indices.shape[0]]
    la, lb = P.linear(a._sp_indices.numpy(), sizes), P.linear(b_coo._sp_indices.numpy(), sizes)
    common, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    order = np.argsort(ia, kind="stable")   # in a's order
    ia, ib = _as_tensor(ia[order].astype(np.int64)), _as_tensor(ib[order].astype(np.int64))
    values = dense_mul(a._sp_values.index_select(0, ia), b_coo._sp_values.index_select(0, ib))
    return type(a)._make(a._sp_indices.index_select(1, ia), values, a._sp_size, True)


# ---- transpose, permute ------------------------------------------------------------------------------------------

def _wrap(dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def transpose(s, dim0, dim1):
    """PyTorch's transpose of a sparse tensor: a 2-D compressed one becomes the other layout (t()); a COO one swaps
    its index rows (sparse dimensions) or its values' axes (dense ones). The values go through a transpose, so the
    result records TransposeBackward0 as PyTorch's."""
    d0, d1 = _wrap(dim0, s.dim()), _wrap(dim1, s.dim())
    if d0 == d1:
        return s._with_values(s._sp_values.transpose(0, 0), 1)
    if s._sp_compressed:
        return _transpose_compressed(s, d0, d1)
    dims = list(range(s.dim()))
    dims[d0], dims[d1] = d1, d0
    return _permute_coo(s, dims, transposed=(d0, d1))


def _transpose_compressed(s, d0, d1):
    """The transpose of a compressed tensor's two sparse dimensions: the same entries, in the other layout (CSR's
    order is the transposed CSC's), each block transposed."""
    nb = s._nbatch
    kinds = ["Batch"] * nb + ["Sparse"] * 2 + ["Dense"] * s.dense_dim()
    if kinds[d0] != kinds[d1]:
        raise RuntimeError(f"transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), got "
                           f"{d0}({kinds[d0]}) and {d1}({kinds[d1]})")
    if s.dense_dim():
        raise RuntimeError("transpose(): hybrid sparse compressed tensors with dense dimensions are not supported. "
                           "Call .to_dense() first.")
    if kinds[d0] == "Batch":
        raise RuntimeError("transpose(): tapegrad transposes the sparse dimensions of a compressed tensor only. "
                           "Transpose its .to_dense() instead.")
    from ._bsr import SparseBscTensor, SparseBsrTensor
    from ._csr import SparseCscTensor, SparseCsrTensor
    twin = {SparseCsrTensor: SparseCscTensor, SparseCscTensor: SparseCsrTensor, SparseBsrTensor: SparseBscTensor,
            SparseBscTensor: SparseBsrTensor}[type(s)]
    order = _as_tensor(np.array([*range(nb), nb + 1, nb], np.int64))
    values = s._sp_values.transpose(1, 2) if s._blocked else s._sp_values.transpose(0, 0)
    size = (*s._sp_size[:nb], s._sp_size[nb + 1], s._sp_size[nb])
    out = twin._make(s._sp_indices.index_select(0, order), values, size, True)
    if nb and out.requires_grad:
        out.grad_fn.register_prehook(lambda grads: _refuse_batched(
            f"sparse_coo_to_sparse: conversion from Sparse to {s._layout_name} for input tensors with sparse_dim()!=2 "
            "is not supported"))
    return out


def scaled_batched(s, out):
    """A product of s by a number: PyTorch's backward of one of a batched compressed tensor refuses."""
    if s._sp_compressed and s._nbatch and out.requires_grad:
        out.grad_fn.register_prehook(lambda grads: _refuse_batched(
            f"sparse_coo_to_sparse: conversion from Sparse to {s._layout_name} for input tensors with sparse_dim()!=2 "
            "is not supported"))
    return out


def _refuse_batched(message):
    raise RuntimeError(f"{message} (PyTorch cannot compute this gradient of a batched compressed tensor). Apply the "
                       "op to .to_dense() instead.")


def _permute_coo(s, dims, transposed=None):
    dims = [_wrap(d, s.dim()) for d in dims]
    nsparse = s.sparse_dim()
    if sorted(dims) != list(range(s.dim())) or any(d >= nsparse for d in dims[:nsparse]):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense dimensions are not allowed."
                           " Only transpositions within sparse and within dense dimensions are supported.")
    indices = s._sp_indices.index_select(0, _as_tensor(np.array(dims[:nsparse], np.int64)))
    if transposed is None:
        values = s._sp_values.permute(0, *[d - nsparse + 1 for d in dims[nsparse:]])
    else:   # the values' axes of the swapped dense dimensions, or none (0, 0)
        dense = [d - nsparse + 1 if d >= nsparse else 0 for d in transposed]
        values = s._sp_values.transpose(*dense)
    return SparseTensor._make(indices, values, [s._sp_size[d] for d in dims], s._nnz() <= 1)


# ---- select ------------------------------------------------------------------------------------------------------

def select(s, dim, index):
    """A sparse tensor's slice at `index` along `dim`: a COO tensor of one dimension fewer (dense: a 0-d tensor from a
    1-D one). PyTorch's backward of it refuses, so does this one's."""
    d = _wrap(dim, s.dim())
    size = s.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(s.shape)} at dimension {d}")
    index %= size
    if s._sp_compressed and s._nbatch:
        return _select_batch(s, d, index)
    if getattr(s, "_blocked", False):
        if s._dim == 0 or d == 0:   # (BSC's columns only)
            raise RuntimeError("select(): no view exists for the given input, consider using torch.select_copy.")
        s = s.to_sparse()
    c = s if s._sp_compressed else s.coalesce()
    indices = c._sp_indices.numpy()
    if d >= indices.shape[0]:   # a dense dimension: every entry's values
        return type(c)._make(c._sp_indices, c._sp_values.select(d - indices.shape[0] + 1, index), c._sp_size[:d] +
                             c._sp_size[d + 1:], c._sp_coalesced)
    take = _as_tensor(np.nonzero(indices[d] == index)[0].astype(np.int64))
    values = c._sp_values.index_select(0, take)
    if indices.shape[0] == 1:   # the last sparse dimension: a dense result
        return values.sum(0)
    rest = np.delete(indices, d, 0)[:, take.numpy()]   # (a compressed tensor's: in order, as PyTorch says)
    out = SparseTensor._make(_as_tensor(rest), values, c._sp_size[:d] + c._sp_size[d + 1:], s._sp_compressed)
    if out.requires_grad:
        out.grad_fn.register_prehook(_refuse_select_backward)
    return out


def _select_batch(s, d, index):
    """One batch of a batched compressed tensor: the same layout, one batch dimension fewer."""
    if d >= s._nbatch:
        raise RuntimeError("select(): selecting sparse dimensions is not supported for batched sparse compressed "
                           "tensors. Select a batch first, or .to_sparse() the tensor.")
    indices = s._sp_indices.numpy()
    take = _as_tensor(np.nonzero(indices[d] == index)[0].astype(np.int64))
    rest = _as_tensor(np.ascontiguousarray(np.delete(indices, d, 0)[:, take.numpy()]))
    out = type(s)._make(rest, s._sp_values.index_select(0, take), s._sp_size[:d] + s._sp_size[d + 1:], True)
    message = (f"zeros_sparse_compressed expected sparse compressed (non-block) tensor layout but got "
               f"{s._layout_name}" if s._blocked else "torch.copy_: only sparse compressed tensors with the same "
               "number of specified elements are supported.")
    if out.requires_grad:
        out.grad_fn.register_prehook(lambda grads: _refuse_batched(message))
    return out


def _refuse_select_backward(grads):
    raise NotImplementedError("Could not run 'aten::select_backward' with arguments from the 'SparseCPU' backend: "
                              "PyTorch cannot compute the gradient of a sparse tensor's select. Select from its "
                              ".to_dense() instead.")


def getitem(s, key):
    """Integer indexing of a sparse tensor: s[i], s[:, j], s[i, j] (a 0-d dense tensor, differentiable as
    PyTorch's), s[..., j]."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (s.dim() - len(key) + 1) + key[at + 1:]
    whole = all(isinstance(k, (int, np.integer)) or k == slice(None) for k in key)
    if not whole or len(key) > s.dim():
        return UNHANDLED
    for d, k in enumerate(key):
        if isinstance(k, (int, np.integer)) and not -s.shape[d] <= k < s.shape[d]:
            raise IndexError(f"index {k} is out of bounds for dimension {d} with size {s.shape[d]}")
    ints = [(d, int(k) % s.shape[d]) for d, k in enumerate(key) if isinstance(k, (int, np.integer))]
    if len(ints) == s.dim() == s.sparse_dim() and not getattr(s, "_blocked", False):
        # one entry: gathered, so its gradient is PyTorch's (select of select, the second one dense)
        c = s.to_sparse().coalesce() if s._sp_compressed else s.coalesce()
        match = np.all(c._sp_indices.numpy() == np.array([k for _, k in ints])[:, None], 0)
        return c._sp_values.index_select(0, _as_tensor(np.nonzero(match)[0].astype(np.int64))).sum(0)
    if ints and ints[0][0] == 0 and getattr(s, "_blocked", False):
        return select(s, 0, ints[0][1])   # (PyTorch's refusal)
    out = s
    for d, k in reversed(ints):
        out = select(out, d, k)
    return out


# ---- addmm -------------------------------------------------------------------------------------------------------

def addmm(input, mat1, mat2, beta=1, alpha=1, via="mm"):
    """beta * input + alpha * (mat1 @ mat2) with a sparse operand: a dense input gives a dense result; a CSR input,
    CSR matrices, a CSR result."""
    from .._functional._arith import add
    from ._matmul import sparse_mm
    if isinstance(input, SparseTensor):
        kinds = [t._layout_name if isinstance(t, SparseTensor) else "Strided" for t in (input, mat1, mat2)]
        if kinds != ["SparseCsr"] * 3:
            raise RuntimeError(f"addmm: computation on CPU is not implemented for {kinds[0]} + {kinds[1]} @ "
                               f"{kinds[2]}. Pass a dense input (.to_dense()).")
        product = sparse_mm(mat1, mat2, via=via)
        return _scaled(input, beta) + _scaled(product, alpha)
    coo = [t for t in (mat1, mat2) if isinstance(t, SparseTensor) and not t._sp_compressed]
    if coo and (coo[0] is mat2 or isinstance(mat2, SparseTensor)):
        kinds = [getattr(t, "_layout_name", "Strided") for t in (mat1, mat2)]
        raise RuntimeError(f"addmm_sparse_dense: expected either 'mat1' to have sparse layout and 'mat2' to have "
                           f"strided layout, got 'mat1' with layout {kinds[0]} and 'mat2' with layout {kinds[1]}. "
                           "Multiply mat2^T @ mat1^T, or .to_dense() one operand, instead.")
    product = sparse_mm(mat1, mat2, via=via)
    if input.dtype is not product.dtype:
        from .._functional._common import SCALAR_NAME
        raise RuntimeError(f"expected scalar type {SCALAR_NAME.get(input.dtype.name)} but found "
                           f"{SCALAR_NAME.get(product.dtype.name)}. Convert the input (.to(dtype)) first.")
    shape = tuple(product.shape)
    if any(n != 1 and n != m for n, m in zip(reversed(input.shape), reversed(shape))) or input.dim() > 2:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if input.dim() < 2 else shape[0]}) must match "
                           f"the existing size ({input.shape[-1] if input.dim() < 2 else input.shape[0]}) at "
                           f"non-singleton dimension {0 if input.dim() == 2 else 1}.  Target sizes: {list(shape)}.  "
                           f"Tensor sizes: {list(input.shape)}")
    if beta == 0:   # PyTorch ignores the input (nan and inf too)
        return _scaled(product, alpha)
    return add(_scaled(input, beta), product, alpha=alpha)


def addmv(input, mat, vec, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec) with a sparse operand: a CSR or CSC matrix and dense vectors record one
    AddmvBackward0 as PyTorch's (the matrix's gradient dense, as torch.mv's), a BSR one too (without vec's gradient,
    as PyTorch); PyTorch has no COO or BSC addmv."""
    from .._ops import sparse as K
    from ._matmul import _check_sparse_dense, dense_term, routes
    if isinstance(mat, SparseTensor) and not mat._sp_compressed:
        raise NotImplementedError("Could not run 'aten::addmv' with arguments from the 'SparseCPU' backend. Multiply "
                                  "a CSR matrix (.to_sparse_csr()) or use torch.mv and add instead.")
    if getattr(mat, "_kind", None) == "bsc":
        raise RuntimeError("torch.addmv: operation not supported for mat with SparseBsc layout. Convert it "
                           "(.to_sparse_csr() or .to_dense()) first.")
    if not isinstance(mat, SparseTensor) or isinstance(input, SparseTensor) or isinstance(vec, SparseTensor):
        return addmm(input, mat, vec, beta, alpha, via="mv")
    if not input.dtype is mat.dtype is vec.dtype:
        from .._functional._common import SCALAR_NAME
        a, b, c = (SCALAR_NAME.get(t.dtype.name) for t in (input, mat, vec))
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {a}, {b}, and {c}. Convert them "
                           "(.to(dtype)) first.")
    _check_sparse_dense(mat, vec)
    blocked = mat._kind == "bsr"
    if blocked:
        mat = mat.to_sparse()   # the blocks' entries (as sparse_mm multiplies a BSR matrix)
    values, sink = mat._sp_values, None
    rs = routes(mat)
    if rs:
        values, sink = values.detach(), dense_term(rs, mat.shape)
    out = apply(K.sparse_addmv, input, mat._sp_indices, values, vec, sink, beta, alpha, rows=mat.shape[0])
    if blocked and vec.requires_grad and is_grad_enabled():   # PyTorch's gradient of vec would be BSC @ dense
        out.grad_fn.register_prehook(_refuse_bsr_addmv_backward)
    return out


def _refuse_bsr_addmv_backward(grad_outputs):
    raise RuntimeError("torch.addmv: operation not supported for mat with SparseBsc layout (the gradient of vec, "
                       "as in PyTorch). Multiply a .to_sparse_csr() or .to_dense() copy of the matrix instead.")


def _scaled(t, k):
    return t if k == 1 else t * k


def sparse_addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse; its gradient masked as sparse.mm's."""
    return addmm(mat, mat1, mat2, beta, alpha, via="sparse_addmm")
