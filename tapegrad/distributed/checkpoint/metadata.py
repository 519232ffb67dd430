"""What a checkpoint directory holds (its `.metadata` file, JSON): every tensor's dtype, shape and chunks,
and every other value."""
import json
from dataclasses import dataclass, field

METADATA_FILE = ".metadata"
VERSION = 1


@dataclass
class TensorStorageMetadata:
    """A saved tensor: dtype name, shape, and its chunks (file, key, offsets, lengths)."""
    dtype: str
    size: tuple
    chunks: list = field(default_factory=list)


@dataclass
class BytesStorageMetadata:
    """A saved value that is not a tensor (a number, string, list...), kept in the metadata file."""
    value: object = None


@dataclass
class Metadata:
    """{flattened key: TensorStorageMetadata or BytesStorageMetadata}, as PyTorch's save returns."""
    state_dict_metadata: dict

    def to_json(self):
        entries = {}
        for key, m in self.state_dict_metadata.items():
            if isinstance(m, TensorStorageMetadata):
                entries[key] = {"tensor": {"dtype": m.dtype, "size": list(m.size), "chunks": m.chunks}}
            else:
                entries[key] = {"value": _encode(m.value)}
        return json.dumps({"version": VERSION, "entries": entries})

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        out = {}
        for key, entry in data["entries"].items():
            if "tensor" in entry:
                t = entry["tensor"]
                out[key] = TensorStorageMetadata(t["dtype"], tuple(t["size"]), t["chunks"])
            else:
                out[key] = BytesStorageMetadata(_decode(entry["value"]))
        return cls(out)


def _encode(value):
    """A JSON form of plain values; tuples are marked so they come back as tuples."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode(v) for k, v in value.items()}}
    from ... import _dtypes
    if isinstance(value, _dtypes.dtype):
        return {"__dtype__": value.name}
    raise TypeError(f"distributed.checkpoint cannot save a value of type {type(value).__name__}: a checkpoint "
                    "holds tensors and plain values (numbers, strings, None, lists, tuples, dicts of them). "
                    "Convert it to one of those first.")


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "__tuple__" in value:
            return tuple(_decode(v) for v in value["__tuple__"])
        if "__dtype__" in value:
            from ... import _dtypes
            return _dtypes._by_name(value["__dtype__"])
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    return value
