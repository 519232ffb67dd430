"""nn.functional's functions that PyTorch also offers as torch.* (and a few as Tensor methods).

torch.threshold, torch.hardshrink... are ATen's functions, the same as nn.functional's; torch.kl_div and
torch.binary_cross_entropy_with_logits take ATen's signature (reduction as an integer).
"""
from ._tensor import Tensor
from .nn._functional.activation import hardshrink, threshold, rrelu, prelu  # noqa: F401
from .nn._functional.sparse import native_dropout  # noqa: F401
from .nn._functional.loss import (  # noqa: F401
    aten_kl_div as kl_div, aten_binary_cross_entropy_with_logits as binary_cross_entropy_with_logits)

Tensor.hardshrink = hardshrink
Tensor.prelu = prelu
