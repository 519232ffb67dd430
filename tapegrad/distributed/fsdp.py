"""fully_shard: parameters, gradients and optimizer state split along dim 0 over this process's devices.

Each parameter whose first dimension divides evenly among the devices becomes a NamedSharding over a
one-axis mesh (the others are replicated); XLA gathers what each program needs, so a module computes
as before while each device holds its share. Optimizer state made for a sharded parameter is sharded
alike (`optim._foreach.full_on`), and inputs made on one device are replicated into the program
(`_placement`). `memory_per_device` reports the bytes each device holds for a module (and optimizer).
The mesh is the process's own devices: across processes, combine it with DistributedDataParallel's
gradient averaging rather than one global mesh (tapegrad's tensors are local to their process).
"""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def _default_mesh():
    return Mesh(np.array(jax.local_devices()), ("shard",))


def _sharding(mesh, shape):
    axis = mesh.axis_names[0]
    split = len(shape) > 0 and shape[0] % mesh.devices.size == 0
    return NamedSharding(mesh, PartitionSpec(axis) if split else PartitionSpec())


def fully_shard(module, *, mesh=None, reshard_after_forward=True):
    """Shard the module's parameters along dim 0 (buffers replicated) over mesh (default: all local devices)."""
    from ..nn.modules.module import Module
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard expects an nn.Module, got {type(module).__name__}: pass the model (or a "
                        f"submodule) to shard.")
    mesh = mesh if mesh is not None else _default_mesh()
    if not isinstance(mesh, Mesh) or len(mesh.axis_names) != 1:
        raise ValueError("fully_shard(mesh=...) takes a one-axis jax.sharding.Mesh: e.g. "
                         "Mesh(np.array(jax.local_devices()), ('shard',)).")
    for p in module.parameters():
        p._set_value(jax.device_put(p._value, _sharding(mesh, tuple(p.shape))))
    for b in module.buffers():
        b._set_value(jax.device_put(b._value, NamedSharding(mesh, PartitionSpec())))
    return module


def _tensors(module, optimizer):
    """Every tensor the module and optimizer hold: parameters, buffers, gradients, optimizer state."""
    from .._tensor import Tensor
    out = list(module.parameters()) + list(module.buffers())
    out += [p.grad for p in module.parameters() if p.grad is not None]
    if optimizer is not None:
        for state in optimizer.state.values():
            out += [v for v in state.values() if isinstance(v, Tensor)]
    return out


def memory_per_device(module, optimizer=None):
    """{device name: bytes} that the module's parameters, buffers, gradients and the optimizer's state hold."""
    used = {}
    seen = set()
    for t in _tensors(module, optimizer):
        value = t._value
        if id(value) in seen:
            continue
        seen.add(id(value))
        for shard in value.addressable_shards:
            name = f"{shard.device.platform}:{shard.device.id}"
            used[name] = used.get(name, 0) + shard.data.nbytes
    return used
