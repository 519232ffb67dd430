"""Arrays in and out: a tensor as a jax.Array, and DLPack both ways (NumPy, PyTorch, JAX, CuPy...).

A tensor's value is a jax.Array, so handing it out costs nothing: `t.jax()` is the tensor's current
value (a pending or view value computed first). JAX arrays are immutable: a later in-place op on the
tensor gives the tensor a new array and leaves an array already handed out unchanged, unlike PyTorch's
DLPack exports, which share memory with the tensor for its whole life. DLPack exports go through the
same array (JAX's own `__dlpack__`); imports through `jax.numpy.from_dlpack`, which shares the
producer's memory where JAX can (CPU arrays with aligned data, same-device accelerator arrays) and
copies otherwise. JAX imports only compact strides (a transpose, not a step slice): other arrays are
made contiguous first (a copy).
"""
import ctypes

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes as D
from ._tensor import Tensor

__all__ = ["from_jax", "from_dlpack"]

_REQUIRES_GRAD = "Can't export tensors that require gradient, use tensor.detach()"


def from_jax(array):
    """A tensor holding `array` (no copy); it shares nothing mutable with it, as jax.Arrays are immutable."""
    if not isinstance(array, jax.Array):
        raise TypeError(f"expected jax.Array (got {type(array).__name__}). Convert with jax.numpy.asarray first.")
    D.from_jax(array.dtype)   # an unsupported dtype (uint32...) fails here, with tapegrad's message
    return Tensor._wrap(array)


def _jax(self):
    """The tensor's current value as a jax.Array, without a copy. A later in-place op on the tensor does not
    change the returned array (JAX arrays are immutable)."""
    return self._value


def _jax_array(self):
    # JAX 0.10 calls this where it converts explicitly (jnp.asarray, jnp.array, arithmetic with an Array);
    # elsewhere (jnp.sin(t), jax.jit(f)(t)) it refuses objects that are not arrays: pass t.jax() there.
    return self._value


def _exportable(t):
    if t._requires_grad:
        raise BufferError(_REQUIRES_GRAD)
    return t._value


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack capsule of the tensor's current value (a view is computed into its own contiguous array)."""
    kwargs = {"stream": stream}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return _exportable(self).__dlpack__(**kwargs)


def _dlpack_device(self):
    return self._value.__dlpack_device__()


def from_dlpack(ext_tensor):
    """A tensor from any object with `__dlpack__` (a NumPy array, a torch.Tensor, a jax.Array) or a DLPack
    capsule, sharing its memory where JAX can (see the module doc)."""
    if isinstance(ext_tensor, Tensor):
        _exportable(ext_tensor)
        return ext_tensor.detach()   # PyTorch returns a tensor on the same memory: here the same storage
    if isinstance(ext_tensor, jax.Array):
        return from_jax(ext_tensor)
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError(f"from_dlpack expects an object with __dlpack__ (a NumPy array, a torch.Tensor, a "
                        f"jax.Array) or a DLPack capsule, got {type(ext_tensor).__name__}")
    try:
        array = jnp.from_dlpack(ext_tensor)
    except jax.errors.JaxRuntimeError as e:
        if "striding" not in str(e) or isinstance(ext_tensor, _Capsule):
            raise RuntimeError(f"from_dlpack could not import the array: {e}. Pass a contiguous copy "
                               "(.contiguous(), numpy.ascontiguousarray).") from None
        array = jnp.from_dlpack(_compact(ext_tensor))
    return from_jax(array)


def _compact(obj):
    """A contiguous copy of a strided array (a step slice), which JAX cannot import as it is."""
    if isinstance(obj, np.ndarray):
        return np.ascontiguousarray(obj)
    if callable(getattr(obj, "contiguous", None)):   # torch.Tensor
        return obj.contiguous()
    return np.ascontiguousarray(np.from_dlpack(obj))


class _Capsule:
    """A legacy DLPack capsule (PyTorch's `to_dlpack`) as the object `jnp.from_dlpack` asks for."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **unused):
        return self.capsule

    def __dlpack_device__(self):
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        named = ctypes.pythonapi.PyCapsule_IsValid
        named.restype, named.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        if named(self.capsule, b"dltensor"):
            tensor = get(self.capsule, b"dltensor")        # DLManagedTensor: DLTensor first
        elif named(self.capsule, b"dltensor_versioned"):
            tensor = get(self.capsule, b"dltensor_versioned") + 32   # version, manager_ctx, deleter, flags
        else:
            raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                               "consumed only once, so you might have already constructed a tensor from it once.")
        device = (ctypes.c_int32 * 2).from_address(tensor + ctypes.sizeof(ctypes.c_void_p))   # after `data`
        return int(device[0]), int(device[1])


Tensor.jax = _jax
Tensor.__jax_array__ = _jax_array
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
