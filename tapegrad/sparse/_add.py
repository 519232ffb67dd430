"""add / sub with sparse COO operands, as PyTorch: sparse + sparse is sparse (the entry lists merged, see
_pattern.merge; coalesced when both operands are), dense + sparse is dense, sparse + dense is refused."""
import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import sparse as K
from . import _pattern as P
from ._routes import combined, dense_term, routes, sparse_term


def add(a, b, alpha, node):
    """a + alpha * b (node: "add" or "sub", the PyTorch function, whose alpha is already negated)."""
    from .._tensor import Tensor
    if not (isinstance(a, Tensor) and a.is_sparse):
        return _dense_sparse(a, b, alpha, node)
    if not (isinstance(b, Tensor) and b.is_sparse):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if a.shape != b.shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
                           f"{list(b.shape)}")
    dtype = D.promote_types(a.dtype, b.dtype)
    _check_alpha(dtype, alpha)
    from ._coo import _as_tensor
    ai, bi = a._sp_indices.numpy(), b._sp_indices.numpy()
    if a._nnz() == 0 or b._nnz() == 0:   # PyTorch copies the other operand, keeping its coalesced flag
        source = a if b._nnz() == 0 else b
        indices, coalesced = source._sp_indices.numpy(), source._sp_coalesced
        entries, none = np.arange(indices.shape[1]), np.full(indices.shape[1], -1)
        take_a, take_b = (entries, none) if source is a else (none, entries)
    else:
        if a.sparse_dim() != b.sparse_dim():
            raise RuntimeError(f"add: expected 'self' and 'other' to have same density, but 'self' has "
                               f"{a.sparse_dim()} sparse dimensions while 'other' has {b.sparse_dim()} sparse "
                               "dimensions")
        indices, take_a, take_b = P.merge(ai, bi, tuple(a.shape[:a.sparse_dim()]))
        coalesced = a._sp_coalesced and b._sp_coalesced
    values, rs = merged_values(a, b, alpha, node, indices, take_a, take_b, a._sp_values, b._sp_values, dtype)
    return _result(_as_tensor(indices), values, a.shape, coalesced, rs)


def merged_values(a, b, alpha, node, indices, take_a, take_b, av, bv, dtype):
    """The values of a + alpha * b on the merged entries `indices` (take_*: the entry of each operand a result entry
    adds, -1 for none; av, bv: the operands' values), recorded as PyTorch's Add/SubBackward0, with the routes of
    the result (see _routes)."""
    from ._coo import _as_tensor
    take_a, take_b = np.where(take_a < 0, av.shape[0], take_a), np.where(take_b < 0, bv.shape[0], take_b)
    routed, take_r = None, None
    ra, rb = routes(a), routes(b)
    terms = [(r, k) for r, k in ((ra, 1), (rb, alpha)) if r]
    if terms:   # the routed operands' gradient: the result's, on its distinct positions (see _routes)
        sizes = tuple(a.shape[:indices.shape[0]])
        distinct, inverse = P.unique(indices, sizes)
        routed = sparse_term(combined(*terms), _as_tensor(distinct), (distinct.shape[1],) + tuple(av.shape[1:]))
        take_r = _as_tensor(P.first_only(inverse, distinct.shape[1]))
        av, bv = (av.detach() if ra else av), (bv.detach() if rb else bv)
    values = apply(K.sparse_add, av, bv, _as_tensor(take_a), _as_tensor(take_b), routed, take_r, alpha=alpha,
                   dtype=np.dtype(dtype.np), node=node)
    return values, combined((ra, 1), (rb, alpha))


def _result(indices, values, size, coalesced, rs):
    from ._coo import SparseTensor
    out = SparseTensor._make(indices, values, size, coalesced)
    out._sp_routes = rs if rs else None
    return out


def _check_alpha(dtype, alpha):
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _dense_sparse(dense, sparse, alpha, node):
    """dense + alpha * sparse: a dense result; the sparse operand's gradient is dense, as PyTorch's."""
    from .._functional._arith import add, sub
    if tuple(dense.shape) != tuple(sparse.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(dense.shape)} while other has size {list(sparse.shape)} (FYI: dense-sparse "
                           "addition does not currently support broadcasting)")
    if node == "sub":
        return sub(dense, dense_form(sparse), alpha=-alpha)
    return add(dense, dense_form(sparse), alpha=alpha)


def dense_form(s):
    """s as a dense tensor whose gradient reaches s as PyTorch's dense gradient of s does: its routes
    take all of it, else its values take it on their pattern."""
    rs = routes(s)
    values = s._sp_values.detach() if rs else s._sp_values
    dense = apply(K.to_dense, s._sp_indices, values, size=tuple(s.shape))
    return dense + dense_term(rs, tuple(s.shape)) if rs else dense
