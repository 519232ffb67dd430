"""tapegrad.ops (PyTorch's torch.ops): the operator namespaces PyTorch code calls directly.

Only `profiler` is here: tapegrad's operations are the op table (tapegrad/_ops), reached through
the public functions; there is no aten namespace of registered C++ kernels.
"""
from . import profiler

__all__ = ["profiler"]
