"""PyTorch's memory-overlap checks for in-place ops, read off the layouts of views (`_views.layout`).

Tensors here never alias memory, but PyTorch's do, and it refuses an in-place op whose result would
depend on the order elements are written in: a target with several elements at one address (an
expand()ed tensor), or an operand that shares some but not all of the target's memory. Layouts it finds
too hard to compare (strided or expanded operands) it lets through, and its loop then reads elements it
has already written: `loop_reads` says which.
"""
import math

import numpy as np

from ._views import layout, strides as strides_of

_CLONE = "Please clone() the tensor before performing the operation."
INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. " + _CLONE)
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                   "a single memory location. " + _CLONE)


def check_overlap(target, operands=()):
    """Raise PyTorch's error when writing `target` in place, reading `operands`, is refused; return the
    operands that share its memory (all allowed)."""
    shared = [o for o in operands if getattr(o, "_storage", None) is target._storage and o is not target]
    if target._view is None and not shared:
        return shared   # the common case: a base tensor, operands elsewhere
    shape = tuple(target.shape)
    strides, offset = layout(target)
    if has_internal_overlap(target):
        raise RuntimeError(INTERNAL_OVERLAP)
    for other in shared:
        if _partially_overlap(shape, strides, offset, other):
            raise RuntimeError(PARTIAL_OVERLAP)
    return shared


def loop_reads(target, operands):
    """Where PyTorch's elementwise loop, writing `target` in place, reads a value it wrote earlier.

    Its TensorIterator visits the target's elements in memory order (dims by stride, the smallest innermost)
    and reads each input element just before writing that result, so an operand sharing the target's memory
    reads the new value of every element at its address written earlier in the loop, and the old value of
    the others (its own address included). That is the rule of inner rows shorter than 64 bytes: longer
    contiguous ones go through vectorised kernels that read 64-byte chunks (a broadcast scalar once per row)
    before writing them, which depends on the CPU and is not followed here.
    Returns ([(operand index, source element, mask)], depth): operand k's element i (flat, broadcast to the
    target's shape) reads the new value of the target's flat element src[i] where mask[i]; depth is the
    longest chain of such reads. None when no operand reads a written value."""
    shape = tuple(target.shape)
    n = math.prod(shape)
    shared = [(k, o) for k, o in enumerate(operands) if getattr(o, "_storage", None) is target._storage
              and o is not target and o.dtype is target.dtype and o.ndim <= len(shape)]
    if not shared or n == 0:
        return None
    strides, offset = layout(target)
    written = _addresses(shape, strides, offset)
    order = sorted(range(len(shape)), key=lambda d: strides[d], reverse=True)   # outermost first
    rank = np.empty(n, np.int64)
    rank[np.arange(n).reshape(shape).transpose(order).ravel()] = np.arange(n)
    by_address = np.argsort(written, kind="stable")
    addresses = written[by_address]
    reads = []
    for k, o in shared:
        o_strides, o_offset = layout(o)
        lead = len(shape) - o.ndim
        broadcast = [0] * lead + [s if size != 1 else 0 for size, s in zip(o.shape, o_strides)]
        read = _addresses(shape, broadcast, o_offset)
        at = np.minimum(np.searchsorted(addresses, read), n - 1)
        src = by_address[at]
        mask = (addresses[at] == read) & (rank[src] < rank)
        if mask.any():
            reads.append((k, np.where(mask, src, 0), mask))
    if not reads:
        return None
    depth = np.zeros(n, np.int64)
    while True:
        longer = np.zeros(n, np.int64)
        for _, src, mask in reads:
            longer = np.maximum(longer, np.where(mask, depth[src] + 1, 0))
        if (longer == depth).all():
            return reads, int(depth.max())
        depth = longer


def _addresses(shape, strides, offset):
    """The storage position of each element of a layout, flat in C order."""
    out = np.full(shape, offset, np.int64)
    for d, (size, stride) in enumerate(zip(shape, strides)):
        out += (np.arange(size, dtype=np.int64) * stride).reshape((size,) + (1,) * (len(shape) - d - 1))
    return out.ravel()


def has_internal_overlap(t):
    """Whether several elements of t share one address (a dimension of stride 0: an expand()ed view)."""
    if t._view is None:
        return False
    return any(n > 1 and s == 0 for n, s in zip(t.shape, strides_of(t)))


def _partially_overlap(shape, strides, offset, other):
    # PyTorch's get_overlap_status: only dense, non-overlapping layouts are compared (others are "too hard"
    # and let through); the same memory span read with the same strides is a full overlap, which is allowed
    other_shape = tuple(other.shape)
    other_strides, other_offset = layout(other)
    n, m = math.prod(shape), math.prod(other_shape)
    if n == 0 or m == 0 or not (_dense(shape, strides) and _dense(other_shape, other_strides)):
        return False
    if (offset, offset + n) == (other_offset, other_offset + m):
        return tuple(strides) != tuple(other_strides)
    return offset < other_offset + m and other_offset < offset + n


def _dense(shape, strides):
    """PyTorch's is_non_overlapping_and_dense: the strides are a permutation of contiguous ones."""
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True
