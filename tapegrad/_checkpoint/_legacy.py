"""Files written by earlier tapegrad versions: a NumPy .npz archive, one entry per tensor plus a JSON
entry describing the object tree. Read with allow_pickle=False: nothing in them is executed."""
import json
from collections import OrderedDict

import jax
import numpy as np

from .. import _dtypes as D
from .._size import Size
from .._tensor import Tensor
from ..device import device as _device
from ._tensors import _jax_device, _target_device

STRUCTURE = "__tapegrad_structure__"
_FORMAT = "tapegrad.npz/1"


def is_legacy(names):
    return f"{STRUCTURE}.npy" in names


def load_legacy(archive, map_location):
    with archive.open(f"{STRUCTURE}.npy") as fh:
        structure = json.loads(np.load(fh, allow_pickle=False).tobytes().decode("utf-8"))
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise ValueError("tapegrad.load: unknown checkpoint format "
                         f"{structure.get('format') if isinstance(structure, dict) else structure!r}.")
    tensors = {}

    def array(key):
        with archive.open(f"{key}.npy") as fh:
            return np.load(fh, allow_pickle=False)

    def decode(x):
        if x is None or isinstance(x, (bool, str, float, int)):
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
        decoders = {"int": int, "float": float, "complex": lambda v: complex(float(v[0]), float(v[1])),
                    "dtype": D._by_name, "device": _device, "size": Size,
                    "dict": lambda v: {_hashable(decode(k)): decode(val) for k, val in v},
                    "ordereddict": lambda v: OrderedDict((_hashable(decode(k)), decode(val)) for k, val in v),
                    "tuple": lambda v: tuple(decode(e) for e in v), "list": lambda v: [decode(e) for e in v]}
        if tag not in decoders:
            raise ValueError(f"tapegrad.load: malformed structure entry with tag {tag!r}.")
        return decoders[tag](v)

    return decode(structure["root"])


def _hashable(k):
    if isinstance(k, (list, dict)):
        raise ValueError("tapegrad.load: malformed structure (unhashable dict key).")
    return k


def _make_tensor(value, dtype, requires_grad, parameter, saved_device, map_location):
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        t = _make_tensor(value, dtype, requires_grad, parameter, "cpu", "cpu")
        return map_location(t, saved_device)
    jdev = _jax_device(_target_device(saved_device, map_location))
    t = Tensor._wrap(jax.device_put(np.array(value, dtype.np), jdev))
    if parameter:
        from ..nn import Parameter
        return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t
