"""Compiles off the caller's thread.

When a whole program has earned its compile (its NumPy rent is spent, or its loop is steady), the caller
would wait for XLA: a second or more for a training step on a CPU. Instead the program is traced on the
caller's thread (tracing runs tapegrad's own Python) and handed here; XLA's compile, which releases the
GIL, runs on one worker thread while the caller goes on running the program on NumPy. The first call after
the compile has finished runs on XLA, whose call finds the executable the worker put in jax.jit's cache.

Compiles are serialised on one worker: two at once would only share the same cores. What a compile
reports (JAX's compile event) is kept with its job and accounted on the caller's thread when the job is
collected, so counters and recompile warnings read as if the caller had compiled.

It is off unless TAPEGRAD_BACKGROUND_COMPILE=1. Measured on 2 CPU cores (benchmarks, one process each,
off then on): manual batching's first epoch 775 -> 583 ms and generation's first call 3.5 -> 3.1 s gained,
but nanoGPT's 30 steps 3.4 -> 4.9 s, truncated BPTT's first pass 1.4 -> 1.7 s and manual batching's later
epochs 77 -> 96 ms lost: while a step compiles it runs on NumPy, several times slower than XLA, and the
compile and NumPy share the same two cores. Machines with cores to spare may gain; this one does not.

Which tier computes a call then depends on when a compile ends, and NumPy and XLA may differ in the last
bit of a float: so under `use_deterministic_algorithms(True)` compiles run on the caller's thread even when
it is on, and every run of a script computes the same bits. Programs that draw random numbers always do.
"""
import atexit
import os
import queue
import threading

from ._flags import are_deterministic_algorithms_enabled
from ._lru import resident_bytes

ENABLED = [os.environ.get("TAPEGRAD_BACKGROUND_COMPILE", "0") == "1"]


def enabled():
    return ENABLED[0] and not are_deterministic_algorithms_enabled()


class Job:
    __slots__ = ("finished", "error", "events", "bytes")

    def __init__(self):
        self.finished = threading.Event()
        self.error = None
        self.events = []   # what JAX reported while it ran: (listener, args), replayed by the caller
        self.bytes = 0     # resident memory the compile added (see _lru), charged by the caller

    @property
    def done(self):
        return self.finished.is_set()

    def wait(self):
        self.finished.wait()


class _Worker(threading.local):
    job = None   # on the worker's thread: the job being compiled


_worker_state = _Worker()
_queue = queue.SimpleQueue()
_thread = None
_lock = threading.Lock()


def current_job():
    """The job compiling on this thread (None on any other thread)."""
    return _worker_state.job


def drain():
    """Wait until every compile handed to the worker has finished."""
    job = _last[0]
    if job is not None:
        job.wait()


_last = [None]


def submit(compile_fn):
    """Run compile_fn() on the worker thread; returns its Job (done, error, events)."""
    global _thread
    job = _last[0] = Job()
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_work, name="tapegrad-compile", daemon=True)
            _thread.start()
            # a daemon thread stopped inside XLA at exit aborts the process: let its compile finish first
            atexit.register(drain)
    _queue.put((job, compile_fn))
    return job


def _work():
    while True:
        job, compile_fn = _queue.get()
        _worker_state.job = job
        before = resident_bytes()
        try:
            compile_fn()
        except BaseException as e:   # the caller's own call compiles again and reports it
            job.error = e
        finally:
            _worker_state.job = None
            release_scratch()
            job.bytes = resident_bytes() - before   # (the caller's own allocations meanwhile blur it)
            job.finished.set()


def release_scratch():
    """Hand the memory XLA freed after compiling back to the system. glibc's allocation arenas keep what
    was freed in them (the worker thread has an arena of its own): without this, each compile's scratch
    stays in the process's resident memory."""
    trim = _malloc_trim[0]
    if trim is None:
        try:
            import ctypes
            trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):   # not glibc: nothing to do
            trim = False
        _malloc_trim[0] = trim
    if trim:
        trim(0)


_malloc_trim = [None]
