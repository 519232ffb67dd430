"""tapegrad.nn.parallel: data parallelism over one host's devices (DataParallel, on jax.sharding) and over
processes (DistributedDataParallel)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
