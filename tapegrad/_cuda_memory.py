"""torch.cuda.memory: the device memory statistics (tapegrad.cuda's functions, under this module's name too)."""
from .cuda import empty_cache, max_memory_allocated, memory_allocated, memory_reserved  # noqa: F401
from ._cuda_streams import reset_max_memory_allocated, reset_peak_memory_stats  # noqa: F401
