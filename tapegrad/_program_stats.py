"""The counters of every program tapegrad runs (`_stats`, read by `_programs.info`), and the listeners that
read compiles, compile seconds and disk loads off JAX's own monitoring events, charging the memory each
compile adds to its program's cache entry (see _lru)."""
import threading

from jax import monitoring

from . import _background, _recompiles
from ._lru import resident_bytes

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
