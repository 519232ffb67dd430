"""torch.cuda.memory: the device memory statistics (tapegrad.cuda's functions, under this module's name too)."""
from ._cuda_devices import empty_cache, memory_allocated, memory_reserved  # noqa: F401
from ._cuda_streams import max_memory_allocated, reset_max_memory_allocated, reset_peak_memory_stats  # noqa: F401
