"""Every XLA program tapegrad runs goes through here: bounded caches and counters that are JAX's own.

Two kinds of program:

* kernels: one op (or one node's backward) for given statics and dtype, shared by every structure that
  uses it (shapes go to jax.jit's own per-function cache);
* programs: a whole pending subgraph, backward or training step, keyed by its structure.

A structure is compiled only when it comes back with the same input shapes (`lookup`); until then it runs
op by op, through kernels that on first sight run on NumPy (`_numpy_eval`) rather than compile. Both caches are bounded (least recently used first). Compiles and
compile seconds are read from JAX's own monitoring event, counted only while a tapegrad program is
being called, so the numbers are what XLA did, not what tapegrad believes it did.
"""
import os
import threading

import jax
import numpy as np
from jax import monitoring

from . import _background, _faults, _host_values, _numpy_eval, _placement, _plan_parts, _recompiles, _shape_poly
from ._equation import SIGNATURES
from ._lru import LRU, resident_bytes

MAX_PROGRAMS = 256     # whole programs kept (each may hold executables for several shapes)
MAX_KERNELS = 2048     # per-op kernels kept
MAX_SEEN = 8192        # structures remembered as seen once
# ...and by the resident memory their compiles added (see _lru): a few hundred long programs would
# otherwise hold gigabytes within the entry limit.
MAX_PROGRAM_BYTES = 1 << 30
MAX_KERNEL_BYTES = 512 << 20

# XLA:CPU compile time grows with program size (~10-50 ms per recorded op measured here, faster on small
# programs), so a structure is compiled whole only up to MAX_PROGRAM_OPS recorded ops; a longer tape (a
# 400-step unrolled RNN) runs op by op when first seen, and in bounded chunks once it comes back (_chunks).
MAX_PROGRAM_OPS = 1024

# A kernel met with new shapes runs its jaxpr on NumPy (see _numpy_eval) until the time spent so on those
# shapes (tracing included, both estimated from the work, not clocked) reaches about what compiling them
# would cost; then it is compiled. Renting until the rent equals the price keeps a kernel within 2x of
# the better of the two choices made in hindsight. XLA:CPU's floor for a one-op program is ~30 ms;
# typical kernels take 40-180 ms.
NUMPY_BUDGET_SECONDS = 0.05
TRACE_SECONDS = 0.002
# A kernel that draws random numbers picks its tier from its shapes alone, never from its history: NumPy
# up to DRAW_SECONDS of estimated work per call, XLA above. XLA rewrites float arithmetic (it folds and
# reassociates constants), so the two tiers may differ in the last bit of a uniform draw; a choice made
# by shapes keeps `manual_seed(0); rand(n)` giving the same values on every call of a process.
DRAW_SECONDS = 0.02
# A whole program that comes back (a training step, a backward, a pending computation such as `.item()` or
# a no_grad evaluation) rents NumPy too, until its rent reaches its own compile price: XLA:CPU's ~30 ms
# floor plus about 3 ms per primitive. An evaluation loop over a few batch sizes, or a training loop over
# sequence lengths that each come back a few times, then never compiles; a loop that runs on compiles once
# the rent has paid for it.
PLAN_COMPILE_SECONDS = 0.03
PLAN_COMPILE_SECONDS_PER_STEP = 0.003
# Renting is for structures whose future is unknown. One that comes back STEADY_STREAK times in a row
# (no other structure of its kind in between: a training loop over fixed shapes, truncated BPTT's
# chunks) is a steady loop, whose many later calls pay for the compile at once: it is compiled then.
STEADY_STREAK = 3
NUMPY_KERNELS = [os.environ.get("TAPEGRAD_NUMPY_KERNELS", "1") != "0"]   # decided for CPU at first use

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_LOWERED_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"   # the last step before XLA compiles
_DISK_HIT_EVENT = "/jax/compilation_cache/cache_hits"   # sent before the compile event it stands for


class _Local(threading.local):
    active = 0   # > 0 while this thread is inside a tapegrad program call
    loading = 0  # disk hits whose compile event has not come yet
    resident = None  # resident bytes when the program being called was handed to XLA
    current = None   # the Program being called
    replaying = False   # replaying a worker's compile events: the job's own measure was charged


_local = _Local()
profiler = None   # while a profile records: profiler(program, args) runs and times each call
_stats = {"hits": 0, "misses": 0, "compiles": 0, "compile_seconds": 0.0, "disk_loads": 0, "executions": 0,
          "evictions": 0, "numpy_runs": 0}
