"""A compiled function: guards, one program per guard key, commit after success, eager fallbacks.

Per call: walk the state (`_walk`; its key is the guard), find the program traced for that key (trace
and compile it on first sight), run the value checks that can run before it (`_checks`), run it with
the written storages donated, and only when it has succeeded write the results back: storages, new
tensors (a new `.grad`), Python changes, learning rates, the generator's counter. A steady call (the
state as the last call left it) walks its arguments alone: `_guard` checks the rest by identity and
runs the last call's program. A call whose key has no program yet and cannot have one runs eagerly: its
trace created state (the first optimizer step), its result carries a graph for the caller, or a graph
break was found (then every later call runs eagerly too, after one warning).
"""
import sys

import jax
import jax.extend.core
import numpy as np

from .. import _dispatch, _faults, _programs
from .. import random as _random
from .._grad_mode import _state
from .._recompiles import RecompileWarning
from .._tensor import Tensor
from . import _checks, _deferred, _draws, _guard, _snapshot, _symbolic, _trace, _walk
from .. import _autocast
from .._user_frames import warn_user

_OWNED = 3            # references to an array held by its storage alone: the storage, a list, getrefcount's argument
RECOMPILE_LIMIT = 8   # programs per function; a key beyond that runs eagerly (PyTorch's cache_size_limit)
_EAGER = "eager"      # a key whose calls run eagerly (the state it creates, or a graph for the caller)
_PER_SIZE = "per size"  # dynamic=True: the symbolic trace failed, the call walks and traces again per size


class Unsupported(RuntimeError):
    """The function cannot be compiled into one program (PyTorch's torch._dynamo.exc.Unsupported)."""


