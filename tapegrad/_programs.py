"""Every XLA program tapegrad runs goes through here: bounded caches and counters that are JAX's own.

Two kinds of program:

* kernels: one op (or one node's backward) for given statics and dtype, shared by every structure that
  uses it (shapes go to jax.jit's own per-function cache);
* programs: a whole pending subgraph, backward or training step, keyed by its structure.

A structure is compiled only when it comes back with the same input shapes (`lookup`); until then it runs
op by op, through kernels that on first sight run on NumPy (`_numpy_rent`) rather than compile. Both
caches are bounded (least recently used first). Compiles and compile seconds are read from JAX's own
monitoring event (`_program_stats`), counted only while a tapegrad program is being called, so the
numbers are what XLA did, not what tapegrad believes it did.
"""
import jax

from . import _background, _faults, _host_values, _placement, _recompiles, _shape_poly
from ._lru import LRU
from ._numpy_rent import _COMPILE, NUMPY_KERNELS, _run_on_numpy
from ._program_stats import _FLOAT_STATS, MIN_COMPILE_BYTES, _local, _stats

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

# Renting is for structures whose future is unknown. One that comes back STEADY_STREAK times in a row
# (no other structure of its kind in between: a training loop over fixed shapes, truncated BPTT's
# chunks) is a steady loop, compiled then if its calls are dear enough on NumPy (_numpy_rent.STREAK_CALLS).
STEADY_STREAK = 3

profiler = None   # while a profile records: profiler(program, args) runs and times each call


def _wait(out):
    """Wait for one execution's outputs: they are ready (or failed, each carrying the error) together, so
    one of them tells (jax.block_until_ready flattens and waits on each, tens of microseconds a step)."""
    leaf = _first_array(out)
    if leaf is not None:
        try:
            leaf.block_until_ready()
        except AttributeError:   # a tracer: the program is being traced into another (nothing to wait for)
            pass


def _first_array(tree):
    if isinstance(tree, jax.Array):
        return tree
    items = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, (list, tuple)) else ()
    for item in items:
        leaf = _first_array(item)
        if leaf is not None:
            return leaf
    return None


class Program:
    """A jitted function whose every call is counted (one call is one XLA execution).

    A whole program (sync=True) is waited for before its outputs are handed out: XLA reports a failure
    (an allocation refused) only when the result is awaited, and state may be committed only once the
    program is known to have succeeded. Kernels are not waited for: a failure reaches the program or
    plan that reads their outputs, which waits.
    """

    __slots__ = ("fn", "jitted", "layout", "sync", "key", "compiles", "spreads", "numpy", "ready", "announce",
                 "bought", "shapes", "renting", "streak", "jobs", "bytes", "owner", "families", "assemble",
                 "__weakref__")

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
        self.streak = False   # whether it comes on a steady streak (see STREAK_CALLS): _numpy_rent asks
        self.jobs = None      # a whole program's compiles off the caller's thread, by input shapes
        self.bytes = 0        # resident memory its compiles added (see _lru)
        self.owner = None     # (cache, key) it is cached under
        self.families = None  # its NumPy tier's traces by input pattern (see _shape_poly)
        self.assemble = None  # args -> (NumPy evaluator, output shapes) or None: its NumPy tier built from
                              # the kernels its first sight ran, instead of a trace (a backward step: _numpy_step)

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
                    _faults.drop_jax_note(e)
                    raise
                self.spreads = True
                out = self.jitted(*spread)
            except Exception as e:   # (raised while the program was traced: by the user's code, or PyTorch's)
                _faults.drop_jax_note(e)
                raise
            if (self.sync and not defer) or wait:
                _wait(out)
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


_COLLECTED = object()


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


def cached_kernel(key):
    """The per-op kernel cached for `key`, or None (none is made)."""
    return _kernels.get(key)


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
    # (on a streak it is bought by its NumPy tier, which knows what a call there costs: see _numpy_rent)
    p.streak = _steady(key, p, shapes) if steady is None else steady
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
