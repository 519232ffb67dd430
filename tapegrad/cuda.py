"""tapegrad.cuda: PyTorch's torch.cuda over JAX's GPU devices.

Without a GPU that JAX can see, the functions answer as PyTorch's CPU build does: is_available() is
False, device_count() and the memory counters are 0, empty_cache() and the seeding functions do
nothing, and the functions that need a device raise AssertionError("Torch not compiled with CUDA enabled").

tapegrad has one random generator for every device (random draws are JAX keys, not per-device
states), so with a GPU present `cuda.manual_seed` seeds that generator, as `tapegrad.manual_seed` does.
XLA frees device memory when arrays die, so `empty_cache()` has nothing to release.
"""
from . import random as _random
from ._cuda_devices import (  # noqa: F401
    _current, _gpu, _gpus, _index, _require_gpu, empty_cache, memory_allocated, memory_reserved, synchronize)
from ._legacy import CUDA_CLASSES

globals().update(CUDA_CLASSES)   # tapegrad.cuda.FloatTensor ...


def is_available():
    return bool(_gpus())


def is_initialized():
    return bool(_gpus())


def device_count():
    return len(_gpus())


def current_device():
    _require_gpu()
    return _current[0]


def set_device(device):
    index = _index(device)
    if index >= 0:
        _gpu(index)
        _current[0] = index


class device:
    """Context manager that makes `device` the current cuda device."""

    def __init__(self, device):
        self.index = _index(device)
        self._previous = None

    def __enter__(self):
        self._previous = _current[0]
        set_device(self.index)

    def __exit__(self, *exc):
        _current[0] = self._previous
        return False


def get_device_name(device=None):
    return _gpu(device).device_kind


def get_device_capability(device=None):
    capability = getattr(_gpu(device), "compute_capability", None)
    if capability is None:
        raise RuntimeError("JAX does not report this GPU's compute capability.")
    major, minor = str(capability).split(".")
    return int(major), int(minor)


def is_bf16_supported(including_emulation=True):
    return bool(_gpus())


def manual_seed(seed):
    if _gpus():
        _random.manual_seed(seed)


manual_seed_all = manual_seed


def seed():
    if _gpus():
        _random.seed()


seed_all = seed


def initial_seed():
    _require_gpu()
    return _random.initial_seed()


from .amp._deprecated import cuda as amp  # noqa: E402,F401  (torch.cuda.amp, deprecated in PyTorch)
from . import _nccl as nccl  # noqa: E402  (torch.cuda.nccl: no NCCL of tapegrad's own)
from ._cuda_streams import (  # noqa: E402,F401
    Event, Stream, StreamContext, current_stream, default_stream, max_memory_allocated, reset_max_memory_allocated,
    reset_peak_memory_stats, stream)
from . import _cuda_memory as memory  # noqa: E402  (torch.cuda.memory)
import sys as _sys  # noqa: E402

# `from tapegrad.cuda.amp import GradScaler` imports them by name: cuda is a module, not a package
_sys.modules.update({__name__ + ".amp": amp, __name__ + ".nccl": nccl, __name__ + ".memory": memory})
