"""Tensor's layout as PyTorch reports it: strides, storage offset, contiguity, data_ptr, _base, and the
transposed views T, mT, H, mH; attached to the class after `_methods` (over its functional methods)."""
from . import _memory_format, _views
from ._meta import MetaArray
from ._methods import F
from ._tensor import Tensor


def _stride(self, dim=None):
    strides = _views.strides(self)
    return strides if dim is None else strides[F.wrap_dim(dim, self.ndim)] if self.ndim else strides[dim]


def contiguous(self, memory_format=None):
    return _memory_format.contiguous(self, memory_format)


Tensor.stride = _stride
Tensor.storage_offset = lambda self: _views.layout(self)[1]
Tensor.is_contiguous = lambda self, memory_format=None: _memory_format.is_contiguous(self, memory_format)
Tensor.contiguous = contiguous
# A stable fake address per storage: views of one base differ by their offset, as in PyTorch.
# (a meta tensor has no memory: PyTorch's data_ptr is 0)
Tensor.data_ptr = lambda self: 0 if type(self._storage._raw) is MetaArray else (
    id(self._storage) * 64 + _views.layout(self)[1] * self.dtype.itemsize)
# a view made by a non-differentiable view op (view(dtype)) shares storage but has no _base, as in PyTorch
Tensor._base = property(lambda self: self._view.base if self._view is not None and self._view.steps[-1][0].diff != ()
                        else None)
Tensor._is_view = lambda self: self._view is not None and self._view.base is not None
Tensor.T = property(lambda self: F.permute(self, tuple(range(self.ndim))[::-1]))
Tensor.mT = property(lambda self: F.transpose(self, -2, -1))
Tensor.H = property(lambda self: F.adjoint(self) if self.ndim == 2 else F.conj(self))
Tensor.mH = property(lambda self: F.adjoint(self))
