"""Collectives: PyTorch's c10d functions as jitted programs over one device of each process.

Each process contributes its local value as one row of a global array sharded over a mesh with one
device per process (`_home`); a jitted reduction over that axis with a replicated (or row-sharded)
output is the collective, which XLA runs with gloo on CPU and NCCL on GPU. The local row of the
result is written back into the tensor in place, as PyTorch's collectives do. A group of one process
runs no program. Every process must call the same collectives in the same order (as in PyTorch).
"""
import enum
import functools
import pickle

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._group import default_group


class ReduceOp:
    """PyTorch's reduction kinds: ReduceOp.SUM etc. are members of ReduceOp.RedOpType."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

    SUM, AVG, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM


class Work:
    """The handle of an async_op=True call. tapegrad's collectives have finished when they return."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


def _done(async_op):
    return Work() if async_op else None


def _check_tensor(tensor, name="tensor"):
    from .._tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor but got "
                        f"{type(tensor)} instead.")


# ---- the process mesh -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _mesh(platform):
    """A mesh with one device of each process (its first), on one platform."""
    devices = jax.devices(platform)
    home = [next(d for d in devices if d.process_index == p) for p in range(jax.process_count())]
    return Mesh(np.array(home), ("p",))


def _home(platform):
    return _mesh(platform).devices[jax.process_index()]


def _rows(values):
    """Each local array as this process's row of a global (world, *shape) array over the process mesh."""
    for v in values:   # a traced step (tapegrad.compile) cannot hold a collective: it runs eagerly instead
        if isinstance(v, jax.core.Tracer):
            raise jax.errors.TracerArrayConversionError(v)
    platform = next(iter(values[0].devices())).platform
    mesh, home, world = _mesh(platform), _home(platform), jax.process_count()
    rows = NamedSharding(mesh, PartitionSpec("p"))
    return [jax.make_array_from_single_device_arrays((world,) + v.shape, rows, [jax.device_put(v, home)[None]])
            for v in values], mesh


def _back(result, like):
    """The local part of a collective's result, placed where the tensor it is written to lives."""
    local = result.addressable_data(0)
    return local if local.sharding == like.sharding else jax.device_put(local, like.sharding)


def _reducer(op, dtype):
    op = ReduceOp.RedOpType(op)
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by tapegrad: scale the tensor, then use ReduceOp.SUM.")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        if not (jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_):
            raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype: bitwise reductions need "
                               f"integer or bool tensors.")
        fn = {ReduceOp.BAND: jnp.bitwise_and, ReduceOp.BOR: jnp.bitwise_or, ReduceOp.BXOR: jnp.bitwise_xor}[op]
        return lambda a: functools.reduce(fn, [a[i] for i in range(a.shape[0])])
    if op == ReduceOp.AVG:
        return lambda a: jnp.sum(a, 0, dtype=dtype) / a.shape[0]
    return {ReduceOp.SUM: lambda a: jnp.sum(a, 0, dtype=dtype), ReduceOp.PRODUCT: lambda a: jnp.prod(a, 0, dtype=dtype),
            ReduceOp.MIN: lambda a: jnp.min(a, 0), ReduceOp.MAX: lambda a: jnp.max(a, 0)}[op]


@functools.lru_cache(maxsize=256)
def _reduce_program(mesh, op, dtypes, scatter):
    """One program reducing several (world, ...) arrays over their first axis: one collective for a bucket."""
    fns = [_reducer(op, d) for d in dtypes]
    spec = PartitionSpec("p") if scatter else PartitionSpec()
    return jax.jit(lambda xs: [f(x).astype(x.dtype) for f, x in zip(fns, xs)],
                   out_shardings=[NamedSharding(mesh, spec)] * len(fns))


@functools.lru_cache(maxsize=64)
def _gather_program(mesh, src, n):
    """The n whole (world, ...) arrays on every process, or their rows `src` when src is not None."""
    fn = (lambda xs: xs) if src is None else (lambda xs: [x[src] for x in xs])
    return jax.jit(fn, out_shardings=[NamedSharding(mesh, PartitionSpec())] * n)


def reduce_arrays(values, op=ReduceOp.SUM):
    """The elementwise reduction of each local array over the processes (one program for them all)."""
    for v in values:   # an unsupported op fails alike in a group of one
        _reducer(op, v.dtype)
    if default_group().world_size == 1 or not values:
        return list(values)
    rows, mesh = _rows(values)
    out = _reduce_program(mesh, int(op), tuple(v.dtype for v in values), False)(rows)
    return [_back(o, v) for o, v in zip(out, values)]


def gather_array(value, src=None):
    """Every process's value stacked (world, ...), or process src's value."""
    if default_group().world_size == 1:
        return value if src is not None else value[None]
    rows, mesh = _rows([value])
    local = _gather_program(mesh, src, 1)(rows)[0].addressable_data(0)
    return jax.device_put(local, value.sharding) if src is not None else local


def broadcast_arrays(values, src=0):
    """Process src's values of several local arrays (one program for them all)."""
    if default_group().world_size == 1 or not values:
        return list(values)
    rows, mesh = _rows(values)
    return [_back(o, v) for o, v in zip(_gather_program(mesh, src, len(values))(rows), values)]


