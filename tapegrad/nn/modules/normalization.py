"""Normalisation modules: BatchNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm."""
import numbers

from ... import _creation as C
from ... import _dtypes as D
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .lazy import LazyModuleMixin
from .module import Module


def _add_affine(module, enabled, bias, shape, device, dtype):
    """Register a normalisation layer's weight and bias (or None placeholders, as PyTorch does)."""
    if enabled:
        module.weight = Parameter(C.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(C.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """Weight to ones, bias to zeros: PyTorch's initial affine transform is the identity."""
    if module.weight is not None:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _BatchNorm(Module):
    _dims = ()
    _version = 2   # (version 2 added num_batches_tracked: a state dict of an earlier one has none)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _add_affine(self, affine, bias, num_features, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", C.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", C.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", C.tensor(0, dtype=D.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, *rest):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            # a state dict without the version (a dict made from one, say) or from before it: its count is 0
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None else \
                C.tensor(0, dtype=D.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, *rest)

    def _check_input_dim(self, input):
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                            self.weight, self.bias, bn_training, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _add_affine(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _add_affine(self, affine, bias, num_channels, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(C.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class _ResponseNorm(Module):
    """The window and constants of the cross-channel normalisations."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(_ResponseNorm):
    """PyTorch's legacy cross-channel normalisation of 4-d inputs (its own window and backward: _functions.py)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)


class LocalResponseNorm(_ResponseNorm):
    """Each channel divided by (k + alpha * the mean square over `size` neighbouring channels) ** beta."""

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        # built without affine parameters nor statistics: the placeholders below take their places
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = C.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d
