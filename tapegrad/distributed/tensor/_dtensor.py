"""DTensor: a tapegrad Tensor whose storage is a jax.Array sharded over a DeviceMesh by its placements.

The process drives every device of the mesh, so it holds every shard: a DTensor has the global shape,
and `to_local()` is that same data as a plain tensor (still spread over the devices), not one rank's
piece. Computing with DTensors is computing with their arrays: XLA partitions each program from its
inputs' shardings and inserts the communication PyTorch's sharding propagation would. Results of ops are
plain tensors whose arrays carry the sharding XLA chose. Moves between placements (`redistribute`,
`from_local`, `full_tensor`) are recorded copies (ToCopyBackward0) of the moved array, so gradients flow.
"""
import jax
from jax.sharding import NamedSharding, PartitionSpec

from ..._storage import Storage
from ..._tensor import Tensor
from ..device_mesh import DeviceMesh
from .placement_types import Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module"]


def _spec(mesh, placements, shape):
    """The PartitionSpec of a tensor of `shape` placed by `placements` over the mesh's dimensions. A split
    that does not divide evenly is stored replicated along that mesh dimension (only memory differs)."""
    axes = [[] for _ in shape]
    for name, placement in zip(mesh._dims, placements):
        if isinstance(placement, Shard):
            dim = placement.dim % len(shape)
            parts = mesh._jax_mesh.shape[name] * _product(mesh, axes[dim])
            if shape[dim] % parts == 0:
                axes[dim].append(name)
    return PartitionSpec(*[tuple(a) if len(a) > 1 else a[0] if a else None for a in axes])


def _product(mesh, names):
    out = 1
    for n in names:
        out *= mesh._jax_mesh.shape[n]
    return out


def _sharding(mesh, placements, shape):
    return NamedSharding(mesh._jax_mesh, _spec(mesh, placements, shape))


def _normalize(mesh, placements, ndim):
    if mesh is None:
        from ..device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (len(jax.local_devices(backend="cpu")),))
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"device_mesh must be a DeviceMesh (from init_device_mesh), got {type(mesh).__name__}.")
    placements = tuple(placements) if placements is not None else (Replicate(),) * mesh.ndim
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
    out = []
    for i, p in enumerate(placements):
        if not isinstance(p, Placement):
            raise RuntimeError(f"Trying to distribute tensor with unsupported placements {p} on device mesh "
                               f"dimension {i}! Use Shard(dim), Replicate() or Partial().")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < ndim:   # PyTorch's assertion, raised as its type
                raise AssertionError(f"Sharding dim {p.dim} greater than tensor ndim {ndim}: shard a dimension "
                                     f"between {-ndim} and {ndim - 1}.")
            p = Shard(p.dim % ndim)
        out.append(p)
    return mesh, tuple(out)


def _move(tensor, sharding):
    """`tensor`'s data placed by `sharding`, as a plain Tensor; a recorded copy (gradients flow back) when it
    requires grad. The value is computed here: a program cannot take an array on one device (a user's
    input) together with a constraint over the whole mesh, so the move is a device_put of the result."""
    from ..._tensor_dtype_device import _recorded_move
    value = tensor._value
    if isinstance(value, jax.core.Tracer):   # inside tapegrad.compile's trace: a constraint in its program
        value = jax.lax.with_sharding_constraint(value, sharding)
    elif value.sharding != sharding:
        value = jax.device_put(value, sharding)
    moved = Tensor._wrap(value, tensor._inference)
    return _recorded_move(tensor, moved) if tensor.requires_grad else moved


def _make(tensor, mesh, placements):
    """Turn the plain Tensor `tensor` (fresh, owned by the caller) into a DTensor in place."""
    tensor.__class__ = DTensor
    tensor._device_mesh, tensor._placements = mesh, placements
    return tensor


class DTensor(Tensor):
    """A tensor placed over a DeviceMesh; build one with distribute_tensor or DTensor.from_local."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("DTensor is built with distribute_tensor(tensor, mesh, placements) or "
                        "DTensor.from_local(tensor, mesh, placements), not by calling DTensor(...).")

    @property
    def device_mesh(self):
        return self._device_mesh

    @property
    def placements(self):
        return self._placements

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None):
        """`local_tensor` as a DTensor placed by `placements`. This process holds every shard, so the local
        tensor is the whole (global) tensor; it is moved to the placement, differentiably."""
        mesh, placements = _normalize(device_mesh, placements, local_tensor.ndim)
        moved = _move(local_tensor, _sharding(mesh, placements, tuple(local_tensor.shape)))
        return _make(moved, mesh, placements)

    def to_local(self, *, grad_placements=None):
        """The data as a plain tensor (every shard: this process holds them all), still spread over the devices."""
        return _move(self, self._value_sharding())

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False, forward_dtype=None,
                     backward_dtype=None):
        mesh, placements = _normalize(device_mesh or self._device_mesh, placements, self.ndim)
        moved = _move(self, _sharding(mesh, placements, tuple(self.shape)))
        if forward_dtype is not None:
            moved = moved.to(forward_dtype)
        return _make(moved, mesh, placements)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor, replicated on every device of the mesh, as a plain tensor."""
        return self.redistribute(self._device_mesh, (Replicate(),) * self._device_mesh.ndim).to_local()

    def _value_sharding(self):
        return _sharding(self._device_mesh, self._placements, tuple(self.shape))

    def __repr__(self, *, tensor_contents=None):
        local = Tensor.__repr__(self)
        return f"DTensor(local_tensor={local}, device_mesh={self._device_mesh}, placements={self._placements})"

    __str__ = __repr__


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """A leaf DTensor holding `tensor`'s data placed by `placements` over `device_mesh` (requires_grad kept)."""
    if isinstance(tensor, DTensor):
        if tensor._device_mesh == device_mesh and tensor._placements == tuple(placements or ()):
            return tensor
        raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor._device_mesh} to a different device "
                         f"mesh {device_mesh}: use DTensor.redistribute.")
    mesh, placements = _normalize(device_mesh, placements, tensor.ndim)
    # a copy: the new leaf must not share a buffer with `tensor` (a compiled step donates its parameters)
    value = jax.device_put(tensor.detach()._value, _sharding(mesh, placements, tuple(tensor.shape)), may_alias=False)
    out = object.__new__(DTensor)._init(Storage(value), None, tensor._inference)
    out._device_mesh, out._placements = mesh, placements
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    """PyTorch's distribute_module: partition_fn(name, submodule, mesh) places each submodule's parameters
    (default: replicated); input_fn(module, inputs, mesh) and output_fn(module, outputs, mesh) become hooks."""
    mesh, _ = _normalize(device_mesh, None, 0)
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        else:
            for key, p in list(sub._parameters.items()):
                if p is not None and not isinstance(p, DTensor):
                    sub.register_parameter(key, to_parameter(distribute_tensor(p.detach(), mesh), p.requires_grad))
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, args: input_fn(m, args, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, args, out: output_fn(m, out, mesh))
    return module


def to_parameter(dtensor, requires_grad=True):
    """nn.Parameter(dtensor): a Parameter that is a DTensor (PyTorch's Parameter keeps the DTensor type)."""
    p = DTensorParameter._from_tensor(dtensor, requires_grad)
    p._device_mesh, p._placements = dtensor._device_mesh, dtensor._placements
    return p


def _parameter_class():
    from ...nn.parameter import Parameter

    class DTensorParameter(DTensor, Parameter):
        """A DTensor registered as a module parameter (isinstance of both, as in PyTorch)."""
        __new__ = Parameter.__new__
    return DTensorParameter


DTensorParameter = _parameter_class()
