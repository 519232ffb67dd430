"""Arrays on one device meeting arrays spread over several devices in one program.

A module replicated over a process's devices with its batch split among them (DistributedDataParallel
with several local devices) meets tensors the user made on one device: targets, optimizer state. A
program refuses arguments on different device sets, so when it does, each single-device argument is
replicated over the widest mesh among them and the call is retried (the results then live on that mesh).
"""
import jax


def spread(args):
    """args with each single-device array replicated over the widest mesh among them; None if none is."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    arrays = [a for a in leaves if isinstance(a, jax.Array)]
    widest = max(arrays, key=lambda a: len(a.sharding.device_set)).sharding if arrays else None
    if not isinstance(widest, jax.sharding.NamedSharding) or len(widest.device_set) == 1:
        return None
    replicated = jax.sharding.NamedSharding(widest.mesh, jax.sharding.PartitionSpec())
    single = [isinstance(a, jax.Array) and len(a.sharding.device_set) == 1 for a in leaves]
    if not any(single):
        return None
    out = [jax.device_put(a, replicated) if s else a for a, s in zip(leaves, single)]
    return jax.tree_util.tree_unflatten(tree, out)
