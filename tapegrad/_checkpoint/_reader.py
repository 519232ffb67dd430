"""load: PyTorch's zip checkpoint format (what tapegrad.save and torch.save write), and earlier
tapegrad files (see _legacy)."""
import io
import os
import pickle
import zipfile
import zlib
import json

from . import _globals
from ._legacy import is_legacy, load_legacy
from ._records import RecordReader
from ._tensors import TensorBuilder
from ._unpickler import CheckpointUnpickler


def load(f, map_location=None, *, weights_only=True, mmap=None):
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    name = os.fspath(f) if is_path else getattr(f, "name", "<file object>")
    if not is_path and not _seekable(f):
        f = io.BytesIO(f.read())
    head = _head(f, is_path)
    try:
        records = RecordReader(f, use_mmap=bool(mmap))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise _not_a_checkpoint(name, head) from None
    try:
        return _load_records(records, name, map_location, weights_only)
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError,
            zlib.error) as e:
        raise RuntimeError(f"tapegrad.load: {name!s} is truncated or corrupted ({type(e).__name__}: {e}). "
                           "Re-save it, or check that the copy is complete.") from None
    finally:
        records.close()


def _load_records(records, name, map_location, weights_only):
    if is_legacy(records.names):
        return load_legacy(records._zip, map_location)
    pkl = [n for n in records.names if n.endswith("data.pkl") and n.count("/") == 1]
    if not pkl:
        raise RuntimeError(f"tapegrad.load: {name!s} is a zip archive but neither a tapegrad checkpoint nor a "
                           "PyTorch one (no data.pkl). Load it with the tool that wrote it.")
    prefix = pkl[0][:-len("data.pkl")]
    if prefix + "byteorder" in records.names and records.read(prefix + "byteorder") != b"little":
        raise RuntimeError("tapegrad.load: big-endian checkpoints are not supported. Re-save the file on a "
                           "little-endian machine.")
    unpickler = CheckpointUnpickler(io.BytesIO(records.read(pkl[0])), records.array, prefix,
                                    TensorBuilder(map_location), weights_only)
    try:
        return unpickler.load()
    except pickle.UnpicklingError as e:
        if not weights_only or str(e).startswith("Weights only load failed"):
            raise
        raise _globals.weights_only_error(str(e)) from None
    except (TypeError, ValueError, IndexError, AttributeError) as e:
        if not weights_only:
            raise
        raise RuntimeError(f"tapegrad.load: the checkpoint is malformed ({type(e).__name__}: {e}).") from None


def _seekable(f):
    try:
        return f.seekable()
    except AttributeError:
        return False


def _head(f, is_path):
    if is_path:
        with open(f, "rb") as fh:
            return fh.read(4)
    pos = f.tell()
    head = f.read(4)
    f.seek(pos)
    return head


def _not_a_checkpoint(name, head):
    if head[:1] == b"\x80" or head[:2] == b"PK":
        what = ("a pickle (PyTorch's legacy format or plain pickle). tapegrad never unpickles arbitrary files; "
                "re-save it with torch.save's default zip format") if head[:1] == b"\x80" else \
            "a truncated or corrupted zip archive. Re-save it, or check that the copy is complete"
    else:
        what = "not a tapegrad or PyTorch checkpoint (it is not a zip archive). Check the path"
    return RuntimeError(f"tapegrad.load: {name!s} is {what}.")
