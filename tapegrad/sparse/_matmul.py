"""Products with sparse (COO or CSR) operands: sparse @ dense, dense @ sparse, sparse @ sparse, with PyTorch's checks,
result layouts and gradients (masked to the sparse operand's pattern by torch.sparse.mm, dense or on the
product's pattern by torch.mm; see _routes.py for gradients outside an operand's pattern)."""
import numpy as np

from .._dispatch import apply
from .._functional._common import SCALAR_NAME
from .._layout import sparse_bsc, sparse_bsr, sparse_csc
from .._grad_mode import is_grad_enabled
from .._ops import shape as S, sparse as K
from .._pointwise_layout import lay_out_in_order
from . import _pattern as P
from ._coo import SparseTensor, _as_tensor
from ._routes import dense_term, routes, sparse_term


def _type(t):
    return SCALAR_NAME[t.dtype.name]


def sparse_mm(a, b, via="sparse_addmm"):
    """a @ b with a sparse operand: `via` is the PyTorch function called (sparse_addmm: torch.sparse.mm,
    mm: torch.mm / matmul / @, mv: torch.mv)."""
    if via == "sparse_addmm":
        refuse_compressed_product(a, b, "sparse.mm")
    sparse_a, sparse_b = isinstance(a, SparseTensor), isinstance(b, SparseTensor)   # COO or compressed
    blocked = [t for t in (a, b) if getattr(t, "_blocksize", None)]
    if len(blocked) == 1 and b is blocked[0] and b.layout is sparse_bsc and not sparse_a and via == "mm":
        return _dense_bsc(a, b)   # dense @ BSC: PyTorch's (BSR @ dense^T)^T
    if blocked:   # PyTorch multiplies BSR @ dense only: as the COO tensor of the blocks' entries
        if len(blocked) != 1 or blocked[0] is not a or sparse_b or a.layout is not sparse_bsr:
            kinds = ["Strided"] + ["Strided" if not isinstance(t, SparseTensor) else t._layout_name for t in (a, b)]
            raise RuntimeError(f"addmm: computation on CPU is not implemented for {kinds[0]} + {kinds[1]} @ "
                               f"{kinds[2]}. Call .to_dense() or .to_sparse() on the block tensor first.")
        a = a.to_sparse()
        if b.requires_grad and is_grad_enabled():   # PyTorch's gradient of b would be BSC @ dense
            out = _sparse_dense(a, b, via)
            out.grad_fn.register_prehook(_refuse_bsc_backward)
            return out
    if not (sparse_a or sparse_b):   # PyTorch's sparse.mm of dense tensors: (b^T @ a^T)^T
        from .._functional._linalg import mm
        if via == "mm":   # (torch.spmm is torch.mm: its checks come first)
            for t, name in ((a, "self"), (b, "mat2")):
                if t.ndim != 2:
                    raise RuntimeError(f"{name} must be a matrix")
        return mm(b.transpose(-2, -1), a.transpose(-2, -1)).transpose(-2, -1)
    if sparse_a and sparse_b:
        if a._sp_compressed is not b._sp_compressed:
            kinds = [t._layout_name for t in (a, a, b)]
            raise RuntimeError(f"addmm: computation on CPU is not implemented for {kinds[0]} + {kinds[1]} @ "
                               f"{kinds[2]}. Convert both to one layout (to_sparse(), to_sparse_csr()).")
        out = _sparse_sparse(a, b, via)   # CSR or CSC @ CSR or CSC is CSR: the same entries, row by row
        if a._sp_compressed:
            from ._csr import SparseCsrTensor
            return SparseCsrTensor._make(out._sp_indices, out._sp_values, out._sp_size, True)
        return out
    if sparse_b and via == "sparse_addmm":   # PyTorch's (sparse^T @ dense^T)^T, the gradient masked
        return _sparse_dense(b.t(), a.transpose(0, 1), via).transpose(0, 1)
    if sparse_b:
        return _dense_sparse(a, b)
    return _sparse_dense(a, b, via)


