"""Tensors rebuilt from a checkpoint's storages, sharing them as the saved tensors did.

A storage's first tensor that covers it exactly (offset 0, contiguous, every element) becomes a plain
tensor whose Storage holds the data. Any other tensor on that storage (a view, a slice, an expanded
stride-0 tensor) reads it through an `as_strided` recipe with no base (PyTorch's loaded tensors are
not views of each other, yet share their storage: a write through one is seen by the others).
"""
import jax
import numpy as np

from .. import _dtypes as D, _views
from .._ops._registry import KEEP, Op
from .._ops.shape import strided_positions
from .._storage import Storage
from .._tensor import Tensor
from ..device import device as _device, to_jax_device


def _as_strided(a, size, stride, offset):
    # The elements at offset + sum(i_d * stride_d) of the flat array: any strided layout (overlapping or
    # stride 0 included) as one gather.
    return a.reshape(-1)[strided_positions(size, stride, offset)]


# A view step only (a recipe from the storage's array to a loaded tensor), not an op users call: kept out of
# the op table, which holds PyTorch's ops (torch.as_strided is relative to the storage, not to its input).
_as_strided_step = Op("checkpoint_as_strided", _as_strided, dtype_rule=KEEP, view=True)


class LoadedStorage:
    """A storage record of the checkpoint: read on first use, put on its device once."""
    __slots__ = ("key", "dtype", "numel", "location", "_read", "_host", "shared")

    def __init__(self, key, dtype, numel, location, read):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location
        self._read = read
        self._host = None
        self.shared = None   # the tapegrad Storage its tensors share, once one is built

    @property
    def host(self):
        if self._host is None:
            self._host = self._read(self.dtype.np, self.numel)
        return self._host


class TensorBuilder:
    def __init__(self, map_location):
        self.map_location = map_location

    def tensor(self, storage, offset, size, stride, requires_grad):
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        offset = int(offset)
        _check_geometry(storage, offset, size, stride)
        saved = "cpu" if storage.location.startswith("cpu") else storage.location
        if callable(self.map_location) and not isinstance(self.map_location, (str, _device)):
            t = Tensor._wrap(jax.device_put(_strided(storage.host, offset, size, stride)))
            t.requires_grad_(bool(requires_grad))
            return self.map_location(t, saved)
        jdev = _jax_device(_target_device(saved, self.map_location))
        covers = offset == 0 and stride == _views.contiguous_strides(size) and _numel(size) == storage.numel
        if storage.shared is None and covers:
            t = Tensor._wrap(jax.device_put(storage.host.reshape(size), jdev))
            storage.shared = t._storage
        else:
            if storage.shared is None:
                storage.shared = Storage(jax.device_put(storage.host, jdev))
            static = (("size", size), ("stride", stride), ("offset", offset))
            value = jax.device_put(np.array(_strided(storage.host, offset, size, stride)), jdev)
            view = _views.ViewInfo(None, ((_as_strided_step, static),), (), storage.shared.version, value)
            t = object.__new__(Tensor)._init(storage.shared, view, False)
        if requires_grad:
            t.requires_grad_(True)
        return t


def parameter(data, requires_grad):
    from ..nn import Parameter
    return Parameter(data, bool(requires_grad))


def _numel(size):
    return int(np.prod(size, dtype=np.int64))


def _check_geometry(storage, offset, size, stride):
    if any(s < 0 for s in size + stride) or offset < 0 or len(size) != len(stride):
        raise ValueError(f"bad tensor geometry size={size} stride={stride} offset={offset}")
    last = offset + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else -1
    if last >= storage.numel:
        raise ValueError(f"tensor of size {size} with stride {stride} at offset {offset} runs past its "
                         f"storage of {storage.numel} elements")


def _strided(host, offset, size, stride):
    item = host.itemsize
    return np.lib.stride_tricks.as_strided(host[offset:] if all(size) else host[:0], size,
                                           tuple(st * item for st in stride), writeable=False)


def _target_device(saved, map_location):
    if map_location is None:
        return saved
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    return str(map_location)


def _jax_device(target):
    try:
        return to_jax_device(target)
    except AssertionError:   # PyTorch's CPU build
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.") from None
    except RuntimeError as e:
        raise RuntimeError(f"Attempting to deserialize object on device '{target}', which is not available "
                           f"({e}). Pass map_location='cpu' (or another available device) to tapegrad.load.") \
            from None


def storage_dtype(name):
    return D._by_name(name)
