"""Failed programs: state is committed only when a program succeeds, and errors name the user's line.

An in-place write of a pending value (a parameter update, `grad.zero_()`) changes a Storage before
the program that computes the value has run. The journal remembers what each such storage held
before. When a program fails as it runs (an allocation refused, an XLA error), the writes whose values
it would have produced are undone: each journalled storage whose value can still be computed on its
own (say, the previous step's update, which was to run in the same program as the failed forward) is
computed and kept; the others get back the value they held before, so training can go on as if the
failed step had not been tried. The error reaches the user as a PyTorch-typed error naming the line
of their code that recorded the failing op.
"""
import os
import sys
import weakref

import jax

from ._equation import Pending

_journal = []           # (storage ref, value before the write, version before the write)
_settle_at = [256]      # journal length at which committed entries are dropped


class OutOfMemoryError(RuntimeError):
    """An allocation was refused while a program ran (PyTorch's torch.OutOfMemoryError)."""


def journal(storage, previous, version):
    """Remember what `storage` held before a write of a pending value."""
    _journal.append((weakref.ref(storage), previous, version))
    if len(_journal) >= _settle_at[0]:
        settle()
        _settle_at[0] = max(256, 2 * len(_journal))


def _uncommitted(storage):
    raw = storage._raw
    return type(raw) is Pending and raw.value is None


def settle():
    """Drop the entries no rollback needs: those of storages gone or holding a computed value (their writes
    are committed), and those older than a storage's newest write over a computed value (a rollback
    stops there)."""
    if not _journal or _in_flight[0] is not None:   # (a value in flight is not committed yet)
        return
    keep = []
    done = set()
    for entry in reversed(_journal):
        s = entry[0]()
        if s is None or id(s) in done or not _uncommitted(s):
            continue
        keep.append(entry)
        previous = entry[1]
        if type(previous) is not Pending or previous.value is not None:
            done.add(id(s))
    keep.reverse()
    _journal[:] = keep


def _is_library(module_name):
    # tapegrad.demo is user code written against the public API, shipped in the package: its lines are
    # where its ops are recorded (errors name them, and a no_grad loop is cut into iterations by them).
    if module_name == "tapegrad.demo" or module_name.startswith("tapegrad.demo."):
        return False
    return module_name == "tapegrad" or module_name.startswith("tapegrad.")


_library_code = {}   # code object -> whether it is tapegrad's (asked once per function, not once per op)


def where_recorded():
    """(file, line) of the innermost caller outside tapegrad: the user's line that records an op."""
    f = sys._getframe(2)
    known = _library_code
    while f is not None:
        code = f.f_code
        library = known.get(code)
        if library is None:
            if len(known) > 4096:   # code made at run time (exec, notebooks) must not pile up
                known.clear()
            library = known[code] = _is_library(f.f_globals.get("__name__", ""))
        if not library:
            return (code.co_filename, f.f_lineno)
        f = f.f_back
    return None


RUNTIME_ERRORS = (jax.errors.JaxRuntimeError,)
_JAX_NOTE = "JAX has removed its internal frames"


def drop_jax_note(e):
    """`e` (raised in a function JAX traced: the user's code, a backward PyTorch does not implement) without
    the note or the chained unfiltered trace that JAX's API boundaries attach: the user sees the error as
    PyTorch raises it."""
    notes = getattr(e, "__notes__", None)
    if notes:
        kept = [n for n in notes if _JAX_NOTE not in n]
        if kept:
            e.__notes__ = kept
        else:
            del e.__notes__
    cause = e.__cause__
    if type(cause).__name__ == "UnfilteredStackTrace":
        e.__cause__, e.__context__ = cause.__cause__, cause.__context__
        e.__suppress_context__ = cause.__suppress_context__
    return e


def failed(exc, where, place=None):
    """Undo uncommitted writes, and the PyTorch-typed error to raise for `exc` (a JAX runtime error).

    where: [(file, line)] of the ops the failed program computes (the failing op first when known);
    place: what the program runs, where that is not recorded ops (a compiled function's call).
    """
    _recover()
    # The tape segment being recorded holds the failed ops: a later backward must not compile them into
    # its program again (values that need them fail when read; everything else runs as before).
    from . import _segment
    _segment.end()
    text = str(exc)
    place = place or _describe(where)
    if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
        detail = text.split("RESOURCE_EXHAUSTED:", 1)[-1].strip()
        return OutOfMemoryError(
            f"out of memory while running {place}: {detail} Parameters, grads and optimizer state keep their "
            "values from before this step; reduce the batch size or the model, then run the step again.")
    return RuntimeError(f"the program running {place} failed: {text.strip()} Parameters, grads and optimizer "
                        "state keep their values from before this step.")


def _describe(where):
    where = [w for w in where if w is not None]
    if not where:
        return "recorded operations"
    first, last = where[0], where[-1]
    if all(w == first for w in where):
        return f"the op recorded at {first[0]}:{first[1]}"
    return f"one program with the ops recorded from {first[0]}:{first[1]} to {last[0]}:{last[1]}"


def _recover():
    """Keep what can be computed on its own, roll back the rest (newest write first)."""
    from ._lazy import Plan, _set_results
    entries = list(_journal)
    _journal.clear()
    storages = []
    seen = set()
    for ref, _, _ in entries:
        s = ref()
        if s is not None and id(s) not in seen and _uncommitted(s):
            seen.add(id(s))
            storages.append(s)
    for s in storages:
        if not _uncommitted(s):
            continue   # computed already, with another storage's value
        pending = s._raw
        try:
            value = Plan([pending]).run(count=False)[0]
        except RUNTIME_ERRORS:
            continue
        _set_results(pending.node, (pending.index,), (value,))
    for ref, previous, version in reversed(entries):
        s = ref()
        if s is not None and _uncommitted(s):
            s._raw = previous
            s.counter.value = version


# ---- a step in flight ------------------------------------------------------------------------------------
#
# A training step's backward program is launched without waiting for it: recording the next step (its
# forward, the optimizer's update) runs on this thread while XLA computes, as PyTorch's CUDA kernels run
# while Python goes on. The program's results are handed out at once (.grad, live values), but they are
# committed only once it is known to have succeeded: the next program, any value read and any backward
# first call confirm(), which waits for it. Should it have failed, its writes are undone before the error
# is raised, and what the steps recorded since wrote on top of its values (the next update) is rolled back
# with the journal, as for a program that fails at once.

DEFER_STEPS = [os.environ.get("TAPEGRAD_SYNC_STEPS", "") not in ("1", "true")]   # False: each step waits
_in_flight = [None]


class Flight:
    """What a launched program wrote, to commit or undo when it is awaited."""

    __slots__ = ("outputs", "nodes", "state", "produced", "grads", "retained", "mark", "undo", "place")

    def __init__(self, outputs, nodes):
        self.outputs = outputs      # (one of) the program's outputs: all are ready, or failed, together
        self.mark = len(_journal)   # journalled writes from here on are made after the launch
        self.nodes = nodes          # weakrefs to the equations it computes (for the error's lines)
        self.state = []             # (Pending, storage, value): values it computed for storages written in place
        self.produced = []          # (storage ref, equation, output): the other values it computed
        self.grads = []             # (tensor, its .grad before, that grad's storage raw and version)
        self.retained = []          # (tensor, its .grad before): retained grads it set
        self.undo = None            # lost -> {id(value it wrote): value put back}: a commit of its own to undo
        self.place = None           # what it runs, for the error, where that is not `nodes` (see failed)

    def produce(self, pending, value):
        """Hand `value` (a device array) to `pending` and to the storage holding it (as _lazy._set_results),
        undoably."""
        pending.value = value
        s = pending.storage() if pending.storage is not None else None
        if s is None or s._raw is not pending:
            return
        s._raw = value
        if s.counter.value:   # state written in place (a parameter): a rollback may need its pending form
            self.state.append((pending, s, value))
        else:                 # the loss, a kept activation: held weakly, so the step frees what it did
            self.produced.append((weakref.ref(s), pending.node, pending.index))

    def remember_grad(self, t):
        """Before the program's gradient is written into t.grad."""
        old = t._grad
        if old is None:
            self.grads.append((t, None, None, None))
        else:
            s = old._storage
            self.grads.append((t, old, s._raw, s.counter.value))

    def launched(self):
        """The program is running; with DEFER_STEPS off, wait for it now."""
        _in_flight[0] = self
        if not DEFER_STEPS[0]:
            confirm()


def confirm():
    """Wait for the program in flight, if any: commit its writes, or undo them and raise the user's error."""
    flight = _in_flight[0]
    if flight is None:
        return
    _in_flight[0] = None
    try:
        jax.block_until_ready(flight.outputs)
    except RUNTIME_ERRORS as e:
        lost = _LostInputs(e)
        _undo(flight, lost)
        where = [n.where for n in (ref() for ref in flight.nodes) if n is not None]
        lost.error = failed(e, where, flight.place)
        raise lost.error from None
    from ._lazy import forget_inputs
    for p, _, _ in flight.state:   # (the backward's own equations dropped theirs at the launch)
        forget_inputs(p.node)
    for _, node, _ in flight.produced:
        forget_inputs(node)
    settle()


class _LostInputs:
    """The inputs of an equation whose value a failed program was to compute, dropped at its launch (the
    backward's equations let go of the batch and activations at once): computing that value again raises
    the program's error, first JAX's (a rollback treats it as a value that cannot be computed alone), then,
    once it is built, the user's."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error

    def __iter__(self):
        raise self.error.with_traceback(None)


def _undo(flight, lost):
    """Take back what a failed program wrote, and every journalled write made since: code that ran after
    the launch saw the program's results (an optimizer's update of the failed step). The state values it
    computed become pending again, so `failed` computes alone what it can (the previous step's update,
    which was to run in the same program) and rolls back the rest; its other values (the loss) become
    pending values that raise the program's error when read."""
    back = {} if flight.undo is None else flight.undo(lost)
    for p, s, value in reversed(flight.state):
        p.value = None
        if s._raw is value:
            s._raw = p
        if p.node.args is None:
            p.node.args = lost
        back[id(value)] = p
    later = _journal[flight.mark:]
    del _journal[flight.mark:]
    for ref, previous, version in reversed(later):
        s = ref()
        if s is not None:
            s._raw = back.get(id(previous), previous)
            s.counter.value = version
    for ref, node, index in flight.produced:
        s = ref()
        if s is not None and not s.counter.value and type(s._raw) is not Pending:   # (not written since)
            shape, dtype = node.avals[index]
            p = s._raw = Pending(node, index, shape, dtype)
            p.storage = ref
            if node.args is None:
                node.args = lost
    for t, old, raw, version in reversed(flight.grads):
        t._grad = old
        if old is not None:
            old._storage._raw = raw
            old._storage.counter.value = version
    for t, old in reversed(flight.retained):
        t._grad = old