_FLOAT_STATS = ("compile_seconds",)


def _on_event(event, **_):
    job = _background.current_job()
    if job is not None:   # a compile off the caller's thread: accounted when the caller collects it
        job.events.append((_on_event, (event,)))
        return
    if event == _DISK_HIT_EVENT and _local.active:
        _local.loading += 1


def _on_duration(event, seconds, **_):
    job = _background.current_job()
    if job is not None:
        job.events.append((_on_duration, (event, seconds)))
        return
    if not _local.active:
        return
    if event == _LOWERED_EVENT:
        _local.resident = resident_bytes()
        return
    if event != _COMPILE_EVENT:
        return
    _charge(_local.current)   # (a program loaded from disk holds memory too)
    if _local.loading:   # JAX reports a program loaded from the persistent cache as a compile too
        _local.loading -= 1
        _stats["disk_loads"] += 1
        return
    _stats["compiles"] += 1
    _stats["compile_seconds"] += seconds
    program = _local.current
    if program is not None:
        program.compiles += 1
        _recompiles.shapes_compiled(program.key, program.compiles, seconds, whole=program.sync)


_runtime_started = [False]


def _charge(program, nbytes=None):
    """Charge what XLA's compile just added to resident memory to `program`'s cache entry. The allocator
    first hands the compile's scratch back (without it every compile's scratch would stay resident)."""
    _background.release_scratch()
    if nbytes is None:
        before, _local.resident = _local.resident, None
        nbytes = resident_bytes() - before if before is not None else 0
    if not _runtime_started[0]:   # the process's first compile also sets XLA's runtime up (~30 MB here)
        _runtime_started[0] = True
        return
    if program is not None and program.owner is not None and not _local.replaying:
        cache, key = program.owner
        cache.charge(key, max(nbytes, MIN_COMPILE_BYTES))


# What a compile is charged at least: its executable stays resident, but when the allocator hands it pages
# an earlier free returned, resident memory does not grow and the measure reads nothing.
MIN_COMPILE_BYTES = 64 << 10


monitoring.register_event_listener(_on_event)
monitoring.register_event_duration_secs_listener(_on_duration)


