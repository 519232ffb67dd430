"""torch.cuda's streams and events over JAX. XLA orders a device's work itself and exposes no streams: a
Stream is the device's one queue (synchronize waits for its work, a `with stream(s)` block changes
nothing), and an Event marks a point by waiting for the work queued before it, so elapsed_time measures
what ran between two records. Without a GPU these raise what PyTorch's CPU build raises."""
import time

from ._cuda_devices import _gpu, _gpus, _require_gpu, synchronize
from ._user_frames import warn_user


class Stream:
    def __init__(self, device=None, priority=0, **kwargs):
        if not _gpus():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.device, self.priority = _gpu(device), priority

    def synchronize(self):
        synchronize(self.device)

    def query(self):
        return True   # (nothing is left running once a caller can ask: reads wait for their results)

    def wait_stream(self, stream):
        return None   # one queue per device: work is already ordered

    def wait_event(self, event):
        return None

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash(self.device)


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if not _gpus():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing, self._time = enable_timing, None

    def record(self, stream=None):
        (stream or current_stream()).synchronize()
        self._time = time.perf_counter()

    def synchronize(self):
        return None   # record() already waited

    def query(self):
        return self._time is not None

    def wait(self, stream=None):
        return None

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1e3


def current_stream(device=None):
    _require_gpu()
    return Stream(device)


default_stream = current_stream


class StreamContext:
    """`with torch.cuda.stream(s):` -- the work inside runs on the device's one queue, as all work does."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


_peak_floor = {}   # device -> (peak reported when stats were reset, bytes in use then)


def reset_peak_memory_stats(device=None):
    """JAX cannot reset its peak counter: remember it, and report peaks from what happens after."""
    target = _gpu(device)
    stats = target.memory_stats() or {}
    _peak_floor[target] = (int(stats.get("peak_bytes_in_use", 0)), int(stats.get("bytes_in_use", 0)))


def reset_max_memory_allocated(device=None):
    warn_user("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, which "
              "resets /all/ peak memory stats.", FutureWarning)
    reset_peak_memory_stats(device)


def max_memory_allocated(device=None):
    """The peak since the last reset: JAX's peak when it rose after the reset; otherwise the most in use at the
    reset or now (a lower bound: a rise and fall between two reads below the old peak is not seen)."""
    if not _gpus():
        return 0
    target = _gpu(device)
    stats = target.memory_stats() or {}
    peak, now = int(stats.get("peak_bytes_in_use", 0)), int(stats.get("bytes_in_use", 0))
    floor = _peak_floor.get(target)
    if floor is None or peak > floor[0]:
        return peak
    return max(floor[1], now)
