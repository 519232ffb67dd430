"""PyTorch's torch.utils.dlpack: DLPack capsules in and out (see tapegrad._interop)."""
from .._interop import from_dlpack

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's current value, consumed once by any DLPack-aware library. As PyTorch's,
    it exports a tensor that requires grad too (its data; `__dlpack__` refuses those)."""
    return tensor._value.__dlpack__()
