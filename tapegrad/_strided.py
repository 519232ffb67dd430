"""empty_strided: an uninitialised tensor with the strides asked for, built as a view of a contiguous one.

tapegrad's strides are those of a view (slices, permutes, expands of a contiguous base), so strides
that a view can have are reproduced: a permutation of the dimensions, gaps between rows (each stride
a multiple of the next smaller one), and 0 (an expanded dimension). A size-1 or empty dimension's
stride is the one tapegrad's layout gives it, as the stride of such a dimension is never used to read.
"""
from ._creation import empty

__all__ = ["empty_strided"]


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if pin_memory:
        from . import accelerator
        if not accelerator.is_available():
            raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
                               "allocator is available on this system.")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    real = [d for d in range(len(size)) if size[d] > 1 and stride[d] > 0]
    if 0 in size or not real:
        out = empty(size, dtype=dtype, device=device)
    else:
        out = _strided_view(size, stride, real, dtype, device)
    if pin_memory:
        from ._pinned import PINNED
        PINNED.add(out._storage)
    return out.requires_grad_() if requires_grad else out


def _strided_view(size, stride, real, dtype, device):
    order = sorted(real, key=lambda d: (stride[d], d))           # innermost first
    extents, slices = [], []                                    # the base, outermost first
    if stride[order[0]] > 1:
        extents.append(stride[order[0]])                        # elements before the next one of the innermost dim
        slices.append(0)
    for inner, outer in zip(order, order[1:]):
        ratio, rest = divmod(stride[outer], stride[inner])
        if rest or ratio < size[inner]:
            raise NotImplementedError(
                f"tapegrad.empty_strided: strides {stride} for sizes {size} are not those of a view (each stride must "
                f"be a multiple of the next smaller one, past its extent). Allocate with tapegrad.empty and use "
                f"permute/slicing for the layout you need.")
        extents.append(ratio)
        slices.append(slice(0, size[inner]))
    extents.append(size[order[-1]])
    slices.append(slice(None))
    extents, slices = extents[::-1], slices[::-1]
    base = empty(extents, dtype=dtype, device=device)[tuple(slices)]   # dims: order[::-1] (outermost first)
    # put the real dims back in their places, then add the size-1 dims and expand the stride-0 ones
    placed = base.permute([order[::-1].index(d) for d in real])
    shape = [size[d] if d in real else 1 for d in range(len(size))]
    out = placed.reshape(shape) if len(shape) != len(real) else placed
    return out.expand(size) if any(stride[d] == 0 and size[d] > 1 for d in range(len(size))) else out
