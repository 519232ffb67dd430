"""nn.functional's functions that PyTorch also offers as torch.* (and a few as Tensor methods).

torch.threshold, torch.hardshrink... are ATen's functions, the same as nn.functional's; torch.kl_div and
torch.binary_cross_entropy_with_logits take ATen's signature (reduction as an integer).
"""
from ._tensor import Tensor
from .nn._functional.activation import hardshrink, threshold, rrelu, prelu  # noqa: F401
from .nn._functional.sparse import native_dropout  # noqa: F401
from .nn._functional.loss import (  # noqa: F401
    aten_kl_div as kl_div, aten_binary_cross_entropy_with_logits as binary_cross_entropy_with_logits)

# the same functions as nn.functional's (ATen's signatures are theirs)
from .nn._functional.linear import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d)
from .nn._functional.pooling import avg_pool1d, adaptive_avg_pool1d  # noqa: F401
from .nn._functional.distance import cosine_similarity, pairwise_distance  # noqa: F401
from .nn._functional.resample import pixel_shuffle, pixel_unshuffle  # noqa: F401
from .nn._functional import pooling as _pooling


# ATen's max_pool: no return_indices, and an empty stride (its default) means the kernel size
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool1d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool2d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool3d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def _ATEN_STRIDE(stride):
    return None if isinstance(stride, (tuple, list)) and len(stride) == 0 else stride


Tensor.hardshrink = hardshrink
Tensor.prelu = prelu
