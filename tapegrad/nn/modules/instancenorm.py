"""InstanceNorm1d/2d/3d: each sample's channels normalised over their own spatial extent."""

from .. import functional as F
from .normalization import _BatchNorm, _LazyNormBase
from ..._user_frames import warn_user


class _InstanceNorm(_BatchNorm):
    _no_batch_dim = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # a state dict without a version may be from before 0.4, whose instance norms kept running stats
        keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
        if local_metadata.get("version", None) is None and not self.track_running_stats and keys:
            klass = type(self).__name__
            error_msgs.append(
                f"Unexpected running stats buffer(s) {' and '.join(f'{chr(34)}{k}{chr(34)}' for k in keys)} for "
                f"{klass} with track_running_stats=False. If state_dict is a checkpoint saved before 0.4.0, this "
                f"may be expected because {klass} does not track running stats by default since 0.4.0. Please "
                "remove these keys from state_dict. If the running stats are actually needed, instead set "
                f"track_running_stats=True in {klass} to enable them. See the documentation of {klass} for "
                "details.")
            for key in keys:
                state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warn_user(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                      "warning by not passing in num_features, which is not used because affine=False")
        unbatched = input.ndim == self._no_batch_dim
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _dims, _no_batch_dim = (2, 3), 2


class InstanceNorm2d(_InstanceNorm):
    _dims, _no_batch_dim = (3, 4), 3


class InstanceNorm3d(_InstanceNorm):
    _dims, _no_batch_dim = (4, 5), 4


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
