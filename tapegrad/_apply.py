"""Tensor.apply_, map_ and map2_: a Python callable applied element by element, in place (CPU tensors only).

As PyTorch's: self's elements are visited in row-major order, each read as a Python number (bool, int, float or
complex, by dtype) with the matching elements of the other operands (expanded to self's shape); the callable's
result is converted to self's dtype with PyTorch's conversions (store_scalar: an integer dtype truncates a float
and checks the range, a floating one takes anything with __float__) and written before the next element is read,
so an operand that shares self's memory sees the earlier writes, and an exception leaves the elements done so far
written. The loop runs over a host copy of the storage, written back once at the end; that write moves the
version counter (PyTorch's loop writes memory directly and does not), so a tensor saved for backward and then
changed by apply_ makes that backward raise, where PyTorch would use the new values silently.
"""
import math
import operator

import numpy as np

from . import _views
from ._flags import type_name
from ._grad_mode import no_grad
from ._host_put import put
from ._ops.shape import strided_positions
from ._tensor import Tensor
from .device import to_jax_device

__all__ = ["apply_", "map_", "map2_"]

_REQUIRES_GRAD = "Can't call {0}() on Variable that requires grad. Use var.detach().{0}() instead."


def apply_(self, *args, **kwargs):
    """Replace each element x of self by callable(x), in place; returns self."""
    if kwargs:
        raise TypeError("TensorBase.apply_() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"TensorBase.apply_() takes exactly one argument ({len(args)} given)")
    if self._requires_grad:
        raise RuntimeError(_REQUIRES_GRAD.format("apply_"))
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    return _loop(self, (), args[0])


def map_(self, other, callable):
    """Replace each element x of self by callable(x, y), y the element of other (broadcast to self); in place."""
    _check_tensors("map_", (("other", other),))
    if self._requires_grad or other._requires_grad:
        raise RuntimeError(_REQUIRES_GRAD.format("map_"))
    if other.dtype is not self.dtype or other.device != self.device:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {other.type()})")
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    return _loop(self, (other.expand(self.shape),), callable)


def map2_(self, x, y, callable):
    """Replace each element a of self by callable(a, b, c), b and c the elements of x and y (broadcast to self)."""
    _check_tensors("map2_", (("x", x), ("y", y)))
    if self._requires_grad or x._requires_grad or y._requires_grad:
        raise RuntimeError(_REQUIRES_GRAD.format("map2_"))
    for name, t in (("x", x), ("y", y)):
        if t.dtype is not self.dtype or t.device != self.device:
            raise TypeError(f"map2_: expected {self.type()} for argument '{name}' (got {t.type()})")
    if self.device.type != "cpu":
        raise TypeError("map2_ is only implemented on CPU tensors")
    return _loop(self, (x.expand(self.shape), y.expand(self.shape)), callable)


def _check_tensors(fname, named):
    for position, (name, value) in enumerate(named, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _loop(self, others, fn):
    if self.numel() == 0:
        return self
    storage = self._storage
    flat = np.array(storage.value).reshape(-1)   # the storage's elements, in storage order
    mine = _positions(self)
    sources = [(flat, _positions(o)) if o._storage is storage else (np.asarray(o._value).reshape(-1), None)
               for o in others]
    store = _store(self.dtype)
    done = 0
    try:
        for k, p in enumerate(mine):
            args = [flat[p].item()] + [src[k if at is None else at[k]].item() for src, at in sources]
            flat[p] = store(fn(*args))
            done = k + 1
    finally:
        if done:   # (what was written stays written, as PyTorch's loop leaves it, also when fn raised)
            _write_back(self, flat, mine)
    return self


def _write_back(self, flat, mine):
    device = to_jax_device(self.device)
    if len(np.unique(mine)) < len(mine):   # self overlaps itself (expanded), which copy_ refuses: the whole storage
        self._storage.write(put(flat.reshape(self._storage._raw.shape), device))
        return
    with no_grad():
        value = np.array(flat[mine].reshape(tuple(self.shape)))   # (its own buffer: device_put may alias)
        self.copy_(Tensor._wrap(put(value, device)))


def _positions(t):
    """The storage positions of t's elements, in row-major order."""
    strides, offset = _views.layout(t)
    return strided_positions(tuple(t.shape), strides, offset).reshape(-1)


# ---- PyTorch's store_scalar: a Python value converted to the element type -------------------------------------

def _as_double(value):
    """CPython's PyFloat_AsDouble: a float, or what has __float__ or __index__."""
    if isinstance(value, float):
        return value
    if hasattr(type(value), "__float__"):
        return float(value)
    if hasattr(type(value), "__index__"):
        return float(operator.index(value))
    raise TypeError(f"must be real number, not {type_name(value)}")


def _as_complex(value):
    if isinstance(value, complex):
        return value
    if hasattr(type(value), "__complex__"):
        return complex(value)
    return complex(_as_double(value))


def _as_bool(value):
    if isinstance(value, float):
        return value != 0 or math.isnan(value)   # (C's cast of a double to bool)
    if isinstance(value, complex):
        return not (value.real == 0 and value.imag == 0)
    return operator.index(value) != 0


def _floating(np_dtype):
    def store(value):
        with np.errstate(over="ignore", invalid="ignore"):   # (beyond the type's range: inf, as C's cast)
            return np.float64(_as_double(value)).astype(np_dtype)
    return store


def _complex(np_dtype):
    def store(value):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.complex128(_as_complex(value)).astype(np_dtype)
    return store


def _integral(np_dtype):
    """unpackIntegral: a float truncated (nan or out of range: PyTorch's overflow error), anything else through
    __index__; an unsigned type takes negative ints down to -max, wrapping them, as c10's checked_convert."""
    info, name = np.iinfo(np_dtype), np.dtype(np_dtype).name

    def store(value):
        overflow = RuntimeError(f"value cannot be converted to type {name} without overflow")
        if isinstance(value, float):
            if not (math.isfinite(value) and info.min <= value <= info.max):
                raise overflow
            value = int(value)
        else:
            value = operator.index(value)
            if not -2 ** 63 <= value < 2 ** 63:
                raise ValueError("Overflow when unpacking long long")
            if value > info.max or value < (-info.max if info.min == 0 else info.min):
                raise overflow
        return np.int64(value).astype(np_dtype)
    return store


def _store(dtype):
    if dtype.name == "bool":
        return lambda value: np.bool_(_as_bool(value))
    if dtype.is_complex:
        return _complex(dtype.np)
    return _floating(dtype.np) if dtype.is_floating_point else _integral(dtype.np)


Tensor.apply_ = apply_
Tensor.map_ = map_
Tensor.map2_ = map2_