# ---- PyTorch's functions -------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce the tensor over all processes, in place on each."""
    _check_tensor(tensor)
    default_group()
    tensor._set_value(reduce_arrays([tensor._value], op)[0])
    return _done(async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce the tensor over all processes into rank dst's tensor (the others keep theirs)."""
    _check_tensor(tensor)
    dst = dst if dst is not None else (group_dst or 0)
    out = reduce_arrays([tensor._value], op)[0]
    if default_group().rank == dst:
        tensor._set_value(out)
    return _done(async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Rank src's tensor, copied in place into every process's tensor."""
    _check_tensor(tensor)
    src = src if src is not None else (group_src or 0)
    world = default_group().world_size
    if not 0 <= src < world:
        raise ValueError(f"Invalid src rank {src} for world_size {world}: use 0 <= src < world_size.")
    if world > 1:
        tensor._set_value(gather_array(tensor._value, src))
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every process's tensor, written in place into tensor_list (one entry per rank)."""
    _check_tensor(tensor)
    world = default_group().world_size
    if len(tensor_list) != world:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors but the world size is {world}: "
                         f"pass one tensor per rank, e.g. [torch.empty_like(t) for _ in range(world_size)].")
    rows = gather_array(tensor._value)
    for i, out in enumerate(tensor_list):
        _check_tensor(out, "tensor_list")
        out._set_value(jax.device_put(rows[i], out._value.sharding))
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every process's input, concatenated along dim 0 (or stacked) into output_tensor."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    world = default_group().world_size
    shape, out_shape = tuple(input_tensor.shape), tuple(output_tensor.shape)
    stacked = (world,) + shape
    concatenated = ((world * shape[0],) + shape[1:]) if shape else None
    if out_shape not in (stacked, concatenated):
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to world_size times input "
                         f"tensor size: got output {list(out_shape)} for input {list(shape)} and world size {world}.")
    rows = gather_array(input_tensor._value)
    output_tensor._set_value(jax.device_put(rows.reshape(out_shape), output_tensor._value.sharding))
    return _done(async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every process's tensor, written into rank dst's gather_list (the other ranks pass None)."""
    _check_tensor(tensor)
    dst = dst if dst is not None else (group_dst or 0)
    group_ = default_group()
    if group_.rank == dst and (gather_list is None or len(gather_list) != group_.world_size):
        raise ValueError(f"gather: the destination rank needs a gather_list of {group_.world_size} tensors.")
    rows = gather_array(tensor._value)
    if group_.rank == dst:
        for i, out in enumerate(gather_list):
            out._set_value(jax.device_put(rows[i], out._value.sharding))
    return _done(async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """tensor = rank src's scatter_list[rank] (the other ranks pass None)."""
    _check_tensor(tensor)
    src = src if src is not None else (group_src or 0)
    group_ = default_group()
    like = tensor._value
    if group_.rank == src:
        if scatter_list is None or len(scatter_list) != group_.world_size:
            raise ValueError(f"scatter: the source rank needs a scatter_list of {group_.world_size} tensors.")
        stacked = jnp.stack([jax.device_put(t._value, like.sharding).astype(like.dtype) for t in scatter_list])
    else:   # a placeholder of the same shape: only src's rows are read
        stacked = jnp.zeros((group_.world_size,) + like.shape, like.dtype, device=like.sharding)
    rows = gather_array(stacked, src)
    tensor._set_value(rows[group_.rank])
    return _done(async_op)


def _scatter_reduced(values, like, op):
    """Reduce the (world, ...) value over processes and keep this rank's row."""
    if default_group().world_size == 1:
        return values[0]
    rows, mesh = _rows([values])
    out = _reduce_program(mesh, int(op), (values.dtype,), True)([rows[0]])[0]
    return jax.device_put(out.addressable_data(0)[0], like.sharding)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over processes of input_list[rank]."""
    _check_tensor(output, "output")
    world = default_group().world_size
    if len(input_list) != world:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors but the world size is {world}: "
                         f"pass one tensor per rank.")
    stacked = jnp.stack([jax.device_put(t._value, output._value.sharding) for t in input_list])
    output._set_value(_scatter_reduced(stacked, output._value, op))
    return _done(async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over processes of this rank's block (along dim 0) of input."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    world = default_group().world_size
    shape = tuple(output.shape)
    if tuple(input.shape) not in ((world,) + shape, (world * shape[0],) + shape[1:] if shape else None):
        raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as output size times world "
                         f"size: got input {list(input.shape)} for output {list(shape)} and world size {world}.")
    blocks = input._value.reshape((world,) + shape)
    output._set_value(_scatter_reduced(blocks, output._value, op))
    return _done(async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every process has reached this call."""
    if default_group().world_size > 1:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices("tapegrad.distributed.barrier")
    return _done(async_op)


# ---- Python objects -----------------------------------------------------------------------------------

def _gather_bytes(obj):
    """Every process's pickled obj, as a list indexed by rank."""
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    cpu = jax.devices("cpu")[0] if default_group().world_size == 1 else _home("cpu")
    sizes = np.asarray(gather_array(jax.device_put(np.array([data.size], np.int64), cpu)))[:, 0]
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:data.size] = data
    rows = np.asarray(gather_array(jax.device_put(padded, cpu)))
    return [pickle.loads(rows[i, :n].tobytes()) for i, n in enumerate(sizes)]


def all_gather_object(object_list, obj, group=None):
    """Every process's picklable obj, written into object_list (one entry per rank)."""
    world = default_group().world_size
    if len(object_list) != world:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries but the world size is "
                         f"{world}: pass [None] * world_size.")
    object_list[:] = _gather_bytes(obj)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Rank src's object_list entries, written into every process's object_list."""
    src = src if src is not None else (group_src or 0)
    object_list[:] = _gather_bytes(list(object_list))[src]
