"""tapegrad.functional: PyTorch's `torch.functional`, the module where some top-level functions are written in
Python (`torch.functional.einsum is torch.einsum`). The same objects as tapegrad's top level."""
from . import (  # noqa: F401
    atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors, cdist, einsum, istft, meshgrid, norm,
    split, stft, tensordot, unique, unique_consecutive)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cdist", "einsum",
           "istft", "meshgrid", "norm", "split", "stft", "tensordot", "unique", "unique_consecutive"]
