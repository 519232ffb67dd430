"""data.pkl of PyTorch's zip format, read by an unpickler that decides every global it meets.

PyTorch's names (storage types, dtypes, Size, device, the tensor and parameter rebuild functions) map
to tapegrad. With weights_only=True (the default, as in PyTorch) only those, plain containers and the
globals registered with add_safe_globals are accepted; anything else is refused before it can run,
with PyTorch's UnpicklingError. weights_only=False resolves any other global as pickle does (whole
pickled modules), so it must only be used on trusted files.
"""
import _codecs
import _compat_pickle
import importlib
import pickle
from collections import OrderedDict

from .. import _dtypes as D
from .._size import Size
from .._tensor import Tensor
from ..device import device as _device
from . import _globals
from ._names import STORAGE_DTYPE, TORCH_DTYPE
from ._tensors import LoadedStorage, parameter


class _StorageType:
    """Stands for torch.FloatStorage & co.: only carries the element dtype."""

    def __init__(self, dtype):
        self.dtype = dtype


class _TensorType:
    """Stands for torch.Tensor / torch.nn.Parameter in _rebuild_from_type_v2."""

    def __init__(self, is_parameter):
        self.is_parameter = is_parameter


def _encode(text, encoding="utf-8", errors="strict"):
    # protocol 2 pickles bytes as _codecs.encode(str, 'latin1'); no other codec is needed
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is only accepted for bytes pickled as latin1 text")
    return _codecs.encode(text, encoding, errors)


_PLAIN = {("collections", "OrderedDict"): OrderedDict, ("builtins", "set"): set,
          ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
          ("builtins", "bytearray"): bytearray, ("_codecs", "encode"): _encode}


class CheckpointUnpickler(pickle.Unpickler):
    def __init__(self, file, read_record, prefix, builder, weights_only):
        super().__init__(file)
        self._read_record = read_record   # (record name, np dtype, count) -> array
        self._prefix = prefix
        self._builder = builder
        self._weights_only = weights_only
        self._storages = {}

    def find_class(self, module, name):
        # protocol 2 writes Python 2's names (__builtin__.complex); pickle's own find_class maps them so
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        found = self._torch_name(module, name)
        if found is not None:
            return found
        if (module, name) in _PLAIN:
            return _PLAIN[(module, name)]
        full = f"{module}.{name}"
        safe = _globals.allowed(full)
        if safe is not None:
            return safe
        if self._weights_only:
            raise _globals.weights_only_error(None, unsupported_global=full)
        if module == "torch" or module.startswith("torch."):
            return _tapegrad_counterpart(module, name)
        return super().find_class(module, name)

    def _torch_name(self, module, name):
        if module == "torch":
            if name in STORAGE_DTYPE:
                return _StorageType(D._by_name(STORAGE_DTYPE[name]))
            if name in TORCH_DTYPE:
                return D._by_name(TORCH_DTYPE[name])
            return {"Size": Size, "device": _device, "Tensor": _TensorType(False)}.get(name)
        if module == "torch.nn.parameter" and name == "Parameter":
            return _TensorType(True)
        if module == "torch._utils":
            if name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
                return self._rebuild_tensor
            if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
                return self._rebuild_parameter
        if module == "torch._tensor" and name == "_rebuild_from_type_v2":
            return self._rebuild_from_type
        if module == "torch._utils" and name == "_rebuild_sparse_tensor":
            return _rebuild_sparse
        if module == "torch.serialization" and name == "_get_layout":
            return _get_layout
        return None

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str) and isinstance(pid[4], int)):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        dtype = storage_type.dtype
        found = self._storages.get((key, dtype))
        if found is None:
            record = f"{self._prefix}data/{key}"
            found = self._storages[(key, dtype)] = LoadedStorage(
                key, dtype, numel, str(location), lambda np_dtype, count: self._read_record(record, np_dtype, count))
        return found

    def _rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                        metadata=None):
        if not isinstance(storage, LoadedStorage):
            raise pickle.UnpicklingError("_rebuild_tensor_v2 expects a storage")
        return self._builder.tensor(storage, storage_offset, size, stride, requires_grad)

    def _rebuild_parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if not isinstance(data, Tensor):
            raise pickle.UnpicklingError("_rebuild_parameter expects a tensor")
        return parameter(data, requires_grad)

    def _rebuild_from_type(self, func, new_type, args, state):
        if func not in (self._rebuild_tensor, self._rebuild_parameter) or not isinstance(new_type, _TensorType):
            raise pickle.UnpicklingError("_rebuild_from_type_v2 with an unsupported function or type")
        t = func(*args)
        if new_type.is_parameter and not getattr(t, "_is_parameter", False):
            t = parameter(t, t.requires_grad)
        return t


def _get_layout(name):
    from .._layout import LAYOUTS
    layout = LAYOUTS.get(name[len("torch."):] if name.startswith("torch.") else None)
    if layout is None:   # (every layout PyTorch has is known: its own lookup fails the same way)
        raise KeyError(f"{name} is not one of PyTorch's layouts (torch.strided, torch.sparse_coo, torch.sparse_csr...); "
                       "the file was not written by torch.save or tapegrad.save.")
    return layout


def _rebuild_sparse(layout, data):
    """PyTorch's _rebuild_sparse_tensor: a COO tensor from (indices, values, size[, is_coalesced]), a CSR, CSC,
    BSR or BSC one from (compressed_indices, plain_indices, values, size); all checked as they are built."""
    from .. import sparse
    from .._layout import sparse_coo
    if layout is sparse_coo:
        indices, values, size = data[:3]
        return sparse.sparse_coo_tensor(indices, values, size, is_coalesced=data[3] if len(data) > 3 else None)
    if layout.name in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        return getattr(sparse, layout.name + "_tensor")(*data)
    raise pickle.UnpicklingError(f"_rebuild_sparse_tensor: unsupported layout {layout!r}")


def _tapegrad_counterpart(module, name):
    """torch.x.y.Name -> tapegrad.x.y.Name, for whole objects pickled by PyTorch (weights_only=False)."""
    try:
        return getattr(importlib.import_module("tapegrad" + module[len("torch"):]), name)
    except (ImportError, AttributeError):
        raise pickle.UnpicklingError(
            f"{module}.{name} is PyTorch's and tapegrad has no counterpart of it. Save a state_dict with PyTorch "
            "and load that instead.") from None
