"""Data parallelism over one host's devices with jax.sharding, shared by DataParallel and
DistributedDataParallel.

A mesh with one axis ('batch') over the devices; parameters and buffers are replicated over it and
inputs are split along their batch dimension. tapegrad's programs are `jax.jit` programs, which
take their inputs' shardings as given: the forward and backward compile as one SPMD program and
XLA inserts the all-reduce of the gradients (a sum over the batch shards) itself. Values computed
from replicated parameters stay replicated, so the optimizer's update and its state do too.
"""
import weakref

import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "batch"


def local_devices(platform, device_ids=None):
    """This host's devices of `platform` ('cpu', 'gpu', 'tpu'), or those at `device_ids` among them."""
    devices = jax.local_devices(backend=platform)
    if device_ids is None:
        return list(devices)
    ids = [getattr(d, "index", d) if not isinstance(d, int) else d for d in device_ids]
    for i in ids:
        if not 0 <= (i or 0) < len(devices):
            raise RuntimeError(f"Invalid device ordinal {i}: only {len(devices)} {platform} device(s) present. "
                               "Pass device_ids below the number of local devices.")
    return [devices[i or 0] for i in ids]


def batch_mesh(devices):
    return Mesh(np.array(devices), (AXIS,))


def replicated(mesh):
    return NamedSharding(mesh, PartitionSpec())


def split_along(mesh, dim):
    """Dimension `dim` split over the mesh's devices, the others whole on each device."""
    return NamedSharding(mesh, PartitionSpec(*([None] * dim), AXIS))


def place_state(tensor, sharding, compute=False):
    """Rewrite a parameter's or buffer's value with `sharding` in place (same Tensor, same version):
    moving data does not change it, as PyTorch's module.to keeps the Parameter objects. A pending
    value (the last step's update) is left to be computed where its inputs live, unless `compute`."""
    value = tensor._value if compute and tensor._view is None else tensor._peek()
    if tensor._view is None and hasattr(value, "sharding") and value.sharding != sharding:
        tensor._storage._raw = jax.device_put(value, sharding)
    if tensor.grad is not None:
        place_state(tensor.grad, sharding, compute)


def shard_batch(tensor, mesh, dim):
    """`tensor` with its dimension `dim` split over the mesh (replicated when it does not divide evenly,
    which changes only the speed). Differentiable: gradients flow back through the move."""
    from ..._methods import _recorded_move
    from ..._tensor import Tensor
    n = mesh.devices.size
    dim = dim % max(tensor.ndim, 1)
    sharding = split_along(mesh, dim) if tensor.ndim and tensor.shape[dim] % n == 0 else replicated(mesh)
    moved = Tensor._wrap(jax.device_put(tensor._value, sharding), tensor._inference)
    return _recorded_move(tensor, moved) if tensor.requires_grad else moved


def placement_like(tensor, shape):
    """Where a new array of `shape` made for `tensor` (its optimizer state) should live: with the
    tensor's own sharding when its value is at hand and of that shape, replicated over its devices
    when it spans several (a step count), else None (the tensor's device)."""
    v = tensor._peek()
    sharding = getattr(v, "sharding", None)
    if sharding is None or len(sharding.device_set) == 1:
        return None
    if tuple(v.shape) == tuple(shape):
        return sharding
    mesh = sharding.mesh if isinstance(sharding, NamedSharding) else batch_mesh(list(sharding.device_set))
    return replicated(mesh)


def common_placement(args, error):
    """Where a program's arguments committed to one device go when others span several devices (JAX
    refused the call with `error`; re-raised when that is not why). Every JAX CPU device is PyTorch's
    one 'cpu', so a target made on the CPU meets a batch split over the CPU devices (PyTorch's
    DataParallel gathers its output on the target's device instead): it is replicated over them."""
    if "incompatible devices" not in str(error):
        raise error
    leaves = [a for a in jax.tree.leaves(args) if _concrete(a)]
    if not leaves:
        raise error
    widest = max((a.sharding for a in leaves), key=lambda s: len(s.device_set))
    if not isinstance(widest, NamedSharding) or len({d.platform for a in leaves for d in a.devices()}) > 1:
        raise error
    return replicated(widest.mesh)


_replicas = {}   # id(array) -> (weak reference to it, its replicated copy): a target reused every step


def spread(args, sharding):
    """`args` with each array committed to fewer devices than `sharding` spans replicated over them."""
    wide = len(sharding.device_set)

    def move(a):
        if not _concrete(a) or len(a.sharding.device_set) >= wide:
            return a
        ref, copy = _replicas.get(id(a), (None, None))
        if ref is None or ref() is not a or copy.sharding != sharding:
            if len(_replicas) > 256:
                _replicas.clear()
            copy = jax.device_put(a, sharding)
            _replicas[id(a)] = (weakref.ref(a), copy)
        return copy
    return jax.tree.map(move, args)


def _concrete(a):
    """A jax.Array with data (a tracer, inside tapegrad.compile's trace, has no sharding to read)."""
    return isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer)
