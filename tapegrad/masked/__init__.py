"""tapegrad.masked: PyTorch's torch.masked -- MaskedTensor (masked_tensor, as_masked_tensor) and the masked
reductions and normalizations taking `mask=` (see _tensor.py and _ops.py)."""
from ._ops import (  # noqa: F401
    sum, prod, amax, amin, argmax, argmin, mean, norm, var, std, softmax, log_softmax, softmin, normalize,
    logsumexp)
from ._tensor import MaskedTensor, masked_tensor, as_masked_tensor, is_masked_tensor  # noqa: F401

__all__ = ["MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor", "sum", "prod", "amax", "amin",
           "argmax", "argmin", "mean", "norm", "var", "std", "softmax", "log_softmax", "softmin", "normalize",
           "logsumexp"]
