"""tapegrad.nn.parallel: data parallelism over one host's devices on jax.sharding."""
from .data_parallel import DataParallel  # noqa: F401
