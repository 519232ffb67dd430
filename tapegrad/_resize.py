"""Tensor.resize_ / resize_as_ (and torch.resize_as_), and the deprecated out-of-place resize / resize_as.

resize_ gives a tensor new sizes, in place, as PyTorch's: its storage elements from its storage offset on, in
storage order, laid out contiguously (or channels-last), so the elements that fit keep their place in memory.
The tensor then reads its storage through an as_strided recipe (a base-less view, as after t_(), or a view of
its old base). Where the new sizes need more elements than the storage holds, the storage is grown: PyTorch
grows it in place, tapegrad copies it into a larger one whose new elements are zeros (PyTorch leaves them
uninitialised) and that shares the old one's version counter; the other tensors of the old storage (its views,
its detach()es) then no longer see this tensor's writes. As in PyTorch, a tensor that requires grad is refused,
new sizes bump the version (so a value saved for backward is stale), and the same sizes change nothing.
"""
import functools
import math
import operator

import jax.numpy as jnp

from . import _memory_format as M
from ._grad_mode import no_grad
from ._inplace import check_inplace
from ._redirect import RedirectingStorage
from ._shared_memory import SHARED
from ._storage import Storage
from ._tensor import Tensor
from ._view_info import ViewInfo
from ._view_layout import contiguous_strides
from .autograd import Function
from ._pointwise_layout import _strides_in_order   # (dense, dims in an order: channels-last's)
from ._user_frames import warn_user

__all__ = ["resize_", "resize_as_", "resize", "resize_as"]

_REQUIRES_GRAD = ("cannot resize variables that require grad. Resize x.detach() (it shares x's data) or make a "
                  "new tensor of those sizes.")


def resize_(self, *sizes, size=None, memory_format=None):
    """self with new sizes, in place (see the module's docstring); memory_format: contiguous_format (the
    default) or channels_last(_3d) for the new strides."""
    from ._functional._common import shape_args
    if sizes and size is not None:
        raise TypeError("resize_() got multiple values for argument 'size'")
    if not sizes and size is None:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    sizes = shape_args(sizes if size is None else (size,), "size", "resize_")
    return _resize(self, sizes, memory_format, "resize_")


def resize_as_(self, the_template, *, memory_format=None):
    """self resized in place to the_template's sizes; memory_format=preserve_format takes the template's."""
    if not isinstance(self, Tensor):   # (torch.resize_as_(input, the_template))
        raise TypeError(f"resize_as_(): argument 'input' (position 1) must be Tensor, not {type(self).__name__}")
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    if memory_format is M.preserve_format:
        memory_format = M.suggest_memory_format(the_template)
    return _resize(self, tuple(the_template.shape), memory_format, "resize_as_")


def _resize(self, sizes, memory_format, name):
    if isinstance(self._storage, RedirectingStorage):
        raise NotImplementedError(f"Could not run 'aten::resize_' with arguments from the '{_backend(self)}' "
                                  f"backend: {name} resizes strided (dense) tensors only.")
    if memory_format is not None and not isinstance(memory_format, M.memory_format):
        raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    if self._requires_grad:
        raise RuntimeError(_REQUIRES_GRAD)
    check_inplace(self)   # (an inference tensor outside inference mode)
    offset = self.storage_offset()
    _check_sizes(sizes, self.dtype.itemsize, offset)
    error = None
    if memory_format is None or memory_format is M.contiguous_format:
        strides = contiguous_strides(sizes)
    elif memory_format is M.preserve_format:
        error = RuntimeError("Unsupported memory formatPreserve")
    elif len(sizes) != M._ORDERS[memory_format][0]:
        error = RuntimeError(f"required rank {M._ORDERS[memory_format][0]} tensor to use {memory_format.name} format")
    else:
        strides = _strides_in_order(sizes, M._ORDERS[memory_format][1])
    if error is not None:   # PyTorch resizes (contiguously, the version kept), then refuses the format
        _rebind(self, *_room(self._storage, sizes, contiguous_strides(sizes), offset))
        raise error
    if sizes == tuple(self.shape) and memory_format is None:
        return self   # (PyTorch changes nothing: not even the strides or the version)
    changed = sizes != tuple(self.shape)
    storage, sizes, strides, offset = _room(self._storage, sizes, strides, offset)
    if changed:
        storage.bump()   # (new strides alone bump nothing, as in PyTorch)
    _rebind(self, storage, sizes, strides, offset)
    return self


