"""Tensor.pin_memory / is_pinned: page-locked host memory is the accelerator's staging area in PyTorch.

JAX stages host-to-device copies itself, so a pinned tensor is a copy of a CPU tensor remembered as
pinned (its storage, so its views are pinned too); as in PyTorch, pinning needs an accelerator and a
CPU tensor.
"""
import weakref

from ._tensor import Tensor
from ._user_frames import warn_user

PINNED = weakref.WeakSet()   # storages of pinned tensors

_DEVICE_ARGUMENT = "The argument 'device' of Tensor.{}() is deprecated. Please do not pass this argument."


def pin_memory(self, device=None):
    from . import accelerator
    if device is not None:
        warn_user(_DEVICE_ARGUMENT.format("pin_memory"), DeprecationWarning)
        if str(device).split(":")[0] == "cpu":
            raise RuntimeError("CPU device type not an accelerator.")
    if not accelerator.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available. Pinned memory stages copies "
                           "to an accelerator; on a CPU-only machine leave the tensor as it is.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    out = self.clone()
    PINNED.add(out._storage)
    return out


def is_pinned(self, device=None):
    if device is not None:
        warn_user(_DEVICE_ARGUMENT.format("is_pinned"), DeprecationWarning)
    return self._storage in PINNED


Tensor.pin_memory = pin_memory
Tensor.is_pinned = is_pinned
