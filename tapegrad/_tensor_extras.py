"""Tensor methods with no top-level function: unfold, sum_to_size, fill_diagonal_, the legacy new(), as_subclass,
and the itemsize and nbytes properties."""
import builtins

from . import _legacy
from ._dispatch import apply
from ._functional._common import shape_args, wrap_dim
from ._ops import shape as S
from ._ops.shape import alias as _alias
from ._tensor import Tensor


def unfold(self, dimension, size, step):
    """A view of the windows of `size` elements every `step` along dimension, as a new last dim."""
    d = wrap_dim(dimension, self.ndim)   # (PyTorch's IndexError for a dim out of range)
    length = self.shape[d] if self.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return apply(S.unfold, self, dim=d, size=builtins.int(size), step=builtins.int(step))


def sum_to_size(self, *size):
    """self summed over the dims where it is broadcast from `size` (PyTorch's sum_to: self itself if none)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = shape_args(size, "size", "sum_to_size")
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(n != m and n != 1 for n, m in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:
        return self.sum()
    dims = list(range(lead)) + [lead + k for k, n in enumerate(size) if n == 1 and shape[lead + k] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(size) if lead else out


def fill_diagonal_(self, fill_value, wrap=False):
    """As PyTorch: the main diagonal (and, with wrap, its continuation below a tall matrix) filled through
    as_strided views of self."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and builtins.any(n != height for n in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    strides, offset = self.stride(), self.storage_offset()
    size, stride = builtins.min(height, width), builtins.sum(strides)
    self.as_strided((size,), (stride,), offset).fill_(fill_value)
    if wrap and self.ndim == 2 and height > width + 1:
        step = width + 1
        count = (self.numel() + step - 1) // step - size
        self.as_strided((count,), (stride,), offset + strides[0] * (width + 1)).fill_(fill_value)
    return self


_NEW_CLASSES = {}


def new(self, *args, **kwargs):
    """The legacy constructor, in self's dtype and device: new() empty, new(*sizes) (zeros here), new(data)."""
    key = (self.dtype, self.device.type)
    cls = _NEW_CLASSES.get(key)
    if cls is None:
        cls = _NEW_CLASSES[key] = _legacy._typed_class(_legacy._TYPE_NAMES[self.dtype], self.device.type)
    kwargs.setdefault("device", self.device)
    return _legacy._construct(cls, args, kwargs)


def as_subclass(self, cls):
    """self's data and history as an instance of cls (a Tensor subclass, whose __init__ is not called): an alias
    of self, recorded as PyTorch records it (AliasBackward0)."""
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    out = apply(_alias, self)
    if cls is Tensor:
        return out
    try:
        out.__class__ = cls
    except TypeError:   # (cls adds __slots__ of its own: a new object of it takes out's fields)
        new = object.__new__(cls)
        for name in Tensor.__slots__[:-2]:   # (not __weakref__ and __dict__)
            setattr(new, name, getattr(out, name))
        out = new
    return out


Tensor.unfold = unfold
Tensor.as_subclass = as_subclass
Tensor.sum_to_size = sum_to_size
Tensor.fill_diagonal_ = fill_diagonal_
Tensor.new = new
Tensor.itemsize = property(lambda self: self.dtype.itemsize)
Tensor.nbytes = property(lambda self: self.numel() * self.dtype.itemsize)
