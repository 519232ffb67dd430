"""Sparsity patterns on the host: which entries an op's result has and where each comes from.

A sparse result's pattern is data (its nnz is), so it is worked out with NumPy when the op is recorded; the
recorded kernels then only gather, multiply and sum values at these positions, which is what gradients flow
through. Indices are (sparse_dim, nnz) int64 arrays; positions are compared as row-major linear indices.
"""
import numpy as np


def linear(indices, sizes):
    """Each entry's row-major position among `sizes` (the sparse dimensions)."""
    if not sizes or not indices.shape[1]:
        return np.zeros(indices.shape[1], np.int64)
    return np.ravel_multi_index(tuple(indices), sizes).astype(np.int64)


def unravel(positions, sizes):
    if not sizes:
        return np.zeros((0, len(positions)), np.int64)
    return np.stack(np.unravel_index(positions, sizes)).astype(np.int64).reshape(len(sizes), -1)


def unique(indices, sizes):
    """The sorted distinct positions of `indices` (coalesce's), and each entry's place among them."""
    positions, inverse = np.unique(linear(indices, sizes), return_inverse=True)
    return unravel(positions, sizes), inverse.reshape(-1)


def first_only(inverse, count):
    """`inverse` where an entry is the first at its position, else `count` (a zero row past the end): gives
    each position once, as PyTorch's gradient of an uncoalesced tensor (its entries at one position share one
    gradient) does."""
    take = np.full(len(inverse), count, np.int64)
    _, first = np.unique(inverse, return_index=True)
    take[first] = inverse[first]
    return take


def merge(a, b, sizes):
    """PyTorch's add of two sparse tensors (add_out_sparse_contiguous): one walk over both entry lists, taking
    the smaller head (both when equal, summed), as a merge of sorted lists -- which they need not be; the
    result is then in the walk's order. Returns the result's indices and, per result entry, the entry of a
    and of b it adds (-1: none)."""
    pa, pb = linear(a, sizes).tolist(), linear(b, sizes).tolist()
    take_a, take_b = [], []
    i = j = 0
    while i < len(pa) or j < len(pb):   # a Python walk: its order is the walk's, whatever the input order
        if j >= len(pb) or (i < len(pa) and pa[i] < pb[j]):
            take_a.append(i), take_b.append(-1)
            i += 1
        elif i >= len(pa) or pb[j] < pa[i]:
            take_a.append(-1), take_b.append(j)
            j += 1
        else:
            take_a.append(i), take_b.append(j)
            i, j = i + 1, j + 1
    take_a, take_b = np.asarray(take_a, np.int64), np.asarray(take_b, np.int64)
    indices = np.where(take_a >= 0, a[:, np.maximum(take_a, 0)] if a.shape[1] else 0,
                       b[:, np.maximum(take_b, 0)] if b.shape[1] else 0)
    return indices.reshape(len(sizes), -1).astype(np.int64), take_a, take_b


def matmul(a, b, cols):
    """The pattern of sparse (n, m) @ sparse (m, cols): every (i, j) some a[i, k] * b[k, j] reaches, as sorted
    linear positions (zeros that cancel stay, as PyTorch's kernel keeps them), with the product's pairs:
    entry pa[n] of a times entry pb[n] of b adds to result entry out[n]."""
    order = np.argsort(b[0], kind="stable")
    starts = np.searchsorted(b[0], a[1], sorter=order)
    counts = np.searchsorted(b[0], a[1], side="right", sorter=order) - starts
    pa = np.repeat(np.arange(a.shape[1], dtype=np.int64), counts)
    offsets = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    pb = order[np.repeat(starts, counts) + offsets].astype(np.int64)
    positions, out = np.unique(a[0, pa] * cols + b[1, pb], return_inverse=True)
    return positions.astype(np.int64), pa, pb, out.reshape(-1).astype(np.int64)


def lookup(positions, among):
    """For each of `positions`: whether it is one of the sorted `among`, and its place there."""
    where = np.minimum(np.searchsorted(among, positions), max(len(among) - 1, 0))
    found = (among[where] == positions) if len(among) else np.zeros(len(positions), bool)
    return found, where.astype(np.int64)
