"""Sparse COO kernels: a sparse tensor is (indices, values, size) and these entries take its values as an
ordinary array, so gradients reach the values (masked to the pattern, as PyTorch's sparse gradients are)."""
import jax
import jax.numpy as jnp
from jax import lax

from ._registry import defop, overload, KEEP


def _sparse_mm(indices, values, dense, sink, rows, via):
    # row r of the product sums values[k] * dense[col_k] over the entries k of row r (dense: a matrix or a vector)
    terms = values.reshape(values.shape + (1,) * (dense.ndim - 1)) * dense[indices[1]]
    out = jax.ops.segment_sum(terms, indices[0], num_segments=rows)
    if sink is None:
        return out
    # sink: zeros shaped as the sparse operand, whose gradient is PyTorch's dense one (grad @ dense^T), for
    # torch.mm with a sparse leaf that requires grad; it adds nothing to the value, not even 0 * inf
    return out + _gradient_only(sink @ lax.stop_gradient(dense))


def _sparse_addmv(inp, indices, values, vec, sink, beta, alpha, rows):
    # beta * inp + alpha * (sparse @ vec), as the dense addmv (beta == 0 ignores inp, NaN included)
    scaled = jnp.where(beta == 0, jnp.zeros((), inp.dtype), beta * inp)
    return scaled + alpha * _sparse_mm(indices, values, vec, sink, rows, "mv")


def _dense_sparse_mm(dense, indices, values, sink, cols, coo):
    # dense (n, m) @ sparse (m, cols): column c of the product sums dense[:, row_k] * values[k] over the entries
    # k of column c; sink as in _sparse_mm (the sparse operand's dense gradient, dense^T @ grad)
    terms = dense[:, indices[0]] * values
    out = jax.ops.segment_sum(terms.T, indices[1], num_segments=cols).T
    return out if sink is None else out + _gradient_only(lax.stop_gradient(dense) @ sink)


def _pair_products(x, y, pairs, count):
    # sum of x[i] * y[j] into entry k of the result, for each column (i, j, k) of pairs
    return jax.ops.segment_sum(x[pairs[0]] * y[pairs[1]], pairs[2], num_segments=count)


def _sparse_sparse_mm(a, b, ab, ra, rab, rb, arb, count, node):
    # values of sparse @ sparse on the product's pattern (ab: its pairs); ra / rb: route terms of an operand
    # (zeros on its gradient's pattern, see sparse/_routes.py) multiplied in on their own pairs
    # (a term's value is exactly zero, whatever the other operand holds: 0 * inf must not reach the result)
    out = _pair_products(a, b, ab, count)
    if ra is not None:
        out = out + _gradient_only(_pair_products(jnp.asarray(ra, a.dtype), lax.stop_gradient(b), rab, count))
    if rb is not None:
        out = out + _gradient_only(_pair_products(lax.stop_gradient(a), jnp.asarray(rb, b.dtype), arb, count))
    return out


def _pad(x):
    return jnp.concatenate([x, jnp.zeros((1,) + x.shape[1:], x.dtype)])


def _sparse_add(a, b, take_a, take_b, routed, take_r, alpha, dtype, node):
    # a + alpha * b entry by entry (take_*: which entry of each operand a result entry adds; the operand's
    # length for none), plus the operands' route term (on the result's distinct positions, see sparse/_routes)
    a, b = _pad(jnp.asarray(a, dtype))[take_a], _pad(jnp.asarray(b, dtype))[take_b]
    out = a + (b if alpha == 1 else alpha * b)
    return out if routed is None else out + _pad(jnp.asarray(routed, dtype))[take_r]


@jax.custom_jvp
def _gradient_only(y):
    # zeros whose derivative is the identity: a route's term adds nothing to a value, even an infinite one
    return jnp.zeros_like(y)


_gradient_only.defjvp(lambda primals, tangents: (jnp.zeros_like(primals[0]), tangents[0]))


def _route(x, indices, factor):
    return _gradient_only(x if indices is None else x[tuple(indices)]) * factor


def _to_dense(indices, values, size):
    dense = jnp.zeros(size, values.dtype).at[tuple(indices)]
    # (duplicates add up; bool values, which XLA cannot add, combine by `or` as PyTorch's sum of bools does)
    return dense.max(values) if values.dtype == jnp.bool_ else dense.add(values)


