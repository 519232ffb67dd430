"""Profiling: what each XLA program and kernel tapegrad runs costs (PyTorch's torch.profiler API).

tapegrad records ops lazily and runs them as XLA programs, so the units worth timing are the calls
made through `_programs`: whole programs (a training step, a pending forward, a general backward)
and per-op kernels (one op's forward or one node's backward run on its own: a structure's first
sight, eager mode). While a profile records, each such call is timed by the wall clock and waited for
(outside a profile kernels are not waited for, so the time would be the dispatch's alone), and the
XLA compiles JAX reports during the call are counted against it. Outside a profile the cost is one
check in `Program.__call__`.

Row names:
    mul, mul backward               a kernel: the op's forward, or its node's backward
    ones, zeros, add gradients      the backward engine's own kernels (seeds, zero and summed gradients)
    step program #3 (57 ops)        a whole training step: pending forward, backward and optimizer update
    forward program #2 (12 ops)     pending values computed together (print, .item(), a no-grad loop)
    backward program #1 (9 nodes, 4 pending ops)   the general backward with the forward it needed
    a record_function label         a user range; ProfilerStep#N for each prof.step() while recording
A program's number is given when a profile first sees it and kept for the process.

Columns of key_averages().table():
    Name                  the row name above (with the input shapes, if grouped by them)
    Calls                 number of calls (of a range: times entered)
    Compiles              XLA compiles during the calls (JAX's compile events): 1 at new shapes or a
                          new structure, 0 once compiled; a range counts those of the programs inside it
    Compile time          time XLA spent compiling during them (JAX's own figure)
    Run time (total)      wall time of the calls, tracing, compiles and everything inside included (a
                          first call whose computation JAX had compiled before shows 0 compiles and
                          its tracing time)
    Run time (avg)        Run time (total) / Calls
    Self CPU %            self time over the sum of all rows' self time; a range's self time excludes
                          the programs and ranges inside it, a program's is its whole run time
Times are in microseconds on the row objects (cpu_time_total, self_cpu_time_total, cpu_time,
compile_time_total), as PyTorch's. Each call waits for its result, so the wall time includes the
device's: the cuda_/device_ sort keys sort by the same times.

Options: activities is accepted (any of ProfilerActivity; programs are timed on whatever device JAX
runs them); record_shapes adds the calls' input shapes (key_averages(group_by_input_shape=True)
and the trace); profile_memory, with_stack, with_flops and with_modules are accepted and record
nothing. A schedule (wait/warmup/active/repeat) records only in its active steps (warmup is not
recorded either: a compile there already happened) and calls on_trace_ready after each active window.
"""
import collections
import contextlib
import enum
import gzip
import json
import os
import socket
import threading
import time
import weakref

import jax

