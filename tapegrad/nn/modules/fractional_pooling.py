"""FractionalMaxPool2d/3d over F.fractional_max_pool2d/3d."""
from .. import functional as F
from .utils import _ntuple
from .module import Module


class _FractionalMaxPoolNd(Module):
    _fn, _nd = None, 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(self._nd)(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(self._nd)(output_size) if output_size is not None else None
        self.output_ratio = (tuple(output_ratio) * (self._nd if len(output_ratio) == 1 else 1)
                             if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * self._nd) \
            if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _fn, _nd = staticmethod(F.fractional_max_pool2d), 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _fn, _nd = staticmethod(F.fractional_max_pool3d), 3
