"""Tensor's layout as PyTorch reports it: strides, storage offset, contiguity, data_ptr, _base, and the
transposed views T, mT, H, mH; attached to the class after `_methods` (over its functional methods)."""
from . import _memory_format, _views
from ._flags import warn_once
from ._meta import MetaArray
from ._methods import F
from ._tensor import Tensor
from ._user_frames import warn_user


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
def _reversed_dims(self):
    """x.T: PyTorch warns once per process where it is not a matrix transpose (its deprecation)."""
    if self.ndim not in (0, 2) and warn_once(_warned, "T"):
        warn_user("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                  "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                  "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return F.permute(self, tuple(range(self.ndim))[::-1])


_warned = set()
Tensor.T = property(_reversed_dims)
Tensor.mT = property(lambda self: F.transpose(self, -2, -1))
Tensor.H = property(lambda self: F.adjoint(self) if self.ndim == 2 else F.conj(self))
Tensor.mH = property(lambda self: F.adjoint(self))
