"""Data parallelism over one host's devices with jax.sharding, shared by DataParallel and
DistributedDataParallel.

A mesh with one axis ('batch') over the devices; parameters and buffers are replicated over it and
inputs are split along their batch dimension. tapegrad's programs are `jax.jit` programs, which
take their inputs' shardings as given: the forward and backward compile as one SPMD program and
XLA inserts the all-reduce of the gradients (a sum over the batch shards) itself. Values computed
from replicated parameters stay replicated, so the optimizer's update and its state do too (`optim/_foreach.
full_on`); a single-device target meeting them is replicated by the program (`tapegrad/_placement.py`).
"""
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
    from ..._tensor_dtype_device import _recorded_move
    from ..._tensor import Tensor
    n = mesh.devices.size
    dim = dim % max(tensor.ndim, 1)
    sharding = split_along(mesh, dim) if tensor.ndim and tensor.shape[dim] % n == 0 else replicated(mesh)
    moved = Tensor._wrap(jax.device_put(tensor._value, sharding), tensor._inference)
    return _recorded_move(tensor, moved) if tensor.requires_grad else moved

