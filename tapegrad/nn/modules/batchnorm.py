"""PyTorch's module path torch.nn.modules.batchnorm (the classes live in normalization.py and lazy.py)."""
from .normalization import _BatchNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .normalization import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
