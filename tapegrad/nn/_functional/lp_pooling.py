"""lp_pool1d/2d/3d: power-average pooling as PyTorch composes it from avg_pool (max_pool for p = ±inf), so
values, gradients and grad_fn names follow PyTorch's composite."""
import math

from .activation import relu
from .pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from ._util import ntuple

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    if isinstance(norm_type, (int, float)):
        if norm_type == math.inf:
            return _MAX[nd](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -_MAX[nd](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _AVG[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    # the window's mean times its size is the sum; PyTorch's 1-d form multiplies by kernel_size as given
    size = kernel_size if nd == 1 else math.prod(ntuple(kernel_size, nd, "kernel_size"))
    return (out.sign() * relu(out.abs())).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
