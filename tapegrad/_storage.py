"""Storage: the mutable cell behind tensors.

A JAX array is immutable; a PyTorch tensor is not. A Storage holds the current
array of a base tensor and a version counter that every in-place write bumps.
A tensor, its detach()es and its views share one Storage, so they see each
other's writes and share the version (the autograd engine checks it).
"""


class Storage:
    __slots__ = ("value", "version", "__weakref__")

    def __init__(self, value):
        self.value = value
        self.version = 0

    def write(self, value):
        self.value = value
        self.version += 1