class Program:
    """A jitted function whose every call is counted (one call is one XLA execution).

    A whole program (sync=True) is waited for before its outputs are handed out: XLA reports a failure
    (an allocation refused) only when the result is awaited, and state may be committed only once the
    program is known to have succeeded. Kernels are not waited for: a failure reaches the program or
    plan that reads their outputs, which waits.
    """

    __slots__ = ("fn", "jitted", "layout", "sync", "key", "compiles", "spreads", "numpy", "ready", "announce",
                 "bought", "shapes", "renting", "jobs", "bytes", "owner", "families", "__weakref__")

    def __init__(self, fn, sync=False, key=None):
        self.fn = fn
        self.jitted = jax.jit(fn)
        self.numpy = None if sync else {}   # a kernel's NumPy tier: input kinds -> _Rented
        self.ready = set()   # a whole program's input shapes it is compiled (or being compiled) for
        self.layout = None   # what the caller needs to read the outputs (set by compile)
        self.sync = sync
        self.key = key       # its cache key, to explain its compiles (_recompiles)
        self.compiles = 0    # one per set of input shapes it met
        self.spreads = False  # its arguments have met on different device sets (_placement)
        self.announce = None  # called once, before its first run on XLA (a step explaining its compile);
                              # False once that run happened
        self.bought = set()   # a whole program's input shapes whose rent is spent: XLA only, no NumPy check
        self.shapes = None    # the input shapes of the coming call (set by lookup)
        self.renting = True   # whether the coming call may run on NumPy
        self.jobs = None      # a whole program's compiles off the caller's thread, by input shapes
        self.bytes = 0        # resident memory its compiles added (see _lru)
        self.owner = None     # (cache, key) it is cached under
        self.families = None  # its NumPy tier's traces by input pattern (see _shape_poly)

    def __call__(self, *args):
        if profiler is not None:   # a profile is recording: it times the call (autograd/profiler.py)
            return profiler(self, args)
        return self.run(args)

    def launch(self, *args):
        """One execution of a whole program whose caller commits its results with a `_faults.Flight`:
        handed out before they are computed, awaited by the next program or read."""
        if profiler is not None:
            return profiler(self, args)
        return self.run(args, defer=True)

    def run(self, args, wait=False, defer=False):
        """One execution; wait=True waits for the result even of a kernel (a profile timing it)."""
        if _faults._in_flight[0] is not None:   # a program's inputs may be the last step's results
            _faults.confirm()
        numpy_tier = self.numpy is not None and NUMPY_KERNELS[0]   # (NumPy is synchronous: no wait)
        if numpy_tier and self.renting:
            out = _run_on_numpy(self, args)
            if out is not _COMPILE:
                return out
            if self.sync:   # these shapes have paid their rent: skip the NumPy check from now on
                self.bought.add(self.shapes)
                self.renting = False
        if _host_values.active():   # NumPy's outputs handed on by an op-by-op run (see _host_values)
            args = _host_values.args_on_device(args)
        if numpy_tier and self.sync and _background.enabled():
            out = self._while_compiling(args)
            if out is not _COMPILE:
                return out
        if self.announce:
            announce, self.announce = self.announce, False   # False: announced, never again
            announce()
        _stats["executions"] += 1
        _local.active += 1
        outer, _local.current = _local.current, self
        try:
            if self.spreads:
                args = _placement.spread(args) or args
            try:
                out = self.jitted(*args)
            except ValueError as e:   # single-device arguments meet a replicated module: see _placement
                spread = _placement.spread(args) if "incompatible devices" in str(e) else None
                if spread is None:
                    raise
                self.spreads = True
                out = self.jitted(*spread)
            if (self.sync and not defer) or wait:
                jax.block_until_ready(out)
            return out
        finally:
            _local.active -= 1
            _local.current = outer


    def _while_compiling(self, args):
        """NumPy's outputs while XLA compiles these shapes off this thread (see _background); _COMPILE once
        the compile is done (the XLA call then finds its executable), or when NumPy cannot run it."""
        jobs = self.jobs
        if jobs is None:
            jobs = self.jobs = {}
        job = jobs.get(self.shapes)
        if job is _COLLECTED:
            return _COMPILE
        if job is None:
            try:
                lowered = self.jitted.lower(*args)   # tracing runs tapegrad's Python: on this thread
            except Exception:   # the call reports it
                jobs[self.shapes] = _COLLECTED
                return _COMPILE
            job = jobs[self.shapes] = _background.submit(lowered.compile)
        if not job.done:
            out = _run_on_numpy(self, args, rent=False)
            if out is not _COMPILE:
                return out
            job.wait()
        jobs[self.shapes] = _COLLECTED
        if self.owner is not None:
            self.owner[0].charge(self.owner[1], max(job.bytes, MIN_COMPILE_BYTES))
        _local.active += 1
        outer, _local.current = _local.current, self
        _local.replaying = True
        try:
            for listener, event in job.events:   # as if this thread had compiled
                listener(*event)
        finally:
            _local.active -= 1
            _local.current = outer
            _local.replaying = False
        return _COMPILE


_COMPILE = object()
_COLLECTED = object()
_ArrayImpl = jax._src.array.ArrayImpl   # the concrete type (naming it starts no backend: see tapegrad.distributed)
_SCALARS = (float, int, bool, complex)
_HostArray = _host_values.HostArray


class _Rented:
    """A kernel's NumPy evaluator for one set of input kinds, and the time spent on it so far."""

    __slots__ = ("run", "tree", "seconds", "budget")

    def __init__(self, run, tree, seconds, budget):
        self.run, self.tree, self.seconds, self.budget = run, tree, seconds, budget


def _input_kinds(leaves):
    kinds = []
    for x in leaves:
        t = type(x)
        if t is _ArrayImpl:
            kinds.append((x.shape, x.dtype, x.weak_type))
        elif t is np.ndarray or t is _HostArray:
            kinds.append((x.shape, x.dtype, False))
        elif t in _SCALARS:
            kinds.append(t)
        else:   # a tracer (the kernel is being traced into a program) or something NumPy must not see
            return None
    return tuple(kinds)


