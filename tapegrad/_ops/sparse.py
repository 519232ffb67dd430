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
    # torch.mm with a sparse leaf that requires grad; it adds nothing to the value
    return out + (sink - lax.stop_gradient(sink)) @ dense


def _to_dense(indices, values, size):
    return jnp.zeros(size, values.dtype).at[tuple(indices)].add(values)


def _segment_sum(values, segments, count, node, dense_axes=(), drop=False):
    # entries sharing a segment summed, then the dense dimensions `dense_axes`; drop: one segment, removed
    out = jax.ops.segment_sum(values, segments, num_segments=count)
    if dense_axes:
        out = out.sum(axis=dense_axes)
    return out[0] if drop else out


# values of sparse_coo_tensor(indices, values) as recorded (an identity, under PyTorch's node name)
sparse_coo_tensor = defop("sparse_coo_tensor", lambda values: values, dtype_rule=KEEP,
                          node_name="SparseCooTensorWithDimsAndTensorsBackward0")
# Tensor.values(): a view of the values, differentiable (PyTorch's _values() is not)
sparse_values = defop("sparse_values", lambda values: values, dtype_rule=KEEP, view=True,
                      node_name="ValuesBackward0")
# PyTorch's SparseAddmm node also lists the (absent) dense summand first
sparse_mm = defop("sparse_mm", _sparse_mm, dtype_rule=KEEP, diff=(1, 2, 3), node="sparse_addmm",
                  overloads=[overload("MmBackward0", via="mm"), overload("MvBackward0", via="mv"),
                             overload("SparseAddmmBackward0", optional=(0,), via="sparse_addmm")])
to_dense = defop("to_dense", _to_dense, dtype_rule=KEEP, diff=(1,))
# the entries of a dense tensor at given indices: the values of its to_sparse()
to_sparse = defop("to_sparse", lambda x, indices, full: x[tuple(indices)], dtype_rule=KEEP, diff=(0,),
                  overloads=[overload("ToSparseBackward1", full=True)])
# entries sharing a segment summed: coalesce() and sparse.sum over some dimensions
sparse_segment_sum = defop("sparse_segment_sum", _segment_sum, dtype_rule=KEEP, diff=(0,),
                           node="coalesce", overloads=[overload("SparseSumBackward0", node="sum")])
