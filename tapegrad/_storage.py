"""Storage: the mutable cell behind tensors.

A JAX array is immutable; a PyTorch tensor is not. A Storage holds the current
value of a base tensor and a version counter that every in-place write bumps.
A tensor, its detach()es and its views share one Storage, so they see each
other's writes and share the version (the autograd engine checks it).

The value may be pending (see `_lazy`): `_raw` holds it as is (shape and
dtype are known), `value` computes it first.

The version lives in a VersionCounter of its own, as PyTorch's: autograd's
version checks hold the counter (a few bytes), not the storage and its value,
so a write is still seen after every tensor on the storage has gone.
"""
import weakref

from . import _faults
from ._lazy import Pending, resolve


class VersionCounter:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class Storage:
    __slots__ = ("_raw", "counter", "__weakref__")
    writes = 0  # in-place writes in the process: no change since a check was recorded means none is stale

    def __init__(self, value):
        self._raw = value
        self.counter = VersionCounter()
        if type(value) is Pending:
            value.storage = weakref.ref(self)

    @property
    def value(self):
        if _faults._in_flight[0] is not None:   # the value may come from a program not yet awaited
            _faults.confirm()
        raw = self._raw
        if type(raw) is Pending:
            raw = self._raw = resolve(raw)
        return raw

    @property
    def version(self):
        return self.counter.value

    def write(self, value):
        if type(value) is Pending:
            _faults.journal(self, self._raw, self.version)   # undone if its program fails
            value.storage = weakref.ref(self)
        self._raw = value
        self.counter.value += 1
        Storage.writes += 1
