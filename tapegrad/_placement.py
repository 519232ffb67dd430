"""Arrays on one device meeting arrays spread over several devices in one program.

A module replicated over a process's devices with its batch split among them (DataParallel, or
DistributedDataParallel with several local devices) meets tensors the user made on one device: targets,
optimizer state. A program refuses arguments on different device sets, so when it does, each
single-device argument is replicated over the widest mesh among them and the call is retried (the
results then live on that mesh). Every JAX CPU device is PyTorch's one 'cpu', so this is PyTorch's
behaviour seen from the user: a target made on the CPU meets a batch split over the CPU devices.
"""
import weakref

import jax

_replicas = {}   # id(array) -> (weak reference to it, its replicated copy): a target reused every step


def spread(args):
    """args with each single-device array replicated over the widest mesh among them; None if none is."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    arrays = [a for a in leaves if _concrete(a)]
    widest = max(arrays, key=lambda a: len(a.sharding.device_set)).sharding if arrays else None
    if not isinstance(widest, jax.sharding.NamedSharding) or len(widest.device_set) == 1:
        return None
    if len({d.platform for a in arrays for d in a.devices()}) > 1:
        return None   # a CPU array meeting a GPU one: PyTorch's device error, not a replication
    replicated = jax.sharding.NamedSharding(widest.mesh, jax.sharding.PartitionSpec())
    single = [_concrete(a) and len(a.sharding.device_set) == 1 for a in leaves]
    if not any(single):
        return None
    out = [_replicated(a, replicated) if s else a for a, s in zip(leaves, single)]
    return jax.tree_util.tree_unflatten(tree, out)


def _replicated(a, sharding):
    ref, copy = _replicas.get(id(a), (None, None))
    if ref is None or ref() is not a or copy.sharding != sharding:
        if len(_replicas) > 256:
            _replicas.clear()
        copy = jax.device_put(a, sharding)
        _replicas[id(a)] = (weakref.ref(a), copy)
    return copy


def _concrete(a):
    """A jax.Array with data (a tracer, inside tapegrad.compile's trace, has no sharding to read)."""
    return isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer)


def follow(src, dest):
    """src, moved to dest's devices when dest is spread over several and src sits on one (copy_ keeps the
    destination's placement, as PyTorch's copy_ keeps its device): loading a state dict into a sharded module
    keeps it sharded. Any other src is returned as it is."""
    raw = dest._storage._raw if dest._view is None else None
    if not _concrete(raw) or len(raw.sharding.device_set) == 1 or tuple(src.shape) != tuple(raw.shape):
        return src
    value = src._value   # the destination is spread (rare): where src lies is known once it is computed
    if not _concrete(value) or len(value.sharding.device_set) != 1 or \
            next(iter(raw.devices())).platform != next(iter(value.devices())).platform:
        return src
    from ._tensor import Tensor
    moved = Tensor._wrap(jax.device_put(value, raw.sharding), src._inference)
    if not src.requires_grad:
        return moved
    from ._tensor_dtype_device import _recorded_move
    return _recorded_move(src, moved)