def refuse_compressed_product(a, b, name):
    """PyTorch's refusals of a product (name: matmul, mm, mv, bmm, sparse.mm) with a batched or hybrid compressed
    operand, or (matmul) a compressed one and an N-D dense one."""
    def compressed(t):
        return getattr(t, "_sp_compressed", False)

    def nd(t):
        return compressed(t) and t.dim() > 2

    def expand(t):
        return RuntimeError(f"expand is unsupported for {t._layout_name} tensors. Multiply the 2-D matrices one by "
                            "one, or .to_dense() first.")

    def strides(t, transposed=False):
        kind = t._kind if not transposed else {"csr": "csc", "csc": "csr", "bsr": "bsc", "bsc": "bsr"}[t._kind]
        return RuntimeError(f"Sparse {kind.upper()} tensors do not have strides: PyTorch multiplies 2-D compressed "
                            "matrices only. Multiply the 2-D matrices one by one, or .to_dense() first.")
    hybrid = RuntimeError("transpose(): hybrid sparse compressed tensors with dense dimensions are not supported. "
                          "Call .to_dense() first.")
    if name == "bmm" and (compressed(a) or compressed(b)):
        raise NotImplementedError("Could not run 'aten::bmm.out' with arguments from the 'SparseCsrCPU' backend. "
                                  "Multiply the 2-D matrices one by one, or .to_dense() first.")
    if name in ("mm", "sparse.mm") and nd(a):
        raise RuntimeError(f"mat1 must be a matrix, got {a.dim()}-D tensor. Multiply the 2-D matrices one by one.")
    if name in ("mm", "sparse.mm") and nd(b):
        if name == "sparse.mm" and b.dense_dim():
            raise hybrid
        raise RuntimeError(f"{'mat2' if name == 'mm' else 'mat1'} must be a matrix, got {b.dim()}-D tensor. "
                           "Multiply the 2-D matrices one by one.")
    if name == "mv" and nd(a):
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.dim()}, {b.dim()}. Multiply the 2-D "
                           "matrices one by one.")
    if name == "matmul" and compressed(a) and (a.dim() > 2 or b.dim() > 2):
        raise expand(a) if b.dim() > 2 else strides(a)
    if name == "matmul" and nd(b):
        raise hybrid if b.dense_dim() else strides(b, True) if a.dim() == 1 else expand(b)


def _check_sparse_dense(sparse, dense, transposed=False):
    """PyTorch's checks of sparse (n, m) @ dense (m, p); transposed: of dense @ sparse, which PyTorch
    computes as (sparse^T @ dense^T)^T."""
    if sparse.dim() != 2 or sparse.sparse_dim() != 2 or dense.dim() not in (1, 2):
        bad = dense.dim() if sparse.dim() == 2 else sparse.dim()
        raise RuntimeError(f"addmm: matrices expected, got {bad}D tensor")
    inner, got = (sparse.shape[0], dense.shape[-1]) if transposed else (sparse.shape[1], dense.shape[0])
    if inner != got:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {inner}, got {got}")
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {_type(sparse)} but found {_type(dense)}")


def _sparse_dense(sparse, dense, via):
    """sparse (n, m) @ dense (m, p) -> dense (n, p); torch.mm's gradient of the sparse operand is dense,
    torch.sparse.mm's is masked to its pattern (through the values)."""
    _check_sparse_dense(sparse, dense)
    if dense.dim() == 1 and via == "mm":
        via = "mv"
    values, sink = sparse._sp_values, None
    rs = routes(sparse) if via != "sparse_addmm" else None
    if rs:
        values, sink = values.detach(), dense_term(rs, sparse.shape)
    out = apply(K.sparse_mm, sparse._sp_indices, values, dense, sink, rows=sparse.shape[0], via=via)
    if via == "sparse_addmm" and sparse.layout is sparse_csc and out.requires_grad:
        out.grad_fn.register_prehook(_refuse_csc_backward)
    return out


def _dense_bsc(a, b):
    out = sparse_mm(b.t(), a.transpose(0, 1) if a.dim() == 2 else a, "mm")
    out = out.transpose(0, 1) if a.dim() == 2 else out
    if a.requires_grad and is_grad_enabled():   # PyTorch's gradient of a would be dense @ BSR
        out.grad_fn.register_prehook(_refuse_bsr_backward)
    return out


def _refuse_bsr_backward(grad_outputs):
    raise RuntimeError("addmm: computation on CPU is not implemented for Strided + Strided @ SparseBsr (the gradient "
                       "of the dense operand of a product with a BSC tensor, as in PyTorch). Multiply a .to_sparse() "
                       "or .to_dense() copy instead.")


def _refuse_bsc_backward(grad_outputs):
    raise RuntimeError("addmm: computation on CPU is not implemented for Strided + SparseBsc @ Strided (the gradient "
                       "of the dense operand of a BSR product, as in PyTorch). Multiply a .to_sparse() or .to_dense() "
                       "copy instead.")


def _refuse_csc_backward(grad_outputs):
    raise RuntimeError("sparse_addmm_sparse_backward: unsupported combination of layouts, grad: Strided, mat1: "
                       "SparseCsc, mat2: Strided (as in PyTorch). Use torch.mm (a dense gradient) or a CSR operand.")


