"""save / load in PyTorch's checkpoint format (a zip holding data.pkl and one record per storage), so
files move both ways between tapegrad and PyTorch. See tapegrad/_checkpoint for the parts.

load is weights_only by default, as PyTorch's: tensors, parameters, numbers, strings, dtypes, devices,
Size and containers of them, plus the globals registered with add_safe_globals / safe_globals.
weights_only=False unpickles anything (whole modules): only for files you trust.
"""
from ._checkpoint import _reader, _writer
from ._checkpoint._globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

DEFAULT_PROTOCOL = _writer.DEFAULT_PROTOCOL

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals"]


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save obj to a path (written atomically: a temporary file beside it, then renamed) or a binary file
    object. Tensors sharing a storage are saved with it once."""
    _writer.save(obj, f, pickle_protocol)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load what `save` or PyTorch's torch.save wrote (or a file of an earlier tapegrad).

    map_location: None (each tensor back on the device it was saved from), a device or device string,
    a dict {'saved device': 'target device'}, or a callable(tensor, saved_location) -> tensor.
    mmap=True maps the file instead of reading it: tensors read their data from the file as it is used.
    """
    return _reader.load(f, map_location, weights_only=weights_only, mmap=mmap)
