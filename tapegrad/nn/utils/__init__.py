"""tapegrad.nn.utils: gradient clipping, parameter/vector conversion, parametrizations, pruning,
weight and spectral normalization, conv/linear + BatchNorm fusion, skip_init."""
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from . import parametrize, parametrizations, prune, rnn  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "parametrize", "parametrizations", "prune", "rnn",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]
