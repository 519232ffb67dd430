"""Trace a stateful function once into one pure JAX program over all the state it reaches.

Every walked storage's value is swapped for a tracer; the optimizer learning rates and the default
generator's key and counter become tracers too; then the function runs, ops eager (no tape) and
grad mode as the caller has it, so `loss.backward()` runs the autograd engine on tracers and
`optimizer.step()` computes the update on them. The program returns the final value of every
storage the function wrote, every tensor it created and kept (a new `.grad`) or returned. What
changed in Python objects is recorded (`_snapshot`) to be replayed at every call; the trace itself
leaves everything as it was, whether it succeeded or not.

A function whose Python needs a tensor's value (`.item()`, `.tolist()`, `.numpy()`, printing, a
data-dependent `if`) cannot be traced: that is a graph break, reported with the user's line.
"""
import builtins
import contextlib
import linecache
import weakref

import jax
import numpy as np

from .. import _dispatch, _faults, _value_checks, _views
from ..device import TRACED_ON, device_of
from .. import random as _random
from .._tensor import Tensor
from ..autograd._tracing import TRACER_ERRORS, _computed
from . import _draws, _symbolic
from ._snapshot import Snapshot, Unreplayable, new_tensor
from ._walk import TENSOR

_INTERNAL = ("tapegrad", "jax", "jaxlib", "numpy", "contextlib", "functools", "builtins")


class GraphBreak(Exception):
    """The function cannot be traced; `line` is (file, line number) of the user's code that broke it."""

    def __init__(self, reason, line):
        super().__init__(reason)
        self.reason, self.line = reason, line

    def where(self):
        if self.line is None:
            return "an unknown line"
        source = linecache.getline(*self.line).strip()
        return f"{self.line[0]}:{self.line[1]}" + (f" ({source})" if source else "")


class ReturnsGraph(Exception):
    """The function returns tensors whose autograd graph is used outside it (a compiled forward whose
    backward runs later): the tape runs it, so the graph exists."""


class _Printed(Exception):
    pass


def _no_print(*args, **kwargs):
    raise _Printed


def _user_line(exc):
    line, tb = None, exc.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_globals.get("__name__", "").startswith(_INTERNAL):
            line = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return line


def _frames(exc):
    tb = exc.__traceback__
    while tb is not None:
        yield tb.tb_frame.f_code.co_name
        tb = tb.tb_next


def _reason(exc):
    if isinstance(exc, _Printed):
        return "print()"
    if isinstance(exc, jax.errors.TracerBoolConversionError) or "__bool__" in _frames(exc):
        return "Python control flow on a tensor's value (if/while/bool() of a tensor)"
    if isinstance(exc, jax.errors.UnexpectedTracerError):
        return "a tensor kept from an earlier call escaped its trace"
    return "reading a tensor's value in Python (.item(), .tolist(), .numpy(), float(), printing a tensor)"


class Traced:
    """One traced program and what to do with its outputs."""

    def __init__(self):
        self.nstate = 0           # storages walked (the first inputs)
        self.jaxpr = None         # ClosedJaxpr: (storage values, lifted lrs, rng key, rng counter) -> outputs
        self.written = []         # storage positions whose final value the program returns, in output order
        self.versions = []        # (storage position, version delta)
        self.new = []             # requires_grad of each tensor the program creates (outputs after `written`)
        self.changes = []         # Python changes to replay (_snapshot)
        self.lr_outputs = []      # (lifted slot, "out" or "const", const): learning rates the function set
        self.result = None        # spec of the returned value
        self.draws = 0            # random keys drawn
        self.host_draws = []      # (generator, distribution, arguments) of each draw from a CPU stream: inputs
        self.constants = []       # (storage ref, value) of tensors read but not walked: unchanged or retrace
        self.checks = []          # make_error of each value check (its flag and value are the last outputs)
        self.symbolic = False     # traced with symbolic first dims (compile(dynamic=True), see _symbolic)


@contextlib.contextmanager
def _eager_ops(capture):
    lazy, hook, printer = _dispatch.LAZY[0], _dispatch.CAPTURE[0], builtins.print
    _dispatch.LAZY[0] = False
    _dispatch.CAPTURE[0] = capture
    builtins.print = _no_print
    try:
        yield
    finally:
        _dispatch.LAZY[0] = lazy
        _dispatch.CAPTURE[0] = hook
        builtins.print = printer


