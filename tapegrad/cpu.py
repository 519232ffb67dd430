"""tapegrad.cpu (PyTorch's torch.cpu): the CPU device's module, with the deprecated `amp` namespace."""
import sys as _sys

from .amp._deprecated import cpu as amp  # noqa: F401

_sys.modules[__name__ + ".amp"] = amp   # `from tapegrad.cpu.amp import autocast` (cpu is a module, not a package)

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Wait for pending CPU work: a training step's program still running (and commit its results, or raise
    its error); other deferred values are computed when read, so nothing else is queued."""
    from . import _faults
    _faults.confirm()
