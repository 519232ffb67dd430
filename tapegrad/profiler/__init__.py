"""tapegrad.profiler: PyTorch's torch.profiler API over tapegrad's XLA programs (see autograd/profiler.py)."""
from ..autograd.profiler import (  # noqa: F401
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "record_function"]
