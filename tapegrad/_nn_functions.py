"""nn.functional's functions that PyTorch also offers as torch.* (and a few as Tensor methods).

torch.threshold, torch.hardshrink... are ATen's functions, the same as nn.functional's; torch.kl_div, the
losses, the norms, dropout and embedding take ATen's signatures (reduction as an integer, no inplace flag,
embedding's weight first, batch_norm's weight before the running statistics).
"""
from ._tensor import Tensor
from .nn._functional.activation import hardshrink, threshold, rrelu, prelu  # noqa: F401
from .nn._functional.sparse import (  # noqa: F401
    native_dropout, aten_dropout as dropout, alpha_dropout, feature_alpha_dropout)
from .nn._functional.loss import (  # noqa: F401
    aten_kl_div as kl_div, aten_binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
    aten_cosine_embedding_loss as cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss,
    triplet_margin_loss, poisson_nll_loss)
from .nn._functional.normalization import (  # noqa: F401
    aten_batch_norm as batch_norm, aten_instance_norm as instance_norm, rms_norm)

# the same functions as nn.functional's (ATen's signatures are theirs)
from .nn._functional.linear import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, bilinear)
from .nn._functional.activation import threshold_  # noqa: F401
from .nn._functional.extras import celu_, selu_  # noqa: F401
from .nn._functional.pooling import avg_pool1d, adaptive_avg_pool1d  # noqa: F401
from .nn._functional.distance import cosine_similarity, pairwise_distance  # noqa: F401
from .nn._functional.resample import (  # noqa: F401
    pixel_shuffle, pixel_unshuffle, channel_shuffle, native_channel_shuffle)
from .nn._functional import activation as _activation, normalization as _normalization, pooling as _pooling
from .nn._functional import sparse as _sparse


# ATen's max_pool: no return_indices, and an empty stride (its default) means the kernel size
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool1d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool2d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pooling.max_pool3d(input, kernel_size, _ATEN_STRIDE(stride), padding, dilation, ceil_mode)


def _ATEN_STRIDE(stride):
    return None if isinstance(stride, (tuple, list)) and len(stride) == 0 else stride


def adaptive_max_pool1d(input, output_size):
    """ATen's: always (values, indices)."""
    return _pooling.adaptive_max_pool1d(input, output_size, return_indices=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return _normalization.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return _normalization.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's embedding: the weight first, and a padding_idx that names no row (-1 by default) means none."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    return _sparse.embedding(indices, weight, padding_idx if 0 <= padding_idx < weight.shape[0] else None,
                             scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def celu(input, alpha=1.0):
    return _activation.celu(input, alpha)


def selu(input):
    return _activation.selu(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _activation.rrelu(input, lower, upper, training, inplace=True)


Tensor.hardshrink = hardshrink
Tensor.prelu = prelu
