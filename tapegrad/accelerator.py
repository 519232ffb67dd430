"""tapegrad.accelerator: PyTorch's torch.accelerator over JAX's devices.

The accelerator is the GPU when JAX sees one (device type 'cuda'), else a TPU ('tpu'), else none:
the CPU is never an accelerator, as in PyTorch.
"""
import functools

import jax

from .device import device as _device

_KINDS = (("gpu", "cuda"), ("tpu", "tpu"))


@functools.lru_cache(maxsize=None)
def _accelerator():
    """(tapegrad device type, its JAX devices), or None."""
    for platform, kind in _KINDS:
        try:
            found = jax.local_devices(backend=platform)
        except RuntimeError:
            continue
        if found:
            return kind, tuple(found)
    return None


def is_available():
    return _accelerator() is not None


def current_accelerator(check_available=False):
    found = _accelerator()
    return None if found is None else _device(found[0])


def device_count():
    found = _accelerator()
    return 0 if found is None else len(found[1])


def _require():
    found = _accelerator()
    if found is None:
        raise RuntimeError("Cannot access accelerator device when none is available. "
                           "Check torch.accelerator.is_available() first.")
    return found


def current_device_index():
    kind, _ = _require()
    if kind == "cuda":
        from . import cuda
        return cuda.current_device()
    return 0


def synchronize(device=None):
    kind, devices = _require()
    for array in jax.live_arrays():
        if set(array.devices()) & set(devices):
            array.block_until_ready()


def set_device_index(device):
    """Make `device` (an index, or a device of the accelerator's type) the current accelerator device."""
    kind, devices = _require()
    index = device if isinstance(device, int) else _device(device).index or 0
    if kind == "cuda":
        from . import cuda
        cuda.set_device(index)
    elif not 0 <= index < len(devices):
        raise RuntimeError(f"Invalid device index {index}: only {len(devices)} {kind} device(s) present.")


set_device_idx = set_device_index   # PyTorch's older name


class device_index:
    """Context manager: `device` (an index; None changes nothing) is the current accelerator device inside it."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            set_device_index(self.prev_idx)
