"""tapegrad.futures: PyTorch's torch.futures (Future, collect_all, wait_all) over threading.

A Future holds the result of asynchronous work (an RPC, a callback chain). Callbacks run in the thread
that completes the future, or at once when it is already complete, as in PyTorch.
"""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value (or an exception) that arrives later: wait(), then(), add_done_callback(), set_result()."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._callbacks = []
        self._value = None
        self._error = None

    def __class_getitem__(cls, item):   # Future[int] in annotations, as torch.futures.Future[T]
        return cls

    def __repr__(self):
        return f"<tapegrad.Future object at {hex(id(self))}>"

    def done(self):
        """True once the future holds a value or an exception."""
        return self._done.is_set()

    def wait(self, timeout=None):
        """Block until complete; the value, or the exception raised again. `timeout` (seconds) is
        tapegrad's: past it, a RuntimeError names the timeout."""
        if not self._done.wait(timeout):
            raise RuntimeError(f"Future timed out after {timeout} s waiting for its value. Wait longer, or check "
                               "that the work producing it is still running.")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (its exception raised again); call after wait() or in a callback."""
        if not self.done():
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: Future.value() called on a future that is not "
                               "complete yet. Call wait() first, or read the value inside a then() callback.")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def then(self, callback):
        """A new future completed with callback(self) once this one completes (or with the callback's error)."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as exc:   # PyTorch marks the chained future with a RuntimeError naming it
                error = RuntimeError(f"Got the following error when running the callback: {type(exc).__name__}: "
                                     f"{exc}")
                error.__cause__ = exc
                out.set_exception(error)
        self.add_done_callback(run)
        return out

    def add_done_callback(self, callback):
        """Run callback(self) when complete (now, if it already is); its return value is ignored."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def _complete(self, value, error):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(self)
            except Exception:   # a failing done-callback must not stop the others (PyTorch logs and goes on)
                pass


def collect_all(futures):
    """A future completed with the list of `futures` once all are complete (with the first error, if any)."""
    futures = list(futures)
    out = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            error = next((f._error for f in futures if f._error is not None), None)
            if error is not None:
                out.set_exception(error)
            else:
                out.set_result(futures)
    for fut in futures:
        fut.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Wait for all `futures`; their values in order (the first error raised again)."""
    return [fut.wait() for fut in collect_all(futures).wait()]
