"""fully_shard: parameters, gradients and optimizer state split along dim 0 over this process's devices.

Each parameter whose first dimension divides evenly among the devices becomes a NamedSharding over a
one-axis mesh (the others are replicated); XLA gathers what each program needs, so a module computes
as before while each device holds its share. Optimizer state made for a sharded parameter is sharded
alike (`optim._foreach.full_on`), and inputs made on one device are replicated into the program
(`_placement`). `memory_per_device` reports the bytes each device holds for a module (and optimizer).
The mesh is the process's own devices: across processes, combine it with DistributedDataParallel's
gradient averaging rather than one global mesh (tapegrad's tensors are local to their process).

As PyTorch's FSDP2, the module's class becomes `FSDP<Class>` (a subclass of FSDPModule and of its class);
`mp_policy` runs its forward with parameters cast to `param_dtype`. A DeviceMesh (`init_device_mesh`) may
stand for the mesh: on a mesh whose parameters are already tensor-parallel (`parallelize_module` over
`mesh["tp"]`), sharding over `mesh["dp"]` splits dim 0 over that dimension as well.
"""
from dataclasses import dataclass

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._mixed_precision import cast_floats, run_cast


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """param_dtype: forward and backward in this dtype; output_dtype: outputs cast to it; cast_forward_inputs:
    floating inputs cast to param_dtype; reduce_dtype: stored (gradients are summed inside the program)."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (PyTorch's default)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Accepted and stored: shards stay on their devices."""
    pin_memory: bool = True


class FSDPModule:
    """The class a fully_shard'ed module gains (PyTorch's FSDP2): `FSDP<Class>(FSDPModule, Class)`.

    Gathering and resharding are XLA's, inside each compiled program, so unshard/reshard and the prefetch
    and communication settings are accepted and change nothing."""

    def forward(self, *args, **kwargs):
        policy = self.__dict__.get("_fsdp_mp_policy") or MixedPrecisionPolicy()
        if policy.cast_forward_inputs and policy.param_dtype is not None:
            args, kwargs = cast_floats((args, kwargs), policy.param_dtype)
        base = super(FSDPModule, self).forward
        out = run_cast(self, lambda: base(*args, **kwargs), policy.param_dtype,
                       lambda m: isinstance(m, FSDPModule))
        return cast_floats(out, policy.output_dtype)

    def reshard(self):
        pass

    def unshard(self, async_op=False):
        return None

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        self._fsdp_requires_gradient_sync = requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        self._fsdp_reshard_after_forward = reshard_after_forward

    def set_reshard_after_backward(self, reshard_after_backward, *, recurse=True):
        self._fsdp_reshard_after_backward = reshard_after_backward

    def set_is_last_backward(self, is_last_backward):
        self._fsdp_is_last_backward = is_last_backward

    def set_modules_to_forward_prefetch(self, modules):
        self._fsdp_forward_prefetch = list(modules)

    def set_modules_to_backward_prefetch(self, modules):
        self._fsdp_backward_prefetch = list(modules)


_fsdp_classes = {}


def _fsdp_class(cls):
    """FSDP<cls>: one class per module class, as PyTorch makes."""
    if issubclass(cls, FSDPModule):
        return cls
    if cls not in _fsdp_classes:
        _fsdp_classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {"__module__": cls.__module__})
    return _fsdp_classes[cls]


def _default_mesh():
    return Mesh(np.array(jax.local_devices()), ("shard",))


def _sharding(mesh, shape):
    axis = mesh.axis_names[0]
    split = len(shape) > 0 and shape[0] % mesh.devices.size == 0
    return NamedSharding(mesh, PartitionSpec(axis) if split else PartitionSpec())


