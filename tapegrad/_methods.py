"""Tensor methods and operators, bound to the functional API and the op table."""
import builtins

from . import _dtypes as D
from . import _functional as F
from ._dispatch import apply
from ._indexing import getitem, setitem
from ._inplace import inplace, commit, check_inplace
from ._ops import elementwise as E
from ._tensor import Tensor


def _reflected(fn):
    def method(self, other):
        try:
            other = F.scalar_or_tensor(other)
        except TypeError:
            return NotImplemented
        return fn(other, self)
    return method


def _forward(fn):
    def method(self, other):
        try:
            other = F.scalar_or_tensor(other)
        except TypeError:
            return NotImplemented
        return fn(self, other)
    return method


def _inplace_method(fn):
    """x.op_(...) / x op= y: the out-of-place function, then written into x."""
    def method(self, *args, **kwargs):
        check_inplace(self)
        commit(self, fn(self, *args, **kwargs))
        return self
    return method


# ---- operators -----------------------------------------------------------------------
_OPERATORS = {
    "add": F.add, "sub": F.sub, "mul": F.mul, "truediv": F.div, "floordiv": F.floor_divide,
    "mod": F.remainder, "pow": F.pow, "matmul": F.matmul, "and": F.bitwise_and, "or": F.bitwise_or,
    "xor": F.bitwise_xor,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, f"__{_name}__", _forward(_fn))
    setattr(Tensor, f"__r{_name}__", _reflected(_fn))
    setattr(Tensor, f"__i{_name}__", _inplace_method(_forward(_fn)))
Tensor.__rsub__ = lambda self, other: F.rsub(self, other)
for _name, _fn in {"eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge}.items():
    setattr(Tensor, f"__{_name}__", _forward(_fn))
Tensor.__neg__ = lambda self: F.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: F.abs(self)
Tensor.__invert__ = lambda self: F.bitwise_not(self) if self.dtype is not D.bool_ else F.logical_not(self)
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem

# ---- methods that are the functional API with self first -----------------------------
_SAME_AS_FUNCTION = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "pow", "maximum", "minimum", "atan2", "clamp", "clip", "clamp_min", "clamp_max", "neg", "negative",
    "abs", "absolute", "sign", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "relu",
    "reciprocal", "square", "floor", "ceil", "trunc", "round", "eq", "ne", "lt", "le", "gt", "ge",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "clone", "sum", "mean",
    "matmul", "mm", "reshape", "view", "flatten", "transpose", "swapaxes", "swapdims", "t", "permute",
    "unsqueeze", "squeeze", "expand",
]
for _name in _SAME_AS_FUNCTION:
    setattr(Tensor, _name, getattr(F, _name))

# In-place variants: x.add_(y) etc.
_INPLACE = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "pow", "clamp", "clip", "clamp_min", "clamp_max", "neg", "negative", "abs", "absolute", "sign",
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "reciprocal", "square",
    "floor", "ceil", "trunc", "round", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "atan2",
    "transpose", "t", "unsqueeze", "squeeze",
]
for _name in _INPLACE:
    setattr(Tensor, _name + "_", _inplace_method(getattr(F, _name)))


def _view_inplace(fn):
    # Shape-changing in-place ops (t_, unsqueeze_...) rebind the tensor to the new shape.
    def method(self, *args):
        out = fn(self, *args)
        self._storage, self._view = out._storage, out._view
        if out._grad_fn is not None:
            self._attach(out._grad_fn, out._out_idx)
        return self
    return method


for _name in ("transpose", "t", "unsqueeze", "squeeze"):
    setattr(Tensor, _name + "_", _view_inplace(getattr(F, _name)))


def zero_(self):
    return inplace(self, E.fill, 0)


def fill_(self, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    return inplace(self, E.fill, F.scalar_or_tensor(value))


def copy_(self, src, non_blocking=False):
    src = F.scalar_or_tensor(src)
    if isinstance(src, Tensor):
        import jax.numpy as jnp
        try:
            jnp.broadcast_shapes(tuple(src.shape), tuple(self.shape))
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must match the size "
                               f"of tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                               f"{self.ndim - 1}") from None
    return inplace(self, E.copy, src)


Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_


# ---- dtype / device conversions -----------------------------------------------------------

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
        if dtype.is_floating_point or dtype.is_complex:
            out = apply(E.to_dtype, out, dtype=dtype.np)
        else:
            from ._grad_mode import no_grad
            with no_grad():
                out = apply(E.to_dtype, out, dtype=dtype.np)
    if device is not None and device_cls(device) != self.device:
        import jax
        moved = Tensor._wrap(jax.device_put(out._value, to_jax_device(device)), out._inference)
        out = moved if not out._requires_grad else _recorded_move(out, moved)
    if copy and out is self:
        out = F.clone(self)
    return out


def _recorded_move(src, moved):
    # Device moves keep gradients flowing: record as a differentiable copy (ToCopyBackward0).
    out = apply(E.to_dtype, src, dtype=src.dtype.np)
    out._storage.value = moved._value
    return out


Tensor.to = to
Tensor.type_as = lambda self, other: self.to(other.dtype)
for _name, _dtype in {"float": D.float32, "double": D.float64, "half": D.float16, "bfloat16": D.bfloat16,
                      "long": D.int64, "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
                      "bool": D.bool_, "cfloat": D.complex64, "cdouble": D.complex128}.items():
    setattr(Tensor, _name, (lambda d: lambda self, memory_format=None: to(self, d))(_dtype))
Tensor.cpu = lambda self: to(self, device="cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False: to(self, device=f"cuda:{device or 0}")
Tensor.contiguous = lambda self, memory_format=None: self
Tensor.is_contiguous = lambda self, memory_format=None: True
Tensor.view_as = lambda self, other: F.view(self, tuple(other.shape))
Tensor.reshape_as = lambda self, other: F.reshape(self, tuple(other.shape))
Tensor.expand_as = lambda self, other: F.expand(self, tuple(other.shape))
Tensor.T = property(lambda self: F.permute(self, tuple(range(self.ndim))[::-1]) if self.ndim != 2 else F.t(self))
Tensor.mT = property(lambda self: F.transpose(self, -2, -1))
Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: __import__(
    "tapegrad._creation", fromlist=["tensor"]).tensor(data, dtype=dtype or self.dtype,
                                                      device=device, requires_grad=requires_grad)


def _new_filled(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        from ._creation import _filled, _shape
        return _filled(_shape(size), fill, dtype or self.dtype, device, requires_grad)
    return method


Tensor.new_zeros = _new_filled(0)
Tensor.new_ones = _new_filled(1)
Tensor.new_empty = _new_filled(0)
Tensor.new_full = lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: __import__(
    "tapegrad._creation", fromlist=["full"]).full(size, fill_value, dtype=dtype or self.dtype, device=device,
                                                  requires_grad=requires_grad)
