"""Tensor.to and its shortcuts (float(), cuda(), type_as...), and the new_* constructors that follow self's
dtype and device; attached to the class after `_methods` (over its functional methods)."""
import builtins

from . import _dtypes as D
from . import _memory_format, _meta
from ._dispatch import apply
from ._inplace import warn_complex_to_real
from ._methods import F
from ._ops import elementwise as E
from ._tensor import Tensor


def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    from .device import device as device_cls, to_jax_device
    for a in args:
        if isinstance(a, (D.dtype,)) or a in (builtins.float, builtins.int, builtins.bool):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, device_cls, builtins.int)):
            device = a
    out = self
    dtype = D.as_dtype(dtype)
    if dtype is not None and dtype is not self.dtype:
        warn_complex_to_real(self.dtype, dtype)
        if dtype.is_floating_point or dtype.is_complex:
            out = apply(E.to_dtype, out, dtype=dtype.np)
        else:
            from ._grad_mode import no_grad
            with no_grad():
                out = apply(E.to_dtype, out, dtype=dtype.np)
    if device is not None and device_cls(device) != self.device:
        if _meta.is_meta(self):
            raise NotImplementedError(_meta.NO_DATA)
        target = to_jax_device(device)
        if target is _meta.META:   # (its shape and dtype only)
            moved = Tensor._wrap(_meta.MetaArray(out.shape, out.dtype.np), out._inference)
        else:
            import jax
            moved = Tensor._wrap(jax.device_put(out._value, target), out._inference)
        out = moved if not out._requires_grad else _recorded_move(out, moved)
    if copy and out is self:
        out = F.clone(self)
    if memory_format is not None and memory_format is not _memory_format.preserve_format:
        out = _memory_format.contiguous(out, memory_format)
    return out


def _recorded_move(src, moved):
    # Device moves keep gradients flowing: record as a differentiable copy (ToCopyBackward0).
    out = apply(E.to_dtype, src, dtype=src.dtype.np)
    out._storage._raw = moved._value   # the moved array replaces the pending copy, which nobody reads
    return out


Tensor.to = to


def type_as(self, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return self.to(other.dtype)


Tensor.type_as = type_as
for _name, _dtype in {"float": D.float32, "double": D.float64, "half": D.float16, "bfloat16": D.bfloat16,
                      "long": D.int64, "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
                      "bool": D.bool_, "cfloat": D.complex64, "cdouble": D.complex128}.items():
    setattr(Tensor, _name, (lambda d: lambda self, memory_format=None: to(self, d))(_dtype))
Tensor.cpu = lambda self: to(self, device="cpu")


def chalf(self, *, memory_format=None):
    # JAX has no complex half type, so there is no complex32 tensor to return
    raise NotImplementedError("\"chalf\" not implemented for 'ComplexHalf': tapegrad has no complex32 dtype (JAX has "
                              "no complex half type). Use x.cfloat() (complex64) instead.")


Tensor.chalf = chalf
# PyTorch's device booleans beside is_cuda and is_cpu: read off the device the same way (tapegrad's devices are
# cpu, cuda and tpu, so these are False); a strided tensor is neither mkldnn nor quantized
for _type in ("meta", "xpu", "mps", "ipu", "xla", "vulkan", "maia", "mtia"):
    setattr(Tensor, "is_" + _type, property((lambda t: lambda self: self.device.type == t)(_type)))
Tensor.is_mkldnn = property(lambda self: False)
Tensor.is_quantized = property(lambda self: False)
Tensor.cuda = lambda self, device=None, non_blocking=False: to(self, device="cuda" if device is None else device)


# new_* follow self's dtype and device unless given (PyTorch's)
def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ._creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_filled(fill, name):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        from ._creation import _filled, _shape
        return _filled(_shape(size, name), fill, dtype or self.dtype, device or self.device, requires_grad)
    method.__name__ = name
    return method


def _new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    from ._creation import full
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


Tensor.new_tensor = _new_tensor
Tensor.new_zeros = _new_filled(0, "new_zeros")
Tensor.new_ones = _new_filled(1, "new_ones")
Tensor.new_empty = _new_filled(0, "new_empty")
Tensor.new_full = _new_full