def trace(fn, args, kwargs, walk, drawn=None):
    """A Traced for fn(*args, **kwargs) over the state found by `walk`. Raises GraphBreak, ReturnsGraph,
    Unreplayable, or the function's own error; in every case the state is as before. A function that draws
    from a CPU random stream is traced twice: the second trace takes the first one's draws (`drawn`:
    their specs and values) as inputs (see _draws)."""
    storages = walk.storages
    inputs = [s.value for s in storages]   # pending values are computed first, outside the program
    traced_inputs = _symbolic.abstract_inputs(inputs, walk.symbolic)   # (dynamic=True: symbolic first dims)
    objects = walk.objects
    lr_objects = [objects[pos][k] for pos, k in walk.lifted]
    lrs = [np.float64(v) for v in lr_objects]
    gen = _random.default_generator
    key, counter = gen._key, gen._counter
    snapshot = Snapshot(walk)
    traced = Traced()
    traced.nstate = len(storages)
    seen, versions = {}, {}

    def capture(op_args):
        _computed(op_args)
        for a in op_args:
            if isinstance(a, Tensor):
                s = a._storage
                if id(s) not in walk.storage_index and id(s) not in seen \
                        and not isinstance(s._raw, jax.core.Tracer):
                    seen[id(s)] = (weakref.ref(s), s._raw)
                    versions[id(s)] = s.counter.value

    views = [(v._view, v._view.value, v._view.version, v._view.positions) for v in walk.views]
    first_values = []   # what a first trace drew from CPU streams

    def pure(values, lr_values, rng_key, rng_counter, positions, draws_in):
        for s, v in zip(storages, values):
            s._raw = v
        at = 0
        for info, _, _, old in views:   # read again from the traced storage, at traced offsets
            info.positions = tuple(positions[at:at + len(old)])
            info.version = None
            _views.traced_offsets.update((id(p), int(o)) for p, o in zip(info.positions, old))
            at += len(old)
        lifted = []
        for (pos, k), v in zip(walk.lifted, lr_values):
            lifted.append(Tensor._wrap(v))
            objects[pos][k] = lifted[-1]
        draws = [0]

        def next_key():
            draws[0] += 1
            return _random.Generator.next_key(gen)
        gen._key, gen._counter, gen.next_key = rng_key, rng_counter, next_key
        checks = _value_checks.collector = []
        host = _random.TRACE_DRAWS[0] = _draws.TraceDraws(*((draws_in, drawn[0]) if drawn else ()))
        try:
            with _eager_ops(capture):
                result = fn(*args, **kwargs)
        finally:
            _random.TRACE_DRAWS[0] = None
        if drawn and len(host.specs) != len(drawn[0]):
            raise _draws.RandomDrawsChanged
        traced.host_draws, first_values[:] = host.specs, host.values
        traced.draws = draws[0]
        outs = _outputs(traced, walk, snapshot, values, lifted, result)
        if checks:   # a failed check writes nothing and the call raises (see _checks)
            traced.checks = [make for _, _, make in checks]
            outs += [flag for flag, _, _ in checks] + [first for _, first, _ in checks]
        return outs

    traced_on = TRACED_ON[0]
    TRACED_ON[0] = next((device_of(v) for v in inputs if hasattr(v, "devices")), None)
    try:
        offsets = [np.int64(p) for _, _, _, old in views for p in old]
        closed = jax.make_jaxpr(pure)(traced_inputs, lrs, key, np.int64(counter), offsets,
                                      [] if drawn is None else drawn[1])
    except _draws.RandomDrawsChanged:
        raise GraphBreak("random numbers whose count or shapes depend on tensor values", None) from None
    except TRACER_ERRORS + (_Printed,) as e:
        raise GraphBreak(_reason(e), _user_line(e)) from e
    except Exception as e:   # (the user's function raised it while traced)
        _faults.drop_jax_note(e)
        raise
    finally:
        TRACED_ON[0] = traced_on
        _value_checks.collector = None
        snapshot.restore()
        leaked = _undo_outside_writes(seen, versions)
        for info, value, version, old in views:
            info.value, info.version, info.positions = value, version, old
        _views.traced_offsets.clear()
        for (pos, k), v in zip(walk.lifted, lr_objects):
            objects[pos][k] = v
        gen.__dict__.pop("next_key", None)
        gen._key, gen._counter = key, counter
    if leaked:
        raise GraphBreak("writing a tensor the function reaches only through something tapegrad.compile does "
                         "not walk (another module's global, an object without __dict__)", None)
    if traced.host_draws and drawn is None:
        return trace(fn, args, kwargs, walk, (traced.host_draws, first_values))
    traced.jaxpr = closed
    traced.symbolic = bool(walk.symbolic)
    traced.constants = list(seen.values())
    return traced