def _run_on_numpy(program, args, rent=True):
    """The kernel's outputs computed with NumPy, or _COMPILE when it should run compiled (rent=False: only
    when NumPy cannot run it)."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    kinds = _input_kinds(leaves)
    if kinds is None:
        return _COMPILE
    kinds = (tree, kinds)   # where the leaves sit matters too: (x, None, 0.5) is not (x, 0.5, None)
    rented = program.numpy.get(kinds)
    if rented is None:
        if not _numpy_allowed():
            return _COMPILE
        run, shapes = _numpy_evaluator(program, args, leaves, tree, kinds[1])
        budget = NUMPY_BUDGET_SECONDS
        if program.sync and run is not None:   # a whole plan: its compile costs more than a kernel's
            budget = PLAN_COMPILE_SECONDS + PLAN_COMPILE_SECONDS_PER_STEP * len(run.steps)
        rented = program.numpy[kinds] = _Rented(run, jax.tree_util.tree_structure(shapes), TRACE_SECONDS, budget)
    run = rented.run
    # (a whole program that draws rents like any other: its tier follows its history, the same in every run)
    if run is None or (run.draws if not rent   # (a draw's tier never depends on when a compile ends)
                       else run.seconds > DRAW_SECONDS if run.draws and not program.sync
                       else rented.seconds >= rented.budget):
        return _COMPILE
    try:
        outs = _host_values.keep(rented.run(*leaves), rented.run.out_avals)
    except Exception:   # an input NumPy cannot take: compile, and never try these kinds again
        rented.run = None
        return _COMPILE
    rented.seconds += rented.run.seconds
    _stats["numpy_runs"] += 1
    return jax.tree_util.tree_unflatten(rented.tree, outs)


def _numpy_evaluator(program, args, leaves, tree, kinds):
    """(_numpy_eval evaluator, output shapes) of the program on inputs of `kinds`: an instance of the
    program's symbolic trace when one holds for them (no tracing, see _shape_poly), else traced for them.
    A pending plan is assembled from its ops' kernel evaluators where they all have one (_plan_parts)."""
    try:
        return _evaluator(program, args, leaves, tree, kinds)
    except Exception:   # let jax.jit report whatever went wrong, with its own error
        return None, None


def _evaluator(program, args, leaves, tree, kinds):
    if type(program.key) is tuple and program.key[0] == "plan":
        assembled = _plan_parts.assemble(program.key[1], args[0], _forward_kernel)
        if assembled is not None:
            return assembled
    if type(program.key) is tuple and program.key[0] == "forward" and bool not in kinds and all(
            type(k) is not tuple or not k[2] for k in kinds):
        # the op's abstract evaluation traced it for these inputs (its Python booleans stay constants there,
        # its arrays are strong-typed: only then is the jaxpr the kernel's)
        made = _shape_poly.jaxpr(program.key[1:], tuple(
            type(a) if a is None or type(a) in _SCALARS else (a.shape, a.dtype) for a in args))
        if made is not None:
            run = _numpy_eval.compile_jaxpr(made[0], made[1])
            if run is not None:
                return run, made[2]
    if program.families is None:
        program.families = {}
    families = program.families.get(tree)
    if families is None:
        families = program.families[tree] = {}

    def trace(shapes):
        shapes = iter(shapes)
        specs = [jax.ShapeDtypeStruct(next(shapes), k[1], weak_type=k[2]) if type(k) is tuple else a
                 for a, k in zip(leaves, kinds)]
        return jax.make_jaxpr(program.fn, return_shape=True)(*jax.tree_util.tree_unflatten(tree, specs))
    found = _shape_poly.traced(families, kinds, trace)
    if found is not None:
        (closed, shapes), dims = found
        run = _numpy_eval.compile_jaxpr(closed, dims)
        if run is not None:
            return run, shapes
    _shape_poly.traces[0] += 1
    closed, shapes = jax.make_jaxpr(program.fn, return_shape=True)(*args)
    return _numpy_eval.compile_jaxpr(closed), shapes


def _forward_kernel(sid):
    from ._op_functions import forward_fn   # (it makes its kernels here: imported when first needed)
    return forward_fn(*SIGNATURES[sid])


def _numpy_allowed():
    """NumPy stands in for XLA only on a single CPU device (it would move data off an accelerator)."""
    allowed = NUMPY_KERNELS[0] = NUMPY_KERNELS[0] and jax.default_backend() == "cpu" and jax.local_device_count() == 1
    return allowed


_streaks = {}   # kind of whole program ("step", "plan", ...) -> (last Program, its shapes, calls in a row)


def _steady(key, p, shapes):
    """Whether `p` now has STEADY_STREAK calls with `shapes` in a row among the programs of its kind."""
    kind = key[0] if type(key) is tuple and key else None
    last = _streaks.get(kind)
    n = last[2] + 1 if last is not None and last[0] is p and last[1] == shapes else 1
    _streaks[kind] = (p, shapes, n)
    return n >= STEADY_STREAK


def _evicted():
    _stats["evictions"] += 1


_programs = LRU(MAX_PROGRAMS, MAX_PROGRAM_BYTES, _evicted)
_kernels = LRU(MAX_KERNELS, MAX_KERNEL_BYTES, _evicted)
_seen = LRU(MAX_SEEN, on_evict=_evicted)
_elsewhere = []   # bounded caches kept by other modules, cleared with these


