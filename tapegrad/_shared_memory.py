"""Tensor.share_memory_ / is_shared.

PyTorch moves a CPU tensor's storage into shared memory so that torch.multiprocessing can hand it to other
processes without a copy. tapegrad's tensors live in JAX arrays, which no other process can map, so
share_memory_ only marks the storage (every tensor on it, its views and detach()es, then says is_shared(), as
in PyTorch) and returns self; a tensor sent to another process is still copied there. CUDA tensors count as
shared, as in PyTorch. A shared storage keeps its size: resize_ refuses to grow it, as PyTorch's.
"""
import weakref

from ._tensor import Tensor

SHARED = weakref.WeakSet()   # storages marked by share_memory_


def share_memory_(self):
    """Mark this tensor's storage as shared (see the module's docstring); returns self."""
    SHARED.add(self._storage)
    return self


def is_shared(self):
    """Whether share_memory_ was called on a tensor of this storage (always True on a CUDA device)."""
    return self._storage in SHARED or self.device.type == "cuda"


share_memory_.__qualname__ = "Tensor.share_memory_"   # (as Python names it in its argument errors)
is_shared.__qualname__ = "Tensor.is_shared"
Tensor.share_memory_ = share_memory_
Tensor.is_shared = is_shared
