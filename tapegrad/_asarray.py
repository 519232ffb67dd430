"""torch.asarray: obj as a tensor, aliasing it where no copy is needed, as PyTorch's.

A tensor (or a jax.Array, or a DLPack capsule) is taken as it is when dtype and device fit: the same tensor
object comes back, and requires_grad=True/False is set on it. Otherwise a copy is made (copy=None) or refused
(copy=False), with PyTorch's ValueError. tapegrad's tensors live in immutable JAX arrays, so NumPy arrays and
buffers (bytes, bytearray, array.array) are copied, as tapegrad.from_numpy copies: writes to the array later are
not seen by the tensor, and copy=False for them is refused (PyTorch would share their memory). For the same
reason PyTorch's warning that a non-writable array or buffer may be written through the tensor is not given.
"""
import builtins

import jax
import numpy as np

from . import _dtypes as D
from ._creation import _array, _leaf, check_requires_grad
from ._flags import warn_once
from ._functional._common import SCALAR_NAME
from ._tensor import Tensor
from .device import device as _device
from ._user_frames import warn_user

__all__ = ["asarray"]

_warned = set()
_UNSPECIFIED = ("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of False. Pass "
                "requires_grad=False explicitly to get the old behavior and silence this warning.")
_NO_ALIAS = ("can't alias {} into a tensor: tapegrad copies it (its tensors are immutable JAX arrays). "
             "Pass copy=None or copy=True.")


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """Converts obj (a tensor, a NumPy array or scalar, a DLPack capsule, an object with the buffer protocol, a
    jax.Array, a sequence or a number) to a tensor, sharing obj's data where it can (see the module's docstring).
    requires_grad=None takes obj's requires_grad (False for anything but a tensor)."""
    _check_arguments(dtype, device, copy, requires_grad)
    dtype = D.as_dtype(dtype)
    if isinstance(obj, Tensor) or isinstance(obj, jax.Array) or type(obj).__name__ == "PyCapsule":
        if isinstance(obj, Tensor):
            tensor = obj
            if requires_grad is None and tensor._requires_grad and warn_once(_warned, "requires_grad"):
                warn_user(_UNSPECIFIED, UserWarning)
            if requires_grad is None:
                requires_grad = obj._requires_grad   # (obj's, whatever the copy below records)
        else:
            from ._interop import from_dlpack
            tensor = from_dlpack(obj)   # (a jax.Array or a capsule: wrapped, no copy)
        mismatch = _mismatch(tensor.dtype, tensor.device, dtype, device)
        if copy or (copy is None and mismatch is not None):
            tensor = tensor.clone() if mismatch is None else tensor.to(device=device, dtype=dtype)
        elif mismatch is not None:
            raise mismatch
    elif isinstance(obj, np.generic) and copy is False:
        raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
    elif isinstance(obj, np.ndarray):
        if copy is False:
            raise _mismatch(D.from_jax(obj.dtype), _device("cpu"), dtype, device) or ValueError(
                _NO_ALIAS.format("a NumPy array"))
        tensor = _leaf(_array(obj, dtype, device))
    elif _has_buffer(obj) and not isinstance(obj, np.generic):   # (a NumPy scalar is a number here)
        if copy is False:
            raise ValueError(_NO_ALIAS.format("a buffer"))
        tensor = _leaf(_array(_from_buffer(obj, dtype or D.get_default_dtype()), None, device))
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        tensor = _leaf(_array(obj, dtype, device))
    return _with_requires_grad(tensor, requires_grad)


def _check_arguments(dtype, device, copy, requires_grad):
    # PyTorch's parser: dtype a torch.dtype (or a Python type), device a device, string or index, bools or None
    if dtype is not None and not isinstance(dtype, D.dtype) and dtype not in (builtins.float, builtins.int,
                                                                              builtins.bool, builtins.complex):
        raise TypeError(f"asarray(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    if device is not None and (type(device) is bool or not isinstance(device, (str, int, _device))):
        raise TypeError(f"asarray(): argument 'device' must be torch.device, not {type(device).__name__}")
    for name, value in (("copy", copy), ("requires_grad", requires_grad)):
        if value is not None and type(value) is not bool:
            raise TypeError(f"asarray(): argument '{name}' must be bool, not {type(value).__name__}")


def _mismatch(own_dtype, here, dtype, device):
    """PyTorch's ValueError for aliasing data of own_dtype on device `here` as `dtype` on `device`, or None where
    they fit (a device without an index fits any of its type)."""
    want = None if device is None else _device(device)
    if want is not None and (want.type != here.type or want.index not in (None, here.index)):
        return ValueError(f"can't alias tensor from device '{here}' to '{want}'.")
    if dtype is not None and dtype is not own_dtype:
        return ValueError(f"can't alias tensor with dtype '{SCALAR_NAME[own_dtype.name]}' into dtype "
                          f"'{SCALAR_NAME[dtype.name]}'.")
    return None


def _with_requires_grad(tensor, requires_grad):
    """PyTorch's last step: requires_grad (None: False, obj being no tensor) set on the result; a result with a
    history that must not require grad is detached instead."""
    requires_grad = bool(requires_grad)
    if tensor._grad_fn is not None:
        return tensor if requires_grad else tensor.detach()
    check_requires_grad(tensor.dtype, requires_grad,
                        "Pass a floating dtype, e.g. dtype=torch.float32, or requires_grad=False.")
    if tensor._requires_grad != requires_grad:
        tensor.requires_grad_(requires_grad)
    return tensor


def _has_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _from_buffer(obj, dtype):
    """The buffer's bytes read as `dtype` elements (PyTorch's frombuffer, offset 0, every element)."""
    data = memoryview(obj).cast("B")
    size = dtype.itemsize
    if len(data) == 0:
        raise ValueError("both buffer length (0) and count (-1) must not be 0")
    if len(data) % size:
        raise ValueError(f"buffer length ({len(data)} bytes) after offset (0 bytes) must be a multiple of element "
                         f"size ({size})")
    return np.frombuffer(data, dtype.np)   # (copied by _array)