from .. import _program_stats, _programs
from ._profiler_table import _Averages, _Average
from .._user_frames import warn_user

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4   # PyTorch's, set when its device tracer stops early; tapegrad's never does


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities():
    """CPU, and CUDA when JAX runs on a GPU."""
    gpu = any(d.platform == "gpu" for d in jax.devices())
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if gpu else {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's profiler schedule: step number -> ProfilerAction (wait, warmup, active steps, repeated)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warn_user("Profiler won't be using warmup, this can skew profiler results")

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


# ---- names ------------------------------------------------------------------------------------

_names = weakref.WeakKeyDictionary()   # Program -> its row name, kept for the process
_numbers = collections.Counter()       # whole programs named so far, per kind
_ENGINE_KERNELS = {"ones": "ones", "zeros": "zeros", "add": "add gradients"}


def _name(program):
    name = _names.get(program)
    if name is None:
        name = _names[program] = _describe(program.key)
    return name


def _describe(key):
    kind = key[0] if type(key) is tuple and key else None
    if kind == "forward":
        return key[1].name
    if kind == "vjp":
        from ._saved import SIGNATURES
        return f"{SIGNATURES[key[1]][0].name} backward"
    if kind in _ENGINE_KERNELS:
        return _ENGINE_KERNELS[kind]
    _numbers[kind] += 1
    n = _numbers[kind]
    if kind == "step":
        from .._segment import decode
        return f"step program #{n} ({_count(len(decode(key[1])), 'op')})"
    if kind == "plan":
        return f"forward program #{n} ({_count(len(key[1][0]), 'op')})"
    if kind == "backward":
        return f"backward program #{n} ({_count(len(key[1][0]), 'node')}, {_count(len(key[4][0]), 'pending op')})"
    return f"{kind or 'program'} #{n}"


def _count(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# ---- events -----------------------------------------------------------------------------------

class _Event:
    """One call (of a program or kernel) or one user range. Times in nanoseconds (perf_counter)."""

    __slots__ = ("name", "kind", "start", "end", "compiles", "compile_seconds", "shapes", "tid", "inner")

    def __init__(self, name, kind, start, shapes=()):
        self.name, self.kind, self.start, self.shapes = name, kind, start, shapes
        self.end = None
        self.compiles, self.compile_seconds = 0, 0.0
        self.tid = threading.get_ident()
        self.inner = 0   # ns spent in the calls and ranges directly inside (a range's)

    @property
    def duration(self):
        return self.end - self.start

    @property
    def self_duration(self):
        return self.duration - self.inner


class _Thread(threading.local):
    def __init__(self):
        self.ranges = []   # the open ranges of this thread, innermost last


_thread = _Thread()
_active = [None]   # the profile recording now


def _timed(program, args):
    """Program.__call__ while a profile records: the call, waited for, timed, with its compiles."""
    prof = _active[0]
    if prof is None or _program_stats._local.active:   # inside another program's call (its trace): part of it
        return program.run(args)
    stats = _program_stats._stats
    compiles, seconds = stats["compiles"], stats["compile_seconds"]
    event = _Event(_name(program), "program" if program.sync else "kernel", time.perf_counter_ns(),
                   _shapes(args) if prof.record_shapes else ())
    try:
        return program.run(args, wait=True)
    finally:
        event.end = time.perf_counter_ns()
        event.compiles = stats["compiles"] - compiles
        event.compile_seconds = stats["compile_seconds"] - seconds
        prof._events.append(event)
        if _thread.ranges:
            _thread.ranges[-1].inner += event.duration


def _shapes(args):
    return tuple(tuple(leaf.shape) for leaf in jax.tree_util.tree_leaves(args) if hasattr(leaf, "shape"))


class record_function(contextlib.ContextDecorator):
    """A user range (context manager or decorator): a row of its own, its wall time including the
    programs run inside it, which the trace shows nested in it. Costs nothing outside a profile."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args   # PyTorch's extra string for the trace: accepted, not recorded
        self._open = []   # (profile, event, compile stats at entry) per entry, innermost last

    def _recreate_cm(self):   # a decorated function may recurse or run on several threads
        return record_function(self.name, self.args)

    def __enter__(self):
        prof = _active[0]
        if prof is not None:
            stats = _program_stats._stats
            event = _Event(self.name, "user_annotation", time.perf_counter_ns())
            prof._events.append(event)
            _thread.ranges.append(event)
            self._open.append((event, stats["compiles"], stats["compile_seconds"]))
        else:
            self._open.append(None)
        return self

    def __exit__(self, *exc):
        entry = self._open.pop()
        if entry is not None:
            event, compiles, seconds = entry
            stats = _program_stats._stats
            event.end = time.perf_counter_ns()
            event.compiles = stats["compiles"] - compiles
            event.compile_seconds = stats["compile_seconds"] - seconds
            ranges = _thread.ranges
            if event in ranges:
                ranges.remove(event)
                if ranges:
                    ranges[-1].inner += event.duration
        return False


# ---- the profile ------------------------------------------------------------------------------

class profile:
    """Times every XLA program and kernel tapegrad runs while active (see the module's docstring).

    with profile() as prof:             # or torch.profiler.profile(activities=[ProfilerActivity.CPU])
        train_step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")
    """

    def __init__(self, enabled=True, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False, use_cuda=None,
                 use_device=None, use_cpu=True, use_kineto=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        for activity in activities or ():
            if not isinstance(activity, ProfilerActivity):
                raise TypeError(f"profile(activities=...) takes ProfilerActivity values (e.g. "
                                f"[ProfilerActivity.CPU, ProfilerActivity.CUDA]), got {activity!r}")
        self.enabled = enabled
        self.activities = set(activities or supported_activities())
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory, self.with_stack, self.with_flops, self.with_modules = (
            profile_memory, with_stack, with_flops, with_modules)   # accepted, nothing recorded
        self.step_num = 0
        self._action = ProfilerAction.NONE
        self._events = []
        self._step_range = None
        self._origin = time.perf_counter_ns()

    # -- recording on and off

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if not self.enabled:
            return
        self.step_num = 0
        self._act(self.schedule(0) if self.schedule else ProfilerAction.RECORD)

    def stop(self):
        if not self.enabled:
            return
        saving = self._action in _RECORDING
        self._act(ProfilerAction.NONE)
        if saving and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """The end of a training step: the schedule's next action (a new window starts afresh, a
        finished one goes to on_trace_ready); each recorded step is a ProfilerStep#N range."""
        if not self.enabled:
            return
        self.step_num += 1
        if self._action == ProfilerAction.RECORD_AND_SAVE:   # a window ends: hand it on before the next one
            self._act(ProfilerAction.NONE)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        self._act(self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD)

    def _act(self, action):
        """Move to `action`: recording starts afresh at a window's first step and stops after its last."""
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None
        recording = action in _RECORDING
        if _active[0] is self and (not recording or self._action == ProfilerAction.RECORD_AND_SAVE):
            _active[0] = _programs.profiler = None
        if recording and _active[0] is not self:
            if _active[0] is not None:
                raise RuntimeError("A profile is already recording. Stop it (leave its `with` block or call "
                                   "prof.stop()) before starting another; profiles do not nest.")
            self._events = []
            self._origin = time.perf_counter_ns()
            _active[0] = self
            _programs.profiler = _timed
        self._action = action
        if recording and self.schedule is not None:   # PyTorch marks steps only under a schedule
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    # -- results

    def events(self):
        """The recorded calls and ranges, in the order they started."""
        return [e for e in self._events if e.end is not None]

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One row per name (and input shapes, if grouped by them): an EventList-like list whose
        table() prints the columns described in this module's docstring."""
        rows = {}
        for e in self.events():
            key = (e.name, e.shapes) if group_by_input_shape else e.name
            row = rows.get(key)
            if row is None:
                row = rows[key] = _Average(e.name, e.shapes if group_by_input_shape else ())
            row.add(e)
        return _Averages(rows.values(), shapes=group_by_input_shape and self.record_shapes)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    @property
    def self_cpu_time_total(self):
        """Microseconds: the sum of every row's self time."""
        return sum(e.self_duration for e in self.events()) / 1e3

    def export_chrome_trace(self, path):
        """A Chrome trace (chrome://tracing, Perfetto): one complete event per call and range, ts and dur
        in microseconds from the start of the recording."""
        events = []
        pid = os.getpid()
        for e in self.events():
            args = {"compiles": e.compiles, "compile seconds": e.compile_seconds}
            if e.shapes:
                args["Input Dims"] = [list(s) for s in e.shapes]
            events.append({"name": e.name, "cat": e.kind, "ph": "X", "pid": pid, "tid": e.tid,
                           "ts": (e.start - self._origin) / 1e3, "dur": e.duration / 1e3, "args": args})
        trace = {"traceEvents": events, "displayTimeUnit": "ms"}
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(trace, f)
        return path


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """on_trace_ready handler writing each window's Chrome trace to dir_name/<worker>.<time>.pt.trace.json
    (the names PyTorch uses; the trace holds tapegrad's programs, not Kineto's device fields)."""
    worker_name = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = f"{worker_name}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler
