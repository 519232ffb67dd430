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
    """Drop entries whose storage is gone or holds a computed value: those writes are committed."""
    if not _journal:
        return
    keep = []
    for entry in _journal:
        s = entry[0]()
        if s is not None and _uncommitted(s):
            keep.append(entry)
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


def failed(exc, where):
    """Undo uncommitted writes, and the PyTorch-typed error to raise for `exc` (a JAX runtime error).

    where: [(file, line)] of the ops the failed program computes (the failing op first when known).
    """
    _recover()
    # The tape segment being recorded holds the failed ops: a later backward must not compile them into
    # its program again (values that need them fail when read; everything else runs as before).
    from . import _segment
    _segment.end()
    text = str(exc)
    place = _describe(where)
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
