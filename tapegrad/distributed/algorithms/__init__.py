"""tapegrad.distributed.algorithms: PyTorch's Join context manager (join)."""
from .join import Join, JoinHook, Joinable

__all__ = ["Join", "JoinHook", "Joinable"]
