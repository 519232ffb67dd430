"""PyTorch's module path torch.nn.modules.batchnorm (BatchNorm*d live in normalization.py and lazy.py), and
SyncBatchNorm.

SyncBatchNorm is BatchNorm over (N, C, ...) inputs whose training statistics PyTorch reduces over a process group.
Without one (torch.distributed not initialized), or in eval mode, it is BatchNorm, as in PyTorch. With a group it
raises PyTorch's ValueError for an input that is not on a GPU, and for a group of several processes
NotImplementedError: tapegrad's collectives record no gradient, so the statistics cannot be reduced
differentiably (a group of one process is plain BatchNorm, as in PyTorch).
"""
from .. import functional as F
from .instancenorm import _InstanceNorm
from .normalization import _BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .normalization import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, ...) inputs, synchronised over a process group in PyTorch (see the module's docstring)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        # PyTorch's steps, in its order (the batch count moves before the device check)
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        from ... import distributed
        if bn_training and self.training and distributed.is_available() and distributed.is_initialized():
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            world_size = distributed.get_world_size(self.process_group or distributed.group.WORLD)
            if world_size > 1:
                raise NotImplementedError(
                    f"SyncBatchNorm over {world_size} processes: tapegrad's collectives record no gradient, so the "
                    "batch statistics cannot be reduced across processes. Use BatchNorm (each process's own "
                    "statistics) or train in one process.")
        return F.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                            self.weight, self.bias, bn_training, factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d layer in it replaced by a SyncBatchNorm holding its parameters and
        buffers (the same tensors), as PyTorch's; the module itself when it is one."""
        from ... import no_grad
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):   # (no BatchNorm in PyTorch)
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
