"""Where a sparse tensor's gradient goes when an op gives it a pattern other than its own.

PyTorch's gradient of a sparse tensor is a tensor of any pattern, handed on as it is: `c = a + b` gives a
and b c's gradient (on c's pattern), `a @ b` gives a the product grad @ b^T (on that product's pattern),
`torch.mm(a, dense)` a dense one. A leaf's .grad then holds entries the leaf does not have, and
`x.to_sparse()` passes them on to x. tapegrad's gradients flow through a tensor's values, which hold its own
pattern only; so a sparse tensor also knows its *routes*: the tensors that take its gradient on any pattern,
each with a factor -- itself when it is a leaf that requires grad, x for x.to_sparse(), the routes of an
add's operands (the second scaled by alpha) for the add's result, and a tensor's own routes (scaled) for its
negation, scalar multiples, clone, to() and coalesce(), which keep its positions. An op giving its operand a gradient on
another pattern reads the operand's values detached and adds a term of zeros whose gradient reaches the
routes: `sparse_term` on given positions (a fresh leaf folded into the sparse leaf's gradient once backward
has written it, or a gather from x), `dense_term` on every position (the leaf's dense sink, or x itself).
"""
from .._dispatch import apply
from .._grad_mode import is_grad_enabled, no_grad
from .._ops import sparse as K


def routes(s):
    """s's routes as ((target, factor), ...): () when no gradient is wanted, None when s's gradient can only
    flow through its values (their history reaches tensors that PyTorch's gradient reaches masked anyway)."""
    if not (s.requires_grad and is_grad_enabled()):
        return ()
    if s._sp_routes is not None:
        return s._sp_routes
    if s.is_leaf:
        return ((s, 1),)
    origin = s._sp_dense
    if origin is not None and origin[0]._version == origin[1]:
        return ((origin[0], 1),)
    return None


def combined(*operands):
    """The routes of a result whose gradient each operand (routes, factor) receives unchanged but scaled;
    None unless every operand's gradient can be routed."""
    out = []
    for r, factor in operands:
        if r is None:
            return None
        out += [(target, k * factor) for target, k in r]
    return tuple(out)


def _leaf_sink(leaf, indices, shape):
    """A fresh leaf of zeros on `indices` whose gradient, once written, joins `leaf`'s sparse gradient."""
    from .._creation import zeros
    from ._coo import SparseTensor
    sink = zeros(shape, dtype=leaf.dtype, requires_grad=True)

    def fold(sink):
        piece = SparseTensor._make(indices, sink._grad.detach(), leaf._sp_size, True)
        with no_grad():
            leaf._sp_extra = piece if leaf._sp_extra is None else leaf._sp_extra + piece
        sink._grad = None

    sink.register_post_accumulate_grad_hook(fold)
    return sink


def sparse_term(rs, indices, shape):
    """Zeros of `shape` (nnz, *dense) on the distinct positions `indices` (a Tensor), whose gradient reaches
    each route on those positions; None when there are no routes."""
    from ._coo import SparseTensor
    terms = []
    for target, factor in rs:
        if isinstance(target, SparseTensor):
            terms.append(apply(K.sparse_route, _leaf_sink(target, indices, shape), None, factor=factor))
        else:
            terms.append(apply(K.sparse_route, target, indices, factor=factor))
    return _sum(terms)


def dense_term(rs, shape):
    """Zeros of the full `shape` whose gradient reaches each route densely (PyTorch's gradient from a dense
    consumer such as torch.mm or dense + sparse); None when there are no routes."""
    from ._coo import SparseTensor
    terms = []
    for target, factor in rs:
        if isinstance(target, SparseTensor):
            if target._sp_sink is None:
                from .._creation import zeros
                target._sp_sink = zeros(shape, dtype=target.dtype, requires_grad=True)
            target = target._sp_sink
        terms.append(apply(K.sparse_route, target, None, factor=factor))
    return _sum(terms)


def _sum(terms):
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out
