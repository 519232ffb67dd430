"""torch.Size: a tuple that prints as `torch.Size([2, 3])`."""
import math


class Size(tuple):
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
