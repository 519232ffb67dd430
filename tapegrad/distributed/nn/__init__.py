"""tapegrad.distributed.nn: RemoteModule (a module living on another worker)."""
from ._remote_module import RemoteModule

__all__ = ["RemoteModule"]
