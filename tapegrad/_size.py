"""torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""
import math
import operator

from jax.export import is_symbolic_dim


class Size(tuple):
    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        if any(type(s) is not int for s in sizes):
            sizes = tuple(_as_size(s, k) for k, s in enumerate(sizes))
        return tuple.__new__(cls, sizes)

    def __repr__(self):
        return f"tapegrad.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        return math.prod(self)

    def __getitem__(self, item):
        out = super().__getitem__(item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):   # (3,) + size: a Size, as PyTorch's (a subclass's reflected method goes first)
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__


def _as_size(s, k):
    """One size as PyTorch's Size reads it: anything with __index__ but a float or a float tensor (an int
    tensor of one element, a bool, a NumPy integer)."""
    try:
        if getattr(s, "is_floating_point", None) is not None and (s.is_floating_point() or s.is_complex()):
            raise TypeError
        return operator.index(s)
    except TypeError:
        if is_symbolic_dim(s) or getattr(type(s), "symbolic_size", False):   # (tapegrad.export's, a ragged dim)
            return s
        raise TypeError(f"torch.Size() takes an iterable of 'int' (item {k} is '{type(s).__name__}')") from None


new_size = tuple.__new__   # new_size(Size, shape): a shape the tensor already holds as ints (the hot path)
