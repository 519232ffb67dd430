"""tapegrad.distributed: PyTorch's torch.distributed (default group, collectives) on JAX's multi-process runtime.

Start N processes with `python -m tapegrad.distributed.run --nproc-per-node N script.py`; each calls
`init_process_group()` first (before creating tensors: JAX's runtime starts before its devices are used).
"""
from ._collectives import (ReduceOp, Work, all_gather, all_gather_into_tensor, all_gather_object, all_reduce, barrier,
                           broadcast, broadcast_object_list, gather, reduce, reduce_scatter, reduce_scatter_tensor,
                           scatter)
from ._group import (GroupMember, destroy_process_group, get_backend, get_default_backend_for_device, get_rank,
                     get_world_size, init_process_group, is_available, is_gloo_available, is_initialized,
                     is_mpi_available, is_nccl_available)

group = GroupMember
all_gather_single, reduce_scatter_single = all_gather_into_tensor, reduce_scatter_tensor   # PyTorch's newer names

__all__ = ["ReduceOp", "Work", "GroupMember", "init_process_group", "destroy_process_group", "is_available",
           "is_initialized", "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "reduce",
           "broadcast", "gather", "scatter", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "all_gather_single", "reduce_scatter_single", "all_gather_object",
           "broadcast_object_list", "is_nccl_available", "is_gloo_available", "is_mpi_available",
           "get_default_backend_for_device"]


_SUBMODULES = ("rpc", "autograd", "optim", "nn", "tensor", "device_mesh", "checkpoint", "fsdp", "algorithms")


def __getattr__(name):   # loaded on first use, as `import torch.distributed.rpc`
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
