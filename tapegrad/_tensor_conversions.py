"""Tensor as a Python value: conversions to numbers, lists and NumPy, len and iteration, hashing, pickling,
deepcopy and printing; attached to the class as _methods.py attaches the maths."""

import jax
import numpy as np

from . import _dtypes as D, _meta
from . import _printing
from . import _tracer_warnings
from ._tracer_warnings import TRACING as _TRACING
from ._op_functions import TRANSFORMS
from ._tensor import Tensor, _rebuild
from ._user_frames import warn_user


def numpy(self, *, force=False):
    if self._requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                           "Use tensor.detach().numpy() instead.")
    # (force=True reads the values, as resolve_conj() and resolve_neg() would)
    if not force and self.is_conj():
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                           "Use tensor.resolve_conj().numpy() instead.")
    if not force and self.is_neg():
        raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. "
                           "Use tensor.resolve_neg().numpy() instead.")
    if _TRACING[0]:
        _tracer_warnings.converting("NumPy array")
    if _meta.is_meta(self):
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                        "host memory first.")
    return _writable_numpy(self)


def __array__(self, dtype=None, copy=None):
    """np.asarray(t) is t.numpy(), as PyTorch's: a tensor that requires grad refuses (a NumPy array would drop
    its history without a word)."""
    a = self.numpy()
    return a.astype(dtype, copy=False) if dtype is not None else a


def __array_wrap__(self, array, context=None, return_scalar=False):
    """A NumPy function of a tensor (np.sin(t), np.float64(2) * t, t * ndarray) gives a tensor of NumPy's result,
    as PyTorch's: no history, NumPy's dtype (bools as uint8, PyTorch's own workaround)."""
    from ._creation import from_numpy
    array = np.asarray(array)
    return from_numpy(array.astype(np.uint8) if array.dtype == np.bool_ else array)


def item(self):
    n = self.numel()
    if n != 1 and "vmap" in TRANSFORMS and isinstance(self._peek(), jax.core.Tracer):
        # (PyTorch's vmap refuses the read itself, whatever the per-sample size)
        raise jax.errors.ConcretizationTypeError(self._peek(), "a Python number read from a tensor (item())")
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar. "
                           "Index it first (t[0]) or reduce it (t.sum()).")
    if _TRACING[0]:
        _tracer_warnings.converting("Python number")
    return self._host_scalar()


def _host_scalar(self, boolean=False):
    if _meta.is_meta(self):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    try:
        return _read_scalar(self)
    except jax.errors.TracerArrayConversionError:   # (a transform traces: no value yet; func names the read)
        value = self._peek()
        raise (jax.errors.TracerBoolConversionError(value) if boolean else
               jax.errors.ConcretizationTypeError(value, "a Python number read from a tensor (item(), float())")
               ) from None


def _read_scalar(self):
    # Read through NumPy: a jax reshape here would run (and on first sight compile) a program of its own.
    if self._view is not None:   # (out[0].item(): NumPy picks the element, see _host_read)
        from ._host_read import view_element
        value = view_element(self)
        if value is not None:
            return value
    return np.asarray(self._value).reshape(()).item()


def tolist(self):
    if _TRACING[0]:
        _tracer_warnings.converting("Python list")
    return np.asarray(self._value).tolist()


_FLOAT_OF_GRAD_WARNED = [False]


def __float__(self):
    if _TRACING[0]:
        _tracer_warnings.converting("Python float")
    if self._requires_grad and not _FLOAT_OF_GRAD_WARNED[0]:   # (PyTorch's warning, once per process)
        _FLOAT_OF_GRAD_WARNED[0] = True
        warn_user("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                  "Consider using tensor.detach() first.", UserWarning)
    return float(_real(self._scalar("float"), "double"))


def __int__(self):
    if _TRACING[0]:
        _tracer_warnings.converting("Python integer")
    return int(_real(self._scalar("int"), "int64_t"))


def _real(value, c_type):
    """A complex element as PyTorch converts it to a real number: its real part, if its imaginary part is 0."""
    if type(value) is complex:
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return value.real
    return value


def __index__(self):
    if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self._host_scalar())


