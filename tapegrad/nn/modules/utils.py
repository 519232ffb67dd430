"""PyTorch's torch.nn.modules.utils: the helpers that turn an int argument into a tuple (kernel sizes, strides)."""
import collections.abc
import itertools

__all__ = ["_ntuple", "_single", "_pair", "_triple", "_quadruple"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")
