"""save and load: a (nested) state dict to and from a checkpoint directory, in place (PyTorch's DCP).

The state dict is flattened to dotted keys (`model.0.weight`, `optim.state.0.weight.exp_avg`) as PyTorch's
planner does; tensors are written as their distinct shards, other values into the metadata. Loading walks
the state dict given (its structure says what to read), assembles each tensor from its chunks and writes it
into the tensor in place with that tensor's own sharding: a checkpoint saved from one sharding loads into
another. Objects with state_dict()/load_state_dict() (Stateful) are saved and restored through them. With
several processes (each holding local tensors, as under DistributedDataParallel) rank 0 writes and every
process reads.
"""

import jax

from ..._tensor import Tensor
from .default_planner import DefaultLoadPlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import TensorStorageMetadata
from .stateful import Stateful
from ..._user_frames import warn_user

__all__ = ["save", "load", "async_save", "save_state_dict", "load_state_dict"]


def _is_stateful(x):
    return not isinstance(x, Tensor) and isinstance(x, Stateful)


def _walked(x):
    """Whether a state-dict value is walked into (PyTorch's rule): dicts, and lists holding a tensor, a dict or
    a walked list. Tuples and other lists are values."""
    if isinstance(x, dict):
        return True
    return isinstance(x, list) and any(isinstance(v, (Tensor, dict)) or _walked(v) for v in x)


def _leaves(tree, prefix=""):
    """(key, container, slot, leaf) of a state dict, keys dotted as PyTorch's flattened ones."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for k, v in items:
        key = f"{prefix}{k}"
        if _walked(v):
            yield from _leaves(v, key + ".")
        else:
            yield key, tree, k, v


def _group():
    from .. import _group
    return _group.default_group() if _group.is_initialized() else None


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None, no_dist=False):
    """Write state_dict into a checkpoint directory (checkpoint_id, or storage_writer's path); returns Metadata."""
    writer = _writer(checkpoint_id, storage_writer)
    state_dict = {k: v.state_dict() if _is_stateful(v) else v for k, v in state_dict.items()}
    tensors, values = {}, {}
    for key, _, _, leaf in _leaves(state_dict):
        if isinstance(leaf, Tensor):
            tensors[key] = leaf.detach()._value
        else:
            values[key] = leaf
    group = None if no_dist else _group()
    rank = group.rank if group is not None else 0
    metadata = writer.write(tensors, values, rank) if rank == 0 else None
    if group is not None and group.world_size > 1:
        from .. import barrier
        barrier()
    return metadata


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None, process_group=None, no_dist=False):
    """Fill state_dict in place from a checkpoint: tensors keep their identity, dtype and sharding."""
    from ..._grad_mode import no_grad
    reader = _reader(checkpoint_id, storage_reader)
    partial = isinstance(planner, DefaultLoadPlanner) and planner.allow_partial_load
    metadata = reader.read_metadata().state_dict_metadata
    stateful = {k: v for k, v in state_dict.items() if _is_stateful(v)}
    tree = {k: (v.state_dict() if k in stateful else v) for k, v in state_dict.items()}
    with no_grad():
        for key, container, slot, leaf in list(_leaves(tree)):
            entry = metadata.get(key)
            if entry is None:
                if partial:
                    continue
                raise RuntimeError(f"Missing key in checkpoint state_dict: {key}. Load into a state dict whose keys "
                                   "the checkpoint holds, or pass planner=DefaultLoadPlanner(allow_partial_load=True).")
            if isinstance(leaf, Tensor):
                if not isinstance(entry, TensorStorageMetadata):
                    raise RuntimeError(f"Checkpoint holds a value, not a tensor, for {key}: load it into a "
                                       "non-tensor entry.")
                _fill(leaf, reader.read_tensor(entry), key)
            elif isinstance(entry, TensorStorageMetadata):
                from ..._creation import tensor
                container[slot] = tensor(reader.read_tensor(entry))
            else:
                container[slot] = entry.value
    for k, obj in stateful.items():
        obj.load_state_dict(tree[k])


def _fill(target, array, key):
    from ..._size import Size
    if tuple(array.shape) != tuple(target.shape):
        raise ValueError(f"Size mismatch between saved {Size(array.shape)} and current: {target.shape} for {key}")
    array = array.astype(target.dtype.np, copy=False)
    current = target._value
    sharding = current.sharding if isinstance(current, jax.Array) else None
    value = jax.make_array_from_callback(array.shape, sharding, lambda index: array[index]) if sharding is not None \
        else jax.numpy.asarray(array)
    target._set_value(value)


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None,
               async_checkpointer_type=None, async_stager=None, no_dist=False, use_collectives=True):
    """save, done before returning (the arrays are read once); the Future is already resolved."""
    from concurrent.futures import Future
    done = Future()
    done.set_result(save(state_dict, checkpoint_id=checkpoint_id, storage_writer=storage_writer, planner=planner,
                         no_dist=no_dist))
    return done


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0, no_dist=False, planner=None):
    """PyTorch's earlier name of save (deprecated there, with this warning)."""
    warn_user("`save_state_dict` is deprecated and will be removed in future versions.Please use `save` instead.",
              FutureWarning)
    return save(state_dict, storage_writer=storage_writer, planner=planner, no_dist=no_dist)


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0, no_dist=False, planner=None):
    """PyTorch's earlier name of load (deprecated there, with this warning)."""
    warn_user("`load_state_dict` is deprecated and will be removed in future versions. Please use `load` "
              "instead.", FutureWarning)
    return load(state_dict, storage_reader=storage_reader, planner=planner, no_dist=no_dist)


def _writer(checkpoint_id, writer):
    if writer is not None:
        return writer
    if checkpoint_id is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_writer/storage_reader is None.")
    return FileSystemWriter(checkpoint_id)


def _reader(checkpoint_id, reader):
    if reader is not None:
        return reader
    if checkpoint_id is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_writer/storage_reader is None.")
    return FileSystemReader(checkpoint_id)


