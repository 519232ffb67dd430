"""Padding modules over F.pad: reflection, replication, circular, constant and zero, in 1, 2 and 3 dims."""
from .. import functional as F
from .module import Module


class _PadNd(Module):
    _mode = None
    _dims = 0

    def __init__(self, padding):
        super().__init__()
        sides = 2 * self._dims
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * sides

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode, _dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    _mode, _dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    _mode, _dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    _mode, _dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    _mode, _dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    _mode, _dims = "replicate", 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        # PyTorch's modules check the rank themselves (a ValueError, where F.pad raises NotImplementedError)
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _dims = 1


class CircularPad2d(_CircularPadNd):
    _dims = 2


class CircularPad3d(_CircularPadNd):
    _dims = 3


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class _Zero:
    """ZeroPad*d: PyTorch's ConstantPad*d subclasses with value 0."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_Zero, ConstantPad1d):
    pass


class ZeroPad2d(_Zero, ConstantPad2d):
    pass


class ZeroPad3d(_Zero, ConstantPad3d):
    pass
