"""Reflection and replication padding modules over F.pad."""
from .. import functional as F
from .module import Module


class _PadNd(Module):
    _mode = None
    _sides = 0

    def __init__(self, padding):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * self._sides

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode, _sides = "reflect", 2


class ReflectionPad2d(_PadNd):
    _mode, _sides = "reflect", 4


class ReplicationPad1d(_PadNd):
    _mode, _sides = "replicate", 2


class ReplicationPad2d(_PadNd):
    _mode, _sides = "replicate", 4