def __complex__(self):
    if _TRACING[0]:
        _tracer_warnings.converting("Python complex")
    return complex(self._scalar("complex"))


def __bool__(self):
    n = self.numel()
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'}"
                           " is ambiguous. Use .any() or .all() to reduce it first.")
    if _TRACING[0]:
        _tracer_warnings.converting("Python boolean")
    return bool(self._host_scalar(boolean=True))


def _scalar(self, kind):
    if self.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return self._host_scalar()


def __len__(self):
    if self.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    if _TRACING[0]:
        _tracer_warnings.warn(_tracer_warnings.LEN)
    return self._peek().shape[0]


def __iter__(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    if _TRACING[0]:
        _tracer_warnings.warn(_tracer_warnings.ITER)
    return (self[i] for i in range(self._peek().shape[0]))


def __hash__(self):
    return id(self)


def __reduce_ex__(self, protocol):
    return (_rebuild, (np.asarray(self._value), self._requires_grad))


def __deepcopy__(self, memo):
    if self._grad_fn is not None:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the "
                           "deepcopy protocol at the moment. Use detach().clone() first.")
    t = Tensor._wrap(self._value, self._inference)
    t._requires_grad = self._requires_grad
    if self._grad is not None:
        t._grad = self._grad.__deepcopy__(memo)
    new = t if type(self) is Tensor else type(self)._from_tensor(t)
    memo[id(self)] = new
    return new


# ---- printing -------------------------------------------------------------------

def __repr__(self, *, tensor_contents=None):
    if _meta.is_meta(self):
        return _printing.meta_repr(tuple(self.shape), dtype_name=self.dtype.name,
                                   default_float_dtype_name=D.get_default_dtype().name,
                                   requires_grad=self._requires_grad,
                                   grad_fn_name=_grad_fn_name(self),
                                   is_parameter=getattr(self, "_is_parameter", False))
    value = np.asarray(self._value)
    dev = self.device
    tangent = None
    if "_fw" in self.__dict__:   # a dual tensor (forward AD) shows its tangent, as PyTorch's does
        from .autograd.forward_ad import tangent_of
        tangent = tangent_of(self)
    return _printing.tensor_repr(
        value, dtype_name=self.dtype.name, default_float_dtype_name=D.get_default_dtype().name,
        requires_grad=self._requires_grad,
        grad_fn_name=_grad_fn_name(self),
        device=None if dev.type == "cpu" else str(dev),
        is_parameter=getattr(self, "_is_parameter", False),
        tangent=None if tangent is None else f"{tangent}")


__str__ = __repr__


def _grad_fn_name(t):
    """The node name a repr shows: "Invalid" where reading grad_fn raises (a view whose history PyTorch
    refuses to regenerate after an in-place change), as PyTorch's repr."""
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        return "Invalid"
    return None if grad_fn is None else type(grad_fn).__name__


def __format__(self, spec):
    if self.ndim == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _writable_numpy(t):
    # np.asarray of a jax.Array is read-only; PyTorch's numpy() shares memory and is writable.
    # We return a copy: writes to it do not reach the tensor (documented difference).
    return np.array(t._value)


Tensor.numpy = numpy
Tensor.__array__ = __array__
Tensor.__array_wrap__ = __array_wrap__
Tensor.__array_priority__ = 1000   # NumPy's operators defer to the tensor's (PyTorch's value)
Tensor.item = item
Tensor._host_scalar = _host_scalar
Tensor.tolist = tolist
Tensor.__float__ = __float__
Tensor.__int__ = __int__
Tensor.__index__ = __index__
Tensor.__complex__ = __complex__
Tensor.__bool__ = __bool__
Tensor._scalar = _scalar
Tensor.__len__ = __len__
Tensor.__iter__ = __iter__
Tensor.__hash__ = __hash__
Tensor.__reduce_ex__ = __reduce_ex__
Tensor.__deepcopy__ = __deepcopy__
Tensor.__repr__ = __repr__
Tensor.__str__ = __str__
Tensor.__format__ = __format__
