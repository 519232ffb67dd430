"""tapegrad.distributed.checkpoint: PyTorch's distributed checkpoint (DCP) over a directory of NumPy files
and a JSON metadata file; loads in place, into any sharding (see _api)."""
from . import default_planner, state_dict
from ._api import async_save, load, load_state_dict, save, save_state_dict
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import BytesStorageMetadata, Metadata, TensorStorageMetadata
from .stateful import Stateful

__all__ = ["save", "load", "async_save", "save_state_dict", "load_state_dict", "FileSystemReader",
           "FileSystemWriter", "DefaultSavePlanner", "DefaultLoadPlanner", "Metadata", "TensorStorageMetadata",
           "BytesStorageMetadata", "Stateful", "state_dict", "default_planner"]
