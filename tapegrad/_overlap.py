"""PyTorch's memory-overlap checks for in-place ops, read off the layouts of views (`_views.layout`).

Tensors here never alias memory, but PyTorch's do, and it refuses an in-place op whose result would
depend on the order elements are written in: a target with several elements at one address (an
expand()ed tensor), or an operand that shares some but not all of the target's memory.
"""
import math

from ._views import layout, strides as strides_of

_CLONE = "Please clone() the tensor before performing the operation."
INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. " + _CLONE)
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                   "a single memory location. " + _CLONE)


def check_overlap(target, operands=()):
    """Raise PyTorch's error when writing `target` in place, reading `operands`, is refused."""
    shared = [o for o in operands if getattr(o, "_storage", None) is target._storage and o is not target]
    if target._view is None and not shared:
        return   # the common case: a base tensor, operands elsewhere
    shape = tuple(target.shape)
    strides, offset = layout(target)
    if has_internal_overlap(target):
        raise RuntimeError(INTERNAL_OVERLAP)
    for other in shared:
        if _partially_overlap(shape, strides, offset, other):
            raise RuntimeError(PARTIAL_OVERLAP)


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
