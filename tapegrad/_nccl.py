from ._user_frames import warn_user
"""tapegrad.cuda.nccl (PyTorch's torch.cuda.nccl): tapegrad has no NCCL binding of its own.

GPU collectives run inside XLA programs (JAX links NCCL there), through tapegrad.distributed; so this
module answers as PyTorch's does in a build without NCCL: `is_available` warns and is False, and
`version` raises AttributeError.
"""

__all__ = ["is_available", "version", "SUM"]

SUM = 0   # PyTorch's ReduceOp code for a sum


def is_available(tensors):
    warn_user("tapegrad is not compiled with NCCL support")
    return False


def version():
    raise AttributeError("module 'tapegrad.cuda.nccl' has no NCCL version: tapegrad is built without NCCL (as "
                         "PyTorch's CPU build, whose torch._C lacks '_nccl_version'). Collectives on GPUs run inside "
                         "XLA programs: use tapegrad.distributed.")