def bounded_cache(limit=MAX_PROGRAMS):
    """A bounded LRU cache for programs kept outside this module, cleared by clear() with the rest."""
    cache = LRU(limit, on_evict=_evicted)
    _elsewhere.append(cache)
    return cache


def kernel(key, make):
    """The cached per-op kernel for `key`, built by make() -> pure function on first use."""
    k = _kernels.get(key)
    if k is None:
        k = _kernels.put(key, Program(make(), key=key))
    return k


def program(key):
    """The compiled program for a structure, or None (counts a hit when found)."""
    p = _programs.get(key)
    if p is not None:
        _stats["hits"] += 1
    return p


def seen_before(key, count=True):
    """Whether `key` was looked up before; records this sighting. A first sighting counts as a miss
    unless `count` is False (a lookup nested in another one that counts)."""
    if _seen.get(key) is not None:
        return True
    _seen.put(key, True)
    if count:
        _stats["misses"] += 1
    return False


def shapes_of(arrays):
    """The part of a program's inputs that jax.jit compiles for: each array's shape and dtype."""
    return tuple([(a.shape, a.dtype) for a in arrays])


def tape_steady(kind, key):
    """Whether the long tape `key` (run in chunks, see _chunks) came STEADY_STREAK times in a row among the
    tapes of its kind. A tape's chunks follow its streak, not their own: a loop's identical chunks come many
    times in a row inside one run, which says nothing about whether the tape will come back."""
    last = _streaks.get(kind)
    n = last[2] + 1 if last is not None and last[1] == key else 1
    _streaks[kind] = (None, key, n)
    return n >= STEADY_STREAK


def lookup(key, shapes, make, count=True, steady=None):
    """The program for structure `key` on inputs of `shapes`, or None: run it op by op this time.

    A structure is traced into one program when it comes back with given shapes: one-off structures and
    one-off shapes (the last short batch, a new sequence length) run op by op through the shared kernels,
    which on first sight cost no compile (see _numpy_eval). The program then runs on NumPy until its rent
    reaches its compile price (PLAN_COMPILE_SECONDS), or until it has come STEADY_STREAK times in a row,
    and on XLA from then on. make() -> (fn, layout) builds the program.
    `count=False` when the lookup is part of a larger one that counts its own miss.
    steady: for a chunk of a long tape that was seen before (see _chunks), its tape's verdict: the program
    is built at once, and bought when its tape is steady rather than by a streak of its own (a loop's
    identical chunks come many times in a row inside one run).
    """
    p = _programs.get(key)
    if p is None or shapes not in p.ready:
        if steady is None and not seen_before((key, shapes), count):
            return None
        if p is None:
            p = compile(key, *make(), first_sight=True)   # (the hit is counted below)
            p.numpy = {}
        p.ready.add(shapes)
    _stats["hits"] += 1
    p.shapes = shapes
    if shapes not in p.bought and (_steady(key, p, shapes) if steady is None else steady):
        p.bought.add(shapes)
    p.renting = shapes not in p.bought
    return p


def compile(key, fn, layout=None, first_sight=False):
    """Cache and return the Program for `fn`; `layout` describes its outputs to the caller;
    first_sight marks a compile taken at a miss."""
    if not first_sight:
        _stats["hits"] += 1
    p = Program(fn, sync=True, key=key)
    p.layout = layout
    return _programs.put(key, p)


def info():
    """Counters (hits, misses, compiles, compile_seconds, disk_loads, executions, evictions, numpy_runs)
    and cache sizes (entries, kernels, and cache_bytes: the resident memory their compiles added).
    disk_loads: programs loaded from the persistent cache of an earlier run (see _warm_start); numpy_runs: kernel calls evaluated with NumPy instead of XLA (see _numpy_eval);
    traces: functions traced to a jaxpr for output shapes or the NumPy tier (see _shape_poly)."""
    return dict(_stats, entries=len(_programs), kernels=len(_kernels), cache_bytes=_programs.bytes + _kernels.bytes,
                traces=_shape_poly.traces[0])


def clear():
    _programs.clear()
    _kernels.clear()
    _seen.clear()
    _streaks.clear()
    for cache in _elsewhere:
        cache.clear()
    _recompiles.forget()
    _shape_poly.traces[0] = 0
    for k in _stats:
        _stats[k] = 0.0 if k in _FLOAT_STATS else 0

