"""Devices: PyTorch's names ('cpu', 'cuda', 'cuda:1') for JAX devices."""
import re

import jax

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu"}
# PyTorch's device types, in the order its parser lists them. A device of any of them can be named, as in
# PyTorch; placing a tensor on one without a JAX platform fails there (to_jax_device).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}
# c10::Device's grammar: a type of letters and underscores, then optionally ':' and an index without leading zeros
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")


class device:
    __slots__ = ("type", "index", "_previous")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):   # an index of the current accelerator, as PyTorch's
            if not is_available("gpu"):
                raise RuntimeError("Cannot access accelerator device when none is available. Pass "
                                   "device='cpu', or use an index only where torch.cuda.is_available().")
            type, index = "cuda", type
        elif isinstance(type, str):
            match = _DEVICE_STRING.fullmatch(type)
            if match is None:
                raise RuntimeError(f"Invalid device string: '{type}'. Name a device as 'cpu', 'cuda' or 'cuda:1'.")
            if match.group(2) is not None and index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: "
                                   f"{type}")
            type, idx = match.groups()
            index = index if idx is None else int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        if type not in _JAX_PLATFORM and type not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                               f"{type}")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        # As PyTorch's: a device never equals a string (compare with torch.device("cpu") or .type).
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    # `with torch.device('cuda'):` makes it the default device of the creation functions, as PyTorch's.
    def __enter__(self):
        from ._creation import get_default_device, set_default_device
        self._previous = get_default_device()
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        from ._creation import set_default_device
        set_default_device(self._previous)


# While tapegrad.compile traces a call: the device of its inputs, where the traced values will live
# (a tracer has no device of its own, and `zeros_like(x)` or `x.to(x.device)` must not break the trace).
TRACED_ON = [None]


def device_of(array):
    """The tapegrad device of a jax.Array (CPU arrays print as 'cpu', GPU ones as 'cuda:N')."""
    if isinstance(array, jax.core.Tracer):
        if TRACED_ON[0] is not None:
            return TRACED_ON[0]
        with jax.ensure_compile_time_eval():   # the default device, even inside another trace
            return device_of(jax.numpy.zeros(()))
    d = next(iter(array.devices()))
    kind = _TORCH_TYPE.get(d.platform, d.platform)
    return _CPU if kind == "cpu" else device(kind, d.id)


_CPU = device("cpu")

# Set once a tensor is placed on a GPU or TPU: only then can an op mix devices (every JAX CPU device is
# PyTorch's 'cpu'), so CPU-only programs pay nothing for the check in dispatch.
MIXED_DEVICES = [False]


def to_jax_device(dev):
    """The jax.Device for a tapegrad device, with PyTorch's error when it is missing."""
    dev = device(dev) if not isinstance(dev, device) else dev
    if dev.type == "meta":   # (no data, no JAX device: see _meta)
        from ._meta import META
        return META
    platform = _JAX_PLATFORM.get(dev.type)
    if platform is None:
        raise RuntimeError(f"tapegrad is not linked with support for {dev.type} devices: it places tensors on JAX's "
                           "devices, 'cpu', 'cuda' (a GPU) and 'tpu'. Use one of those.")
    if dev.type == "cuda":
        from .cuda import _require_gpu   # PyTorch's CPU build: AssertionError "Torch not compiled with CUDA enabled"
        _require_gpu()
    try:
        devices = jax.local_devices(backend=platform)   # this process's (several processes: tapegrad.distributed)
    except RuntimeError:
        raise RuntimeError(
            f"Torch not compiled with {dev.type.upper()} enabled: no JAX {platform} backend is available. "
            f"Install jax with {platform} support or use device='cpu'.") from None
    index = dev.index or 0
    owned = [d for d in devices if d.id == index]   # a GPU process of several names its GPU by JAX's global id
    if not owned and index >= len(devices):
        raise RuntimeError(f"Invalid device ordinal {index}: only {len(devices)} {dev.type} device(s) present")
    if platform != "cpu":
        MIXED_DEVICES[0] = True   # (also for a GPU named by its id: the check must be on whenever one is used)
    return owned[0] if owned else devices[index]


def default_device():
    return jax.local_devices()[0]


def is_available(kind="gpu"):
    try:
        return len(jax.devices(kind)) > 0
    except RuntimeError:
        return False


def _device_error(a, b):
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {a} and {b}! "
        "Move them to one device first, e.g. with .to(other.device).")


def check_same_device(tensors):
    """PyTorch's rule: an op's tensors share one device; a 0-dim CPU tensor may join any (it is a scalar)."""
    first = None
    for t in tensors:
        d = t.device
        if d.type == "cpu" and t.ndim == 0:
            continue
        if first is None:
            first = d
        elif d != first:
            raise _device_error(*sorted((str(first), str(d))))
