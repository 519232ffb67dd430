"""Devices: PyTorch's names ('cpu', 'cuda', 'cuda:1') for JAX devices."""
import jax

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu"}
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in _JAX_PLATFORM:
            raise RuntimeError(f"Expected one of cpu, cuda, tpu device type at start of device string: {type}")
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


def device_of(array):
    """The tapegrad device of a jax.Array (CPU arrays print as 'cpu', GPU ones as 'cuda:N')."""
    d = next(iter(array.devices()))
    kind = _TORCH_TYPE.get(d.platform, d.platform)
    return _CPU if kind == "cpu" else device(kind, d.id)


_CPU = device("cpu")


def to_jax_device(dev):
    """The jax.Device for a tapegrad device, with PyTorch's error when it is missing."""
    dev = device(dev) if not isinstance(dev, device) else dev
    platform = _JAX_PLATFORM[dev.type]
    try:
        devices = jax.local_devices(backend=platform)   # this process's (several processes: tapegrad.distributed)
    except RuntimeError:
        raise RuntimeError(
            f"Torch not compiled with {dev.type.upper()} enabled: no JAX {platform} backend is available. "
            f"Install jax with {platform} support or use device='cpu'.") from None
    index = dev.index or 0
    owned = [d for d in devices if d.id == index]   # a GPU process of several names its GPU by JAX's global id
    if owned:
        return owned[0]
    if index >= len(devices):
        raise RuntimeError(f"Invalid device ordinal {index}: only {len(devices)} {dev.type} device(s) present")
    return devices[index]


def default_device():
    return jax.local_devices()[0]


def is_available(kind="gpu"):
    try:
        return len(jax.devices(kind)) > 0
    except RuntimeError:
        return False
