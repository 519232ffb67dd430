"""Tensor.untyped_storage() and Tensor.storage(): PyTorch's views of the memory a tensor and its views share.

Every tensor of one tapegrad Storage (a base, its views, its detach()es) gets the same UntypedStorage, whose
data_ptr is the one Tensor.data_ptr() counts offsets from, so the usual test of whether two tensors share
memory reads as in PyTorch. Its bytes are the base array's (little-endian, as PyTorch's on a CPU); a
TypedStorage reads and writes the base's elements in order (a write is an in-place write of the base).
"""
import weakref

import numpy as np

from . import _dtypes as D
from ._user_frames import warn_user

_untyped = weakref.WeakKeyDictionary()   # tapegrad Storage -> its UntypedStorage (one object, as PyTorch's)
_TYPED_WARNED = [False]


def _raw_of(storage):
    return storage._raw


class UntypedStorage:
    """The bytes of a tensor's memory (PyTorch's torch.UntypedStorage), read through the tensor's Storage."""

    def __init__(self, *args, **kwargs):
        raise TypeError("tapegrad.UntypedStorage is reached through Tensor.untyped_storage(); tapegrad allocates "
                        "memory through tensors (torch.empty(n, dtype=torch.uint8)).")

    @classmethod
    def _of(cls, storage):
        found = _untyped.get(storage)
        if found is None:
            found = object.__new__(cls)
            found._storage = storage
            _untyped[storage] = found
        return found

    def data_ptr(self):
        return id(self._storage) * 64   # (Tensor.data_ptr adds the tensor's offset in bytes)

    def nbytes(self):
        raw = _raw_of(self._storage)
        return int(np.prod(raw.shape, dtype=np.int64)) * np.dtype(raw.dtype).itemsize

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    @property
    def device(self):
        from .device import device_of
        return device_of(_raw_of(self._storage))

    def _bytes(self):
        return np.ascontiguousarray(np.asarray(self._storage.value)).reshape(-1).view(np.uint8)

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, index):
        return self._bytes()[index].tolist()

    def is_shared(self):
        return False

    def is_pinned(self, device="cuda"):
        return False

    def type(self):
        return "tapegrad.storage.UntypedStorage"

    def __repr__(self):
        info = f"[tapegrad.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]"
        return _with_values([str(b) for b in self.tolist()], info)


class TypedStorage:
    """A tensor's memory as elements of its dtype (PyTorch's deprecated torch.TypedStorage)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("tapegrad.TypedStorage is reached through Tensor.storage() (deprecated in PyTorch: use "
                        "Tensor.untyped_storage()).")

    @classmethod
    def _of(cls, storage):
        typed = object.__new__(cls)
        typed._storage = storage
        return typed

    @property
    def dtype(self):
        return D.from_jax(_raw_of(self._storage).dtype)

    @property
    def device(self):
        return self.untyped().device

    def untyped(self):
        return UntypedStorage._of(self._storage)

    def data_ptr(self):
        return self.untyped().data_ptr()

    def size(self):
        return int(np.prod(_raw_of(self._storage).shape, dtype=np.int64))

    def __len__(self):
        return self.size()

    def element_size(self):
        return np.dtype(_raw_of(self._storage).dtype).itemsize

    def nbytes(self):
        return self.untyped().nbytes()

    def tolist(self):
        return np.asarray(self._storage.value).reshape(-1).tolist()

    def __getitem__(self, index):
        return np.asarray(self._storage.value).reshape(-1)[index].tolist()

    def __setitem__(self, index, value):
        base = np.array(self._storage.value)   # (a copy: the write replaces the base's value, as an in-place op)
        base.reshape(-1)[index] = value
        from ._host_put import put
        raw = _raw_of(self._storage)
        self._storage.write(put(base, next(iter(raw.devices())) if hasattr(raw, "devices") else None))

    def is_shared(self):
        return False

    def is_pinned(self, device="cuda"):
        return False

    def __repr__(self):
        info = f"[tapegrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"
        return _with_values([str(v) for v in self.tolist()], info)


def _with_values(values, info):
    """PyTorch's storage repr: each element on a line of its own, then what the storage is."""
    return " " + "\n ".join(values) + "\n" + info


def untyped_storage(self):
    return UntypedStorage._of(self._storage)


def storage(self):
    if not _TYPED_WARNED[0]:   # (PyTorch's deprecation warning, once per process)
        _TYPED_WARNED[0] = True
        warn_user("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                  "only storage class. This should only matter to you if you are using storages directly.  To "
                  "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning)
    return TypedStorage._of(self._storage)


def _attach():
    from ._tensor import Tensor
    Tensor.untyped_storage = untyped_storage
    Tensor.storage = storage


_attach()
