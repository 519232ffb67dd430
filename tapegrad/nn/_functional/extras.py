"""nn.functional's remaining small functions: alpha and 3-d feature dropout, gumbel_softmax,
local_response_norm, the in-place activations and the `_with_indices` pooling aliases. Each is composed of
other functions as PyTorch's nn.functional composes it, so the recorded nodes are PyTorch's."""

from . import activation as A, fractional_pooling as FP, pooling as P, sparse as S
from ..._arg_types import as_bool
from ._util import maybe_inplace
from ..._user_frames import warn_user


# ---- dropout ------------------------------------------------------------------------------------

def _alpha(input, p, training, inplace, feature):
    S._check_p(p)
    as_bool(training, "train", ("feature_" if feature else "") + "alpha_dropout" + "_" * bool(inplace), 3)
    out = S._alpha_dropout(input, p, training, feature)
    return input if out is input else maybe_inplace(input, out, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    S._check_p(p)
    if input.ndim not in (4, 5):
        warn_user(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                  "in an error in a future release. To retain the behavior and silence this warning, please use "
                  "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                  "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                  "inputs).")
    if input.ndim == 5:
        return S._feature_dropout(input, p, training, inplace, 3)
    # PyTorch's unbatched input: a batch of one (UnsqueezeBackward0 ... SqueezeBackward1); in place, the
    # batch of one is a view of the input, which it writes through
    out = S._feature_dropout(input.unsqueeze(0), p, training, inplace, 3)
    return input if inplace else out.squeeze(0)


# ---- gumbel_softmax -----------------------------------------------------------------------------

def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    from ..._creation import empty_like, zeros_like
    from ..._memory_format import contiguous_format
    if eps != 1e-10:
        warn_user("`eps` parameter is deprecated and has no effect.")
    # ~Gumbel(0, 1), drawn in a contiguous buffer as PyTorch's (legacy_contiguous_format)
    gumbels = -empty_like(logits, memory_format=contiguous_format).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    # straight through: one-hot values, the gradient of the soft sample
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- local_response_norm ------------------------------------------------------------------------

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    from .padding import pad
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    # the mean of the squares over a window of `size` channels, zero-padded at the ends
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = P.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = P.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---- in-place activations -----------------------------------------------------------------------

def elu_(input, alpha=1.0):
    return A.elu(input, alpha, inplace=True)


def selu_(input):
    return A.selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return A.celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return A.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return A.hardtanh(input, min_val, max_val, inplace=True)


# ---- pooling with indices: the return_indices=True forms (return_indices itself is ignored) -----------

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return P.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return P.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return P.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return P.adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return P.adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return P.adaptive_max_pool3d(input, output_size, return_indices=True)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return FP.fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return FP.fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