def _undo_outside_writes(seen, versions):
    """Put back tensors outside the walked state that the trace wrote (their values would be tracers);
    whether there were any."""
    leaked = False
    for key, (ref, raw) in seen.items():
        s = ref()
        if s is not None and s._raw is not raw:
            s._raw = raw
            s.counter.value = versions[key]
            leaked = True
    return leaked


def _outputs(traced, walk, snapshot, inputs, lifted, result):
    """The program's outputs (flat list), with `traced` told how to commit them."""
    outs = []
    for i, s in enumerate(walk.storages):
        if s._raw is not inputs[i]:
            traced.written.append(i)
            outs.append(s._raw)
        delta = s.counter.value - snapshot.versions[i]
        if delta:
            traced.versions.append((i, delta))
    new_tensors = []
    skip = set(walk.lifted)
    # A returned tensor with a graph is fine when the function ran its backward (a training step);
    # without one, the graph is for the caller (see ReturnsGraph).
    grads_before = [(walk.objects[pos], copy[1]) for (pos, kind), copy in zip(walk.containers, snapshot.copies)
                    if kind == TENSOR]
    written = {id(walk.storages[i]) for i in traced.written}
    backward_ran = any(t._grad is not g or (g is not None and id(g._storage) in written) for t, g in grads_before)
    if not backward_ran and isinstance(result, Tensor) and result._grad_fn is not None:
        backward_ran = _released(result._grad_fn)
    traced.result = _result_spec(result, walk, new_tensors, backward_ran)
    traced.changes = snapshot.changes(new_tensors, skip)
    lr_values = []
    for slot, ((pos, k), mine) in enumerate(zip(walk.lifted, lifted)):
        now = walk.objects[pos][k]
        if now is mine:
            continue
        if isinstance(now, Tensor):   # a scheduler stepped inside: the new rate is computed
            traced.lr_outputs.append((slot, "out", None))
            lr_values.append(now._value)
        elif isinstance(now, (float, int, np.number)):
            traced.lr_outputs.append((slot, "const", now))
        else:
            raise Unreplayable("a learning rate was set to an object")
    traced.new = [t._requires_grad for t in new_tensors]
    outs.extend(t._storage._raw for t in new_tensors)
    outs.extend(lr_values)
    return outs


def _released(node, limit=10000):
    """Whether a backward without retain_graph ran over the graph of `node` (saved values freed)."""
    seen, todo = set(), [node]
    while todo and len(seen) < limit:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if getattr(n, "saves", False) and n.kept is None:
            return True
        todo.extend(e[0] for e in getattr(n, "edges", None) or () if e is not None)
    return False


def _result_spec(value, walk, new_tensors, backward_ran):
    if type(value) in (bool, int, float, complex, str, bytes, type(None)):
        return ("const", value)
    pos = walk.index.get(id(value))
    if pos is not None:
        return ("object", pos)
    if isinstance(value, Tensor):
        if value._grad_fn is not None and not backward_ran:
            raise ReturnsGraph
        plain = value.detach()   # the returned value, without the trace's graph
        return ("new", new_tensor(plain, new_tensors))
    if isinstance(value, (tuple, list)):
        kind = type(value)
        items = [_result_spec(v, walk, new_tensors, backward_ran) for v in value]
        return ("seq", kind, items)
    if type(value) is dict:
        return ("dict", [(k, _result_spec(v, walk, new_tensors, backward_ran)) for k, v in value.items()])
    raise Unreplayable(f"the function returns a {type(value).__name__}")


def build_result(spec, objects, made):
    kind = spec[0]
    if kind == "const":
        return spec[1]
    if kind == "object":
        return objects[spec[1]]
    if kind == "new":
        return made[spec[1]]
    if kind == "seq":
        items = [build_result(s, objects, made) for s in spec[2]]
        t = spec[1]
        return t(*items) if hasattr(t, "_fields") else t(items)
    return {k: build_result(s, objects, made) for k, s in spec[1]}
