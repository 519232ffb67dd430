"""save: PyTorch's zip checkpoint format, written without PyTorch.

data.pkl is a protocol-2 pickle in which tensors reduce to `torch._utils._rebuild_tensor_v2(storage,
offset, size, stride, requires_grad, OrderedDict())` (parameters wrap that in `_rebuild_parameter`),
and each storage is a persistent id ('storage', torch.<Type>Storage, key, 'cpu', numel) whose bytes
are the record data/<key>. tapegrad has no torch module to name, so the pickler writes those globals
itself (`_Global`).

A tapegrad Storage holds the whole array of a base tensor; views read it through a recipe whose
strides and offset `_views.layout` recovers. So a storage is saved once, whole, as PyTorch saves it,
and every tensor on it (views, expanded stride-0 tensors) is saved as geometry over it.
"""
import io
import os
import pickle
import sys
import tempfile
from collections import OrderedDict

import numpy as np

from .. import _dtypes as D, _views
from .._layout import layout
from .._size import Size
from .._tensor import Tensor
from ..device import device as _device
from ._records import RecordWriter
from ._names import STORAGE_NAME_OF

DEFAULT_PROTOCOL = 2


class _Global:
    """A name the pickle refers to by GLOBAL module/name without importing it (one instance per name,
    so the pickler's memo writes each name once)."""
    __slots__ = ("module", "name")
    _interned = {}

    def __new__(cls, module, name):
        found = cls._interned.get((module, name))
        if found is None:
            found = cls._interned[(module, name)] = object.__new__(cls)
            found.module, found.name = module, name
        return found

    def __call__(self, *args):   # pickle's reduce checks that a function is callable; this one is a name
        raise TypeError(f"{self.module}.{self.name} is a name in a checkpoint, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")


class _SavedStorage:
    __slots__ = ("key", "array")

    def __init__(self, key, array):
        self.key, self.array = key, array


class _CheckpointPickler(pickle._Pickler):
    """The pure-Python pickler (it lets a type's entry write opcodes), with tensors reduced as PyTorch's."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}    # id(tapegrad Storage) -> (Storage, _SavedStorage): keeps each alive while saving

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    def _save_dtype(self, obj):
        self.save(_Global("torch", obj.name))   # PyTorch's dtypes pickle as the global torch.<name>

    dispatch[_Global] = _save_global_name
    dispatch[D.dtype] = _save_dtype

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if obj.is_sparse or getattr(obj, "_sp_compressed", False):   # COO, CSR, CSC, BSR, BSC
                return self._reduce_sparse(obj)
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return _Global("torch", "Size"), (tuple(obj),)
        if isinstance(obj, layout):   # PyTorch's layouts pickle through torch.serialization._get_layout
            return _GET_LAYOUT, (f"torch.{obj.name}",)
        if isinstance(obj, _device):
            return _Global("torch", "device"), (str(obj),)
        return NotImplemented

    def persistent_id(self, obj):
        if type(obj) is _SavedStorage:
            dtype = D.from_jax(obj.array.dtype)
            return ("storage", _Global("torch", STORAGE_NAME_OF[dtype.name]), obj.key, "cpu", obj.array.size)
        return None

    def _reduce_tensor(self, t):
        storage, offset, stride = self._storage_of(t)
        args = (storage, offset, tuple(t.shape), stride, t.requires_grad, OrderedDict())
        if getattr(t, "_is_parameter", False):
            inner = _Rebuild(_REBUILD_TENSOR, args[:4] + (False, OrderedDict()))
            return _REBUILD_PARAMETER, (inner, t.requires_grad, OrderedDict())
        return _REBUILD_TENSOR, args

    def _reduce_sparse(self, t):
        """PyTorch's _rebuild_sparse_tensor(layout, data): data is (indices, values, size, is_coalesced) for COO,
        (compressed_indices, plain_indices, values, size) for CSR, CSC, BSR, BSC; requires_grad is not saved, as in
        PyTorch."""
        layout = _Rebuild(_GET_LAYOUT, (f"torch.{t.layout.name}",))
        values = t._sp_values.detach()
        if t.is_sparse:
            data = (t._sp_indices.detach(), values, Size(t.shape), t.is_coalesced())
        else:
            shape = t._values_shape()   # (*batch, nnz, ...) for a batched tensor
            data = (t._compressed(), t._plain(), values if shape is None else values.reshape(shape), Size(t.shape))
        return _REBUILD_SPARSE, (layout, data)

    def _storage_of(self, t):
        """(the _SavedStorage, storage offset, strides) for tensor t."""
        owner = t._storage
        found = self.storages.get(id(owner))
        if found is None:
            array = np.asarray(owner.value).reshape(-1)
            found = self.storages[id(owner)] = (owner, _SavedStorage(str(len(self.storages)), array))
        saved = found[1]
        if t._view is None:
            return saved, 0, _views.contiguous_strides(tuple(t.shape))
        if saved.array.dtype != t.dtype.np:   # not a strided view of its storage: saved as a storage of its own
            array = np.asarray(t._value).reshape(-1)
            own = self.storages[id(t)] = (t, _SavedStorage(str(len(self.storages)), array))
            return own[1], 0, _views.contiguous_strides(tuple(t.shape))
        stride, offset = _views.layout(t)
        return saved, offset, tuple(stride)


class _Rebuild:
    """A call pickled as REDUCE (a nested rebuild inside _rebuild_parameter's arguments)."""
    __slots__ = ("func", "args")

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _pickle(obj, protocol):
    buf = io.BytesIO()
    pickler = _CheckpointPickler(buf, protocol)
    pickler.dump(obj)
    return buf.getvalue(), [s for _, s in pickler.storages.values()]


def write_checkpoint(obj, fh, prefix, protocol):
    """Pickle obj (before anything is written, so a failure leaves fh untouched) and write the archive."""
    data, storages = _pickle(obj, protocol)
    records = RecordWriter(fh, prefix)
    records.write("data.pkl", data)
    records.write(".format_version", b"1")
    records.write(".storage_alignment", b"64")
    records.write("byteorder", sys.byteorder.encode())
    for s in sorted(storages, key=lambda s: int(s.key)):
        records.write(f"data/{s.key}", np.ascontiguousarray(s.array).view(np.uint8))
    records.write("version", b"3\n")
    records.close()


def save(obj, f, protocol=DEFAULT_PROTOCOL):
    """Write obj to a path (atomically: a temporary file in the same directory, then os.replace) or to
    a binary file object."""
    if not isinstance(f, (str, os.PathLike)):
        write_checkpoint(obj, f, "archive", protocol)
        return
    path = os.fspath(f)
    directory, name = os.path.split(os.path.abspath(path))
    if not os.path.isdir(directory):   # (PyTorch's words, its parent as written)
        raise RuntimeError(f"Parent directory {os.path.dirname(path)} does not exist. Create it first, e.g. "
                           "os.makedirs(directory, exist_ok=True).")
    if not name or os.path.isdir(path):
        raise RuntimeError(f"open file failed with strerror: Is a directory: {path!r}. Name a file to save to.")
    stem = os.path.splitext(name)[0] or "archive"
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write_checkpoint(obj, fh, stem, protocol)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _new_file_mode(path):
    # mkstemp makes the file private (0600); give it the mode a plain open() would have.
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
