"""empty_strided (and Tensor.new_empty_strided): an uninitialised tensor with any strides PyTorch allows (gaps,
permuted, overlapping, 0).

Contiguous strides give a plain tensor. Any other layout is a base-less `as_strided` view (as a tensor
loaded from a checkpoint is) of a flat storage just large enough for it, so `stride()` reports the
strides asked for (size-1 and empty dims included) and writes land in that storage: elements that share
an address read back the last value written there.
"""
from . import _dtypes as D
from ._creation import check_requires_grad, empty
from ._tensor import Tensor
from ._views import contiguous_strides

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
    if stride == contiguous_strides(size):
        out = empty(size, dtype=dtype, device=device)
    else:
        elements = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
        out = empty(elements, dtype=dtype, device=device).as_strided(size, stride).detach()
    if pin_memory:
        from ._pinned import PINNED
        PINNED.add(out._storage)
    return out.requires_grad_() if requires_grad else out


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False):
    """empty_strided in self's dtype and on self's device, unless given."""
    if not isinstance(size, (tuple, list)):   # (a lone int is no size here, as PyTorch's parser says)
        raise TypeError(f"new_empty_strided(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    dtype = D.as_dtype(dtype) or self.dtype
    check_requires_grad(dtype, requires_grad, "Pass a floating dtype, e.g. dtype=torch.float32.")
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device or self.device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


Tensor.new_empty_strided = new_empty_strided
