"""tapegrad.nn.functional: PyTorch's functional neural-network API (implemented in `_functional/`)."""
from ._functional.activation import (  # noqa: F401
    relu, relu_, leaky_relu, elu, selu, celu, gelu, silu, mish, softplus, hardtanh, relu6, tanh, sigmoid,
    softmax, log_softmax, softmin, threshold, threshold_, hardsigmoid, hardswish, softshrink, hardshrink,
    tanhshrink, softsign, rrelu, rrelu_, logsigmoid, glu, prelu)
from ._functional.distance import cosine_similarity, pairwise_distance  # noqa: F401
from ._functional.linear import (  # noqa: F401
    linear, bilinear, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d)
from ._functional.pooling import (  # noqa: F401
    max_pool1d, max_pool2d, max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, adaptive_avg_pool1d,
    adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d)
from ._functional.unpooling import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401
from ._functional.fractional_pooling import fractional_max_pool2d, fractional_max_pool3d  # noqa: F401
from ._functional.lp_pooling import lp_pool1d, lp_pool2d, lp_pool3d  # noqa: F401
from ._functional.normalization import (  # noqa: F401
    batch_norm, layer_norm, group_norm, rms_norm, normalize, instance_norm)
from ._functional.sparse import (  # noqa: F401
    dropout, dropout1d, dropout2d, embedding, embedding_bag, one_hot)
from ._functional.attention import scaled_dot_product_attention, multi_head_attention_forward  # noqa: F401
from ._functional.resample import (  # noqa: F401
    pixel_shuffle, pixel_unshuffle, channel_shuffle, native_channel_shuffle)
from ._functional.fold import unfold, fold  # noqa: F401
from .._functional._distance import pdist  # noqa: F401
from ._functional.padding import pad  # noqa: F401
from ._functional.interpolate import interpolate, upsample, upsample_nearest, upsample_bilinear  # noqa: F401
from ._functional.grid import affine_grid, grid_sample  # noqa: F401
from ._functional.loss import (  # noqa: F401
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, nll_loss, cross_entropy, binary_cross_entropy,
    binary_cross_entropy_with_logits, kl_div, cosine_embedding_loss)
from ._functional.ctc import ctc_loss  # noqa: F401
from ._functional.margin_losses import (  # noqa: F401
    margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss, multilabel_margin_loss,
    multi_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss, poisson_nll_loss, gaussian_nll_loss)
from ._functional.extras import (  # noqa: F401
    alpha_dropout, feature_alpha_dropout, dropout3d, gumbel_softmax, local_response_norm, elu_, selu_, celu_,
    leaky_relu_, hardtanh_, max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
    fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices)

from .._argument_errors import parse_all as _parse_all  # noqa: E402
_parse_all(globals(), list(globals()), "nn")   # PyTorch's errors for arguments that fit none of its overloads