def _room(storage, sizes, strides, offset):
    """(the storage, grown where the layout needs more elements than it holds, and the layout)."""
    needed = 0 if 0 in sizes else offset + sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    held = math.prod(storage._raw.shape)
    return (_grown(storage, needed - held) if needed > held else storage), sizes, strides, offset


def _backend(t):
    return ("SparseCsrCPU" if t._sp_compressed else "SparseCPU" if t.is_sparse else
            "NestedTensorCPU" if t.is_nested else type(t).__name__)


def _check_sizes(sizes, itemsize, offset):
    """PyTorch's checks of the new sizes: their product (as unsigned 64-bit numbers, as its numel check reads
    them) and the storage bytes they need must fit in an int64."""
    numel, overflow = 1, False
    for n in sizes:
        numel *= n % 2 ** 64
        overflow = overflow or numel >= 2 ** 64
        numel %= 2 ** 64
    if overflow or numel >= 2 ** 63:
        raise RuntimeError("numel: integer multiplication overflow")
    negative = [n for n in sizes if n < 0]
    if negative:   # (PyTorch lets a negative size through when another is 0, making a tensor it cannot use)
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {list(sizes)}")
    if (numel + offset) * itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(sizes)}")


def _grown(storage, extra):
    """A larger copy of the storage (zeros after its elements) sharing its version counter; PyTorch refuses to
    grow shared memory."""
    if storage in SHARED:
        raise RuntimeError("Trying to resize storage that is not resizable. Shared memory keeps its size: "
                           "resize a clone() instead.")
    flat = jnp.pad(storage.value.reshape(-1), (0, extra))
    grown = Storage(flat)
    grown.counter = storage.counter
    return grown


def _rebind(self, storage, sizes, strides, offset):
    """self reads `storage` through (sizes, strides, offset): no recipe where that is the storage's own array (and
    self was no view); else an as_strided view that keeps self's base while the storage is the same."""
    from ._functional._shape import as_strided
    old = self._view
    keeps_base = old is not None and old.base is not None and storage is self._storage
    if not keeps_base and offset == 0 and sizes == tuple(storage._raw.shape) and strides == contiguous_strides(sizes):
        self._storage, self._view = storage, None
        return
    whole = object.__new__(Tensor)._init(storage, None, self._inference)   # the storage's array as a tensor
    with no_grad():
        info = as_strided(whole, sizes, strides, offset)._view
    view = ViewInfo(old.base if keeps_base else None, info.steps, info.positions, info.version, info.value)
    if keeps_base:
        view.creation, view.output_nr, view.grad_version = old.creation, old.output_nr, old.grad_version
    self._storage, self._view = storage, view


def resize(self, *sizes):
    """Deprecated: a tensor of self's elements in the given sizes (the same number of them), differentiable."""
    warn_user("non-inplace resize is deprecated", UserWarning)
    return Resize.apply(self, sizes)


def resize_as(self, tensor):
    """Deprecated: resize(*tensor.size())."""
    warn_user("non-inplace resize_as is deprecated", UserWarning)
    return Resize.apply(self, tensor.size())


class Resize(Function):
    """PyTorch's torch.autograd._functions.Resize: a view of a contiguous input, else of its contiguous copy (its
    node prints as ResizeBackward)."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = functools.reduce(operator.mul, sizes, 1)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                ("requested resize to {} ({} elements in total), but the given tensor has a size of {} ({} "
                 "elements). autograd's resize can only change the shape of a given tensor, while preserving "
                 "the number of elements. ").format("x".join(map(str, sizes)), ctx.numel,
                                                     "x".join(map(str, tensor.size())), tensor.numel()))
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
Tensor.resize = resize
Tensor.resize_as = resize_as
