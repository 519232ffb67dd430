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
    __slots__ = ("value", "rebased")

    def __init__(self):
        self.value = 0
        # `rebased` is set by the first in-place op recorded on the storage, so no other tensor pays for it

    def rebase(self, old, index, new, new_index=0):
        """An in-place op recorded on a tensor of this storage (on a view of it: CopySlices on the base) made
        output `new_index` of node `new` the history of the tensor whose history was output `index` of node
        `old` (None: none). PyTorch's version error names a saved tensor's history at the time of the error,
        which this records: {(old's seq or None, index): (new's seq, new_index, new's name)}; seqs, not
        nodes, so nothing is kept alive."""
        table = getattr(self, "rebased", None)
        if table is None:
            table = self.rebased = {}
        # (with the shape the tensor has now: a squeeze_ or t_ changed it, and the error prints it)
        table[(None if old is None else old.seq, index)] = (new.seq, new_index, new.name(),
                                                            tuple(new.avals[new_index][0]))

    def detach(self, old, index):
        """A tensor of this storage whose history was output `index` of node `old` was detached in place
        (detach_): its history ends there, which PyTorch refuses when that tensor was saved for backward."""
        table = getattr(self, "rebased", None)
        if table is None:
            table = self.rebased = {}
        table[(old.seq, index)] = _DETACHED
        Storage.writes += 1   # (so a segment's backward checks what it saved, see _fast.try_backward)

    def _history(self, node, index):
        table = getattr(self, "rebased", None)
        found = None
        key = (None if node is None else node.seq, index)
        while table and key in table:   # one in-place op after another on the same tensor
            found = table[key]
            key = found[:2]
        return found

    def history_name(self, node, index):
        """The name of the history that output `index` of `node` (None: a tensor with none) has now on this
        storage after the in-place ops recorded since (None if none was)."""
        found = self._history(node, index)
        return None if found is None else found[2]

    def history_shape(self, node, index):
        """The shape of that tensor now, after the in-place ops recorded since (None if none was)."""
        found = self._history(node, index)
        return None if found is None or found is _DETACHED else found[3]

    def detached(self, node, index):
        """Whether the tensor whose history was output `index` of `node` was detached in place since."""
        return self._history(node, index) is _DETACHED


_DETACHED = (None, None, None, None)   # an entry of VersionCounter.rebased: the history ended (detach_)


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

    def bump(self):
        """An in-place op that changed no value (t_, unsqueeze_: the tensor's shape) bumps the version all the
        same, as PyTorch's."""
        self.counter.value += 1
        Storage.writes += 1

    def write(self, value):
        if type(value) is Pending:
            _faults.journal(self, self._raw, self.version)   # undone if its program fails
            value.storage = weakref.ref(self)
        self._raw = value
        self.counter.value += 1
        Storage.writes += 1
