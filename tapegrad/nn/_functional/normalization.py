"""batch_norm, layer_norm, group_norm, rms_norm, normalize."""
import math

import numpy as np

from ..._arg_types import int_list
from ..._dispatch import apply
from ..._dtypes import cpp_name, float32
from ..._flags import warn_once
from ..._functional._common import check_tensors
from ..._grad_mode import no_grad
from ..._ops import elementwise as K_E, nn_normalization as K
from ._util import check_float, check_mixed_params, check_param_dtypes, refuse_grad
from ..._user_frames import warn_user


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    if input.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps, verify=True)


def aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """torch.batch_norm: ATen's argument order, without nn.functional's check of the batch size."""
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps, verify=False)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps, verify):
    _check_channels(input, weight, bias, running_mean, running_var)
    if training:
        # (PyTorch's _verify_batch_size: exactly one value per channel is refused, an empty batch is not)
        per_channel = input.shape[0] * math.prod(input.shape[2:])
        if verify and per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{input.shape}")
    else:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode. Pass the running statistics or "
                                   "use training=True.")
    if input.numel():   # (PyTorch's batch norm of nothing returns before its kernel's autograd refuses)
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            refuse_grad("native_batch_norm", name, stat)
    check_float(input, "batch_norm")   # (its kernel's dtype, after those checks)
    mixed = check_mixed_params(input, weight, bias, running_mean, running_var)
    if input.numel() == 0:   # (PyTorch's batch norm of nothing: a clone, scaled and shifted by the first parameters)
        out = input.clone()
        out = out if weight is None else out * weight[0]
        return out if bias is None else out + bias[0]
    if training:
        affine = _affine(weight, bias, input, mixed)
        # half or bfloat16 statistics of the input's dtype, unless its parameters are float32
        reduced = input.dtype.name in ("float16", "bfloat16")
        rounded = {"stats_dtype": input.dtype.name} if reduced and not mixed else {}
        out, mean, var = apply(K.batch_norm_train, input, *affine, eps=float(eps), **rounded)
        if running_mean is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
                running_var.mul_(1 - momentum).add_(var, alpha=momentum)
        return out
    affine = _affine(weight, bias, input, mixed)
    return apply(K.batch_norm_eval, input, running_mean, running_var, *affine, eps=float(eps))


def _check_channels(input, weight, bias, running_mean, running_var):
    """PyTorch's checks of the per-channel tensors: one element per channel, the statistics one-dimensional."""
    channels = input.shape[1]
    named = (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var))
    for name, t in named:
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    for stat in (running_mean, running_var):
        if stat is not None and stat.ndim != 1:
            raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {stat.ndim}")


def _affine(weight, bias, input, mixed):
    # The kernel takes (weight, bias), None where absent; a bias without weight is passed with a weight of ones.
    # mixed: the caller's check_mixed_params, made where PyTorch makes it.
    if weight is None and bias is not None:
        weight = bias.new_ones(bias.shape)
    if not mixed:   # (half or bfloat16 input with float32 parameters is PyTorch's mixed case: the kernel's)
        check_param_dtypes(input, weight, bias)
    return weight, bias


def _normalized_ndim(input, normalized_shape, name):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    return len(shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    check_tensors("layer_norm", (input, "input"), (weight, "weight", 3), (bias, "bias", 4), optional=("weight", "bias"))
    if isinstance(normalized_shape, int):   # (nn.LayerNorm takes one; the function does not)
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    shape = list(int_list(normalized_shape, "normalized_shape", "layer_norm", 2))
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    mixed = check_mixed_params(input, weight, bias)   # (PyTorch's first check: integer input, float parameters)
    check_float(input, "LayerNormKernelImpl")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {shape}")
    ndim = _normalized_ndim(input, normalized_shape, "layer_norm")
    return apply(K.layer_norm, input, *_affine(weight, bias, input, mixed), ndim=ndim, eps=float(eps))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    check_tensors("group_norm", (input, "input"), (weight, "weight", 3), (bias, "bias", 4), optional=("weight", "bias"))
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    channels = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != channels):
            # (PyTorch's message for the bias shows the weight's shape: [0] without one)
            shown = list(t.shape) if name == "weight" else list(weight.shape) if weight is not None else [0]
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {shown} and input of shape {list(input.shape)}")
    mixed = check_mixed_params(input, weight, bias)   # (after the shapes, before the kernel's dtype: PyTorch's order)
    check_float(input, "GroupNormKernelImpl")
    return apply(K.group_norm, input, *_affine(weight, bias, input, mixed), groups=int(num_groups), eps=float(eps))


_warned = set()


def rms_norm(input, normalized_shape, weight=None, eps=None):
    check_float(input, "rms_norm")
    ndim = _normalized_ndim(input, normalized_shape, "rms_norm")
    if weight is not None and weight.dtype is not input.dtype and warn_once(_warned, "rms_norm"):   # (once per process)
        warn_user(f"Mismatch dtype between input and weight: input dtype = {cpp_name(input.dtype)}, weight dtype = "
                  f"{cpp_name(weight.dtype)}, Cannot dispatch to fused implementation.", UserWarning)
    # PyTorch's composite: x * rsqrt(mean(x ** 2) + eps), times the weight, computed in float32 for half and
    # bfloat16 input and cast back to the input's dtype once
    opmath = float32 if input.dtype.itemsize < 4 else input.dtype
    if eps is None:
        eps = float(np.finfo(opmath.np).eps)
    x = input.to(opmath)
    dims = tuple(range(input.ndim - ndim, input.ndim))
    out = x * apply(K_E.add_scalar, x.pow(2).mean(dims, keepdim=True), float(eps)).rsqrt()
    return (out if weight is None else out * weight).type_as(input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    # PyTorch's composite (whose norm refuses integers): the input over its norm, clamped below at eps and expanded
    result = input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return result if out is None else out.copy_(result)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats and math.prod(input.shape[2:]) == 1:   # (as PyTorch: below 3 dims too)
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    return aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True)


def aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                       cudnn_enabled):
    """Batch norm of each (sample, channel) as its own channel, as PyTorch computes it; the running statistics
    are the mean over the batch of each sample's update. torch.instance_norm: without nn.functional's check of
    the spatial size."""
    check_float(input, "batch_norm")
    n, c = input.shape[0], input.shape[1]

    def repeated(t):
        return None if t is None else t.repeat(n)
    stats = repeated(running_mean), repeated(running_var)
    out = _batch_norm(input.reshape(1, n * c, *input.shape[2:]), *stats, repeated(weight), repeated(bias),
                      use_input_stats, momentum, eps, verify=False)
    if use_input_stats:
        with no_grad():
            for kept, per_sample in zip((running_mean, running_var), stats):
                if kept is not None:
                    kept.copy_(per_sample.view(n, c).mean(0))
    return out.view(input.shape)
