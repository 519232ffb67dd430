"""torch.get_num_threads & co.: PyTorch's thread-count API, recorded.

tapegrad's CPU work runs in XLA's thread pool, which XLA sizes once, when its CPU client starts (at import), to
the CPUs this process may run on; the NumPy tier runs on the calling thread. Neither can be resized later, so
the set_ functions check their argument as PyTorch does and record it, and the get_ functions return what was
set, else that pool's size (PyTorch's default is the number of physical cores, or OMP_NUM_THREADS). Setting a
count changes no computation: XLA_FLAGS or the process's CPU affinity (taskset) before the start do.
"""
import os

import numpy as np

from ._flags import no_arguments, one_argument, type_name

__all__ = ["get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
           "init_num_threads"]

_set = {"intra": None, "interop": None}
_INTEROP_SET_TWICE = ("Error: cannot set number of interop threads after parallel work has started or "
                      "set_num_interop_threads called")


def _pool_size():
    """The CPUs this process may run on: XLA's CPU thread pool has as many threads."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _count(value, name):
    """PyTorch's check of a thread count: a Python or NumPy int (not a bool), fitting a C int, positive."""
    if type(value) is bool or not isinstance(value, (int, np.integer)):
        raise RuntimeError(f"{name} expects an int, but got {type_name(value)}")
    value = int(value)
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if not -2 ** 31 <= value < 2 ** 31:
        raise ValueError("Overflow when unpacking long")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return value


def get_num_threads(*args, **kwargs):
    """get_num_threads() -> int: the count last given to set_num_threads, else the size of XLA's CPU thread pool
    (the CPUs this process may run on)."""
    no_arguments("get_num_threads", args, kwargs)
    return _set["intra"] or _pool_size()


def set_num_threads(*args, **kwargs):
    """set_num_threads(int): checked and recorded as PyTorch's; it does not resize XLA's thread pool, which is
    sized when tapegrad starts (see the module's docstring)."""
    _set["intra"] = _count(one_argument("set_num_threads", args, kwargs), "set_num_threads")


def get_num_interop_threads(*args, **kwargs):
    """get_num_interop_threads() -> int: the count given to set_num_interop_threads, else the size of XLA's CPU
    thread pool."""
    no_arguments("get_num_interop_threads", args, kwargs)
    return _set["interop"] or _pool_size()


def set_num_interop_threads(*args, **kwargs):
    """set_num_interop_threads(int): checked and recorded, once per process as in PyTorch (a second call raises);
    tapegrad runs no inter-op pool of its own, so nothing else changes."""
    value = _count(one_argument("set_num_interop_threads", args, kwargs), "set_num_interop_threads")
    if _set["interop"] is not None:
        raise RuntimeError(_INTEROP_SET_TWICE)
    _set["interop"] = value


def init_num_threads(*args, **kwargs):
    """init_num_threads() -> None: PyTorch propagates set_num_threads to a new thread; tapegrad's threads are
    XLA's, so there is nothing to do."""
    if args or kwargs:
        invoked = ", ".join(map(repr, args))
        if kwargs:
            invoked += ("; " if args else "") + "kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise TypeError("init_num_threads(): incompatible function arguments. The following argument types are "
                        f"supported:\n    1. () -> None\n\nInvoked with: {invoked}")