def _over_device_mesh(value, device_mesh):
    """value's sharding with dim 0 also split over device_mesh's dimensions (a tensor-parallel parameter keeps
    its other splits); replicated over them when dim 0 does not divide evenly."""
    jmesh = device_mesh.jax_mesh
    old = value.sharding
    spec = list(old.spec) if isinstance(old, NamedSharding) and old.mesh == jmesh else []
    spec += [None] * (value.ndim - len(spec))
    if not value.ndim:
        return NamedSharding(jmesh, PartitionSpec())
    first = spec[0] if isinstance(spec[0], tuple) else (() if spec[0] is None else (spec[0],))
    axes = tuple(device_mesh._dims) + first
    if value.shape[0] % int(np.prod([jmesh.shape[a] for a in axes])) == 0:
        spec[0] = axes if len(axes) > 1 else axes[0]
    return NamedSharding(jmesh, PartitionSpec(*spec))


def shard_states(module, mesh, split=True):
    """Place module's parameters split along dim 0 (replicated if not split) and its buffers replicated."""
    from ..device_mesh import DeviceMesh
    for p in module.parameters():
        if isinstance(mesh, DeviceMesh):
            sharding = _over_device_mesh(p._value, mesh) if split else NamedSharding(mesh.jax_mesh, PartitionSpec())
        else:
            sharding = _sharding(mesh, tuple(p.shape)) if split else NamedSharding(mesh, PartitionSpec())
        p._set_value(jax.device_put(p._value, sharding))
    replicated = NamedSharding(mesh.jax_mesh if isinstance(mesh, DeviceMesh) else mesh, PartitionSpec())
    for b in module.buffers():
        b._set_value(jax.device_put(b._value, replicated))


def check_mesh(mesh, name):
    from ..device_mesh import DeviceMesh
    mesh = mesh if mesh is not None else _default_mesh()
    if isinstance(mesh, DeviceMesh):
        return mesh
    if not isinstance(mesh, Mesh) or len(mesh.axis_names) != 1:
        raise ValueError(f"{name}(mesh=...) takes a DeviceMesh or a one-axis jax.sharding.Mesh: e.g. "
                         "init_device_mesh('cpu', (n,)) or Mesh(np.array(jax.local_devices()), ('shard',)).")
    return mesh


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(), ignored_params=None):
    """Shard the module's parameters along dim 0 (buffers replicated) over mesh (default: all local devices);
    the module becomes an FSDPModule. Returns the module."""
    from ...nn.modules.module import Module
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard expects an nn.Module, got {type(module).__name__}: pass the model (or a "
                        f"submodule) to shard.")
    if shard_placement_fn is not None:
        raise ValueError("fully_shard(shard_placement_fn=...) is not supported by tapegrad: parameters are split "
                         "along dim 0. Leave it unset.")
    mesh = check_mesh(mesh, "fully_shard")
    shard_states(module, mesh)
    _as_dtensors(module, mesh)
    module.__class__ = _fsdp_class(type(module))
    module.__dict__.update(_fsdp_mp_policy=mp_policy, _fsdp_offload_policy=offload_policy,
                           _fsdp_reshard_after_forward=reshard_after_forward, _fsdp_mesh=mesh)
    return module


def _as_dtensors(module, mesh):
    """Parameters become DTensors, Shard(0) over the mesh (PyTorch's FSDP2 parameters are); a tensor-parallel
    parameter on the same devices gains the mesh's dimensions in front of its own."""
    from ..device_mesh import DeviceMesh
    from ..tensor._dtensor import DTensor, DTensorParameter
    from ..tensor.placement_types import Shard
    if not isinstance(mesh, DeviceMesh):
        mesh = DeviceMesh(next(iter(mesh.devices.flat)).platform, _jax_mesh=mesh, _dims=mesh.axis_names)
    for p in module.parameters():
        own = p._device_mesh if isinstance(p, DTensor) else None
        if own is not None and own.jax_mesh == mesh.jax_mesh and not set(own._dims) & set(mesh._dims):
            p._device_mesh = DeviceMesh(mesh.device_type, _jax_mesh=mesh.jax_mesh, _dims=mesh._dims + own._dims)
            p._placements = (Shard(0),) * mesh.ndim + p._placements
        elif own is None and p.ndim:
            p.__class__ = DTensorParameter
            p._device_mesh, p._placements = mesh, (Shard(0),) * mesh.ndim


def _tensors(module, optimizer):
    """Every tensor the module and optimizer hold: parameters, buffers, gradients, optimizer state."""
    from ..._tensor import Tensor
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
