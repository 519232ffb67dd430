"""The 'meta' device: tensors with a shape and a dtype but no data, as PyTorch's meta tensors.

A meta tensor's storage holds a MetaArray. Ops on meta tensors run no kernel: their results are MetaArrays of
the shapes and dtypes the op's abstract evaluation gives (the same one every op records with), so a model
built on the meta device (`nn.Linear(..., device="meta")`, `model.to("meta")`) costs no memory, and its
parameters can be handed to `torch.func.functional_call` or allocated later with `Module.to_empty`.
Random fills of a meta tensor draw nothing. Autograd records its nodes (grad_fn, requires_grad), but a
backward through meta tensors is refused: they have no data to differentiate.
"""
import numpy as np

USED = [False]   # set once a meta tensor exists: only then does dispatch look for one

NO_DATA = "Cannot copy out of meta tensor; no data!"


class _MetaDevice:
    """Stands for a jax.Device where tapegrad asks one for the 'meta' device."""
    platform = "meta"
    id = None

    def __repr__(self):
        return "MetaDevice"


META = _MetaDevice()


class MetaArray:
    """A meta tensor's value: its shape and dtype."""

    __slots__ = ("shape", "dtype", "__weakref__")
    weak_type = False

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        USED[0] = True

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def devices(self):
        return {META}

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def __repr__(self):
        return f"MetaArray({self.shape}, {self.dtype})"


def among(values):
    return any(type(v) is MetaArray for v in values)


def outputs(avals):
    """Meta values for an op's output avals ((shape, dtype) pairs)."""
    return tuple(MetaArray(shape, dtype) for shape, dtype in avals)


def named(device):
    """Whether `device` (a name, a tapegrad device, or None for the default device) is the meta device."""
    if device is None:
        from ._creation import get_default_device
        device = get_default_device()
    return device is not None and str(device).split(":")[0] == "meta"


def check_devices(tensors):
    """PyTorch's check of an op mixing meta tensors with others: CPU scalars (0-d) go with any device; the
    device of the first other tensor is the expected one."""
    expected = None
    for t in tensors:
        dev = t.device
        if dev.type == "cpu" and t.ndim == 0:
            continue
        if expected is None:
            expected = dev
        elif dev != expected:
            raise RuntimeError(f"Tensor on device {dev} is not on the expected device {expected}! Move the "
                               "tensors to one device first, e.g. with .to(other.device).")


def is_meta(t):
    return type(t._storage._raw) is MetaArray
