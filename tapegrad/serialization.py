"""save / load without executing code from the file.

tapegrad's checkpoint is a NumPy .npz archive: one entry per tensor plus a
JSON entry describing the object tree (dicts with any plain keys, OrderedDicts,
lists, tuples, tensors, Parameters, numbers, strings, None, dtypes, devices,
Size). bfloat16 data is stored as its uint16 bits with the dtype in the JSON.
Nothing is unpickled: NumPy reads the arrays with allow_pickle=False.

`load` also reads files written by PyTorch's `torch.save` (a zip holding
data.pkl and raw storages) through a restricted unpickler that only knows the
handful of globals a tensor checkpoint needs (tensor/parameter rebuild
functions, storage types, dtypes, OrderedDict, Size) and maps them to tapegrad;
any other global is refused before anything is called.
"""
import io
import json
import math
import os
import pickle
import zipfile
import zlib
from collections import OrderedDict

import jax
import numpy as np

from . import _dtypes as D
from ._size import Size
from ._tensor import Tensor
from .device import device as _device, to_jax_device

_STRUCTURE = "__tapegrad_structure__"
_FORMAT = "tapegrad.npz/1"


# ---- save ---------------------------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Save tensors, state dicts and plain containers of them to a path or a binary file object."""
    arrays = {}
    tensor_ids = {}

    def encode(x):
        if isinstance(x, Tensor):
            key = tensor_ids.get(id(x))
            if key is None:  # the same tensor saved twice loads back as one object
                key = tensor_ids[id(x)] = f"t{len(tensor_ids)}"
                value = np.asarray(x.detach()._value)
                arrays[key] = value.view(np.uint16) if x.dtype is D.bfloat16 else value
            return {"tensor": key, "dtype": x.dtype.name, "requires_grad": x.requires_grad,
                    "parameter": bool(getattr(x, "_is_parameter", False)), "device": str(x.device)}
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, int):
            return {"int": str(x)}
        if isinstance(x, float):
            return {"float": repr(x)} if not math.isfinite(x) else x
        if isinstance(x, complex):
            return {"complex": [repr(x.real), repr(x.imag)]}
        if isinstance(x, D.dtype):
            return {"dtype": x.name}
        if isinstance(x, _device):
            return {"device": str(x)}
        if isinstance(x, Size):
            return {"size": list(x)}
        if isinstance(x, OrderedDict):
            return {"ordereddict": [[encode(k), encode(v)] for k, v in x.items()]}
        if isinstance(x, dict):
            return {"dict": [[encode(k), encode(v)] for k, v in x.items()]}
        if isinstance(x, tuple):
            return {"tuple": [encode(v) for v in x]}
        if isinstance(x, list):
            return {"list": [encode(v) for v in x]}
        if isinstance(x, (np.generic, np.ndarray)):
            return encode(x.item() if isinstance(x, np.generic) else _numpy_tensor(x))
        raise TypeError(f"tapegrad.save can store tensors, numbers, strings, None, dtypes, devices and "
                        f"dicts/lists/tuples of them, but got {type(x).__name__}. Save its state_dict() "
                        "(or convert it to those types) instead of the object itself.")

    structure = {"format": _FORMAT, "root": encode(obj)}
    arrays[_STRUCTURE] = np.frombuffer(json.dumps(structure, allow_nan=False).encode("utf-8"), np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def _numpy_tensor(a):
    from ._creation import tensor
    return tensor(a)


# ---- load ---------------------------------------------------------------------------------------------

def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what `save` (or PyTorch's torch.save) wrote. Never executes code from the file.

    map_location: None (each tensor back on the device it was saved from), a device or device string,
    a dict {'saved device': 'target device'}, or a callable(tensor, saved_location) -> tensor.
    """
    data = f.read() if hasattr(f, "read") else _read_path(f)
    name = getattr(f, "name", f) if not hasattr(f, "read") else getattr(f, "name", "<file object>")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise _not_a_checkpoint(name, data) from None
    try:
        if f"{_STRUCTURE}.npy" in names:
            return _load_tapegrad(archive, map_location)
        pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if pkl:
            return _load_torch_zip(archive, pkl[0][:-len("data.pkl")], map_location)
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError,
            zlib.error) as e:
        raise RuntimeError(f"tapegrad.load: {name!s} is truncated or corrupted ({type(e).__name__}: {e}). "
                           "Re-save it, or check that the copy is complete.") from None
    raise RuntimeError(f"tapegrad.load: {name!s} is a zip archive but neither a tapegrad checkpoint nor a PyTorch "
                       "one (no structure entry and no data.pkl). Load it with the tool that wrote it.")


def _read_path(path):
    with open(path, "rb") as fh:
        return fh.read()


def _not_a_checkpoint(name, data):
    if data[:1] == b"\x80" or data[:2] == b"PK":
        what = ("a pickle (PyTorch's legacy format or plain pickle). tapegrad never unpickles arbitrary files; "
                "re-save it with torch.save's default zip format") if data[:1] == b"\x80" else \
            "a truncated or corrupted zip archive. Re-save it, or check that the copy is complete"
    else:
        what = "not a tapegrad or PyTorch checkpoint (it is not a zip archive). Check the path"
    return RuntimeError(f"tapegrad.load: {name!s} is {what}.")


def _load_tapegrad(archive, map_location):
    with archive.open(f"{_STRUCTURE}.npy") as fh:
        structure = json.loads(np.load(fh, allow_pickle=False).tobytes().decode("utf-8"))
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise ValueError("tapegrad.load: unknown checkpoint format "
                         f"{structure.get('format') if isinstance(structure, dict) else structure!r}.")
    tensors = {}

    def array(key):
        with archive.open(f"{key}.npy") as fh:
            return np.load(fh, allow_pickle=False)

    def decode(x):
        if x is None or isinstance(x, (bool, str, float)):
            return x
        if isinstance(x, int):
            return x
        if not isinstance(x, dict) or len(x) == 0:
            raise ValueError(f"tapegrad.load: malformed structure entry {x!r}.")
        if "tensor" in x:
            key = x["tensor"]
            if key not in tensors:
                value = array(key)
                dtype = D._by_name(x["dtype"])
                if dtype is D.bfloat16:
                    value = value.view(D.bfloat16.np)
                tensors[key] = _make_tensor(value, dtype, x["requires_grad"], x["parameter"], x["device"],
                                            map_location)
            return tensors[key]
        (tag, v), = x.items()
        if tag == "int":
            return int(v)
        if tag == "float":
            return float(v)
        if tag == "complex":
            return complex(float(v[0]), float(v[1]))
        if tag == "dtype":
            return D._by_name(v)
        if tag == "device":
            return _device(v)
        if tag == "size":
            return Size(v)
        if tag == "dict":
            return {_hashable(decode(k)): decode(val) for k, val in v}
        if tag == "ordereddict":
            return OrderedDict((_hashable(decode(k)), decode(val)) for k, val in v)
        if tag == "tuple":
            return tuple(decode(e) for e in v)
        if tag == "list":
            return [decode(e) for e in v]
        raise ValueError(f"tapegrad.load: malformed structure entry with tag {tag!r}.")

    return decode(structure["root"])


def _hashable(k):
    if isinstance(k, (list, dict)):
        raise ValueError("tapegrad.load: malformed structure (unhashable dict key).")
    return k


def _target_device(saved, map_location):
    if map_location is None:
        return saved
    if isinstance(map_location, dict):
        return map_location.get(saved, saved)
    return str(map_location)


def _make_tensor(value, dtype, requires_grad, parameter, saved_device, map_location):
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        t = _make_tensor(value, dtype, requires_grad, parameter, "cpu", "cpu")
        return map_location(t, saved_device)
    target = _target_device(saved_device, map_location)
    try:
        jdev = to_jax_device(target)
    except RuntimeError as e:
        raise RuntimeError(f"Attempting to deserialize object on device '{target}', which is not available "
                           f"({e}). Pass map_location='cpu' (or another available device) to tapegrad.load.") \
            from None
    t = Tensor._wrap(jax.device_put(np.array(value, dtype.np), jdev))
    if parameter:
        from .nn import Parameter
        return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _load_torch_zip(archive, prefix, map_location):
    def make(value, dtype, requires_grad, parameter, location):
        saved = "cpu" if location.startswith("cpu") else location
        return _make_tensor(value, dtype, requires_grad, parameter, saved, map_location)
    if prefix + "byteorder" in archive.namelist() and archive.read(prefix + "byteorder") != b"little":
        raise RuntimeError("tapegrad.load: big-endian PyTorch checkpoints are not supported. Re-save the file on a "
                           "little-endian machine.")
    unpickler = _TorchUnpickler(io.BytesIO(archive.read(prefix + "data.pkl")), archive, prefix, make)
    try:
        return unpickler.load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(f"Weights only load failed. {e}") from None
    except (TypeError, ValueError, IndexError, AttributeError) as e:
        raise RuntimeError(f"tapegrad.load: the PyTorch checkpoint is malformed ({type(e).__name__}: {e}).") \
            from None


# ---- PyTorch's zip format, read by a restricted unpickler -----------------------------------------------

class _StorageType:
    """Stands for torch.FloatStorage & co.: only carries the element dtype."""

    def __init__(self, dtype):
        self.dtype = dtype


class _TorchStorage:
    def __init__(self, array, location):
        self.array = array
        self.location = location


class _TensorType:
    """Stands for torch.Tensor / torch.nn.Parameter in _rebuild_from_type_v2."""

    def __init__(self, parameter):
        self.parameter = parameter


_STORAGE_DTYPES = {"FloatStorage": D.float32, "DoubleStorage": D.float64, "HalfStorage": D.float16,
                   "BFloat16Storage": D.bfloat16, "LongStorage": D.int64, "IntStorage": D.int32,
                   "ShortStorage": D.int16, "CharStorage": D.int8, "ByteStorage": D.uint8, "BoolStorage": D.bool_,
                   "ComplexFloatStorage": D.complex64, "ComplexDoubleStorage": D.complex128}
_TORCH_DTYPES = {"float32": D.float32, "float": D.float32, "float64": D.float64, "double": D.float64,
                 "float16": D.float16, "half": D.float16, "bfloat16": D.bfloat16, "int64": D.int64, "long": D.int64,
                 "int32": D.int32, "int": D.int32, "int16": D.int16, "short": D.int16, "int8": D.int8,
                 "uint8": D.uint8, "bool": D.bool_, "complex64": D.complex64, "complex128": D.complex128}


class _TorchUnpickler(pickle.Unpickler):
    """Resolves only the globals a tensor checkpoint needs; anything else is refused before it can run."""

    def __init__(self, file, archive, prefix, make_tensor):
        super().__init__(file)
        self._archive = archive
        self._prefix = prefix
        self._make_tensor = make_tensor
        self._storages = {}

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return OrderedDict
        if module == "builtins" and name in ("set", "frozenset", "complex"):
            return {"set": set, "frozenset": frozenset, "complex": complex}[name]
        if module == "torch":
            if name in _STORAGE_DTYPES:
                return _StorageType(_STORAGE_DTYPES[name])
            if name in _TORCH_DTYPES:
                return _TORCH_DTYPES[name]
            if name == "Size":
                return Size
            if name == "device":
                return _device
            if name == "Tensor":
                return _TensorType(False)
        if module == "torch.nn.parameter" and name == "Parameter":
            return _TensorType(True)
        if module == "torch._utils":
            if name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
                return self._rebuild_tensor
            if name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
                return self._rebuild_parameter
        if module == "torch._tensor" and name == "_rebuild_from_type_v2":
            return self._rebuild_from_type
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {module}.{name} was not an allowed global. tapegrad.load only reads "
            "tensors, parameters and plain containers from PyTorch checkpoints and never runs code from a file; "
            "re-save the checkpoint as a state_dict of tensors.")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str)):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        if key not in self._storages:
            dtype = storage_type.dtype
            raw = self._archive.read(f"{self._prefix}data/{key}")
            if len(raw) < numel * dtype.itemsize:
                raise EOFError(f"storage {key} holds {len(raw)} bytes, expected {numel * dtype.itemsize}")
            array = np.frombuffer(raw, dtype.np, count=numel)
            self._storages[key] = _TorchStorage(array, str(location))
        return self._storages[key]

    def _rebuild_tensor(self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                        metadata=None, parameter=False):
        if not isinstance(storage, _TorchStorage):
            raise pickle.UnpicklingError("_rebuild_tensor_v2 expects a storage")
        array = storage.array
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        if any(s < 0 for s in size + stride) or storage_offset < 0 or len(size) != len(stride):
            raise ValueError(f"bad tensor geometry size={size} stride={stride} offset={storage_offset}")
        last = storage_offset + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else -1
        if last >= array.size:
            raise ValueError(f"tensor of size {size} with stride {stride} at offset {storage_offset} runs past its "
                             f"storage of {array.size} elements")
        item = array.itemsize
        value = np.lib.stride_tricks.as_strided(array[storage_offset:] if all(size) else array[:0], size,
                                                tuple(st * item for st in stride), writeable=False)
        return self._make_tensor(value, D.from_jax(array.dtype), bool(requires_grad), parameter, storage.location)

    def _rebuild_parameter(self, data, requires_grad, backward_hooks, state=None):
        if not isinstance(data, Tensor):
            raise pickle.UnpicklingError("_rebuild_parameter expects a tensor")
        from .nn import Parameter
        return Parameter(data, bool(requires_grad))

    def _rebuild_from_type(self, func, new_type, args, state):
        if func not in (self._rebuild_tensor, self._rebuild_parameter) or not isinstance(new_type, _TensorType):
            raise pickle.UnpicklingError("_rebuild_from_type_v2 with an unsupported function or type")
        t = func(*args)
        if new_type.parameter and not getattr(t, "_is_parameter", False):
            from .nn import Parameter
            t = Parameter(t, t.requires_grad)
        return t
