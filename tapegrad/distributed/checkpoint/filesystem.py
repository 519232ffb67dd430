"""A checkpoint directory: `.metadata` (JSON, see metadata.py) and one NumPy `.npz` file per writing process
holding the tensors' chunks: each distinct shard of a sharded array once (its offsets and lengths are in
the metadata), as raw bytes so every dtype (bfloat16 too) round-trips exactly."""
import os

import numpy as np

from .metadata import METADATA_FILE, Metadata, TensorStorageMetadata

__all__ = ["FileSystemWriter", "FileSystemReader"]


def _chunks(array):
    """(offsets, data) of each distinct shard of a jax.Array (a replicated array gives one chunk)."""
    seen = set()
    for shard in array.addressable_shards:
        offsets = tuple((s.start or 0) for s in shard.index)
        if offsets in seen:
            continue
        seen.add(offsets)
        yield offsets, np.asarray(shard.data)


class FileSystemWriter:
    """Writes a checkpoint into the directory `path` (created if needed)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False, overwrite=True):
        self.path = os.fspath(path)
        self.single_file_per_rank = single_file_per_rank
        self.sync_files = sync_files
        self.thread_count = thread_count
        self.overwrite = overwrite

    def write(self, tensors, values, rank=0):
        """tensors: {key: jax.Array}; values: {key: plain value}. Returns the Metadata written."""
        os.makedirs(self.path, exist_ok=True)
        meta_path = os.path.join(self.path, METADATA_FILE)
        if not self.overwrite and os.path.exists(meta_path):
            raise RuntimeError(f"Checkpoint already exists at {self.path} and overwrite=False: pass "
                               "FileSystemWriter(path, overwrite=True) or choose another directory.")
        from .metadata import BytesStorageMetadata
        name = f"__{rank}_0.npz"
        arrays, entries = {}, {}
        for key, array in tensors.items():
            chunks = []
            for offsets, data in _chunks(array):
                slot = str(len(arrays))
                arrays[slot] = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
                chunks.append({"file": name, "key": slot, "offsets": list(offsets), "lengths": list(data.shape)})
            entries[key] = TensorStorageMetadata(_dtype_name(array.dtype), tuple(array.shape), chunks)
        for key, value in values.items():
            entries[key] = BytesStorageMetadata(value)
        metadata = Metadata(entries)
        text = metadata.to_json()   # fails before anything is written when a value cannot be saved
        with open(os.path.join(self.path, name), "wb") as f:
            np.savez(f, **arrays)
        with open(meta_path + ".tmp", "w") as f:
            f.write(text)
        os.replace(meta_path + ".tmp", meta_path)   # a directory with .metadata is a complete checkpoint
        return metadata


class FileSystemReader:
    """Reads a checkpoint written by FileSystemWriter from the directory `path`."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._files = {}

    def read_metadata(self):
        meta_path = os.path.join(self.path, METADATA_FILE)
        if not os.path.exists(meta_path):
            raise FileNotFoundError(f"No checkpoint at {self.path}: its {METADATA_FILE} file is missing. Pass the "
                                    "directory given to distributed.checkpoint.save.")
        with open(meta_path) as f:
            return Metadata.from_json(f.read())

    def read_tensor(self, entry):
        """The whole tensor of a TensorStorageMetadata, as a NumPy array, assembled from its chunks."""
        from ... import _dtypes
        dtype = np.dtype(_dtypes._by_name(entry.dtype).np)
        out = np.empty(entry.size, dtype)
        for chunk in entry.chunks:
            f = self._files.get(chunk["file"])
            if f is None:
                f = self._files[chunk["file"]] = np.load(os.path.join(self.path, chunk["file"]))
            data = f[chunk["key"]].view(dtype).reshape(chunk["lengths"])
            out[tuple(slice(o, o + n) for o, n in zip(chunk["offsets"], chunk["lengths"]))] = data
        return out


def _dtype_name(np_dtype):
    from ... import _dtypes
    return _dtypes.from_jax(np_dtype).name