def _dense_sparse(dense, sparse):
    """dense (..., n, m) @ sparse (m, p) -> dense (..., n, p), PyTorch's MmBackward0; the sparse operand's
    gradient is dense (dense^T @ grad), as PyTorch's."""
    if sparse.dim() == 2 and sparse.sparse_dim() < 2:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: "
                           f"{sparse.sparse_dim()}, d0: 0, d1: 1")
    if dense.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are 0D and "
                           f"{sparse.dim()}D")
    rows = dense if dense.dim() == 2 else dense.unsqueeze(0) if dense.dim() == 1 else \
        dense.reshape(-1, dense.shape[-1])   # as PyTorch's matmul: a vector as a row, batches folded
    _check_sparse_dense(sparse, rows, transposed=True)
    values, sink = sparse._sp_values, None
    rs = routes(sparse)
    if rs:
        values, sink = values.detach(), dense_term(rs, sparse.shape)
    coo = not sparse._sp_compressed
    out = apply(K.dense_sparse_mm, rows, sparse._sp_indices, values, sink, cols=sparse.shape[1], coo=coo)
    if dense.dim() == 1:
        return out.squeeze_(0)
    if dense.dim() == 2:
        return out
    # batches unfolded as PyTorch's matmul does, by _unsafe_view: a copy keeping the product's strides
    out = apply(S.reshape_copy, out, shape=tuple(dense.shape[:-1]) + (sparse.shape[1],))
    if coo:
        lay_out_in_order((out,), ((out.dim() - 1,) + tuple(range(out.dim() - 1)),))
    return out


def _sparse_sparse(a, b, via):
    """sparse (n, m) @ sparse (m, p) -> sparse (n, p), coalesced; each operand's gradient lies on the
    pattern of the product of the result's gradient with the other operand (torch.sparse.mm: masked to the
    operand's own pattern there)."""
    for s in (a, b):
        if s.dense_dim():
            raise RuntimeError(f"sparse_sparse_matmul_cpu: scalar values expected, got {s.dense_dim()}D values")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
                           f"{'x'.join(map(str, b.shape))})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {_type(a)} does not match mat2 dtype {_type(b)}")
    (n, m), p = a.shape, b.shape[1]
    ai, bi = a._sp_indices.numpy(), b._sp_indices.numpy()
    positions, pa, pb, out = P.matmul(ai, bi, p)
    count = len(positions)
    av, bv, ra, rb, rab, arb = a._sp_values, b._sp_values, None, None, None, None
    masked = via == "sparse_addmm"
    ra_routes, rb_routes = routes(a), routes(b)
    result = P.unravel(positions, (n, p))
    if ra_routes:   # a's gradient: grad @ b^T
        pattern, ra = _term(ra_routes, P.matmul(result, bi[::-1], m)[0], a, masked)
        av, rab = av.detach(), _pairs_into(pattern, bi, p, positions)
    if rb_routes:   # b's gradient: a^T @ grad
        pattern, rb = _term(rb_routes, P.matmul(ai[::-1], result, p)[0], b, masked)
        bv, arb = bv.detach(), _pairs_into(ai, pattern, p, positions)
    node = "sparse_sparse_matmul" if masked else "mm"
    values = apply(K.sparse_sparse_mm, av, bv, _as_tensor(np.stack([pa, pb, out])), ra, rab, rb, arb,
                   count=count, node=node)
    return SparseTensor._make(_as_tensor(result), values, (n, p), True)


def _term(rs, positions, operand, masked):
    """An operand's route term on its gradient's pattern, the product at `positions`; masked (torch.sparse.mm):
    PyTorch's sparse_mask_like_grad, the operand's own pattern when it is coalesced and smaller, else the
    product's with zeros off the operand's pattern. Returns the pattern and the term."""
    own = operand._sp_indices.numpy()
    size = tuple(operand.shape)
    if masked and operand._sp_coalesced and own.shape[1] < len(positions):
        return own, sparse_term(rs, operand._sp_indices, (own.shape[1],))
    pattern = P.unravel(positions, size)
    term = sparse_term(rs, _as_tensor(pattern), (len(positions),))
    if masked:
        found, _ = P.lookup(positions, np.unique(P.linear(own, size)))
        term = term * _as_tensor(found.astype(np.dtype(term.dtype.np)))
    return pattern, term


def _pairs_into(x, y, cols, result):
    """The pairs of x @ y that land on the result's positions, numbered as the result's entries."""
    positions, px, py, out = P.matmul(x, y, cols)
    found, where = P.lookup(positions[out], result)
    return _as_tensor(np.stack([px[found], py[found], where[found]]))