def _segment_sum(values, segments, count, node, dense_axes=(), drop=False, shape=None):
    # entries sharing a segment summed, then the dense dimensions `dense_axes`; drop: one segment, removed;
    # shape: the result reshaped (sum's keepdim)
    out = jax.ops.segment_sum(values, segments, num_segments=count)
    if dense_axes:
        out = out.sum(axis=dense_axes)
    out = out[0] if drop else out
    return out if shape is None else out.reshape(shape)


# values of sparse_coo_tensor(indices, values) as recorded (an identity, under PyTorch's node name)
sparse_coo_tensor = defop("sparse_coo_tensor", lambda values, csr=False: values, dtype_rule=KEEP,
                          node_name="SparseCooTensorWithDimsAndTensorsBackward0",
                          overloads=[overload("SparseCompressedTensorBackward0", csr=True)])
# Tensor.values(): a view of the values, differentiable (PyTorch's _values() is not)
# (shape: a batched compressed tensor's (*batch, nnz, ...) values, held as (batches * nnz, ...))
sparse_values = defop("sparse_values", lambda values, shape=None: values if shape is None else values.reshape(shape),
                      dtype_rule=KEEP, view=True,
                      node_name="ValuesBackward0")
# PyTorch's SparseAddmm node also lists the (absent) dense summand first
sparse_mm = defop("sparse_mm", _sparse_mm, dtype_rule=KEEP, diff=(1, 2, 3), node="sparse_addmm",
                  overloads=[overload("MmBackward0", via="mm"), overload("MvBackward0", via="mv"),
                             overload("SparseAddmmBackward0", optional=(0,), via="sparse_addmm")])
# addmv with a compressed matrix: one AddmvBackward0, the matrix's gradient dense as torch.mv's
sparse_addmv = defop("sparse_addmv", _sparse_addmv, dtype_rule=KEEP, diff=(0, 2, 3, 4), node="addmv")
to_dense = defop("to_dense", _to_dense, dtype_rule=KEEP, diff=(1,))
# the entries of a dense tensor at given indices: the values of its to_sparse()
to_sparse = defop("to_sparse", lambda x, indices, full, csr: x[tuple(indices)], dtype_rule=KEEP, diff=(0,),
                  overloads=[overload("ToSparseCsrBackward0", csr=True), overload("ToSparseCscBackward0", csr="csc"),
                             overload("ToSparseBsrBackward0", csr="bsr"), overload("ToSparseBscBackward0", csr="bsc"),
                             overload("ToSparseBackward1", full=True)])
# entries sharing a segment summed: coalesce() and sparse.sum over some dimensions
sparse_segment_sum = defop("sparse_segment_sum", _segment_sum, dtype_rule=KEEP, diff=(0,),
                           node="coalesce", overloads=[overload("SparseSumBackward0", node="sum"),
                                                      overload("SumBackward1", node="tensor_sum")])
# dense @ sparse: a dense result (PyTorch's MmBackward0; the sparse operand's gradient is dense)
dense_sparse_mm = defop("dense_sparse_mm", _dense_sparse_mm, dtype_rule=KEEP, diff=(0, 2, 3), node="mm")
# PyTorch computes dense @ COO as (COO^T @ dense^T)^T: the product is column-major (dense @ CSR is not)
dense_sparse_mm.result_order = lambda static, shapes: ((1, 0) if static["coo"] else None,)
# sparse @ sparse: the values on the product's pattern
sparse_sparse_mm = defop("sparse_sparse_mm", _sparse_sparse_mm, dtype_rule=KEEP, diff=(0, 1, 3, 5), node="mm",
                         overloads=[overload("SparseSparseMatmulBackward0", node="sparse_sparse_matmul")])
# sparse + sparse: the values of the merged entry lists
sparse_add = defop("sparse_add", _sparse_add, dtype_rule=KEEP, diff=(0, 1, 4), node="add",
                   overloads=[overload("SubBackward0", node="sub")])
# zeros whose gradient reaches a sparse tensor's routes (see sparse/_routes.py)
sparse_route = defop("sparse_route", _route, dtype_rule=KEEP, diff=(0,))
