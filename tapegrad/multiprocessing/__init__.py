"""tapegrad.multiprocessing: PyTorch's torch.multiprocessing, the standard `multiprocessing` module re-exported.

Tensors cross process boundaries by pickling (their values are copied; PyTorch's shared-memory
storages have no counterpart). JAX is not safe in a forked child once it has started, so start
processes with `get_context("spawn")` (or "forkserver") when the child uses tapegrad; each spawned
child imports tapegrad (and JAX) again, about a second or two.
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

from ._spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                     spawn, start_processes)

__all__ = list(_mp.__all__) + ["get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies",
                               "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                               "ProcessExitedException"]

_SHARING_STRATEGIES = {"file_system"}


def get_all_sharing_strategies():
    """The ways tensors can be shared: only by copying (pickling), reported as "file_system"."""
    return set(_SHARING_STRATEGIES)


def get_sharing_strategy():
    return "file_system"


def set_sharing_strategy(new_strategy):
    if new_strategy not in _SHARING_STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported by tapegrad: tensors are copied "
                         "between processes by pickling. Use 'file_system'.")
