"""The GPUs JAX sees, by PyTorch's device index, and their memory counters: what tapegrad.cuda and its
streams (`_cuda_streams`) both build on, apart so that neither imports the other's module to reach them."""
import functools

import jax

_current = [0]   # the index set_device chose


@functools.lru_cache(maxsize=None)
def _gpus():
    try:
        return tuple(jax.local_devices(backend="gpu"))   # this process's, as CUDA_VISIBLE_DEVICES
    except RuntimeError:
        return ()


def _require_gpu():
    if not _gpus():
        raise AssertionError("Torch not compiled with CUDA enabled: JAX sees no GPU. Install jax with CUDA "
                             "support (pip install 'jax[cuda12]'), or run on the CPU: "
                             "device = 'cuda' if torch.cuda.is_available() else 'cpu'.")
    return _gpus()


def _index(device):
    from .device import device as device_cls
    if device is None:
        return _current[0]
    if isinstance(device, int):
        return device
    d = device_cls(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return _current[0] if d.index is None else d.index


def _gpu(device):
    gpus = _require_gpu()
    index = _index(device)
    if not 0 <= index < len(gpus):
        raise RuntimeError(f"Invalid device ordinal {index}: only {len(gpus)} cuda device(s) present. "
                           "Pass an index below torch.cuda.device_count().")
    return gpus[index]


def synchronize(device=None):
    """Wait for every computation on the device (tapegrad's pending ones are started when read)."""
    from . import _faults
    _faults.confirm()   # a training step's program: its results committed, or its error raised
    target = _gpu(device)
    for array in jax.live_arrays():
        if target in array.devices():
            array.block_until_ready()


def empty_cache():
    return None


def _memory(key, device):
    if not _gpus():
        return 0
    stats = _gpu(device).memory_stats() or {}
    return int(stats.get(key, 0))


def memory_allocated(device=None):
    return _memory("bytes_in_use", device)


def memory_reserved(device=None):
    return _memory("bytes_reserved", device)
