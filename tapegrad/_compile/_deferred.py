"""A compiled call that returns before its program has run: committed at once, undone should it fail.

As a backward step's program (`_faults`, "a step in flight"), the program is launched and its results are
handed out at once: what the caller does next (reads a result's shape, indexes it, records more ops) runs
on this thread while XLA computes, as PyTorch's CUDA kernels run while Python goes on. The first read of a
value, the next program and the next compiled call wait for it. Should it fail, `Undo` puts back what the
commit changed (storages and their versions, Python changes, the generator's counter), the tensors it made
raise the program's error when read, and the error names the line that called the function.
"""
import weakref

from .. import _faults
from .._equation import Equation, Pending
from . import _snapshot


class Undo:
    """What one deferred commit changed, recorded as it is made (see `_function._Program._commit`)."""

    __slots__ = ("storages", "bumps", "changes", "made", "generator", "counter", "forget")

    def __init__(self, generator, forget):
        self.storages = []    # (storage, value before, version before, value written)
        self.bumps = []       # (storage, version before): versions advanced, values kept
        self.changes = []     # what each replayed Python change replaced (_snapshot.replay)
        self.made = []        # (storage, value) of each tensor it made
        self.generator, self.counter = generator, generator._counter
        self.forget = forget  # called on failure: the compiled function drops its guard on the state

    def __call__(self, lost):
        back = {}
        for s, before, version, written in reversed(self.storages):
            back[id(written)] = before if not _deleted(before) else _lost_value(s, written, lost)
            if s._raw is written:   # (else an in-place op wrote since: the journal's rollback puts it back)
                s._raw = back[id(written)]
            s.counter.value = version
        for s, version in reversed(self.bumps):
            s.counter.value = version
        _snapshot.put_back(self.changes)
        for s, written in self.made:
            back[id(written)] = _lost_value(s, written, lost)
            if s._raw is written:   # (else an in-place op wrote since: the journal's rollback puts it back)
                s._raw = back[id(written)]
        self.generator._counter = self.counter
        self.forget()
        return back


def launched(outs, undo, where):
    """The call's program is running: its commit (recorded in `undo`) stands once it has succeeded."""
    flight = _faults.Flight(first(outs), ())
    flight.undo = undo
    flight.place = place(where)
    flight.launched()


def place(where):
    """The failed program, as the error names it: by the line that called the compiled function."""
    return f"the compiled function called at {where[0]}:{where[1]}" if where is not None else "a compiled function"


def first(outs):
    """One of a program's outputs: all are ready, or failed, together."""
    for value in outs:
        if value is not None:
            return value
    return None


def _deleted(value):
    """Whether `value` is an array the failed program was handed (donated) and XLA has freed."""
    is_deleted = getattr(value, "is_deleted", None)
    return is_deleted is not None and is_deleted()


def _lost_value(storage, value, lost):
    """A pending value of `value`'s shape and dtype that raises the program's error when read."""
    node = Equation(None, lost, ((tuple(value.shape), value.dtype),))
    p = Pending(node, 0, tuple(value.shape), value.dtype)
    node.outs = (weakref.ref(p),)
    p.storage = weakref.ref(storage)
    return p