class CompiledFunction:
    def __init__(self, fn, fullgraph=False, dynamic=None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.programs = {}     # guard key -> _Program or _EAGER
        self.compiled = 0
        self.broken = None     # the GraphBreak that made this function eager
        self.warned_limit = False
        self.calls = 0
        self.guard = None      # the last call's _guard.Guard: a steady call skips the full walk
        self.symbolic_failed = None   # dynamic=True: why its first dims could not be symbols (see _symbolic)
        target = getattr(fn, "__func__", fn)
        self.code_roots = isinstance(target, type(_walk.function_roots)) and not _walk._is_library(
            target.__module__)

    def _roots(self, args, kwargs):
        fn = self.fn
        roots = [args, kwargs]
        target = fn
        if hasattr(fn, "__func__"):   # a bound method: its object is state
            roots.append(fn.__self__)
            target = fn.__func__
        if self.code_roots:
            roots.extend(_walk.function_roots(target))
        elif not hasattr(target, "__code__"):
            roots.append(fn)   # a callable object: its attributes
        return roots

    def __call__(self, *args, **kwargs):
        if self.broken is not None or _dispatch.CAPTURE[0] is not None:   # (called inside another's trace: inlined)
            return self.fn(*args, **kwargs)
        self.calls += 1
        # (a step still in flight, the last call's or an eager one's, is awaited by the program's launch: the
        # walk below reads no values, so it runs while XLA computes)
        roots = self._roots(args, kwargs)
        extra = (_state.grad_enabled, _state.inference, _autocast.key())
        guard, self.guard = self.guard, None   # kept again only by a call that succeeds
        if guard is not None:
            reached = guard.reach(roots, extra)
            if reached is not None and guard.program.constants_hold():
                result = guard.program.run(reached, guard, self)
                self.guard = guard
                return result
        try:
            walk = _walk.Walk(roots, split=2, dynamic=bool(self.dynamic) and self.symbolic_failed is None)
        except _walk.TooLarge:
            return self._break(_trace.GraphBreak(f"the function reaches more than {_walk.MAX_OBJECTS} objects",
                                                 None), args, kwargs)
        if walk.grad_fns:
            return self.fn(*args, **kwargs)   # part of a graph recorded outside: the tape runs it
        key = (walk.key,) + extra
        program = self.programs.get(key)
        if program is not None and program is not _EAGER and not program.constants_hold():
            program = None
        if program is None:
            if self.compiled >= RECOMPILE_LIMIT:
                self._warn_limit()
                return self.fn(*args, **kwargs)
            if self.calls == 1 and any(map(_first_step_fills_state, walk.optimizers)):
                # A trace would fail (an optimizer's first step creates its state: _snapshot.Unreplayable)
                # after running the whole step: run it eagerly at once and trace on the state it made.
                return self._eager_then_trace(args, kwargs, undo=_snapshot.Snapshot(walk))
            try:
                program = self._compile(key, walk, args, kwargs)
                if program is _PER_SIZE:   # (dynamic=True, where its trace cannot serve every size)
                    self.calls -= 1
                    return self(*args, **kwargs)
            except _trace.GraphBreak as e:
                if self.calls > 1:
                    return self._break(e, args, kwargs)
                # A first call may create state a trace cannot (an optimizer's buffers, made on the
                # device of a parameter): it runs eagerly, then the trace is tried again on the state
                # it made; only a break found then is one.
                return self._eager_then_trace(args, kwargs)
        if program is _EAGER:
            return self.fn(*args, **kwargs)
        guard = _guard.Guard.make(walk, program.traced, program, extra, roots)
        result = program.run(walk, guard, self)
        self.guard = guard
        return result

    def forget(self, guard):
        """A deferred call's program failed: the state is no longer what `guard` expects."""
        if self.guard is guard:
            self.guard = None

    def _compile(self, key, walk, args, kwargs):
        try:
            traced = _trace.trace(self.fn, args, kwargs, walk)
            if walk.symbolic:
                _symbolic.check(traced)
            program = _Program(traced, self.compiled + 1)
        except (_trace.ReturnsGraph, _snapshot.Unreplayable):
            if walk.symbolic:   # (said again by the trace per size, which decides)
                return self._per_size("the function runs eagerly")
            self.programs[key] = _EAGER
            return _EAGER
        except Exception as e:
            if walk.symbolic:   # (a failure that is not the symbols' shows again in the trace per size)
                return self._per_size(f"{type(e).__name__}: {e}")
            raise
        self.compiled += 1
        self.programs[key] = program
        return program

    def _per_size(self, why):
        self.symbolic_failed = why
        return _PER_SIZE

    def _eager_then_trace(self, args, kwargs, undo=None):
        """The eager call, then a trace on the state it made. `undo`: a Snapshot put back if the call
        raises, so that it leaves the state as it was (as the failed trace it stands for would have)."""
        if undo is None:
            result = self.fn(*args, **kwargs)
        else:
            gen = _random.default_generator
            key, counter = gen._key, gen._counter
            try:
                result = self.fn(*args, **kwargs)
            except BaseException:
                undo.restore()
                gen._key, gen._counter = key, counter
                raise
        self._trace_again(args, kwargs)
        return result

    def _trace_again(self, args, kwargs):
        try:
            walk = _walk.Walk(self._roots(args, kwargs))
            if walk.grad_fns:
                return
            key = (walk.key, _state.grad_enabled, _state.inference, _autocast.key())
            if key not in self.programs:
                self._compile(key, walk, args, kwargs)
        except _trace.GraphBreak as e:
            self._break(e, None, None)
        except Exception:   # the arguments may not suit a second call (consumed iterators): the next call tells
            pass

    def _break(self, e, args, kwargs):
        message = (f"tapegrad.compile: {e.reason} at {e.where()} cannot be traced into one program (a graph "
                   "break).")
        if self.fullgraph:
            raise Unsupported(message + " fullgraph=True requires one program: compute with tensor ops instead "
                              "(torch.where for a branch), or move the Python read out of the compiled function.") \
                from e.__cause__
        self.broken = e
        warn_user(message + " The function runs eagerly from now on, split at the read: its ops before and "
                  "after it run through the tape, compiled as programs of their own once they repeat. Move the "
                  "Python read out of the compiled function to compile it whole.", UserWarning)
        return None if args is None else self.fn(*args, **kwargs)

    def _warn_limit(self):
        if not self.warned_limit:
            self.warned_limit = True
            name = getattr(self.fn, "__qualname__", repr(self.fn))
            warn_user(
                f"tapegrad.compile: {name} was compiled {RECOMPILE_LIMIT} times (recompile limit): its guards "
                "(shapes, dtypes, requires_grad, grad presence, training, Python values) keep changing. Calls "
                "with guards not compiled before run eagerly from now on. Keep them the same from call to call "
                "(pad batches to a few fixed sizes).", RecompileWarning)


class _Program:
    """A traced function compiled with its written storages donated."""

    def __init__(self, traced, number):
        self.traced = traced
        jaxpr, self.host_checks = _checks.split(traced)
        written = traced.written
        nstate = traced.nstate
        jaxpr, read = _checks.read_only(jaxpr)
        # the storages passed besides the donated ones: those it reads (every argument costs its dispatch)
        self.kept = [i for i in range(nstate) if i not in set(written) and read[i]]
        deltas = dict(traced.versions)   # the commit: (storage, version delta) written, then only bumped
        self.writes = [(i, deltas.get(i, 0)) for i in written]
        self.bumps = [(i, d) for i, d in traced.versions if i not in set(written)]
        order = list(written) + self.kept   # the donated inputs first
        position = {s: j for j, s in enumerate(order)}
        state_read = [i for i in range(nstate) if read[i]]
        self.rest_read = [j for j, r in enumerate(read[nstate:]) if r]   # of `rest` (see run), those passed
        run = jax.extend.core.jaxpr_as_fun(jaxpr)
        if traced.symbolic:   # (dynamic=True: a program for every size its symbols stand for)
            run = _symbolic.exported(run, jaxpr.in_avals)
        checked = len(traced.checks) if self.host_checks is None else 0   # checks left in the program

        def program(donated, kept, rest):
            passed = donated + kept
            state = [passed[position[i]] if i in position else None for i in range(nstate)]
            outs = run(*[state[i] for i in state_read], *rest)
            return _checks.keep_old_values(outs, state, written, checked) if checked else outs
        self.program = _programs.Program(program, sync=True, key=("compiled", number))
        self.program.jitted = jax.jit(program, donate_argnums=(0,))
        # Launched without waiting (see _deferred) unless the commit reads values: a check's flag, a
        # learning rate the function computed.
        self.deferred = not checked and not any(kind == "out" for _, kind, _ in traced.lr_outputs)
        self.proven = False   # whether a launch succeeded (XLA allocates the same again)

    def constants_hold(self):
        """Tensors read but not walked still hold the values baked into the program."""
        for ref, raw in self.traced.constants:
            s = ref()
            if s is not None and s._raw is not raw:
                return False
        return True

    def run(self, walk, guard=None, owner=None):
        """Run on the state `walk` reached and commit; `guard` (if any) is advanced past the commit. The
        program may still be running when this returns (`_deferred`): should it fail, `owner` (the
        CompiledFunction) forgets `guard`."""
        traced = self.traced
        storages = walk.storages
        donated = [storages[i].value for i in traced.written]
        if donated and not self.proven:
            # XLA frees a donated buffer even when the launch fails (an allocation refused for a new batch
            # size): a program's first run is handed copies, so that a failure leaves the state as it was
            donated = [jax.device_put(a, a.sharding, may_alias=False) for a in donated]
        # Donate only an array nothing else holds (a clone sharing it would lose its data).
        elif donated and max(map(sys.getrefcount, donated)) > _OWNED:
            donated = [a if sys.getrefcount(a) <= _OWNED + 1 else jax.device_put(a, a.sharding, may_alias=False)
                       for a in donated]   # (+1: the comprehension's own reference)
        kept = [storages[i].value for i in self.kept]
        objects = walk.objects
        # the draws from CPU streams the program takes as inputs, made now as the eager call would; a call
        # that fails puts its generators back
        undo = None   # (a launched call's: what its commit replaced, put back should the program fail)
        if not traced.host_draws:
            defer = self.deferred and _faults.DEFER_STEPS[0]
            outs = self._call(walk, donated, kept, [], defer)
            if defer and not isinstance(_deferred.first(outs), jax.core.Tracer):
                undo = _deferred.Undo(_random.default_generator, lambda: owner is not None and owner.forget(guard))
        else:
            before = [(g, g._snapshot()) for g in {id(g): g for g, _, _ in traced.host_draws}.values()]
            try:
                outs = self._call(walk, donated, kept, _draws.draw_specs(traced.host_draws))
            except BaseException:
                for g, snapshot in before:
                    g._restore(snapshot)
                raise
        made = self._commit(walk, outs, undo)
        if undo is not None:
            _deferred.launched(outs, undo, _faults.where_recorded())
        if guard is not None:
            guard.advance(made)
        return _trace.build_result(traced.result, objects, made)

    def _call(self, walk, donated, kept, drawn, defer=False):
        """The program's outputs (raising the error of a failed value check, with the old values back);
        defer: not waited for (the caller commits them with a `_deferred.Undo`)."""
        traced, storages, objects = self.traced, walk.storages, walk.objects
        rest = []
        if self.rest_read or self.host_checks is not None:
            gen = _random.default_generator
            rest = [np.float64(objects[pos][k]) for pos, k in walk.lifted] + [gen._key, np.int64(gen._counter)]
            rest += [np.int64(p) for v in walk.views for p in v._view.positions] + drawn
            if self.host_checks is not None:   # raises before anything is donated
                self.host_checks.run(storages, rest)
            rest = [rest[j] for j in self.rest_read]
        try:
            if defer:
                outs = self.program.launch(donated, kept, rest)
                self.proven = True
                return outs
            outs = self.program(donated, kept, rest)   # waits: nothing is committed if it failed
        except _faults.RUNTIME_ERRORS as e:
            raise _faults.failed(e, (), _deferred.place(_faults.where_recorded())) from None
        self.proven = True
        if traced.checks and self.host_checks is None:
            n = len(traced.checks)
            flags, firsts, outs = outs[-2 * n:-n], outs[-n:], outs[:-2 * n]
            for flag, first, make_error in zip(flags, firsts, traced.checks):
                if np.asarray(flag):   # (through NumPy: a jax bool() costs several times more)
                    for i, old in zip(traced.written, outs):   # the old values, handed back
                        storages[i]._raw = old
                    value, at = np.asarray(first).tolist()
                    raise make_error(int(value) if value.is_integer() else value, int(at))   # (nan stays nan)
        return outs

    def _commit(self, walk, outs, undo=None):
        """Write the program's results into the state; `undo` (a `_deferred.Undo`), when given, records
        what each write replaced."""
        traced = self.traced
        storages, objects = walk.storages, walk.objects
        n = len(traced.written)
        for (i, delta), value in zip(self.writes, outs):
            s = storages[i]
            if undo is not None:
                undo.storages.append((s, s._raw, s.counter.value, value))
            s._raw = value
            s.counter.value += delta
        for i, delta in self.bumps:
            if undo is not None:
                undo.bumps.append((storages[i], storages[i].counter.value))
            storages[i].counter.value += delta
        made = []
        for requires_grad, value in zip(traced.new, outs[n:n + len(traced.new)]):
            t = Tensor._wrap(value)
            t._requires_grad = requires_grad
            made.append(t)
        if undo is not None:
            undo.made = [(t._storage, t._storage._raw) for t in made]
        _snapshot.replay(traced.changes, objects, made, None if undo is None else undo.changes)
        computed = iter(outs[n + len(traced.new):])
        for slot, kind, value in traced.lr_outputs:
            pos, k = walk.lifted[slot]
            if undo is not None:
                undo.changes.append((objects[pos], k, objects[pos][k]))
            objects[pos][k] = float(next(computed)) if kind == "out" else value
        _random.default_generator._counter += traced.draws
        return made



def _first_step_fills_state(optimizer):
    """Whether the optimizer has no state yet and its step creates some (plain SGD keeps none)."""
    if optimizer.state:
        return False
    keys = getattr(optimizer, "_state_keys", None)
    if keys is None:   # not a foreach optimizer: its step's state is unknown here
        return True
    try:
        return any(keys(group) for group in optimizer.param_groups)
    except (KeyError, NotImplementedError):
        return True


_walk.walked_as[CompiledFunction] = lambda compiled: compiled.fn   # (reached from a function that calls it)
